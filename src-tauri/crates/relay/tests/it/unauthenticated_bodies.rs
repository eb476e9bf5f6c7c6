//! Token-less clients cannot make the relay buffer their bodies (issue 12): the token is
//! checked on the headers, before a byte of the body is read. Its own test binary, so the
//! process's peak memory is this test's alone.

use std::time::Duration;

use crate::common::{relay, Key, TestResult};
use switchyard_mock_provider::KeyScript;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Sends a 50 MB body without a token; returns the status the relay answered.
async fn upload(addr: String) -> std::io::Result<u16> {
    const SIZE: usize = 50 * 1024 * 1024;
    let mut s = TcpStream::connect(&addr).await?;
    let head = format!(
        "POST /c/c/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {SIZE}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await?;
    let chunk = vec![b'a'; 64 * 1024];
    let (mut rd, mut wr) = s.into_split();
    let writer = tokio::spawn(async move {
        let mut sent = 0;
        while sent < SIZE {
            if wr.write_all(&chunk).await.is_err() {
                break;
            }
            sent += chunk.len();
        }
    });
    let mut buf = vec![0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(20), rd.read(&mut buf)).await.map_err(std::io::Error::other)??;
    writer.abort();
    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
    Ok(text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_large_bodies_without_a_token_are_refused_without_being_buffered() -> TestResult {
    let keys = vec![Key { label: "a", secret: "sk-a", weight: 1, script: KeyScript::new(["m1"]) }];
    let r = relay("openai", &["m1"], keys, None).await?;
    let addr = r.url.trim_start_matches("http://").to_string();
    let before = status_kb("VmRSS:");
    let uploads: Vec<_> = (0..8).map(|_| tokio::spawn(upload(addr.clone()))).collect();
    for u in uploads {
        assert_eq!(u.await??, 401, "a token-less upload is refused on its headers");
    }
    let peak = status_kb("VmHWM:");
    let grown_mb = peak.saturating_sub(before) / 1024;
    assert!(
        grown_mb < 64,
        "8 x 50 MB token-less bodies grew the process by {grown_mb} MB (buffered they would be 400 MB)"
    );
    assert_eq!(r.mock.requests().len(), 0, "nothing reached the provider");
    let _ = r.stop().await?;
    Ok(())
}
