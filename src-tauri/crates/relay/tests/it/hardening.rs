//! The relay against hostile or broken peers (issue 12): token rotation reaches a running
//! relay, idle and token-less sockets cannot lock real clients out, headers stay on their hop,
//! and requests no client sends are refused.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{relay, user, Key, TestResult};
use serde_json::json;
use switchyard_mock_provider::KeyScript;
use switchyard_relay::{Limits, RelayState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn one_key() -> Vec<Key<'static>> {
    vec![Key { label: "a", secret: "sk-canary-hard", weight: 1, script: KeyScript::new(["m1"]) }]
}

async fn status_with(r: &common::Relay, token: &str) -> reqwest::Result<u16> {
    let body = json!({"model": "m1", "messages": [user("hi")]});
    let resp = r.http.post(format!("{}/chat/completions", r.base())).bearer_auth(token).json(&body).send().await?;
    Ok(resp.status().as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_token_reaches_the_running_relay() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let old = r.token.clone();
    assert_eq!(status_with(&r, &old).await?, 200, "the token works before rotation");
    let new = r.engine.relay_token(true).await?.expose().to_string();
    let started = Instant::now();
    let last = std::sync::Mutex::new((0, 0));
    let (rr, old_t, new_t, last_ref) = (&r, &old, &new, &last);
    let _ = common::eventually("the relay re-reads the token", || async move {
        let now = (status_with(rr, old_t).await?, status_with(rr, new_t).await?);
        *last_ref.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = now;
        Ok(now == (401, 200))
    })
    .await;
    let seen = *last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    assert!(started.elapsed() < Duration::from_secs(5), "within seconds: {:?}", started.elapsed());
    assert_eq!(seen, (401, 200), "within seconds the old token is refused and the new one accepted, no restart");
    let _ = r.stop().await?;
    Ok(())
}

/// A relay with small limits over the test relay's router.
async fn limited(
    r: &common::Relay,
    limits: Limits,
) -> Result<(String, tokio::sync::oneshot::Sender<()>), Box<dyn std::error::Error>> {
    let state = Arc::new(RelayState::new(r.router.clone(), switchyard_engine::Secret::new(r.token.clone()))?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(switchyard_relay::serve_state(listener, state, limits, async move {
        let _ = stopped.await;
    }));
    Ok((url, stop))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_flood_never_locks_out_a_real_request() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let limits = Limits { header_read_timeout: Duration::from_secs(30), max_connections: 20, unauthenticated: 15 };
    let (url, stop) = limited(&r, limits).await?;
    let addr = url.trim_start_matches("http://").to_string();
    let mut idle = Vec::new();
    for _ in 0..60 {
        idle.push(TcpStream::connect(&addr).await?);
    }
    let body = json!({"model": "m1", "messages": [user("real work")]});
    let client = reqwest::Client::new();
    let started = Instant::now();
    let resp = client.post(format!("{url}/c/c/v1/chat/completions")).bearer_auth(&r.token).json(&body).send().await?;
    assert_eq!(resp.status(), 200, "a real request is served while 60 idle sockets are open against a cap of 20");
    assert!(started.elapsed() < Duration::from_secs(5), "at once, not after the idle sockets time out");
    let mut closed = 0;
    for mut s in idle {
        let mut b = [0u8; 1];
        if let Ok(Ok(0)) = tokio::time::timeout(Duration::from_millis(20), s.read(&mut b)).await {
            closed += 1;
        }
    }
    assert!(closed >= 45, "the oldest idle sockets were closed to make room: {closed} of 60");
    let _ = stop.send(());
    let _ = r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_connections_are_closed_after_the_header_timeout() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let limits = Limits { header_read_timeout: Duration::from_millis(400), max_connections: 100, unauthenticated: 75 };
    let (url, stop) = limited(&r, limits).await?;
    let addr = url.trim_start_matches("http://").to_string();
    // Sends half a header and stops.
    let mut slow = TcpStream::connect(&addr).await?;
    slow.write_all(b"POST /c/c/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n").await?;
    // Kept alive after one request, then idle.
    let mut kept = TcpStream::connect(&addr).await?;
    let request = format!("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {}\r\n\r\n", r.token);
    kept.write_all(request.as_bytes()).await?;
    let mut buf = vec![0u8; 4096];
    let n = kept.read(&mut buf).await?;
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"), "the first request is answered");
    let started = Instant::now();
    for (name, s) in [("half a header", &mut slow), ("idle keep-alive", &mut kept)] {
        let end = tokio::time::timeout(Duration::from_secs(3), async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(end.is_ok(), "{name}: the relay closes the connection after the header-read timeout");
    }
    assert!(started.elapsed() < Duration::from_secs(3), "within the timeout, not never");
    let _ = stop.send(());
    let _ = r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_nominated_headers_and_cookies_stay_on_their_hop() -> TestResult {
    for mode in [None, Some("balanced")] {
        let keys = vec![
            Key { label: "a", secret: "sk-a", weight: 1, script: KeyScript::new(["m1"]) },
            Key { label: "b", secret: "sk-b", weight: 1, script: KeyScript::new(["m1"]) },
        ];
        let r = relay("openai", &["m1"], keys, mode).await?;
        let resp = r
            .http
            .post(format!("{}/chat/completions", r.base()))
            .bearer_auth(&r.token)
            .header("connection", "keep-alive, x-hop-secret")
            .header("x-hop-secret", "hop-value")
            .header("cookie", "session=client-cookie")
            .header("x-kept", "yes")
            .json(&json!({"model": "m1", "messages": [user("hi")]}))
            .send()
            .await?;
        assert_eq!(resp.status(), 200, "{mode:?}: served");
        let seen = r.mock.requests();
        let got = seen.last().ok_or("the mock saw the call")?;
        assert!(!got.headers.contains_key("x-hop-secret"), "{mode:?}: a header named in Connection is not forwarded");
        assert!(!got.headers.contains_key("cookie"), "{mode:?}: client cookies are not forwarded");
        assert!(!got.headers.contains_key("connection"), "{mode:?}: nor Connection itself");
        assert_eq!(got.headers.get("x-kept").and_then(|v| v.to_str().ok()), Some("yes"), "{mode:?}: others pass");
        let _ = r.stop().await?;
    }
    Ok(())
}

/// One raw HTTP/1.1 exchange; returns the status code.
async fn raw(addr: &str, head: &str) -> Result<u16, Box<dyn std::error::Error>> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(head.as_bytes()).await?;
    let mut buf = vec![0u8; 2048];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await??;
    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
    Ok(text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_no_client_sends_are_refused_before_anything_is_forwarded() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let addr = r.url.trim_start_matches("http://").to_string();
    let t = &r.token;
    let cases = [
        (format!("GET /c/c/v1/../../admin HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {t}\r\n\r\n"), 400, "dot-segments"),
        (format!("GET /c/c/v1/%2e%2E/models HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {t}\r\n\r\n"), 400, "encoded dot-segments"),
        (format!("TRACE /c/c/v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {t}\r\n\r\n"), 405, "TRACE"),
        (format!("GET /c/c/v1/models HTTP/1.1\r\nhost: rebind.example:4141\r\nauthorization: Bearer {t}\r\n\r\n"), 403, "a non-loopback Host (DNS rebinding)"),
        ("GET /healthz HTTP/1.1\r\nhost: rebind.example\r\n\r\n".to_string(), 403, "healthz with a non-loopback Host"),
        (format!("GET /c/c/v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: {t}\r\n\r\n"), 401, "a bare token without Bearer"),
        (format!("POST /c/c/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {t}\r\ncontent-length: 99999999999\r\n\r\n"), 413, "a declared length over the cap, without sending it"),
    ];
    for (head, want, what) in cases {
        assert_eq!(raw(&addr, &head).await?, want, "{what} is refused with {want}");
    }
    assert_eq!(r.mock.requests().len(), 0, "none of them reached the provider");
    let ok = format!("GET /c/c/v1/models HTTP/1.1\r\nhost: localhost:{}\r\nauthorization: Bearer {t}\r\n\r\n", 1);
    assert_eq!(raw(&addr, &ok).await?, 200, "a loopback name with any port is fine");
    let _ = r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dot_segments_hidden_behind_encoded_slashes_are_refused_on_the_wire() -> TestResult {
    // An upstream (or a proxy in front of it) that decodes `%2f` as `/` would see `../secret`;
    // such a path is refused like a plain dot-segment, before the token is spent on it.
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let addr = r.url.trim_start_matches("http://").to_string();
    let t = &r.token;
    for path in [
        "/c/c/v1/%2e%2e%2fsecret",
        "/c/c/v1/..%2fsecret",
        "/c/c/v1/..%2Fsecret",
        "/c/c/v1/models%2F..%2F..%2Fadmin",
        "/c/c/v1/.%2fmodels",
        "/c/c/v1/%2E%2E%5Csecret",
    ] {
        let head = format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {t}\r\n\r\n");
        assert_eq!(raw(&addr, &head).await?, 400, "{path}: a dot-segment behind an encoded slash is refused");
    }
    assert_eq!(r.mock.requests().len(), 0, "none of them reached the provider");
    let fine = format!("GET /c/c/v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {t}\r\n\r\n");
    assert_eq!(raw(&addr, &fine).await?, 200, "an ordinary path still passes");
    let _ = r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_upstream_is_answered_with_504_within_the_first_byte_timeout() -> TestResult {
    for mode in [None, Some("balanced")] {
        let slow = || KeyScript::new(["m1"]).model("m1", switchyard_mock_provider::Behaviour::slow(20_000));
        let keys = vec![
            Key { label: "a", secret: "sk-a", weight: 1, script: slow() },
            Key { label: "b", secret: "sk-b", weight: 1, script: slow() },
        ];
        let (r, clock) = common::relay_stepped("openai", &["m1"], keys, mode).await?;
        r.engine.set_first_byte_timeout("c", 1).await?;
        clock.step(1100); // the relay's snapshot reloads on the engine's clock
        let started = Instant::now();
        let resp = r.chat("m1", vec![user("anyone there?")], false).await?;
        let took = started.elapsed();
        assert_eq!(resp.status(), 504, "{mode:?}: an upstream that never answers gets a 504");
        let reason = resp.headers().get("x-switchyard-reason").and_then(|v| v.to_str().ok()).map(str::to_string);
        assert_eq!(
            reason.as_deref(),
            Some("upstream_timeout"),
            "{mode:?}: the relay's own reason, also after the route headers of a routed request"
        );
        assert!(took < Duration::from_secs(8), "{mode:?}: within the timeout per attempt, not never: {took:?}");
        let body: serde_json::Value = resp.json().await?;
        assert_eq!(body["error"]["type"], "server_error", "{mode:?}: in the OpenAI error shape: {body}");
        let r = r.stop().await?;
        let rows = r.engine.attempts("c", 10).await?;
        assert!(!rows.is_empty(), "{mode:?}: the attempts are recorded");
        assert!(rows.iter().all(|a| a.failure_kind.as_deref() == Some("network")), "{mode:?}: as network: {rows:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_redirect_is_passed_back_unfollowed() -> TestResult {
    // The sink a redirect points at must never see a request (it would carry the key).
    let sink = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let sink_url = format!("http://{}", sink.local_addr()?);
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((_s, _)) = sink.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let redirector = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let from = format!("http://{}", redirector.local_addr()?);
    let to = sink_url.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = redirector.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = s.read(&mut buf).await;
                let head = format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}/v1/chat/completions\r\ncontent-length: 0\r\n\r\n");
                let _ = s.write_all(head.as_bytes()).await;
            });
        }
    });
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(switchyard_engine::Engine::open(dir.path()).await?);
    let conn = switchyard_engine::NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{from}/v1"),
        models: vec!["m1".into()],
        ..Default::default()
    };
    engine.connection_add(conn, Some(switchyard_engine::Secret::new("sk-canary-redirect"))).await?;
    let token = engine.relay_token(false).await?;
    let bearer = token.expose().to_string();
    let router = Arc::new(switchyard_engine::Router::start(engine.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(switchyard_relay::serve(listener, router, token, async move {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    let resp = client
        .post(format!("{url}/c/c/v1/chat/completions"))
        .bearer_auth(&bearer)
        .json(&json!({"model": "m1", "messages": [user("hi")]}))
        .send()
        .await?;
    assert_eq!(resp.status(), 307, "the provider's redirect comes back to the client as it was");
    let location = resp.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    assert!(location.starts_with(&sink_url), "with its Location: {location}");
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0, "the relay never followed it with the key");
    let _ = stop.send(());
    task.await??;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_proves_the_relay_holds_the_token_without_anyone_sending_it() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let port: u16 = r.url.rsplit(':').next().and_then(|p| p.parse().ok()).ok_or("the relay's port")?;
    let token = switchyard_engine::Secret::new(r.token.clone());
    assert!(
        switchyard_relay::is_own_relay(port, &token).await,
        "the relay answers the challenge for its token and port"
    );
    let wrong = switchyard_engine::Secret::new("sy_not-this-data-dirs-token");
    assert!(!switchyard_relay::is_own_relay(port, &wrong).await, "a proof for another token does not pass");
    let addr = r.url.trim_start_matches("http://").to_string();
    let head = "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-switchyard-challenge: 0123456789abcdef0123\r\n\r\n";
    let mut s = TcpStream::connect(&addr).await?;
    s.write_all(head.as_bytes()).await?;
    let mut buf = vec![0u8; 2048];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await??;
    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(text.contains("\"proof\""), "a challenge without the token gets a proof: {text}");
    assert!(!text.contains("connections") && !text.contains(&r.token), "and nothing else: {text}");
    let _ = r.stop().await?;
    Ok(())
}

/// Issue 39: only Gemini's clients put a key in the URL, so only a Gemini API path takes the
/// relay token from `?key=`; on an OpenAI or Anthropic route a query key is no credential (401),
/// and — with the token in its header — it is still taken out of the query before anything is
/// forwarded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_query_is_a_credential_on_gemini_paths_only_and_never_forwarded() -> TestResult {
    for protocol in ["openai", "anthropic"] {
        let r = relay(protocol, &["m1"], one_key(), None).await?;
        let body = json!({"model": "m1", "max_tokens": 8, "messages": [user("hi")]});
        let with_key = format!("{}{}?key={}", r.base(), r.path(), r.token);
        let resp = r.http.post(&with_key).header("anthropic-version", "2023-06-01").json(&body).send().await?;
        assert_eq!(resp.status(), 401, "{protocol}: ?key= carries no relay token outside Gemini");
        assert_eq!(r.mock.requests().len(), 0, "{protocol}: nothing was forwarded");
        let both = format!("{}{}?beta=true&key={}", r.base(), r.path(), r.token);
        let resp = r
            .http
            .post(&both)
            .bearer_auth(&r.token)
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
            .await?;
        let status = resp.status();
        assert_eq!(status, 200, "{protocol}: the header's token serves: {}", resp.text().await?);
        let sent = r.mock.requests().pop().ok_or("a request upstream")?;
        assert_eq!(sent.query.as_deref(), Some("beta=true"), "{protocol}: the key pair is stripped, the rest kept");
    }
    Ok(())
}
