//! The simulated agent workload, deterministic from a seed: conversations of turns of tool
//! calls, built as Claude Code sends them (one shared system prompt and tool list, a cache
//! mark on the system prompt and on the newest message), with token sizes turned into body
//! bytes at `4 / scale` bytes per token (the mock counts `scale` tokens per 4 bytes, so the
//! relay records the unscaled token numbers).

use serde_json::{json, Value};

/// The system prompt and tools, in tokens (shared by every conversation, as Claude Code's).
const SYSTEM_TOKENS: u64 = 12_000;
/// A conversation stops taking turns before its context would pass this many tokens.
pub const CONTEXT_CAP: u64 = 150_000;

/// splitmix64: a small deterministic generator (no dependency for a benchmark).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// One turn: a human message, then `calls` tool calls (each an assistant `tool_use` and a
/// user `tool_result`), then the final assistant text. Sizes in tokens.
#[derive(Debug, Clone)]
pub struct Turn {
    pub prompt: u64,
    pub calls: Vec<(u64, u64)>,
    pub answer: u64,
}

impl Turn {
    fn growth(&self) -> u64 {
        self.prompt + self.answer + self.calls.iter().map(|(a, b)| a + b).sum::<u64>()
    }
}

/// One conversation's plan; [`Conversation::next_request`] plays it request by request.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub index: usize,
    pub session: String,
    pub turns: Vec<Turn>,
    /// Position: (turn, tool calls already answered in it).
    at: (usize, usize),
    messages: Vec<Value>,
}

/// The plan of `count` conversations of 1–20 turns of 1–10 tool calls (both uniform, the
/// issue's workload; a conversation ends early rather than pass `CONTEXT_CAP`).
pub fn plan(seed: u64, count: usize) -> Vec<Conversation> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|index| {
            let mut turns = Vec::new();
            let mut context = SYSTEM_TOKENS;
            for _ in 0..rng.range(1, 20) {
                let calls = (0..rng.range(1, 10)).map(|_| (rng.range(150, 400), rng.range(200, 1500))).collect();
                let turn = Turn { prompt: rng.range(200, 1000), calls, answer: rng.range(200, 800) };
                if context + turn.growth() > CONTEXT_CAP && !turns.is_empty() {
                    break;
                }
                context += turn.growth();
                turns.push(turn);
            }
            Conversation {
                index,
                session: format!("00000000-0000-4000-8000-{index:012}"),
                turns,
                at: (0, 0),
                messages: Vec::new(),
            }
        })
        .collect()
}

impl Conversation {
    /// Requests this conversation sends (one per tool call and one per turn's answer).
    pub fn requests(&self) -> usize {
        self.turns.iter().map(|t| t.calls.len() + 1).sum()
    }

    /// The next request body (`scale` tokens per 4 bytes), or `None` when the conversation is
    /// over. The answer the request gets is not read: the plan says what the assistant did.
    pub fn next_request(&mut self, scale: u64) -> Option<Value> {
        let (t, c) = self.at;
        let turn = self.turns.get(t)?.clone();
        let tag = format!("c{} t{t} ", self.index);
        if c == 0 {
            let block = json!({"type": "text", "text": ""});
            self.messages.push(sized(json!({"role": "user", "content": [block]}), turn.prompt, &tag, scale));
        }
        let body = self.body(scale);
        if let Some((call, result)) = turn.calls.get(c) {
            let id = format!("toolu_sim_{}_{t}_{c}", self.index);
            let used = json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": ""}});
            self.messages.push(sized(json!({"role": "assistant", "content": [used]}), *call, &tag, scale));
            let back = json!({"type": "tool_result", "tool_use_id": id, "content": ""});
            self.messages.push(sized(json!({"role": "user", "content": [back]}), *result, &tag, scale));
            self.at = (t, c + 1);
        } else {
            let block = json!({"type": "text", "text": ""});
            self.messages.push(sized(json!({"role": "assistant", "content": [block]}), turn.answer, &tag, scale));
            self.at = (t + 1, 0);
        }
        Some(body)
    }

    /// The request as sent now: the shared head, the messages so far, cache marks on the
    /// system prompt and on the newest message's last block (Claude Code moves that one).
    fn body(&self, scale: u64) -> Value {
        let mut messages = self.messages.clone();
        if let Some(block) = messages.last_mut().and_then(|m| m["content"].as_array_mut()).and_then(|c| c.last_mut()) {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
        let system = sized(json!({"type": "text", "text": ""}), SYSTEM_TOKENS, "system ", scale);
        json!({
            "model": "m1",
            "max_tokens": 32000,
            "stream": true,
            "system": [{"type": "text", "text": system["text"], "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "Bash", "description": "Runs a shell command.",
                       "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
            "messages": messages,
        })
    }
}

/// `value` (a message, or a text block) with its one text field padded so that its JSON is
/// `tokens · 4 / scale` bytes (at least its bare structure).
fn sized(mut value: Value, tokens: u64, tag: &str, scale: u64) -> Value {
    let target = usize::try_from(tokens.saturating_mul(4) / scale.max(1)).unwrap_or(usize::MAX);
    let bare = value.to_string().len();
    let mut text = String::with_capacity(target.saturating_sub(bare));
    text.push_str(tag);
    while text.len() < target.saturating_sub(bare) {
        text.push_str("lorem ipsum ");
    }
    text.truncate(target.saturating_sub(bare).max(tag.len()));
    for pointer in ["/text", "/content/0/text", "/content/0/content", "/content/0/input/command"] {
        if let Some(slot) = value.pointer_mut(pointer).filter(|v| v.is_string()) {
            *slot = Value::String(text);
            break;
        }
    }
    value
}
