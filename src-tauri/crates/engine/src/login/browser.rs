//! Signing an owned login in with the browser (docs/design.md, section 14): Codex's own PKCE
//! flow. [`Engine::oauth_browser_begin`] makes a verifier, its S256 challenge and a state, starts
//! a callback listener on port 1455 of both loopbacks, `127.0.0.1` and `[::1]` (Codex's port: the
//! issuer accepts only the redirect URI registered for Codex's client id,
//! `http://localhost:1455/auth/callback`, and `localhost` may resolve to either — an unbound one
//! could be taken by any local program to receive the code) and returns only the authorize URL to
//! open. Each connection is answered on its own (an idle one holds up nothing); a callback whose
//! `state` is not this sign-in's gets 400 and the listener goes on; the right one hands its code
//! over and stops.
//! [`Engine::oauth_browser_wait`] waits for that code, exchanges it at the token endpoint with the
//! verifier, and signs the profile in exactly as the device code does (`write_sign_in`: one
//! keychain item, `record_sign_in`, a new generation).

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use switchyard_vault::Secret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::login::endpoints::{LoginEndpoints, CLIENT_ID};
use crate::views::{BrowserSignInView, ProfileView};

/// Codex's callback port (the redirect URI the issuer knows for its client id).
pub const CALLBACK_PORT: u16 = 1455;

/// The scopes a browser sign-in asks for (Codex's: `offline_access` brings the refresh token).
const AUTHORIZE_SCOPE: &str = "openid profile email offline_access";

/// How long a browser sign-in waits for the user (as the device code does).
const WAIT: Duration = Duration::from_secs(15 * 60);

/// What the callback listener hands over: the authorization code, or the issuer's `error`.
type Callback = Result<Secret, String>;

/// A browser sign-in under way: what the code exchange needs, and the listener (stopped when
/// this is dropped).
#[derive(Debug)]
pub(crate) struct PendingBrowser {
    verifier: Secret,
    redirect_uri: String,
    /// The endpoints the sign-in began with: the code is exchanged there and the login bound to them.
    endpoints: LoginEndpoints,
    code: oneshot::Receiver<Callback>,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for PendingBrowser {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// `bytes` random bytes, base64url without padding.
fn random_text(bytes: usize) -> Result<String, EngineError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| EngineError::Internal(format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// The S256 code challenge of `verifier` (RFC 7636).
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The issuer's authorize URL with the parameters Codex's own login sends.
fn authorize_url(ep: &LoginEndpoints, redirect_uri: &str, challenge: &str, state: &str) -> Result<String, EngineError> {
    let params = [
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", redirect_uri),
        ("scope", AUTHORIZE_SCOPE),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("id_token_add_organizations", "true"),
        ("codex_cli_simplified_flow", "true"),
        ("state", state),
        ("originator", "codex_cli_rs"),
    ];
    reqwest::Url::parse_with_params(&format!("{}/oauth/authorize", ep.issuer), &params)
        .map(String::from)
        .map_err(|e| EngineError::Precondition(format!("the issuer URL is not usable: {e}")))
}

impl Engine {
    /// Starts a browser sign-in of `slug`'s `oauth` profile on Codex's callback port; returns the
    /// URL to open.
    pub async fn oauth_browser_begin(&self, slug: &str, profile: &str) -> Result<BrowserSignInView, EngineError> {
        self.oauth_browser_begin_on(slug, profile, CALLBACK_PORT).await
    }

    /// [`Engine::oauth_browser_begin`] with the callback on `port` (0: a free one — only for an
    /// issuer that accepts any localhost redirect, such as the mock provider in tests).
    pub async fn oauth_browser_begin_on(
        &self,
        slug: &str,
        profile: &str,
        port: u16,
    ) -> Result<BrowserSignInView, EngineError> {
        let row = self.oauth_row(slug, profile).await?;
        let endpoints = self.login_endpoints().await?;
        // A sign-in started before is given up first: its listener holds the port.
        drop(self.logins.take_browser(&row.id));
        let listeners = bind_callback(port).await?;
        let first = listeners.first().ok_or_else(|| EngineError::Internal("no callback listener".into()))?;
        let bound = first.local_addr().map_err(|e| EngineError::Internal(format!("callback listener: {e}")))?;
        let redirect_uri = format!("http://localhost:{}/auth/callback", bound.port());
        let verifier = Secret::new(random_text(64)?);
        let state = random_text(32)?;
        let url = authorize_url(&endpoints, &redirect_uri, &s256(verifier.expose()), &state)?;
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(listen_for_callback(listeners, state, tx, WAIT));
        self.logins
            .hold_browser(&row.id, PendingBrowser { verifier, redirect_uri, endpoints, code: rx, listener: task });
        tracing::info!(profile = %row.id, port = bound.port(), "browser sign-in started");
        Ok(BrowserSignInView { authorize_url: url })
    }

    /// Waits (up to 15 minutes) for the browser sign-in started with
    /// [`Engine::oauth_browser_begin`] to come back, exchanges its code and signs the profile in.
    /// `precondition` when none was started, it timed out, or the issuer refused.
    pub async fn oauth_browser_wait(&self, slug: &str, profile: &str) -> Result<ProfileView, EngineError> {
        let row = self.oauth_row(slug, profile).await?;
        let Some(mut pending) = self.logins.take_browser(&row.id) else {
            return Err(EngineError::Precondition(format!(
                "no browser sign-in of '{}' is under way; start one",
                row.label
            )));
        };
        let code = match tokio::time::timeout(WAIT, &mut pending.code).await {
            Err(_) => return Err(EngineError::Precondition("the browser sign-in timed out; start it again".into())),
            Ok(Err(_)) => {
                return Err(EngineError::Precondition(
                    "the browser sign-in ended without an answer (it waits 15 minutes); start it again".into(),
                ))
            }
            Ok(Ok(Err(error))) => {
                return Err(EngineError::Precondition(format!("the issuer refused the sign-in ({error})")))
            }
            Ok(Ok(Ok(code))) => code,
        };
        let endpoints = pending.endpoints.clone();
        let issued = self.exchange_code(&endpoints, &code, &pending.verifier, &pending.redirect_uri).await?;
        self.write_sign_in(slug, &row, issued, &endpoints).await
    }
}

/// How many callback connections are answered at once (a browser opens a few).
const MAX_CONNECTIONS: usize = 16;

/// How many free ports are tried for one free on both loopbacks (port 0 only).
const BIND_TRIES: usize = 5;

/// The callback on `port` at 127.0.0.1 and, where the host has an IPv6 loopback, at [::1] on the
/// same port: the redirect names `localhost`, which a browser may resolve to either, and a
/// loopback left unbound is one any local program could take to receive the code. Port 0 takes a
/// free port (tests).
async fn bind_callback(port: u16) -> Result<Vec<TcpListener>, EngineError> {
    for _ in 0..BIND_TRIES {
        let v4 = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|e| port_taken(port, &e))?;
        let bound = v4.local_addr().map_err(|e| EngineError::Internal(format!("callback listener: {e}")))?.port();
        match TcpListener::bind((Ipv6Addr::LOCALHOST, bound)).await {
            Ok(v6) => return Ok(vec![v4, v6]),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && port == 0 => continue,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => return Err(port_taken(port, &e)),
            // No IPv6 loopback on this host: 127.0.0.1 is all `localhost` can be.
            Err(_) => return Ok(vec![v4]),
        }
    }
    Err(EngineError::Precondition(
        "no port is free on both 127.0.0.1 and [::1] for the sign-in callback; try again".into(),
    ))
}

fn port_taken(port: u16, e: &std::io::Error) -> EngineError {
    EngineError::Precondition(format!(
        "the sign-in callback port {port} is taken on loopback ({e}); finish or close the other sign-in (Codex's \
         login uses the same port) and try again"
    ))
}

/// [`serve_callback`] for at most `window`: a sign-in begun and never finished frees the
/// callback port then (and a wait on it ends as given up).
async fn listen_for_callback(
    listeners: Vec<TcpListener>,
    state: String,
    tx: oneshot::Sender<Callback>,
    window: Duration,
) {
    if tokio::time::timeout(window, serve_callback(listeners, state, tx)).await.is_err() {
        tracing::info!("browser sign-in not finished in time; its callback port is closed");
    }
}

/// The next connection on any of `listeners`.
async fn accept_any(listeners: &[TcpListener]) -> std::io::Result<TcpStream> {
    std::future::poll_fn(|cx| {
        for listener in listeners {
            if let std::task::Poll::Ready(accepted) = listener.poll_accept(cx) {
                return std::task::Poll::Ready(accepted.map(|(stream, _)| stream));
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Answers callbacks on `listeners`, each connection on its own (an idle one — a browser's
/// pre-connect, another program — never holds up the next), until one carries `state`; hands
/// its code (or the issuer's error) over. A wrong or missing state is refused with 400 and the
/// listeners go on. Dropping this ends every connection being answered and frees the port.
async fn serve_callback(listeners: Vec<TcpListener>, state: String, tx: oneshot::Sender<Callback>) {
    let (found_tx, mut found) = tokio::sync::mpsc::channel::<Callback>(1);
    let mut answering = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            Some(outcome) = found.recv() => {
                let _ = tx.send(outcome);
                return;
            }
            accepted = accept_any(&listeners) => {
                let Ok(stream) = accepted else { return };
                while answering.try_join_next().is_some() {}
                if answering.len() < MAX_CONNECTIONS {
                    answering.spawn(answer(stream, state.clone(), found_tx.clone()));
                }
            }
        }
    }
}

/// One callback connection: a wrong path 404, a wrong state 400, the right one its page — and
/// its outcome goes to `found`.
async fn answer(mut stream: TcpStream, state: String, found: tokio::sync::mpsc::Sender<Callback>) {
    let Some(target) = request_target(&mut stream).await else { return };
    let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
    if path != "/auth/callback" {
        respond(&mut stream, "404 Not Found", "Not a Switchyard sign-in address.").await;
        return;
    }
    let params = query_params(query);
    if params.get("state") != Some(&state) {
        respond(&mut stream, "400 Bad Request", "This sign-in was not started here (state mismatch).").await;
        return;
    }
    let outcome = match (params.get("code"), params.get("error")) {
        (_, Some(error)) => Err(error.clone()),
        (Some(code), None) if !code.is_empty() => Ok(Secret::new(code.clone())),
        _ => Err("no code".to_string()),
    };
    let page = if outcome.is_ok() {
        ("200 OK", "Signed in. You can close this window and return to Switchyard.")
    } else {
        ("400 Bad Request", "The sign-in was refused. Return to Switchyard and try again.")
    };
    respond(&mut stream, page.0, page.1).await;
    let _ = found.send(outcome).await;
}

/// The request target of one HTTP request on `stream` (its head only; 5 s at most).
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(2048);
    let read = async {
        let mut chunk = [0u8; 2048];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(5), read).await.ok()??;
    let head = String::from_utf8_lossy(&buf);
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_string)
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let page = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.write_all(page.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A query string's fields, percent-decoded (`+` is a space).
fn query_params(query: &str) -> HashMap<String, String> {
    query.split('&').filter_map(|pair| pair.split_once('=')).map(|(k, v)| (decode(k), decode(v))).collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::net::TcpListener;
    use tokio::sync::oneshot;

    use super::{decode, listen_for_callback, query_params, s256};

    #[tokio::test]
    async fn an_unfinished_sign_in_frees_its_port_when_its_window_ends() -> Result<(), Box<dyn std::error::Error>> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(listen_for_callback(vec![listener], "state".into(), tx, Duration::from_millis(100)));
        assert!(TcpListener::bind(("127.0.0.1", port)).await.is_err(), "the port is held while the sign-in waits");
        tokio::time::timeout(Duration::from_secs(5), task).await??;
        assert!(TcpListener::bind(("127.0.0.1", port)).await.is_ok(), "after its window the port is free again");
        assert!(rx.await.is_err(), "a wait on it learns it was given up (no code will come)");
        Ok(())
    }

    #[test]
    fn s256_is_base64url_of_the_sha256_without_padding() {
        assert_eq!(
            s256("a-verifier-of-the-test"),
            "nrD35X0oUd-IWKhzX1uuzlWthqxRNrmCa9l5qpz9o3w",
            "computed independently (Python hashlib)"
        );
    }

    #[test]
    fn a_callback_query_is_percent_decoded() {
        let q = query_params("code=a%2Fb+c&state=xyz&bad=%zz&end=%4");
        assert_eq!(q.get("code").map(String::as_str), Some("a/b c"), "%2F and +");
        assert_eq!(q.get("bad").map(String::as_str), Some("%zz"), "a broken escape stays");
        assert_eq!(q.get("end").map(String::as_str), Some("%4"), "a cut escape stays");
        assert_eq!(decode("plain"), "plain", "nothing to decode");
    }
}
