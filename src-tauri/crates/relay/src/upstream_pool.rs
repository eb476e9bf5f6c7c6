//! The relay's own pool of upstream HTTP/1 connections, per origin (scheme and authority), over
//! hyper's `client::conn::http1`, for direct calls (`upstream.rs`; proxied calls go through
//! reqwest).
//!
//! It replaced hyper-util's legacy `Client` on the request path (issue 40): that client keys
//! its pool by (scheme, authority) SipHashed a byte at a time three times a request, checks a
//! connection out through a waiter it may race against a new connect, formats the `Host`
//! header, and copies connection info into every answer's extensions — ~8k of a legacy
//! request's 71k instructions on the request thread (callgrind). Here an origin is one lookup
//! by its authority (foldhash), its `Host` value is made once, and a connection goes back to
//! its origin's idle list when its sender is ready again, as hyper-util does:
//!
//! - checkout takes the most recently returned connection that is still ready and idle for
//!   less than the idle timeout (older or closed ones are dropped);
//! - a request a reused connection could not take (it closed before the request was written:
//!   hyper hands the request back) goes on another connection; on a fresh one it fails;
//! - after the answer's head the connection returns at once when ready, else a task waits for
//!   it (its answer's body is still being read);
//! - at most `max_idle` idle connections per origin; every origin's expired ones are dropped
//!   at most once per idle timeout.

use std::collections::HashMap;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use http::header::HOST;
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderValue, Request, Response, Uri};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use tower_service::Service;

use crate::body::outgoing::UpstreamRequestBody;
use crate::upstream::BoxError;

type Sender = SendRequest<UpstreamRequestBody>;

/// Connections kept for reuse, per origin.
pub(crate) struct Pool {
    connector: HttpsConnector<HttpConnector>,
    origins: Mutex<Origins>,
    idle_timeout: Duration,
    max_idle: usize,
}

#[derive(Default)]
struct Origins {
    /// By authority, one map per scheme (so a lookup borrows the request's authority).
    http: HashMap<Box<str>, Arc<Origin>, foldhash::fast::RandomState>,
    https: HashMap<Box<str>, Arc<Origin>, foldhash::fast::RandomState>,
    /// When every origin's expired connections were last dropped.
    swept: Option<Instant>,
}

/// One origin: its `Host` value and its idle connections (most recently returned last).
struct Origin {
    host: HeaderValue,
    idle: Mutex<Vec<(Sender, Instant)>>,
}

impl Origin {
    fn idle(&self) -> MutexGuard<'_, Vec<(Sender, Instant)>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Pool {
    pub(crate) fn new(connector: HttpsConnector<HttpConnector>, idle_timeout: Duration, max_idle: usize) -> Self {
        Pool { connector, origins: Mutex::new(Origins::default()), idle_timeout, max_idle }
    }

    /// Sends `req` (its URI absolute: `http` or `https`, with a host) in origin form on a
    /// connection to its origin, with `Host` set when the request has none.
    pub(crate) async fn send(
        self: &Arc<Self>,
        mut req: Request<UpstreamRequestBody>,
    ) -> Result<Response<Incoming>, BoxError> {
        let mut parts = std::mem::take(req.uri_mut()).into_parts();
        let (Some(scheme), Some(authority)) = (parts.scheme.take(), parts.authority.take()) else {
            return Err("an upstream URL names its scheme and host".into());
        };
        let https = match scheme.as_str() {
            "http" => false,
            "https" => true,
            other => return Err(format!("an upstream URL's scheme is http or https, not {other}").into()),
        };
        if parts.path_and_query.is_none() {
            parts.path_and_query = Some(PathAndQuery::from_static("/"));
        }
        *req.uri_mut() = Uri::from_parts(parts)?;
        let now = Instant::now();
        let origin = self.origin(https, &authority, now)?;
        if !req.headers().contains_key(HOST) {
            req.headers_mut().insert(HOST, origin.host.clone());
        }
        loop {
            let (mut sender, reused) = match self.checkout(&origin, now) {
                Some(sender) => (sender, true),
                // Boxed: connecting (TLS included) is kilobytes of future a reused connection's
                // request would otherwise carry.
                None => (Box::pin(self.connect(&scheme, &authority)).await?, false),
            };
            match sender.try_send_request(req).await {
                Ok(resp) => {
                    self.release(origin, sender);
                    return Ok(resp);
                }
                Err(mut refused) => match refused.take_message() {
                    // The connection closed before the request was written: try another.
                    Some(back) if reused => req = back,
                    _ => return Err(refused.into_error().into()),
                },
            }
        }
    }

    /// The origin of `authority` under `https`, made on first use.
    fn origin(&self, https: bool, authority: &Authority, now: Instant) -> Result<Arc<Origin>, BoxError> {
        let mut origins = self.origins.lock().unwrap_or_else(PoisonError::into_inner);
        if origins.swept.is_none_or(|at| now.duration_since(at) >= self.idle_timeout) {
            origins.swept = Some(now);
            for origin in origins.http.values().chain(origins.https.values()) {
                origin.idle().retain(|(_, since)| now.duration_since(*since) < self.idle_timeout);
            }
        }
        let map = if https { &mut origins.https } else { &mut origins.http };
        if let Some(origin) = map.get(authority.as_str()) {
            return Ok(origin.clone());
        }
        let origin = Arc::new(Origin { host: host_value(https, authority)?, idle: Mutex::new(Vec::new()) });
        map.insert(authority.as_str().into(), origin.clone());
        Ok(origin)
    }

    /// The most recently returned idle connection that can take a request now.
    fn checkout(&self, origin: &Origin, now: Instant) -> Option<Sender> {
        let mut idle = origin.idle();
        while let Some((sender, since)) = idle.pop() {
            if now.duration_since(since) >= self.idle_timeout {
                // The rest were returned earlier still.
                idle.clear();
                return None;
            }
            if sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }

    /// A new connection (TCP, TLS for https) with its HTTP/1 task running.
    async fn connect(&self, scheme: &Scheme, authority: &Authority) -> Result<Sender, BoxError> {
        let uri = Uri::builder().scheme(scheme.clone()).authority(authority.clone()).path_and_query("/").build()?;
        let io = self.connector.clone().call(uri).await?;
        let (sender, conn) = http1::Builder::new().handshake(io).await?;
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "upstream connection ended");
            }
        });
        Ok(sender)
    }

    /// Returns `sender` to its origin once it can take the next request.
    fn release(self: &Arc<Self>, origin: Arc<Origin>, mut sender: Sender) {
        if sender.is_ready() {
            return self.put(&origin, sender);
        }
        let pool = self.clone();
        tokio::spawn(async move {
            if poll_fn(|cx| sender.poll_ready(cx)).await.is_ok() {
                pool.put(&origin, sender);
            }
        });
    }

    fn put(&self, origin: &Origin, sender: Sender) {
        let mut idle = origin.idle();
        if idle.len() < self.max_idle {
            idle.push((sender, Instant::now()));
        }
    }

    /// Idle connections kept for `authority` (tests).
    #[cfg(test)]
    pub(crate) fn idle_count(&self, https: bool, authority: &str) -> usize {
        let origins = self.origins.lock().unwrap_or_else(PoisonError::into_inner);
        let map = if https { &origins.https } else { &origins.http };
        map.get(authority).map_or(0, |o| o.idle().len())
    }
}

/// `Host` as hyper-util's client set it: the host, with the port unless it is the scheme's
/// default (no user info).
fn host_value(https: bool, authority: &Authority) -> Result<HeaderValue, BoxError> {
    let default = if https { 443 } else { 80 };
    let value = match authority.port_u16() {
        Some(port) if port != default => format!("{}:{port}", authority.host()),
        _ => authority.host().to_string(),
    };
    Ok(HeaderValue::from_str(&value)?)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bytes::Bytes;
    use http_body_util::{Either, Full};
    use hyper_rustls::HttpsConnectorBuilder;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A keep-alive server answering `ok` to every request head; `close_after`: it closes a
    /// connection after that many answers. Counts the connections it accepted.
    async fn server(close_after: usize) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 1024];
                    for _ in 0..close_after {
                        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                            match tcp.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
                        buf.drain(..end);
                        if tcp.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr.to_string(), accepted)
    }

    fn pool(idle_timeout: Duration) -> Arc<Pool> {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        let https =
            HttpsConnectorBuilder::new().with_webpki_roots().https_or_http().enable_http1().wrap_connector(http);
        Arc::new(Pool::new(https, idle_timeout, 8))
    }

    async fn get(pool: &Arc<Pool>, authority: &str) -> String {
        let req = Request::get(format!("http://{authority}/v1/models"))
            .body(Either::Left(Full::new(Bytes::new())))
            .expect("request");
        let resp = pool.send(req).await.expect("an answer");
        let body = crate::body::whole::whole(resp.into_body()).await.expect("body");
        String::from_utf8_lossy(&body).into_owned()
    }

    /// Waits until `authority` has `n` idle connections (the release task runs after the body).
    async fn idle(pool: &Arc<Pool>, authority: &str, n: usize) {
        for _ in 0..200 {
            if pool.idle_count(false, authority) == n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("{authority} never had {n} idle connections (has {})", pool.idle_count(false, authority));
    }

    #[tokio::test]
    async fn sequential_requests_reuse_one_connection() {
        let (authority, accepted) = server(usize::MAX).await;
        let pool = pool(Duration::from_secs(90));
        for _ in 0..5 {
            assert_eq!(get(&pool, &authority).await, "ok");
            idle(&pool, &authority, 1).await;
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "five requests one after another share a connection");
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_not_used_again() {
        let (authority, accepted) = server(1).await;
        let pool = pool(Duration::from_secs(90));
        for round in 1..=3 {
            assert_eq!(get(&pool, &authority).await, "ok", "round {round}: answered on a new connection");
            // The server closed it after answering: by now its task has seen the end.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 3, "each closed connection was replaced");
    }

    #[tokio::test]
    async fn a_connection_idle_past_the_timeout_is_dropped() {
        let (authority, accepted) = server(usize::MAX).await;
        let pool = pool(Duration::from_millis(50));
        assert_eq!(get(&pool, &authority).await, "ok");
        idle(&pool, &authority, 1).await;
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert_eq!(get(&pool, &authority).await, "ok");
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "the expired connection was not reused");
    }

    #[tokio::test]
    async fn concurrent_requests_each_get_a_connection_and_all_return() {
        let (authority, accepted) = server(usize::MAX).await;
        let pool = pool(Duration::from_secs(90));
        let answers = futures_util::future::join_all((0..4).map(|_| get(&pool, &authority))).await;
        assert!(answers.iter().all(|a| a == "ok"), "{answers:?}");
        idle(&pool, &authority, accepted.load(Ordering::SeqCst)).await;
        let before = accepted.load(Ordering::SeqCst);
        assert_eq!(get(&pool, &authority).await, "ok");
        assert_eq!(accepted.load(Ordering::SeqCst), before, "a later request takes an idle connection");
    }

    #[tokio::test]
    async fn a_url_without_http_or_https_is_refused() {
        let pool = pool(Duration::from_secs(1));
        let req = Request::get("ftp://127.0.0.1:9/x").body(Either::Left(Full::new(Bytes::new()))).expect("request");
        assert!(pool.send(req).await.is_err(), "only http and https are spoken");
    }

    #[test]
    fn host_is_the_host_with_a_port_that_is_not_the_default() {
        let host = |https: bool, a: &'static str| host_value(https, &Authority::from_static(a)).unwrap();
        assert_eq!(host(false, "127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(host(false, "example.com:80"), "example.com", "http's default port is left out");
        assert_eq!(host(true, "example.com:443"), "example.com", "https's default port is left out");
        assert_eq!(host(true, "example.com:80"), "example.com:80", "80 is not https's default");
        assert_eq!(host(false, "user:pw@example.com:81"), "example.com:81", "user info is never sent as Host");
        assert_eq!(host(false, "[::1]:9"), "[::1]:9", "an IPv6 host keeps its brackets");
    }
}
