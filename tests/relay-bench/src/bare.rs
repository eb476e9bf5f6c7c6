//! The floor of any relay on this machine: a bare hyper pass-through proxy with no routing,
//! no ledger and no parsing. It swaps the client's `authorization` for the provider key (as
//! the relay injects a credential), forwards to the upstream over a pooled keep-alive client
//! and streams the answer back. Same runtime shape as `switchyard relay serve` (tokio
//! current-thread runtime, TCP_NODELAY both ways). Started by the bench as
//! `relay-bench --bare-proxy URL KEY`. With `--bare-buffering-proxy` it first reads the
//! whole request body and then sends it (what any proxy that may retry a request must do):
//! the floor for routed requests, whose body is kept for a failover.

use std::convert::Infallible;

use anyhow::{Context, Result};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, AUTHORIZATION, HOST};
use hyper::{Request, Response, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

type Upstream = Client<HttpConnector, Either<Incoming, Full<Bytes>>>;

pub fn run(upstream: &str, key: &str, buffer: bool) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(upstream.parse().context("upstream URL")?, format!("Bearer {key}"), buffer))
}

async fn serve(upstream: Uri, auth: String, buffer: bool) -> Result<()> {
    let authority = upstream.authority().context("upstream authority")?.clone();
    let auth = HeaderValue::from_str(&auth)?;
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Upstream = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(1024).build(connector);
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("bare proxy listening on http://{}", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        tcp.set_nodelay(true)?;
        let (client, authority, auth) = (client.clone(), authority.clone(), auth.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (client, authority, auth) = (client.clone(), authority.clone(), auth.clone());
                async move { Ok::<_, Infallible>(forward(&client, authority, auth, req, buffer).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}

async fn forward(
    client: &Upstream,
    authority: hyper::http::uri::Authority,
    auth: HeaderValue,
    req: Request<Incoming>,
    buffer: bool,
) -> Response<BoxBody<Bytes, hyper::Error>> {
    let (mut parts, body) = req.into_parts();
    let path = parts.uri.path_and_query().cloned();
    let mut uri = Uri::builder().scheme("http").authority(authority);
    if let Some(p) = path {
        uri = uri.path_and_query(p);
    }
    match uri.build() {
        Ok(u) => parts.uri = u,
        Err(_) => return status(400),
    }
    parts.headers.remove(HOST);
    parts.headers.insert(AUTHORIZATION, auth);
    let body = if buffer {
        match body.collect().await {
            Ok(all) => Either::Right(Full::new(all.to_bytes())),
            Err(_) => return status(400),
        }
    } else {
        Either::Left(body)
    };
    match client.request(Request::from_parts(parts, body)).await {
        Ok(resp) => resp.map(BodyExt::boxed),
        Err(_) => status(502),
    }
}

fn status(code: u16) -> Response<BoxBody<Bytes, hyper::Error>> {
    let mut r = Response::new(Empty::new().map_err(|never| match never {}).boxed());
    *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
    r
}
