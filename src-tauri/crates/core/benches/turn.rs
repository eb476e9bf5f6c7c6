//! Criterion bench: what the relay spends per request on the request body before routing
//! — parsing it into JSON and computing the turn key — for an agent-sized conversation
//! (90 tool-call rounds, ~218 KB) and for a system prompt plus one message (~9 KB).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};
use switchyard_core::connection::Protocol;
use switchyard_core::turn::{turn_key, ClientIds};

/// A chat-completions body of `rounds` tool-loop rounds over a long system prompt.
fn conversation(rounds: usize) -> Vec<u8> {
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent. ".repeat(400)})];
    for i in 0..rounds {
        messages.push(json!({"role": "user", "content": format!("step {i}: fix the failing test in src/lib.rs")}));
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}"), "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"}}
        ]}));
        messages.push(
            json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": "fn main() {}\n".repeat(150)}),
        );
    }
    serde_json::to_vec(&json!({"model": "gpt-model-01", "stream": true, "messages": messages})).unwrap_or_default()
}

fn bench_turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_and_turn_key");
    let tiny = br#"{"model":"m1","stream":false,"messages":[{"role":"user","content":"w1 n1"}]}"#.to_vec();
    for (name, body) in
        [("one_message", tiny), ("system_and_one_message", conversation(0)), ("agent_tool_loop", conversation(90))]
    {
        let name = format!("{name}_{}kb", body.len() / 1024);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(BenchmarkId::new("parse", &name), |b| {
            b.iter(|| black_box(serde_json::from_slice::<Value>(black_box(&body)).unwrap_or(Value::Null)))
        });
        let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        group.bench_function(BenchmarkId::new("turn_key", &name), |b| {
            b.iter(|| black_box(turn_key(Protocol::Openai, "c", &ClientIds::default(), black_box(&json))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_turn);
criterion_main!(benches);
