//! The body skim (`body_skim/`) against the `Value`-based keys of `turn.rs` and
//! `conversation.rs`: on generated Anthropic, chat-completions and Responses bodies (tool
//! loops, new human messages, moved `cache_control` marks, reordered keys, varied whitespace,
//! unicode and escapes) both say SAME or DIFFERENT for exactly the same pairs, and read the
//! same model and ids; arbitrary bytes never panic. A skim with a memo (`DigestMemo`) shared by
//! the bodies of a case gives exactly the keys and reads of one without.

use proptest::prelude::*;
use serde_json::{json, Value};
use switchyard_core::body_skim::{BodySkim, DigestMemo, NotJson, Wants};
use switchyard_core::connection::Protocol;
use switchyard_core::conversation::conversation_key;
use switchyard_core::turn::{turn_key, ClientIds};

/// A small deterministic generator (proptest gives the seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Anthropic,
    Chat,
    Responses,
    Gemini,
}

impl Shape {
    fn protocol(self) -> Protocol {
        match self {
            Shape::Anthropic => Protocol::Anthropic,
            Shape::Gemini => Protocol::Gemini,
            _ => Protocol::Openai,
        }
    }
}

fn text(r: &mut Rng) -> String {
    const PIECES: [&str; 12] = [
        "fix the failing test",
        "naïve café",
        "emoji 🦀 and 𝄞",
        "a \"quoted\" word",
        "back\\slash",
        "new\nline\tand tab",
        "\u{1}ctl\u{1f}",
        "</script>",
        "日本語のテキスト",
        "fn main() {\n    println!(\"{}\", 1);\n}\n",
        "",
        "{\"json\": [1, 2]}",
    ];
    let mut s = String::new();
    for _ in 0..1 + r.below(3) {
        s.push_str(PIECES[r.below(PIECES.len())]);
    }
    s.push_str(&r.below(1000).to_string());
    s
}

/// Builds the messages of one conversation, turn by turn.
struct Conversation {
    shape: Shape,
    items: Vec<Value>,
    n: usize,
}

impl Conversation {
    fn human(&mut self, r: &mut Rng) {
        let t = text(r);
        let m = match (self.shape, r.below(3)) {
            (Shape::Anthropic, 0) | (Shape::Chat, 0) => json!({"role": "user", "content": t}),
            (Shape::Anthropic, _) => {
                let mut blocks = vec![json!({"type": "text", "text": t})];
                if r.chance(30) {
                    blocks.push(json!({"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}}));
                }
                if r.chance(30) {
                    // a tool result next to a person's words is still human
                    blocks.insert(0, json!({"type": "tool_result", "tool_use_id": "x", "content": "ok"}));
                }
                json!({"role": "user", "content": blocks})
            }
            (Shape::Chat, _) => json!({"role": "user", "content": [{"type": "text", "text": t}]}),
            (Shape::Responses, 0) => json!(t),
            (Shape::Responses, 1) => json!({"role": "user", "content": t}),
            (Shape::Responses, _) => json!({"role": "user", "content": [{"type": "input_text", "text": t}]}),
            (Shape::Gemini, 0) => json!({"parts": [{"text": t}]}), // no role: the user's
            (Shape::Gemini, _) => {
                let mut parts = vec![json!({"text": t})];
                if r.chance(30) {
                    parts.push(json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}));
                }
                if r.chance(30) {
                    // a function response next to a person's words is still human
                    parts.insert(0, json!({"functionResponse": {"name": "x", "response": {"ok": true}}}));
                }
                json!({"role": "user", "parts": parts})
            }
        };
        self.items.push(m);
    }

    fn tool_round(&mut self, r: &mut Rng) {
        self.n += 1;
        let id = format!("call_{}", self.n);
        let input = json!({"path": text(r), "lines": r.below(500), "ratio": 0.25, "deep": {"a": [true, null]}});
        match self.shape {
            Shape::Anthropic => {
                self.items.push(json!({"role": "assistant", "content": [
                    {"type": "text", "text": text(r)},
                    {"type": "tool_use", "id": id, "name": "read_file", "input": input}]}));
                let content = if r.chance(50) { json!(text(r)) } else { json!([{"type": "text", "text": text(r)}]) };
                self.items.push(json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": id, "content": content, "is_error": false}]}));
            }
            Shape::Chat => {
                self.items.push(json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": id, "type": "function", "function": {"name": "read_file", "arguments": input.to_string()}}]}));
                self.items.push(json!({"role": "tool", "tool_call_id": id, "content": text(r)}));
            }
            Shape::Responses => {
                self.items.push(
                    json!({"type": "function_call", "call_id": id, "name": "read_file", "arguments": input.to_string()}),
                );
                self.items.push(json!({"type": "function_call_output", "call_id": id, "output": text(r)}));
            }
            Shape::Gemini => {
                self.items.push(json!({"role": "model", "parts": [
                    {"text": text(r)},
                    {"functionCall": {"name": "read_file", "args": input}, "thoughtSignature": "c2lnbmVk"}]}));
                self.items.push(json!({"role": "user", "parts": [
                    {"functionResponse": {"name": "read_file", "response": {"content": text(r)}}}]}));
            }
        }
    }

    fn answer(&mut self, r: &mut Rng) {
        let t = text(r);
        self.items.push(match self.shape {
            Shape::Responses => json!({"role": "assistant", "content": [{"type": "output_text", "text": t}]}),
            Shape::Gemini => json!({"role": "model", "parts": [{"text": t}]}),
            _ => json!({"role": "assistant", "content": t}),
        });
    }

    fn body(&self, r: &mut Rng, system: &Value) -> Value {
        let mut b = json!({"model": "model-01", "max_tokens": 4096, "temperature": 0.5, "stream": true});
        match self.shape {
            Shape::Anthropic => {
                b["system"] = system.clone();
                b["messages"] = json!(self.items);
                if r.chance(70) {
                    b["metadata"] = json!({"user_id": r#"{"device_id":"d","session_id":"cc-sess"}"#});
                }
                b["tools"] = json!([{"name": "read_file", "description": "Reads", "input_schema": {"type": "object"}}]);
            }
            Shape::Chat => {
                let mut items = vec![json!({"role": "system", "content": system.to_string()})];
                items.extend(self.items.iter().cloned());
                b["messages"] = json!(items);
                if r.chance(50) {
                    b["prompt_cache_key"] = json!("pck-1");
                }
            }
            Shape::Responses => {
                b["instructions"] = json!(system.to_string());
                b["input"] = if self.items.len() == 1 && self.items[0].is_string() {
                    self.items[0].clone() // `input: "text"`
                } else {
                    json!(self.items)
                };
                b["previous_response_id"] = json!("resp_1");
                b["prompt_cache_key"] = json!("0199-sess");
            }
            Shape::Gemini => {
                // The model is in the path; generationConfig, tools and systemInstruction in the body.
                b = json!({"generationConfig": {"maxOutputTokens": 4096, "temperature": 0.5}});
                b["systemInstruction"] = json!({"parts": [{"text": system.to_string()}]});
                b["contents"] = json!(self.items);
                b["tools"] = json!([{"functionDeclarations": [{"name": "read_file", "description": "Reads"}]}]);
            }
        }
        b
    }
}

/// Removes every `cache_control` and marks random objects (system blocks, message blocks).
fn move_cache_marks(v: &mut Value, r: &mut Rng) {
    match v {
        Value::Object(m) => {
            m.remove("cache_control");
            for (_, x) in m.iter_mut() {
                move_cache_marks(x, r);
            }
            if r.chance(15) {
                m.insert("cache_control".into(), json!({"type": "ephemeral", "ttl": "5m"}));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| move_cache_marks(x, r)),
        _ => {}
    }
}

/// Changes the `k`-th string of the messages (mod their count); `false` when there is none.
fn change_a_string(v: &mut Value, k: usize) -> bool {
    fn strings<'v>(v: &'v mut Value, out: &mut Vec<&'v mut String>) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) => a.iter_mut().for_each(|x| strings(x, out)),
            Value::Object(m) => m.iter_mut().for_each(|(_, x)| strings(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    strings(v, &mut all);
    let n = all.len();
    match all.get_mut(k % n.max(1)) {
        Some(s) => {
            s.push('!');
            true
        }
        None => false,
    }
}

/// How one test case writes JSON (kept for all its bodies: a client serialises the same way
/// on every call).
#[derive(Clone, Copy)]
struct Style {
    ascii_only: bool,
    escaped_keys: bool,
}

/// Writes `v` with random whitespace and object key order.
fn render(v: &Value, style: Style, r: &mut Rng) -> Vec<u8> {
    fn ws(out: &mut Vec<u8>, r: &mut Rng) {
        if r.chance(25) {
            for _ in 0..1 + r.below(3) {
                out.push(b" \n\t\r"[r.below(4)]);
            }
        }
    }
    fn string(out: &mut Vec<u8>, s: &str, ascii_only: bool) {
        if !ascii_only {
            out.extend(serde_json::to_vec(s).unwrap_or_default());
            return;
        }
        let mut esc = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => esc.push_str("\\\""),
                '\\' => esc.push_str("\\\\"),
                c if (c as u32) < 0x20 || !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        esc.push_str(&format!("\\u{u:04x}"));
                    }
                }
                c => esc.push(c),
            }
        }
        esc.push('"');
        out.extend(esc.into_bytes());
    }
    fn go(v: &Value, style: Style, r: &mut Rng, out: &mut Vec<u8>) {
        ws(out, r);
        match v {
            Value::Object(m) => {
                let mut entries: Vec<_> = m.iter().collect();
                for i in (1..entries.len()).rev() {
                    entries.swap(i, r.below(i + 1));
                }
                out.push(b'{');
                for (i, (k, x)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    ws(out, r);
                    if style.escaped_keys {
                        string(out, k, style.ascii_only);
                        let n = out.len();
                        // spell every `e` of the key as `\u0065`
                        let tail: Vec<u8> = out.drain(n - k.len() - 2..).collect();
                        for &c in &tail {
                            if c == b'e' {
                                out.extend_from_slice(b"\\u0065");
                            } else {
                                out.push(c);
                            }
                        }
                    } else {
                        string(out, k, style.ascii_only);
                    }
                    ws(out, r);
                    out.push(b':');
                    go(x, style, r, out);
                }
                ws(out, r);
                out.push(b'}');
            }
            Value::Array(a) => {
                out.push(b'[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    go(x, style, r, out);
                }
                ws(out, r);
                out.push(b']');
            }
            Value::String(s) => string(out, s, style.ascii_only),
            other => out.extend(serde_json::to_vec(other).unwrap_or_default()),
        }
        ws(out, r);
    }
    let mut out = Vec::new();
    go(v, style, r, &mut out);
    out
}

const HEADER_SETS: [&[(&str, &str)]; 5] = [
    &[],
    &[("x-session-id", "generic")],
    &[("x-claude-code-session-id", "cc-hdr")],
    &[("session-id", "0199-sess")],
    &[("x-switchyard-conversation", "conv"), ("session-id", "s")],
];

fn header<'h>(headers: &'h [(&str, &'h str)]) -> impl Fn(&str) -> Option<&'h str> + 'h {
    move |name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// Both keys the old way (parse to `Value`) and the new way (skim), for each header set.
fn keys(shape: Shape, bytes: &[u8]) -> Vec<(String, String, String, String)> {
    let p = shape.protocol();
    let value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let skim = BodySkim::read(p, bytes).unwrap_or_else(|NotJson| BodySkim::empty(p));
    HEADER_SETS
        .iter()
        .map(|h| {
            let old_ids = ClientIds::read(header(h), &value);
            let new_ids = skim.client_ids(ClientIds::read_headers(header(h)));
            assert_eq!(old_ids, new_ids, "the same ids from headers + skim as from headers + Value");
            let old_turn = turn_key(p, "c", &old_ids, &value).0;
            let old_conv = conversation_key(p, "c", &old_ids, &value).0.as_str().to_string();
            let new_turn = skim.turn_key("c", &new_ids).0;
            let new_conv = skim.conversation_key("c", &new_ids).0.as_str().to_string();
            assert_eq!(
                skim.keys("c", &new_ids),
                (skim.turn_key("c", &new_ids), skim.conversation_key("c", &new_ids)),
                "both keys at once (one anchor where the turn and the opening meet) are the keys one at a time"
            );
            // the lazy read gives the same keys as the full one
            let lazy = BodySkim::read_for(p, bytes, Wants::for_ids(&ClientIds::read_headers(header(h)), true))
                .unwrap_or_else(|NotJson| BodySkim::empty(p));
            let lazy_ids = lazy.client_ids(ClientIds::read_headers(header(h)));
            assert_eq!(lazy_ids.session, new_ids.session, "a lazy read finds the same session");
            assert_eq!(lazy.turn_key("c", &lazy_ids).0, new_turn, "a lazy read gives the same turn key");
            assert_eq!(
                lazy.conversation_key("c", &lazy_ids).0.as_str(),
                new_conv,
                "a lazy read gives the same conversation key"
            );
            (old_turn, new_turn, old_conv, new_conv)
        })
        .collect()
}

fn check_reads(shape: Shape, bytes: &[u8]) {
    let value: Value = serde_json::from_slice(bytes).expect("generated bodies are JSON");
    let skim = BodySkim::read(shape.protocol(), bytes).expect("generated bodies skim");
    assert_eq!(skim.model().as_deref(), value.get("model").and_then(Value::as_str), "the model");
    assert_eq!(
        skim.previous_response_id().as_deref(),
        value.get("previous_response_id").and_then(Value::as_str).filter(|s| !s.is_empty()),
        "previous_response_id"
    );
    assert_eq!(skim.stream(), value.get("stream").and_then(Value::as_bool), "stream");
}

/// What a skim reads and keys from `bytes`, for every header set (lazy and full reads).
fn skim_outcome(p: Protocol, bytes: &[u8], memo: Option<&DigestMemo>) -> Vec<String> {
    let full = match memo {
        Some(m) => BodySkim::read_remembered(p, bytes, m),
        None => BodySkim::read(p, bytes),
    };
    let mut out = vec![format!("{:?}", full.as_ref().map(|s| (s.model(), s.stream(), s.previous_response_id())))];
    for h in HEADER_SETS {
        let from_headers = ClientIds::read_headers(header(h));
        let wants = Wants::for_ids(&from_headers, p == Protocol::Openai);
        let lazy = match memo {
            Some(m) => BodySkim::read_for_remembered(p, bytes, wants, m),
            None => BodySkim::read_for(p, bytes, wants),
        };
        for skim in [&full, &lazy] {
            out.push(match skim {
                Ok(skim) => {
                    let ids = skim.client_ids(from_headers.clone());
                    format!("{:?} {} {}", ids, skim.turn_key("c", &ids).0, skim.conversation_key("c", &ids).0.as_str())
                }
                Err(NotJson) => "not JSON".into(),
            });
        }
    }
    out
}

/// A memo answers what a read answers: on first sight (filling it) and again (hitting it).
fn memo_agrees(shape: Shape, memo: &DigestMemo, bytes: &[u8], what: &str) {
    let p = shape.protocol();
    let plain = skim_outcome(p, bytes, None);
    assert_eq!(skim_outcome(p, bytes, Some(memo)), plain, "a memo changes nothing ({what}, first sight)");
    assert_eq!(skim_outcome(p, bytes, Some(memo)), plain, "a memo changes nothing ({what}, seen before)");
}

/// Old and new say SAME for exactly the same pairs (turn and conversation, every header set).
fn agree(shape: Shape, a: &[u8], b: &[u8], what: &str) {
    for (i, (ka, kb)) in keys(shape, a).into_iter().zip(keys(shape, b)).enumerate() {
        assert_eq!(ka.0 == kb.0, ka.1 == kb.1, "turn SAME/DIFFERENT agrees ({what}, headers {i})");
        assert_eq!(ka.2 == kb.2, ka.3 == kb.3, "conversation SAME/DIFFERENT agrees ({what}, headers {i})");
    }
}

fn case(seed: u64, shape: Shape) {
    let mut r = Rng(seed);
    let style = Style { ascii_only: r.chance(30), escaped_keys: r.chance(20) };
    let mut conv = Conversation { shape, items: Vec::new(), n: 0 };
    let system = if r.chance(50) {
        json!([{"type": "text", "text": text(&mut r), "cache_control": {"type": "ephemeral"}},
               {"type": "text", "text": text(&mut r)}])
    } else {
        json!(text(&mut r))
    };
    for _ in 0..r.below(4) {
        conv.human(&mut r);
        for _ in 0..r.below(3) {
            conv.tool_round(&mut r);
        }
        if r.chance(50) {
            conv.answer(&mut r);
        }
    }
    if conv.items.is_empty() || r.chance(70) {
        conv.human(&mut r);
    }
    let base = conv.body(&mut r, &system);
    let base_bytes = render(&base, style, &mut r);
    check_reads(shape, &base_bytes);
    // every value memoised (1 byte and up), shared by the case's bodies
    let memo = DigestMemo::with_limits(64, 1);
    memo_agrees(shape, &memo, &base_bytes, "base");
    let compact = |v: &Value| serde_json::to_vec(v).unwrap_or_default();
    memo_agrees(shape, &memo, &compact(&base), "base, compact");

    // the same body written differently, cache marks moved
    let rerendered = render(&base, style, &mut r);
    agree(shape, &base_bytes, &rerendered, "rewritten");
    let mut marked = base.clone();
    move_cache_marks(&mut marked, &mut r);
    agree(shape, &base_bytes, &render(&marked, style, &mut r), "cache marks moved");

    // a tool loop, a new human message
    let mut looped = Conversation { shape, items: conv.items.clone(), n: conv.n };
    looped.tool_round(&mut r);
    let looped_body = looped.body(&mut r, &system);
    let looped_bytes = render(&looped_body, style, &mut r);
    check_reads(shape, &looped_bytes);
    memo_agrees(shape, &memo, &looped_bytes, "tool loop");
    // the same messages in the same bytes: the memo answers for all but the new ones
    memo_agrees(shape, &memo, &compact(&looped_body), "tool loop, compact");
    agree(shape, &base_bytes, &looped_bytes, "tool loop");
    let mut next = Conversation { shape, items: looped.items.clone(), n: looped.n };
    next.answer(&mut r);
    next.human(&mut r);
    let next_body = next.body(&mut r, &system);
    let next_bytes = render(&next_body, style, &mut r);
    memo_agrees(shape, &memo, &compact(&next_body), "new human message, compact");
    agree(shape, &base_bytes, &next_bytes, "new human message");
    agree(shape, &looped_bytes, &next_bytes, "new human message after a tool loop");

    // any one string changed, anywhere
    for k in [r.below(1000), r.below(1000)] {
        let mut changed = looped_body.clone();
        if change_a_string(&mut changed, k) {
            agree(shape, &looped_bytes, &render(&changed, style, &mut r), "a string changed");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn skim_keys_agree_with_value_keys_on_anthropic_bodies(seed in any::<u64>()) {
        case(seed, Shape::Anthropic);
    }

    #[test]
    fn skim_keys_agree_with_value_keys_on_chat_bodies(seed in any::<u64>()) {
        case(seed, Shape::Chat);
    }

    #[test]
    fn skim_keys_agree_with_value_keys_on_responses_bodies(seed in any::<u64>()) {
        case(seed, Shape::Responses);
    }

    #[test]
    fn skim_keys_agree_with_value_keys_on_gemini_bodies(seed in any::<u64>()) {
        case(seed, Shape::Gemini);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        for p in [Protocol::Anthropic, Protocol::Openai, Protocol::Gemini] {
            if let Ok(skim) = BodySkim::read(p, &bytes) {
                let _ = (skim.model(), skim.turn_key("c", &ClientIds::default()));
            }
        }
    }

    #[test]
    fn damaged_json_never_panics_and_valid_objects_always_skim(seed in any::<u64>(), cut in any::<usize>(), flip in any::<u8>()) {
        let mut r = Rng(seed);
        let shape = [Shape::Anthropic, Shape::Chat, Shape::Responses, Shape::Gemini][r.below(4)];
        let mut conv = Conversation { shape, items: Vec::new(), n: 0 };
        conv.human(&mut r);
        conv.tool_round(&mut r);
        let style = Style { ascii_only: r.chance(50), escaped_keys: r.chance(50) };
        let mut bytes = render(&conv.body(&mut r, &json!("s")), style, &mut r);
        let whole = bytes.clone();
        let at = cut % bytes.len().max(1);
        if r.chance(50) {
            bytes.truncate(at);
        } else if let Some(b) = bytes.get_mut(at) {
            *b = flip;
        }
        let p = shape.protocol();
        // a memo that has seen the body whole and undamaged answers as a read does
        let memo = DigestMemo::with_limits(64, 1);
        let _ = BodySkim::read_remembered(p, &whole, &memo);
        prop_assert_eq!(skim_outcome(p, &bytes, Some(&memo)), skim_outcome(p, &bytes, None), "a damaged body");
        let parsed = serde_json::from_slice::<Value>(&bytes).ok();
        let skim = BodySkim::read(p, &bytes);
        if let Some(Value::Object(_)) = &parsed {
            let skim = skim.expect("every JSON object skims");
            let model = skim.model();
            prop_assert_eq!(model.as_deref(), parsed.as_ref().and_then(|v| v.get("model")).and_then(Value::as_str));
        } else if let Ok(skim) = skim {
            // lenient only where documented: inside strings (UTF-8, control characters, escapes)
            let _ = skim.turn_key("c", &ClientIds::default());
            let why = serde_json::from_slice::<Value>(&bytes).err().map(|e| e.to_string()).unwrap_or_default();
            let in_a_string = ["escape", "control character", "unicode code point", "UTF-8"].iter().any(|w| why.contains(w));
            prop_assert!(in_a_string,
                "accepted a body serde_json rejects for another reason ({}): {:?}", why, String::from_utf8_lossy(&bytes));
        }
    }
}

#[test]
fn not_json_and_non_objects_are_not_json() {
    for body in [&b""[..], b"[]", b"\"x\"", b"{", b"{\"a\":}", b"{} x", b"{\"a\":1,}", b"{\"a\":01}", b"{\"a\" 1}"] {
        assert_eq!(
            BodySkim::read(Protocol::Anthropic, body).err(),
            Some(NotJson),
            "{:?}",
            String::from_utf8_lossy(body)
        );
    }
    let empty = BodySkim::empty(Protocol::Anthropic);
    assert_eq!(
        empty.turn_key("c", &ClientIds::default()).1,
        turn_key(Protocol::Anthropic, "c", &ClientIds::default(), &Value::Null).1,
        "not JSON keys by the anchor of nothing, as before"
    );
    assert_ne!(
        empty.turn_key("c", &ClientIds::default()).0,
        empty.turn_key("d", &ClientIds::default()).0,
        "per connection"
    );
}

#[test]
fn nesting_is_limited_as_serde_json_limits_it() {
    for depth in [126, 127, 128, 129, 130] {
        let body = format!("{{\"a\":{}{}}}", "[".repeat(depth - 1), "]".repeat(depth - 1));
        let serde_ok = serde_json::from_str::<Value>(&body).is_ok();
        assert_eq!(BodySkim::read(Protocol::Openai, body.as_bytes()).is_ok(), serde_ok, "depth {depth}");
    }
}

#[test]
fn repeated_keys_keep_the_last_value_like_serde_json() {
    let body =
        br#"{"model":"a","model":"b","messages":[{"role":"user","content":"x","content":[{"type":"tool_result"}]}]}"#;
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let skim = BodySkim::read(Protocol::Anthropic, body).expect("a JSON object");
    assert_eq!(skim.model().as_deref(), Some("b"), "the last model");
    // the only message is a tool result (the last `content`): the opening is all messages
    let ids = ClientIds::default();
    let with_human = br#"{"model":"b","messages":[{"role":"user","content":[{"type":"tool_result"}]},{"role":"user","content":"hi"}]}"#;
    let v2: Value = serde_json::from_slice(with_human).unwrap_or(Value::Null);
    let s2 = BodySkim::read(Protocol::Anthropic, with_human).expect("a JSON object");
    assert_eq!(
        turn_key(Protocol::Anthropic, "c", &ids, &value).0 == turn_key(Protocol::Anthropic, "c", &ids, &v2).0,
        skim.turn_key("c", &ids).0 == s2.turn_key("c", &ids).0,
        "same decision"
    );
    let lazy = BodySkim::read_for(Protocol::Anthropic, body, Wants { anchors: false, ..Wants::EVERYTHING });
    assert!(lazy.is_ok(), "a lazy read");
}

#[test]
fn a_lazy_read_stops_at_the_model_when_headers_decide_both_keys() {
    let ids = ClientIds::read_headers(header(&[("session-id", "s"), ("x-codex-turn-metadata", r#"{"turn_id":"t"}"#)]));
    let wants = Wants::for_ids(&ids, false);
    assert_eq!(
        wants,
        Wants { anchors: false, user_id: false, prompt_cache_key: false, previous_response_id: false, stream: false },
        "a Codex turn id and session decide both keys"
    );
    // everything after the model is left unread (here: not even valid)
    let body = br#"{"model":"gpt-5","input":[ this is not read"#;
    let skim = BodySkim::read_for(Protocol::Openai, body, wants).expect("stops after the model");
    assert_eq!(skim.model().as_deref(), Some("gpt-5"));
    assert_eq!(BodySkim::read(Protocol::Openai, body).err(), Some(NotJson), "a full read checks everything");
    let (turn, _) = skim.turn_key("c", &ids);
    assert_eq!(turn, turn_key(Protocol::Openai, "c", &ids, &Value::Null).0, "the turn key from the header");
    let escaped = br#"{"model":"gpt\u002d5"}"#;
    let skim = BodySkim::read(Protocol::Openai, escaped).expect("a JSON object");
    assert_eq!(skim.model().as_deref(), Some("gpt-5"), "an escaped model is unescaped");
}

#[test]
fn the_model_is_replaced_in_place() {
    let body = br#"{ "messages": [{"role": "user", "content": "model"}], "model" : "gpt\u002d5", "stream": true }"#;
    let skim = BodySkim::read(Protocol::Openai, body).expect("a JSON object");
    let renamed = skim.with_model("up \"stream\" 1").unwrap_or_default();
    let value: Value = serde_json::from_slice(&renamed).unwrap_or(Value::Null);
    assert_eq!(
        value["model"],
        json!("up \"stream\" 1"),
        "the new model, escaped: {}",
        String::from_utf8_lossy(&renamed)
    );
    let mut expected: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    expected["model"] = json!("up \"stream\" 1");
    assert_eq!(value, expected, "nothing else changes");
    assert!(renamed.starts_with(br#"{ "messages": [{"role": "user", "content": "model"}], "model" : ""#), "bytes kept");
    let no_model =
        BodySkim::read(Protocol::Openai, br#"{"model": 5}"#).unwrap_or_else(|_| BodySkim::empty(Protocol::Openai));
    assert_eq!(no_model.with_model("m"), None, "no string model, nothing to replace");
}
