//! The scripted wire over real HTTP, for all three streaming APIs: every chunking delivers
//! the same bytes, CRLF line ends and keep-alive pings have their shapes, and gzip or brotli
//! apply only when the request accepts them. (That `whole` is one write, `bytes` N per
//! write, is not observable over TCP; `wire.rs`'s unit tests check the cutting itself.)

use std::io::Read;

use crate::common::*;
use switchyard_mock_provider::{Chunking, KeyScript, MockProvider, Wire};

const REPLY: &str = "One two three four five six.";

fn script(wire: Option<Wire>) -> KeyScript {
    let script = KeyScript::new([Api::MODEL]).reply(REPLY);
    match wire {
        Some(wire) => script.wire(wire),
        None => script,
    }
}

/// The masked body of a streamed answer, after checking it ended cleanly.
async fn stream(mock: &MockProvider, api: Api, key: &str, headers: &[(&str, &str)]) -> anyhow::Result<Vec<u8>> {
    let resp = api.post(mock, key, &api.request(true), headers).await?;
    assert_eq!(resp.status().as_u16(), 200, "{api:?} {key}: the stream starts");
    let (bytes, broke) = read_body(resp).await;
    assert!(broke.is_none(), "{api:?} {key}: the stream ends cleanly: {broke:?}");
    Ok(bytes)
}

fn text(bytes: &[u8]) -> String {
    masked(&String::from_utf8_lossy(bytes))
}

fn gunzip(bytes: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

fn unbrotli(bytes: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    brotli::Decompressor::new(bytes, 4096).read_to_end(&mut out)?;
    Ok(out)
}

const CHUNKINGS: [Chunking; 7] = [
    Chunking::Events,
    Chunking::Whole,
    Chunking::Bytes(1),
    Chunking::Bytes(7),
    Chunking::Bytes(100_000),
    Chunking::Seeded(42),
    Chunking::Seeded(3),
];

#[tokio::test]
async fn every_chunking_delivers_the_same_bytes() -> anyhow::Result<()> {
    let mut keys =
        vec![("sk-plain".to_owned(), script(None)), ("sk-default".to_owned(), script(Some(Wire::default())))];
    for (i, chunking) in CHUNKINGS.iter().enumerate() {
        keys.push((format!("sk-{i}"), script(Some(Wire::chunked(*chunking)))));
        keys.push((format!("sk-gz-{i}"), script(Some(Wire::chunked(*chunking).gzip()))));
        keys.push((format!("sk-br-{i}"), script(Some(Wire::chunked(*chunking).brotli()))));
    }
    let mock = mock_with(keys.iter().map(|(k, s)| (k.as_str(), s.clone())).collect()).await?;
    for api in Api::ALL {
        let plain = text(&stream(&mock, api, "sk-plain", &[]).await?);
        let events = parse_sse(plain.as_bytes());
        assert!(events.len() > 6, "{api:?}: a whole stream arrived: {plain}");
        assert_eq!(text(&stream(&mock, api, "sk-default", &[]).await?), plain, "{api:?}: the default wire is today's");
        for (i, chunking) in CHUNKINGS.iter().enumerate() {
            let got = text(&stream(&mock, api, &format!("sk-{i}"), &[]).await?);
            assert_eq!(got, plain, "{api:?} {chunking:?}: the same bytes, however cut");
            let gz = stream(&mock, api, &format!("sk-gz-{i}"), &[("accept-encoding", "gzip")]).await?;
            assert_eq!(text(&gunzip(&gz)?), plain, "{api:?} {chunking:?}: gzip decodes to the same bytes");
            let br = stream(&mock, api, &format!("sk-br-{i}"), &[("accept-encoding", "br")]).await?;
            assert_eq!(text(&unbrotli(&br)?), plain, "{api:?} {chunking:?}: brotli decodes to the same bytes");
        }
    }
    Ok(())
}

#[tokio::test]
async fn crlf_ends_every_line_with_cr_lf() -> anyhow::Result<()> {
    let mock =
        mock_with(vec![("sk-lf", script(None)), ("sk-crlf", script(Some(Wire::chunked(Chunking::Seeded(9)).crlf())))])
            .await?;
    for api in Api::ALL {
        let lf = text(&stream(&mock, api, "sk-lf", &[]).await?);
        let crlf = text(&stream(&mock, api, "sk-crlf", &[]).await?);
        let bare = crlf.match_indices('\n').filter(|(i, _)| !crlf[..*i].ends_with('\r')).count();
        assert_eq!(bare, 0, "{api:?}: no line ends in a bare \\n: {crlf:?}");
        assert!(crlf.contains("\r\n\r\n"), "{api:?}: events end in an empty CRLF line");
        assert_eq!(crlf.replace("\r\n", "\n"), lf, "{api:?}: otherwise the same stream");
    }
    Ok(())
}

#[tokio::test]
async fn pings_come_before_every_content_event() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-quiet", script(None)), ("sk-pings", script(Some(Wire::default().pings())))]).await?;
    let words = REPLY.split(' ').count();
    for api in Api::ALL {
        let quiet = text(&stream(&mock, api, "sk-quiet", &[]).await?);
        let pinged = text(&stream(&mock, api, "sk-pings", &[]).await?);
        let blocks: &[&str] = match api {
            Api::Anthropic => &[": keep-alive\n\n", "event: ping\ndata: {\"type\":\"ping\"}\n\n"],
            Api::Chat | Api::Responses => &[": ping\n\n"],
        };
        let is_content = |event: &Event| match api {
            Api::Anthropic => event.name.as_deref() == Some("content_block_delta"),
            Api::Chat => {
                event.json().pointer("/choices/0/delta/content").and_then(|c| c.as_str()).is_some_and(|c| !c.is_empty())
            }
            Api::Responses => event.name.as_deref() == Some("response.output_text.delta"),
        };
        let ping = blocks.concat();
        assert_eq!(pinged.matches(&ping).count(), words, "{api:?}: one ping block per content event: {pinged}");
        for (at, _) in pinged.match_indices(&ping) {
            let next = parse_sse(&pinged.as_bytes()[at + ping.len()..]).into_iter().next();
            assert!(next.as_ref().is_some_and(is_content), "{api:?}: a ping block precedes a content event: {next:?}");
        }
        if api != Api::Anthropic {
            assert!(!pinged.contains("event: ping"), "{api:?}: OpenAI dialects ping with comments only");
        }
        assert_eq!(pinged.replace(&ping, ""), quiet, "{api:?}: without the pings, the same stream");
        assert_eq!(
            parse_sse(quiet.as_bytes()).len() + usize::from(api == Api::Anthropic) * words,
            parse_sse(pinged.as_bytes()).len(),
            "{api:?}: comment blocks are no events; Anthropic's ping frames are"
        );
    }
    Ok(())
}

#[tokio::test]
async fn compression_only_when_scripted_and_accepted() -> anyhow::Result<()> {
    let mock = mock_with(vec![
        ("sk-plain", script(None)),
        ("sk-gz", script(Some(Wire::default().gzip()))),
        ("sk-both", script(Some(Wire::default().gzip().brotli()))),
    ])
    .await?;
    let encoding = |resp: &reqwest::Response| header(resp.headers(), "content-encoding").map(str::to_owned);
    for api in Api::ALL {
        let plain = text(&stream(&mock, api, "sk-plain", &[]).await?);
        for (key, accept, want) in [
            ("sk-gz", None, None),
            ("sk-gz", Some("identity"), None),
            ("sk-gz", Some("gzip;q=0, deflate"), None),
            ("sk-gz", Some("br"), None),
            ("sk-plain", Some("gzip, br"), None),
            ("sk-gz", Some("deflate, gzip"), Some("gzip")),
            ("sk-both", Some("gzip"), Some("gzip")),
            ("sk-both", Some("gzip, br"), Some("br")),
        ] {
            let headers: Vec<(&str, &str)> = accept.map(|a| ("accept-encoding", a)).into_iter().collect();
            for streaming in [true, false] {
                let resp = api.post(&mock, key, &api.request(streaming), &headers).await?;
                let got = encoding(&resp);
                let body = resp.bytes().await?;
                let why = format!("{api:?} {key} accept={accept:?} stream={streaming}");
                assert_eq!(got.as_deref(), want, "{why}: content-encoding");
                let decoded = match want {
                    None => body.to_vec(),
                    Some("gzip") => gunzip(&body)?,
                    Some(_) => unbrotli(&body)?,
                };
                if streaming {
                    assert_eq!(text(&decoded), plain, "{why}: the decoded stream is the plain one");
                } else {
                    let json: serde_json::Value = serde_json::from_slice(&decoded)?;
                    assert_eq!(json["model"], Api::MODEL, "{why}: the decoded body is the JSON answer: {json}");
                }
            }
        }
    }
    Ok(())
}
