//! No credential-bearing request follows a redirect (docs/design.md, invariant 19): a 302/307 from the
//! endpoint to another host and port is an outcome, and the sink it points at receives nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use switchyard_core::Protocol;
use switchyard_providers::discovery::{http_client, list_models, probe_model, CallError};
use switchyard_providers::endpoint::Endpoint;
use switchyard_vault::Secret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers every request with `status` and `Location: to`.
async fn redirector(status: u16, to: String) -> std::io::Result<String> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", l.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let head =
                    format!("HTTP/1.1 {status} Moved\r\nlocation: {to}/v1/models?k=1\r\ncontent-length: 0\r\n\r\n");
                let _ = s.write_all(head.as_bytes()).await;
            });
        }
    });
    Ok(url)
}

/// Counts connections and records what arrives.
async fn sink() -> std::io::Result<(String, Arc<AtomicUsize>, Arc<std::sync::Mutex<Vec<u8>>>)> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", l.local_addr()?);
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (h, s2) = (hits.clone(), seen.clone());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            h.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            if let Ok(n) = s.read(&mut buf).await {
                if let Ok(mut v) = s2.lock() {
                    v.extend_from_slice(&buf[..n]);
                }
            }
        }
    });
    Ok((url, hits, seen))
}

#[tokio::test]
async fn a_redirect_is_an_outcome_and_the_key_goes_nowhere_else() -> Result<(), Box<dyn std::error::Error>> {
    let (sink_url, hits, seen) = sink().await?;
    let client = http_client()?;
    for status in [301u16, 302, 307, 308] {
        let from = redirector(status, sink_url.clone()).await?;
        for protocol in [Protocol::Anthropic, Protocol::Openai] {
            let ep = Endpoint { protocol, base_url: &from, headers: &[] };
            let secret = Secret::new("sk-ant-canary-redirect");
            let listing = list_models(&client, &ep, &secret).await;
            let Err(CallError::Transport(why)) = listing else {
                panic!("{status}: a redirect is an outcome: {listing:?}")
            };
            assert!(why.contains("redirects") && why.contains(&sink_url), "{status}: the outcome says where: {why}");
            assert!(
                !why.contains("k=1") && !why.contains("canary"),
                "{status}: no query, no key in the message: {why}"
            );
            let probe = probe_model(&client, &ep, &secret, "m").await;
            assert!(matches!(probe, Err(CallError::Transport(_))), "{status}: the deep check does not follow either");
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the redirect target never receives a request");
    let seen = seen.lock().map(|v| v.clone()).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&seen).contains("canary"), "and never the key");
    Ok(())
}
