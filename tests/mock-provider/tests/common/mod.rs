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

/// Reads the body to its end (or until the connection breaks) and parses its events.
pub async fn read_sse(resp: reqwest::Response) -> Sse {
    let mut text = Vec::new();
    let mut broke = None;
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(bytes) => text.extend_from_slice(&bytes),
            Err(e) => {
                broke = Some(format!("{e:?}"));
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&text);
    let events = text
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
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
        .collect();
    Sse { events, broke }
}
