//! Model calls a client sends through nginx or straight to one replica: raw HTTP/1.1 over a
//! fresh connection each (`connection: close`), so every call is balanced anew; the answer's
//! status, headers and body. `io::Result` so client threads can hand results back.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

/// The model every key of the cluster serves.
pub const MODEL: &str = "m1";

/// One answer as the client got it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The replica nginx passed the call to (`x-upstream`; after a dead one, the list of tries).
    pub fn upstream(&self) -> String {
        self.header("x-upstream").unwrap_or("-").to_string()
    }
}

/// `POST /c/c/v1/messages` of `body` at `addr` with the relay `token` as `x-api-key`.
pub fn messages(addr: &str, token: &str, body: &Value, timeout: Duration) -> io::Result<Answer> {
    let body = body.to_string();
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(timeout))?;
    let req = format!(
        "POST /c/c/v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    parse(&String::from_utf8_lossy(&raw))
}

fn parse(raw: &str) -> io::Result<Answer> {
    let (head, body) = raw.split_once("\r\n\r\n").ok_or_else(|| io::Error::other(format!("no answer: {raw:.200}")))?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no status line: {head:.200}")))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Ok(Answer { status, headers, body: body.to_string() })
}

/// The body of a conversation's first call: `text` as its only (human) message, so a new
/// `text` is a new conversation and a new turn.
pub fn opening(text: &str) -> Value {
    json!({"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": text}]})
}

/// A new conversation saying `text`, with a 30 s read timeout.
pub fn new_conversation(addr: &str, token: &str, text: &str) -> io::Result<Answer> {
    messages(addr, token, &opening(text), Duration::from_secs(30))
}

/// The body of call `step` (0-based) of a tool loop that opened with `text`, as Claude Code
/// sends it: after the human message, per earlier step the assistant's `tool_use` and the
/// user's `tool_result` — the last human message stays, so the turn stays.
pub fn tool_loop(text: &str, step: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": text})];
    for i in 0..step {
        let id = format!("toolu_{i:02}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": id, "name": "ls", "input": {"path": "."}}
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("file{i}.txt")}
        ]}));
    }
    json!({
        "model": MODEL,
        "max_tokens": 8,
        "tools": [{"name": "ls", "description": "list files", "input_schema": {"type": "object"}}],
        "messages": messages,
    })
}
