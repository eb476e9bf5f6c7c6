//! Test helpers: a mock with keys, HTTP requests in each dialect, and an SSE reader that
//! also reports how the stream ended.
#![allow(dead_code)] // each test file uses a different subset

use anyhow::Context;
use futures_util::StreamExt;
use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider};

pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A mock provider with these keys.
pub async fn mock_with(keys: Vec<(&str, KeyScript)>) -> anyhow::Result<MockProvider> {
    let mock = MockProvider::start().await.context("start mock")?;
    for (key, script) in keys {
        mock.set_key(key, script);
    }
    Ok(mock)
}

pub fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// `POST {base}{path}` with `Authorization: Bearer key`.
pub async fn openai_post(
    mock: &MockProvider,
    key: &str,
    path: &str,
    body: &Value,
) -> anyhow::Result<reqwest::Response> {
    Ok(client().post(format!("{}{path}", mock.base_url())).bearer_auth(key).json(body).send().await?)
}

/// `POST {base}{path}` with `x-api-key` and `anthropic-version`.
pub async fn anthropic_post(
    mock: &MockProvider,
    key: &str,
    path: &str,
    body: &Value,
) -> anyhow::Result<reqwest::Response> {
    Ok(client()
        .post(format!("{}{path}", mock.base_url()))
        .header("x-api-key", key)
        .header("anthropic-version", ANTHROPIC_VERSION)
        .json(body)
        .send()
        .await?)
}

/// A status, the headers and the JSON body of an answer.
pub async fn answer(resp: reqwest::Response) -> anyhow::Result<(u16, reqwest::header::HeaderMap, Value)> {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body: Value = resp.json().await.context("JSON body")?;
    Ok((status, headers, body))
}

pub fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: Option<String>,
    pub data: String,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

/// A read event stream: the complete events, and the transport error that ended it, if any.
#[derive(Debug)]
pub struct Sse {
    pub events: Vec<Event>,
    pub broke: Option<String>,
}

impl Sse {
    pub fn names(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.name.as_deref().unwrap_or("")).collect()
    }
}

/// Reads the body's bytes to its end, or until the connection breaks (then with the error).
pub async fn read_body(resp: reqwest::Response) -> (Vec<u8>, Option<String>) {
    let mut bytes = Vec::new();
    let mut broke = None;
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(e) => {
                broke = Some(format!("{e:?}"));
                break;
            }
        }
    }
    (bytes, broke)
}

/// Reads the body to its end (or until the connection breaks) and parses its events.
pub async fn read_sse(resp: reqwest::Response) -> Sse {
    let (bytes, broke) = read_body(resp).await;
    Sse { events: parse_sse(&bytes), broke }
}

/// The events of an SSE body: `\n` or `\r\n` line ends; comment lines (`: ...`) and
/// comment-only blocks are skipped.
pub fn parse_sse(bytes: &[u8]) -> Vec<Event> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    text.split("\n\n")
        .filter(|block| block.lines().any(|line| !line.is_empty() && !line.starts_with(':')))
        .map(|block| {
            let mut event = Event { name: None, data: String::new() };
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event.name = Some(name.to_owned());
                } else if let Some(data) = line.strip_prefix("data: ") {
                    event.data.push_str(data);
                }
            }
            event
        })
        .collect()
}

/// The three streaming APIs, each with a minimal request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Chat,
    Responses,
}

impl Api {
    pub const ALL: [Api; 3] = [Api::Anthropic, Api::Chat, Api::Responses];

    /// A model this test helper's requests name.
    pub const MODEL: &'static str = "m";

    pub fn path(self) -> &'static str {
        match self {
            Api::Anthropic => "/v1/messages",
            Api::Chat => "/v1/chat/completions",
            Api::Responses => "/v1/responses",
        }
    }

    /// A one-turn request saying `hi`.
    pub fn request(self, stream: bool) -> Value {
        match self {
            Api::Anthropic => serde_json::json!({
                "model": Self::MODEL, "max_tokens": 16, "stream": stream,
                "messages": [{"role": "user", "content": "hi"}],
            }),
            Api::Chat => serde_json::json!({
                "model": Self::MODEL, "stream": stream, "stream_options": {"include_usage": true},
                "messages": [{"role": "user", "content": "hi"}],
            }),
            Api::Responses => serde_json::json!({"model": Self::MODEL, "stream": stream, "input": "hi"}),
        }
    }

    /// `POST` of `body` with the API's credential headers and these extra headers; the
    /// client never decompresses.
    pub async fn post(
        self,
        mock: &MockProvider,
        key: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> anyhow::Result<reqwest::Response> {
        let client = reqwest::Client::builder().no_gzip().no_brotli().build()?;
        let mut request = client.post(format!("{}{}", mock.base_url(), self.path())).json(body);
        request = match self {
            Api::Anthropic => request.header("x-api-key", key).header("anthropic-version", ANTHROPIC_VERSION),
            Api::Chat | Api::Responses => request.bearer_auth(key),
        };
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Ok(request.send().await?)
    }
}

/// `text` with what differs between two identical requests masked (as `0`): the serial in ids
/// (`..._mock_N`, `...-mock-N`) and the `created` / `created_at` timestamps.
pub fn masked(text: &str) -> String {
    const MARKS: [&str; 4] = ["mock_", "mock-", "\"created\":", "\"created_at\":"];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, mark)) = MARKS.iter().filter_map(|m| rest.find(m).map(|i| (i, *m))).min() {
        let after = at + mark.len();
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push('0');
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}
