//! The HTTP client for upstream calls. Direct connections go through the relay's own pool of
//! hyper HTTP/1 connections (`upstream_pool.rs`; rustls for https, the same webpki roots as
//! reqwest's `rustls-tls`): a pass-through proxy on hyper's client spent 62-68 µs of CPU per
//! request against 108-112 µs on reqwest (relay-bench at concurrency 1, same run), and the
//! pool of our own 8.7k fewer instructions a request than hyper-util's legacy client (issue 40).
//! Requests that the environment's `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` (minus `NO_PROXY`)
//! send through a proxy go through reqwest, which implements proxying (CONNECT tunnels,
//! absolute-form requests, proxy credentials) and reads the same variables the same way.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, Uri};
use http_body_util::combinators::BoxBody;
#[cfg(test)]
use http_body_util::Full;
use http_body_util::{BodyExt, Either};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

use crate::body::outgoing::UpstreamRequestBody;
use crate::upstream_pool::Pool;

/// An upstream answer's body, whichever client carried it.
pub(crate) type UpstreamBody = BoxBody<Bytes, BoxError>;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
const POOL_MAX_IDLE_PER_HOST: usize = 512;

pub(crate) struct Upstream {
    direct: std::sync::Arc<Pool>,
    proxied: reqwest::Client,
    /// `None` when the environment names no proxy: every request goes direct, and the rules
    /// are not asked (their host and `NO_PROXY` checks were ~0.6k instructions a request).
    proxies: Option<Matcher>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream").finish_non_exhaustive()
    }
}

impl Upstream {
    /// Proxies from the environment, read as reqwest reads them (`Matcher::from_system`).
    pub(crate) fn new() -> std::io::Result<Self> {
        let proxies = names_a_proxy(|name| std::env::var_os(name)).then(Matcher::from_system);
        Self::with_proxies(proxies, reqwest::Client::builder())
    }

    /// `proxies` decides which requests go through `proxied`, which must apply the same rules.
    fn with_proxies(proxies: Option<Matcher>, proxied: reqwest::ClientBuilder) -> std::io::Result<Self> {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let https: HttpsConnector<HttpConnector> =
            HttpsConnectorBuilder::new().with_webpki_roots().https_or_http().enable_http1().wrap_connector(http);
        let direct = std::sync::Arc::new(Pool::new(https, POOL_IDLE_TIMEOUT, POOL_MAX_IDLE_PER_HOST));
        let proxied = proxied
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Upstream { direct, proxied, proxies })
    }

    /// Sends one request; redirects are not followed, bodies are not decoded. A streamed
    /// body goes on as it arrives, except through an HTTP proxy (reqwest), where it is
    /// collected first.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: UpstreamRequestBody,
    ) -> Result<Response<UpstreamBody>, BoxError> {
        let uri: Uri = url.parse()?;
        if self.proxies.as_ref().is_some_and(|rules| rules.intercept(&uri).is_some()) {
            let body = match body {
                Either::Left(full) => full.collect().await?.to_bytes(),
                Either::Right(streamed) => streamed.collect().await?.to_bytes(),
            };
            let resp = self.proxied.request(method, url).headers(headers).body(body).send().await?;
            let resp: Response<reqwest::Body> = resp.into();
            return Ok(resp.map(|b| b.map_err(BoxError::from).boxed()));
        }
        let mut req = Request::new(body);
        *req.method_mut() = method;
        *req.uri_mut() = uri;
        *req.headers_mut() = headers;
        let resp = self.direct.send(req).await?;
        Ok(resp.map(|b| b.map_err(BoxError::from).boxed()))
    }
}

/// Whether the environment names a proxy as `Matcher::from_system` reads it on this platform
/// (`ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY`, either case, none under CGI's `REQUEST_METHOD`;
/// hyper-util's system settings are read on macOS and Windows only, with a feature not enabled
/// here). When none is set its rules proxy nothing, so they need not be asked per request.
fn names_a_proxy(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    if var("REQUEST_METHOD").is_some() {
        return false;
    }
    ["ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]
        .iter()
        .any(|name| var(name).is_some_and(|v| !v.is_empty()))
}

/// Why an upstream call gave no answer.
#[derive(Debug)]
pub(crate) enum NoAnswer {
    /// No response head within the connection's first-byte timeout.
    TimedOut,
    Failed,
}

impl Upstream {
    /// [`Upstream::send`], waiting at most `first_byte` for the response head.
    pub(crate) async fn send_within(
        &self,
        first_byte: Duration,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: UpstreamRequestBody,
    ) -> Result<Response<UpstreamBody>, NoAnswer> {
        match tokio::time::timeout(first_byte, self.send(method, url, headers, body)).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(_)) => Err(NoAnswer::Failed),
            Err(_) => Err(NoAnswer::TimedOut),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A one-request HTTP server that answers `ok` and hands back the request head it read.
    async fn one_answer() -> (String, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.expect("accept");
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = tcp.read(&mut buf).await.expect("read");
                assert!(n > 0, "the client closed before finishing its request head");
                head.extend_from_slice(&buf[..n]);
            }
            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
            tcp.write_all(answer).await.expect("write");
            String::from_utf8_lossy(&head).into_owned()
        });
        (format!("http://{addr}"), task)
    }

    async fn get(up: &Upstream, url: &str) -> String {
        let resp = up.send(Method::GET, url, HeaderMap::new(), Either::Left(Full::new(Bytes::new()))).await.unwrap();
        let body = crate::body::whole::whole(resp.into_body()).await.unwrap();
        String::from_utf8_lossy(&body).into_owned()
    }

    #[tokio::test]
    async fn a_request_the_proxy_rules_match_goes_through_the_proxy() {
        let (proxy, seen) = one_answer().await;
        let rules = Matcher::builder().http(proxy.clone()).build();
        let proxied = reqwest::Client::builder().proxy(reqwest::Proxy::http(&proxy).unwrap());
        let up = Upstream::with_proxies(Some(rules), proxied).unwrap();
        // The host does not resolve: only the proxy can answer.
        assert_eq!(get(&up, "http://provider.invalid/v1/models").await, "ok");
        let head = seen.await.unwrap();
        assert!(
            head.starts_with("GET http://provider.invalid/v1/models HTTP/1.1"),
            "a proxied request is sent in absolute form to the proxy: {head}"
        );
    }

    #[tokio::test]
    async fn an_https_url_is_spoken_over_tls() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let first_byte = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.expect("accept");
            let mut byte = [0u8; 1];
            tcp.read_exact(&mut byte).await.expect("read");
            byte[0]
        });
        let up = Upstream::new().unwrap();
        let empty = Either::Left(Full::new(Bytes::new()));
        let sent = up.send(Method::GET, &format!("https://{addr}/v1/models"), HeaderMap::new(), empty).await;
        assert!(sent.is_err(), "a server that never completes the handshake gives no answer");
        let byte = first_byte.await.unwrap();
        assert_eq!(byte, 0x16, "the first byte on the wire is a TLS handshake record, not plain HTTP");
    }

    #[test]
    fn the_rules_are_asked_only_when_the_environment_names_a_proxy() {
        let env = |set: &'static [(&'static str, &'static str)]| {
            move |name: &str| set.iter().find(|(n, _)| *n == name).map(|(_, v)| std::ffi::OsString::from(v))
        };
        assert!(!names_a_proxy(env(&[])), "no variable: nothing is proxied");
        assert!(!names_a_proxy(env(&[("NO_PROXY", "*"), ("HTTP_PROXY", "")])), "an empty proxy names none");
        for name in ["ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
            let set: &'static [(&'static str, &'static str)] = Box::leak(Box::new([(name, "http://proxy.invalid:9")]));
            assert!(names_a_proxy(env(set)), "{name} names a proxy");
        }
        let cgi = env(&[("REQUEST_METHOD", "GET"), ("HTTP_PROXY", "http://proxy.invalid:9")]);
        assert!(!names_a_proxy(cgi), "under CGI HTTP_PROXY is a request header, and hyper-util proxies nothing");
    }

    #[tokio::test]
    async fn a_request_no_proxy_exempts_goes_direct() {
        let (upstream, seen) = one_answer().await;
        let rules = Matcher::builder().http("http://proxy.invalid:9").no("127.0.0.1").build();
        let proxied = reqwest::Client::builder().proxy(reqwest::Proxy::http("http://proxy.invalid:9").unwrap());
        let up = Upstream::with_proxies(Some(rules), proxied).unwrap();
        assert_eq!(get(&up, &format!("{upstream}/v1/models")).await, "ok");
        let head = seen.await.unwrap();
        assert!(head.starts_with("GET /v1/models HTTP/1.1"), "a direct request is sent in origin form: {head}");
        assert!(head.to_ascii_lowercase().contains(&format!("host: {}", &upstream[7..])), "host header set: {head}");
    }
}
