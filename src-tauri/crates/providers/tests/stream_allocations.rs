//! A stream passes through the watch with no heap allocation per event (issue 18.3): once
//! the splitter's buffers have grown to the stream's largest event, content events — whole,
//! several to a chunk, or cut mid-line across chunks — are read without allocating; usage
//! is still read from the events that carry it. Counted by dhat's testing mode (one global
//! allocator per test binary, hence one test here).

use std::time::SystemTime;

use switchyard_core::Protocol;
use switchyard_providers::content_coding::Coding;
use switchyard_providers::stream_watch::{Phase, StreamWatch};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn anthropic_delta(i: usize) -> String {
    format!(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"word {i} \"}}}}\n\n"
    )
}

fn openai_delta(i: usize) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word {i} \"}}}}]}}\n\n"
    )
}

/// `text` cut into chunks of 1, 7, 64 and 300 bytes in turn (cuts fall mid-line and mid-event).
fn chunks(text: &str) -> Vec<Vec<u8>> {
    let sizes = [1usize, 7, 64, 300];
    let bytes = text.as_bytes();
    let (mut out, mut at, mut k) = (Vec::new(), 0, 0);
    while at < bytes.len() {
        let end = (at + sizes[k % sizes.len()]).min(bytes.len());
        out.push(bytes[at..end].to_vec());
        at = end;
        k += 1;
    }
    out
}

/// Allocations made while `watch` reads `parts`.
fn allocations(watch: &mut StreamWatch, parts: &[Vec<u8>]) -> u64 {
    let now = SystemTime::UNIX_EPOCH;
    let before = dhat::HeapStats::get().total_blocks;
    for p in parts {
        watch.push(p, now);
    }
    dhat::HeapStats::get().total_blocks - before
}

#[test]
fn content_events_are_read_without_allocating() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let now = SystemTime::UNIX_EPOCH;

    // Anthropic: preamble with usage, a warm-up, then 2,000 deltas, then the closing events.
    let mut watch = StreamWatch::new(Protocol::Anthropic, Coding::Identity);
    let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":31,\"output_tokens\":1}}}\n\n\
                 event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
    let warm: String = (0..20).map(anthropic_delta).collect();
    watch.push(start.as_bytes(), now);
    for p in chunks(&warm) {
        watch.push(&p, now);
    }
    assert_eq!(watch.phase(), Phase::Output, "a text delta is output");
    let body: String = (20..2020).map(anthropic_delta).collect();
    let parts = chunks(&body);
    let whole = vec![body.clone().into_bytes()];
    assert_eq!(allocations(&mut watch, &parts), 0, "Anthropic deltas cut anywhere allocate nothing");
    assert_eq!(allocations(&mut watch, &whole), 0, "nor 2,000 of them in one chunk");
    let end = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
               event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4040}}\n\n\
               event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    watch.push(end.as_bytes(), now);
    let usage = watch.usage();
    assert_eq!(usage.input_tokens, Some(31), "usage from message_start is still read");
    assert_eq!(usage.output_tokens, Some(4040), "and from message_delta");
    assert_eq!(watch.ending(false).failure, None, "the stream ended cleanly");

    // OpenAI chat completions: role delta, warm-up, 2,000 content chunks, usage chunk, [DONE].
    let mut watch = StreamWatch::new(Protocol::Openai, Coding::Identity);
    let role = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
    watch.push(role.as_bytes(), now);
    assert_eq!(watch.phase(), Phase::Held, "a role-only delta is preamble");
    let warm: String = (0..20).map(openai_delta).collect();
    for p in chunks(&warm) {
        watch.push(&p, now);
    }
    assert_eq!(watch.phase(), Phase::Output);
    let body: String = (20..2020).map(openai_delta).collect();
    let parts = chunks(&body);
    assert_eq!(allocations(&mut watch, &parts), 0, "chat-completion chunks cut anywhere allocate nothing");
    let end = "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2020}}\n\ndata: [DONE]\n\n";
    watch.push(end.as_bytes(), now);
    assert_eq!(watch.usage().output_tokens, Some(2020), "the usage chunk is read");
    assert_eq!(watch.ending(false).failure, None, "[DONE] ends it cleanly");
}
