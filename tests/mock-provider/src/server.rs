//! The HTTP server: [`MockProvider`] binds a listener, runs the axum router until shut down,
//! and exposes the script and the counters. Request intake (count, record, parse) lives here;
//! the dialects' answers live in `openai.rs`, `responses.rs`, `anthropic.rs` and `gemini.rs`.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::account::Accounts;
use crate::cache::PromptCaches;
use crate::fault::Fault;
use crate::playbook::Playbook;
use crate::record::{Ledger, RecordedRequest};
use crate::script::{KeyScript, ScriptFile};
use crate::{anthropic, gemini, openai, responses};

/// State shared by the handlers.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub playbook: Playbook,
    pub ledger: Ledger,
    /// The account-bound state each account was issued (enforcing keys only).
    pub accounts: Accounts,
    /// Each account's prompt cache (keys with a scripted `prompt_cache` only).
    pub caches: PromptCaches,
    /// Keys that arrived in a URL (`?key=` on a Gemini route), in arrival order.
    pub url_keys: std::sync::Mutex<Vec<String>>,
    /// The fake authorization server (off until configured).
    pub oauth: crate::oauth::Oauth,
    /// Requests being answered now, and the most at once.
    pub in_flight: crate::in_flight::InFlight,
}

/// A received request after intake: counted, recorded, body parsed if JSON.
#[derive(Debug)]
pub(crate) struct Intake {
    pub key: Option<String>,
    pub body: Bytes,
    pub json: Option<Value>,
    pub model: Option<String>,
    /// The request's `accept-encoding` header, if any.
    pub accept_encoding: Option<String>,
}

impl Shared {
    /// Counts and records a request under `key` and parses its body.
    pub fn intake(&self, method: Method, uri: &Uri, headers: HeaderMap, body: Bytes, key: Option<String>) -> Intake {
        self.intake_for(method, uri, uri.query().map(str::to_owned), headers, body, key, None)
    }

    /// [`Shared::intake`] with the query to record and, when the path names it (Gemini),
    /// the model.
    #[allow(clippy::too_many_arguments)]
    pub fn intake_for(
        &self,
        method: Method,
        uri: &Uri,
        query: Option<String>,
        headers: HeaderMap,
        body: Bytes,
        key: Option<String>,
        model: Option<String>,
    ) -> Intake {
        let json: Option<Value> = serde_json::from_slice(&body).ok();
        let model =
            model.or_else(|| json.as_ref().and_then(|j| j.get("model")).and_then(Value::as_str).map(str::to_owned));
        let accept_encoding =
            headers.get(axum::http::header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()).map(str::to_owned);
        self.ledger.record(RecordedRequest {
            method,
            path: uri.path().to_owned(),
            query,
            headers,
            body: body.clone(),
            key: key.clone(),
            model: model.clone(),
        });
        Intake { key, body, json, model, accept_encoding }
    }
}

/// A running mock provider. Dropping it stops the server; [`MockProvider::shutdown`] also
/// waits for in-flight answers to finish.
#[derive(Debug)]
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl MockProvider {
    /// Binds `127.0.0.1:0` and serves.
    pub async fn start() -> io::Result<Self> {
        Self::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
    }

    /// Binds `addr` and serves.
    pub async fn bind(addr: SocketAddr) -> io::Result<Self> {
        Self::serve(TcpListener::bind(addr).await?)
    }

    /// Serves on `listener` until [`MockProvider::shutdown`] or drop.
    pub fn serve(listener: TcpListener) -> io::Result<Self> {
        let (stop, stopped) = oneshot::channel::<()>();
        Self::serve_until(listener, async {
            let _ = stopped.await;
        })
        .map(|mut provider| {
            provider.stop = Some(stop);
            provider
        })
    }

    /// Serves on `listener` until `shutdown` completes (or [`MockProvider::shutdown`]).
    pub fn serve_until(listener: TcpListener, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<Self> {
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let app = router(Arc::clone(&shared));
        let task = tokio::spawn(async move { axum::serve(listener, app).with_graceful_shutdown(shutdown).await });
        Ok(MockProvider { addr, shared, stop: None, task: Some(task) })
    }

    /// Stops accepting, lets in-flight answers finish, and waits for the server to end.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash, no `/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Sets (or replaces) the script of `key`; its sequences start over.
    pub fn set_key(&self, key: &str, script: KeyScript) {
        self.shared.playbook.set_key(key, script);
    }

    /// Forgets `key`; it then gets 401.
    pub fn remove_key(&self, key: &str) {
        self.shared.playbook.remove_key(key);
    }

    /// Sets every key of a script file (and its authorization server, when it has one).
    pub fn load_script(&self, mut file: ScriptFile) {
        if let Some(config) = file.oauth.take() {
            self.shared.oauth.configure(config);
        }
        self.shared.playbook.load(file);
    }

    /// Turns the fake authorization server on (device code, token endpoint; `oauth.rs`).
    pub fn oauth_configure(&self, config: crate::OauthConfig) {
        self.shared.oauth.configure(config);
    }

    /// Refresh calls the token endpoint received.
    pub fn oauth_refresh_calls(&self) -> u64 {
        self.shared.oauth.refresh_calls()
    }

    /// The next refresh gets `fault` instead of new tokens (queued, one each).
    pub fn oauth_fail_next_refresh(&self, fault: crate::RefreshFault) {
        self.shared.oauth.fail_next_refresh(fault);
    }

    /// Every access token issued so far, oldest first.
    pub fn oauth_access_tokens(&self) -> Vec<String> {
        self.shared.oauth.access_tokens()
    }

    /// Every refresh token issued so far.
    pub fn oauth_refresh_tokens(&self) -> Vec<String> {
        self.shared.oauth.refresh_tokens()
    }

    /// Makes every access token issued so far answer 401 (as if expired or revoked).
    pub fn oauth_expire_access_tokens(&self) {
        for token in self.shared.oauth.access_tokens() {
            self.shared.playbook.remove_key(&token);
        }
    }

    /// Marks every refresh token used: the next refresh gets `refresh_token_reused`.
    pub fn oauth_revoke_refresh_tokens(&self) {
        self.shared.oauth.revoke_refresh_tokens();
    }

    /// Requests that presented `key` (known or not), on any route, since the last reset.
    pub fn hits(&self, key: &str) -> u64 {
        self.shared.ledger.hits(key)
    }

    /// The most requests the mock was answering at once (an answer counts until its body ends)
    /// since it started or since [`MockProvider::reset_in_flight`].
    pub fn max_in_flight(&self) -> u64 {
        self.shared.in_flight.max()
    }

    /// The requests the mock is answering now.
    pub fn in_flight(&self) -> u64 {
        self.shared.in_flight.now()
    }

    /// Starts the maximum over from the requests in flight now.
    pub fn reset_in_flight(&self) {
        self.shared.in_flight.reset();
    }

    /// Requests that presented `key` with a JSON body naming `model`.
    pub fn hits_for(&self, key: &str, model: &str) -> u64 {
        self.shared.ledger.hits_for(key, model)
    }

    /// Keys that arrived in a URL (a Gemini `?key=`, refused 400), in arrival order; never
    /// reset. A relay must leave this empty.
    pub fn keys_seen_in_urls(&self) -> Vec<String> {
        self.shared.url_keys.lock().map(|keys| keys.clone()).unwrap_or_default()
    }

    /// Every request received since the last reset, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.ledger.requests()
    }

    /// Zeroes the hit counters and empties the request log (scripts and sequence positions
    /// are kept).
    pub fn reset_counts(&self) {
        self.shared.ledger.reset();
    }

    /// Appends every request from now on to `path` as JSON lines (credentials redacted).
    pub fn dump_requests(&self, path: &std::path::Path) -> io::Result<()> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        self.shared.ledger.dump_to(file);
        Ok(())
    }

    /// Turns the request log on or off (on by default; off for benchmarks). Hits are
    /// counted either way.
    pub fn set_recording(&self, on: bool) {
        self.shared.ledger.set_recording(on);
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/models", get(list_models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1/responses", post(responses::create_response))
        .route("/v1/messages", post(anthropic::messages))
        .route("/v1/messages/count_tokens", post(anthropic::count_tokens))
        .route("/v1beta/models", get(gemini::list_models))
        .route("/v1beta/models/{*call}", post(gemini::call))
        // The ChatGPT backend a Codex sign-in talks to (`https://chatgpt.com/backend-api/codex`);
        // other `/backend-api/…` calls of Codex (workspace checks) get the router's 404.
        .route("/backend-api/codex/responses", post(responses::create_response))
        // The fake ChatGPT authorization server (`oauth.rs`).
        .route("/api/accounts/deviceauth/usercode", post(crate::oauth::user_code))
        .route("/api/accounts/deviceauth/token", post(crate::oauth::device_token))
        .route("/oauth/token", post(crate::oauth::token))
        .route("/oauth/authorize", axum::routing::get(crate::oauth::authorize))
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn_with_state(shared.clone(), crate::in_flight::count))
        .with_state(shared)
}

/// `GET /v1/models` exists in both dialects: a request carrying `x-api-key` or
/// `anthropic-version` gets the Anthropic answer, any other the OpenAI one.
async fn list_models(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if anthropic::is_anthropic(&headers) {
        anthropic::list_models(&shared, method, uri, headers, body).await
    } else {
        openai::list_models(&shared, method, uri, headers, body).await
    }
}

/// The fields of a model call's JSON body the mock acts on.
#[derive(Debug, Clone)]
pub(crate) struct ModelRequest {
    pub model: String,
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
}

impl Intake {
    /// Reads `model`, `stream` and `stream_options.include_usage` from the JSON body.
    pub fn model_request(&self) -> Result<ModelRequest, Fault> {
        let json = self
            .json
            .as_ref()
            .ok_or_else(|| Fault::BadRequest { message: "The request body is not valid JSON.".to_owned() })?;
        let model =
            self.model.clone().ok_or_else(|| Fault::BadRequest { message: "model: Field required".to_owned() })?;
        let flag = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
        Ok(ModelRequest {
            model,
            stream: flag(json.get("stream")),
            include_usage: flag(json.pointer("/stream_options/include_usage")),
        })
    }
}
