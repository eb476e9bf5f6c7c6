//! `verify` never sends a key to where a redirect points (issue 12, docs/design.md invariant
//! 19): the endpoint answers 307 to a recording sink on another port; the key stays unverified
//! with a detail that says where the endpoint redirects, and the sink receives nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::{open, secret, TestResult};
use switchyard_engine::NewConnection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[tokio::test]
async fn verify_and_the_deep_check_treat_a_redirect_as_an_outcome() -> TestResult {
    let sink = TcpListener::bind("127.0.0.1:0").await?;
    let sink_url = format!("http://{}", sink.local_addr()?);
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((_s, _)) = sink.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    let from = TcpListener::bind("127.0.0.1:0").await?;
    let from_url = format!("http://{}", from.local_addr()?);
    let to = sink_url.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = from.accept().await {
            let to = to.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let head =
                    format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}/v1/models\r\ncontent-length: 0\r\n\r\n");
                let _ = s.write_all(head.as_bytes()).await;
            });
        }
    });
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let conn = NewConnection {
        slug: "a".into(),
        protocol: "anthropic".into(),
        base_url: from_url,
        models: vec!["m1".into()],
        ..Default::default()
    };
    engine.connection_add(conn, Some(secret("sk-ant-canary-redirect"))).await?;
    for deep in [false, true] {
        let report = engine.verify("a", None, deep, &|_| {}).await?;
        let result = report.results.first().ok_or("one profile verified")?;
        assert_eq!(result.outcome.as_str(), "unverified", "deep={deep}: a redirect proves nothing: {result:?}");
        assert!(
            result.detail.contains("redirects") && result.detail.contains(&sink_url),
            "deep={deep}: {}",
            result.detail
        );
        assert!(!result.detail.contains("canary"), "deep={deep}: no key in the detail");
    }
    // verify has returned: a followed redirect would have connected before it did.
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the redirect target never received a connection, let alone the key");
    Ok(())
}
