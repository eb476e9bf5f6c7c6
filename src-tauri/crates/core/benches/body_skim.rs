//! Criterion bench: the relay's pre-forward key path per request, old (parse the body into a
//! `serde_json::Value`, then `turn_key` + `conversation_key`) against the body skim
//! (`body_skim/`), for a one-line body, a system prompt plus one message (~9 KB) and
//! Claude-Code-shaped agent conversations (~200 KB and ~1 MB: 25 tools, cached system blocks,
//! tool_use / tool_result rounds carrying code full of escapes), plus the paths where headers
//! carry ids: Claude Code's `x-claude-code-session-id` (the conversation from the header, the
//! turn still needs the anchor) and Codex's turn id + session (only the model is read).
//! `memo/…` runs the new path with a `DigestMemo`: empty (a conversation's first call, every
//! value read and remembered) and as agents call, the memo having seen the conversation's
//! previous call (one tool round fewer, the prompt-cache mark one message earlier).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};
use switchyard_core::body_skim::{BodySkim, DigestMemo, Wants};
use switchyard_core::connection::Protocol;
use switchyard_core::conversation::conversation_key;
use switchyard_core::turn::{turn_key, ClientIds};

/// Source-code-like text: quotes, backslashes, tabs and newlines (all escaped in JSON).
fn code(seed: usize, lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "\tlet v{i} = format!(\"{{}}\\\\{seed}\", path.join(\"src\\\\lib.rs\")); // line {i} of \"file_{seed}.rs\"\n"
            )
        })
        .collect()
}

/// A Claude-Code-shaped Anthropic body with `rounds` tool rounds (keys in Claude Code's order).
fn claude_code(rounds: usize) -> Vec<u8> {
    let tools: Vec<Value> = (0..25)
        .map(|t| {
            json!({"name": format!("Tool{t}"), "description": "Reads or edits files in the workspace. ".repeat(30),
                "input_schema": {"type": "object", "$schema": "http://json-schema.org/draft-07/schema#",
                    "additionalProperties": false, "required": ["file_path"],
                    "properties": {"file_path": {"type": "string", "description": "The absolute path"},
                        "offset": {"type": "number", "description": "The line to start at"},
                        "limit": {"type": "number", "description": "How many lines"}}}})
        })
        .collect();
    let system = json!([
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "You are an interactive CLI tool that helps users with software engineering tasks. ".repeat(60), "cache_control": {"type": "ephemeral"}}
    ]);
    let mut messages = vec![json!({"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nAs you answer the user's questions, you can use the following context\n</system-reminder>"},
        {"type": "text", "text": "fix the failing test in src/lib.rs"}]})];
    for i in 0..rounds {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Let me look at part {i} of the file.")},
            {"type": "tool_use", "id": format!("toolu_{i:024}"), "name": "Read",
                "input": {"file_path": format!("/work/src/file_{i}.rs"), "offset": i * 40, "limit": 40}}]}));
        let mut result = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i:024}"), "content": code(i, 12)}]});
        if i + 1 == rounds {
            result["content"][0]["cache_control"] = json!({"type": "ephemeral"});
        }
        messages.push(result);
        if i % 10 == 9 {
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Done with this part."}]}));
            messages
                .push(json!({"role": "user", "content": [{"type": "text", "text": format!("now part {}", i + 1)}]}));
        }
    }
    let metadata = json!({"user_id": r#"{"device_id":"d0","account_uuid":"","session_id":"0199-cc-sess"}"#});
    format!(
        r#"{{"model":"claude-sonnet-4-5","messages":{},"system":{},"tools":{},"metadata":{},"max_tokens":32000,"stream":true}}"#,
        json!(messages),
        system,
        json!(tools),
        metadata
    )
    .into_bytes()
}

/// The same body with `model` moved to the end: a model-only skim then checks the grammar
/// of the whole body without hashing anything (the structural floor).
fn model_last(body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(body);
    let rest = text.strip_prefix(r#"{"model":"claude-sonnet-4-5","#).unwrap_or(&text);
    format!(r#"{{{},"model":"claude-sonnet-4-5"}}"#, rest.trim_end_matches('}')).into_bytes()
}

/// A chat-completions body: a long system prompt and one user message (~9 KB).
fn system_and_one_message() -> Vec<u8> {
    serde_json::to_vec(&json!({"model": "gpt-model-01", "stream": true, "messages": [
        {"role": "system", "content": "You are a coding agent. ".repeat(400)},
        {"role": "user", "content": "step 0: fix the failing test in src/lib.rs"}]}))
    .unwrap_or_default()
}

type Headers = &'static [(&'static str, &'static str)];

fn header(headers: Headers) -> impl Fn(&str) -> Option<&'static str> {
    move |name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// The old path: parse, read ids, both keys.
fn old_path(p: Protocol, headers: Headers, body: &[u8]) -> (String, String, Option<String>) {
    let json: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let ids = ClientIds::read(header(headers), &json);
    let (turn, _) = turn_key(p, "c", &ids, &json);
    let (conversation, _) = conversation_key(p, "c", &ids, &json);
    (turn, conversation.as_str().to_string(), json.get("model").and_then(Value::as_str).map(str::to_string))
}

/// The new path: ids from headers, a skim of what they leave open (with `memo` when given),
/// both keys.
fn new_path(p: Protocol, headers: Headers, body: &[u8], memo: Option<&DigestMemo>) -> (String, String, Option<String>) {
    let from_headers = ClientIds::read_headers(header(headers));
    let wants = Wants::for_ids(&from_headers, false);
    let read = match memo {
        Some(memo) => BodySkim::read_for_remembered(p, body, wants, memo),
        None => BodySkim::read_for(p, body, wants),
    };
    let skim = read.unwrap_or_else(|_| BodySkim::empty(p));
    let ids = skim.client_ids(from_headers);
    let (turn, _) = skim.turn_key("c", &ids);
    let (conversation, _) = skim.conversation_key("c", &ids);
    (turn, conversation.as_str().to_string(), skim.model().map(|m| m.into_owned()))
}

fn bench_memo(c: &mut Criterion) {
    let mut group = c.benchmark_group("memo");
    let session: Headers = &[("x-claude-code-session-id", "0199-cc-sess")];
    for rounds in [105, 540] {
        let body = claude_code(rounds);
        let previous = claude_code(rounds - 1);
        let seen = DigestMemo::default();
        let _ = new_path(Protocol::Anthropic, &[], &previous, Some(&seen));
        assert_eq!(
            new_path(Protocol::Anthropic, &[], &body, Some(&seen.clone())),
            new_path(Protocol::Anthropic, &[], &body, None),
            "the memo changes no key"
        );
        let name = format!("claude_code_{}kb", body.len() / 1024);
        group.throughput(Throughput::Bytes(body.len() as u64));
        for (case, headers) in [("", &[][..]), ("_session_header", session)] {
            group.bench_function(BenchmarkId::new("first_call", format!("{name}{case}")), |b| {
                b.iter_batched(
                    DigestMemo::default,
                    |memo| black_box(new_path(Protocol::Anthropic, headers, black_box(&body), Some(&memo))),
                    BatchSize::SmallInput,
                )
            });
            group.bench_function(BenchmarkId::new("next_call", format!("{name}{case}")), |b| {
                b.iter_batched(
                    || seen.clone(),
                    |memo| black_box(new_path(Protocol::Anthropic, headers, black_box(&body), Some(&memo))),
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

fn bench_body_skim(c: &mut Criterion) {
    let mut group = c.benchmark_group("pre_forward_keys");
    let tiny = br#"{"model":"m1","stream":false,"messages":[{"role":"user","content":"w1 n1"}]}"#.to_vec();
    let cc_200k = claude_code(105);
    let cc_1m = claude_code(540);
    let cases: [(&str, Protocol, Headers, Vec<u8>); 7] = [
        ("one_line", Protocol::Openai, &[], tiny),
        ("system_and_one_message", Protocol::Openai, &[], system_and_one_message()),
        ("claude_code", Protocol::Anthropic, &[], cc_200k.clone()),
        ("claude_code", Protocol::Anthropic, &[], cc_1m),
        (
            "claude_code_session_header",
            Protocol::Anthropic,
            &[("x-claude-code-session-id", "0199-cc-sess")],
            cc_200k.clone(),
        ),
        (
            "turn_id_and_session_headers",
            Protocol::Anthropic,
            &[("session-id", "0199-sess"), ("x-codex-turn-metadata", r#"{"turn_id":"turn-7"}"#)],
            cc_200k,
        ),
        ("x_session_id_only", Protocol::Openai, &[("x-session-id", "s")], system_and_one_message()),
    ];
    for (name, p, headers, body) in &cases {
        let name = format!("{name}_{}kb", body.len() / 1024);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(BenchmarkId::new("old", &name), |b| {
            b.iter(|| black_box(old_path(*p, headers, black_box(body))))
        });
        group.bench_function(BenchmarkId::new("new", &name), |b| {
            b.iter(|| black_box(new_path(*p, headers, black_box(body), None)))
        });
    }
    group.finish();
    // What any reader of this body costs here, for the same 200 KB body: one JSON grammar
    // pass without hashing (the skim's own scanner, model last), memchr over every quote
    // (SIMD inside the memchr crate), and XXH3-128 over all the bytes.
    let mut floors = c.benchmark_group("floors_200kb");
    let body = claude_code(105);
    let last = model_last(&body);
    assert!(BodySkim::read_for(Protocol::Anthropic, &last, Wants::MODEL).is_ok_and(|s| s.model().is_some()));
    floors.throughput(Throughput::Bytes(body.len() as u64));
    floors.bench_function("grammar_pass_no_hashing", |b| {
        b.iter(|| black_box(BodySkim::read_for(Protocol::Anthropic, black_box(&last), Wants::MODEL).is_ok()))
    });
    floors.bench_function("memchr_every_quote", |b| {
        b.iter(|| black_box(memchr::memchr_iter(b'"', black_box(&body)).count()))
    });
    floors
        .bench_function("xxh3_128_whole_body", |b| b.iter(|| black_box(xxhash_rust::xxh3::xxh3_128(black_box(&body)))));
    floors.finish();
}

criterion_group!(benches, bench_body_skim, bench_memo);
criterion_main!(benches);
