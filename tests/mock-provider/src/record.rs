//! What the mock saw: every received request as it arrived (for byte-identical forwarding
//! checks) and hit counters per key and per key + model.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use axum::http::{HeaderMap, Method};
use bytes::Bytes;

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: Method,
    /// The path, e.g. `/v1/messages`.
    pub path: String,
    /// The raw query string, without `?`.
    pub query: Option<String>,
    pub headers: HeaderMap,
    /// The body bytes exactly as received.
    pub body: Bytes,
    /// The credential presented in the dialect's header (`Authorization: Bearer` for OpenAI
    /// routes, `x-api-key` for Anthropic ones), known to the script or not.
    pub key: Option<String>,
    /// The `model` field of a JSON body, if any.
    pub model: Option<String>,
}

impl RecordedRequest {
    /// The first value of a header, if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

#[derive(Debug, Default)]
struct Counts {
    hits: HashMap<String, u64>,
    hits_by_model: HashMap<(String, String), u64>,
    requests: Vec<RecordedRequest>,
}

/// Hit counters and the request log. Recording can be switched off for benchmarks; hits
/// are always counted. With a dump file, every request is also appended to it as one JSON
/// line (credentials redacted) for tests that drive the `mock-provider` binary.
#[derive(Debug)]
pub(crate) struct Ledger {
    counts: Mutex<Counts>,
    recording: AtomicBool,
    dump: Mutex<Option<std::fs::File>>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger { counts: Mutex::default(), recording: AtomicBool::new(true), dump: Mutex::default() }
    }
}

/// Headers whose values never go into a dump.
const REDACTED: &[&str] = &["authorization", "x-api-key", "api-key", "cookie"];

/// One request as a JSON line: method, path, query, headers (credentials redacted), body text.
fn dump_line(r: &RecordedRequest) -> String {
    let headers: serde_json::Map<String, serde_json::Value> = r
        .headers
        .iter()
        .map(|(n, v)| {
            let value = if REDACTED.contains(&n.as_str()) {
                "[redacted]".into()
            } else {
                String::from_utf8_lossy(v.as_bytes()).into_owned()
            };
            (n.as_str().to_owned(), serde_json::Value::String(value))
        })
        .collect();
    let line = serde_json::json!({
        "method": r.method.as_str(),
        "path": r.path,
        "query": r.query,
        "headers": headers,
        "model": r.model,
        "body": String::from_utf8_lossy(&r.body),
    });
    format!("{line}\n")
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts the request under its key (and key + model) and logs it if recording is on.
    pub fn record(&self, request: RecordedRequest) {
        let recording = self.recording.load(Ordering::Relaxed);
        let mut counts = self.lock();
        if let Some(key) = &request.key {
            *counts.hits.entry(key.clone()).or_default() += 1;
            if let Some(model) = &request.model {
                *counts.hits_by_model.entry((key.clone(), model.clone())).or_default() += 1;
            }
        }
        drop(counts);
        if let Some(file) = self.dump.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
            let _ = std::io::Write::write_all(file, dump_line(&request).as_bytes());
        }
        if recording {
            self.lock().requests.push(request);
        }
    }

    /// Appends every request from now on to `file`.
    pub fn dump_to(&self, file: std::fs::File) {
        *self.dump.lock().unwrap_or_else(PoisonError::into_inner) = Some(file);
    }

    pub fn hits(&self, key: &str) -> u64 {
        self.lock().hits.get(key).copied().unwrap_or(0)
    }

    pub fn hits_for(&self, key: &str, model: &str) -> u64 {
        self.lock().hits_by_model.get(&(key.to_owned(), model.to_owned())).copied().unwrap_or(0)
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Zeroes every counter and empties the request log.
    pub fn reset(&self) {
        *self.lock() = Counts::default();
    }

    pub fn set_recording(&self, on: bool) {
        self.recording.store(on, Ordering::Relaxed);
    }
}
