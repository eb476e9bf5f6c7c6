//! Gemini streams read by `StreamWatch`, both framings (`alt=sse` events and the JSON array
//! without it), however the bytes are cut — whole, one byte at a time, any split — and
//! gzip-coded: the same phase, usage and ending. Recorded shapes: the chunks of a
//! `streamGenerateContent` answer with a thought-signed function call, the counts growing in
//! each chunk's `usageMetadata`, `finishReason` on the last.

use std::io::Write;
use std::time::UNIX_EPOCH;

use proptest::prelude::*;
use switchyard_core::routing::FailureKind;
use switchyard_core::Protocol;
use switchyard_providers::content_coding::Coding;
use switchyard_providers::stream_watch::{Phase, StreamWatch};
use switchyard_providers::usage::Usage;

const CHUNKS: [&str; 3] = [
    r#"{"candidates": [{"content": {"parts": [{"text": "Listing the files", "thought": true}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 1200,"cachedContentTokenCount": 1024,"thoughtsTokenCount": 30,"totalTokenCount": 1230},"modelVersion": "gemini-2.5-flash","responseId": "r-1"}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "ls","args": {"path": "."}},"thoughtSignature": "CiQBVKhc7nB3"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 1200,"candidatesTokenCount": 12,"cachedContentTokenCount": 1024,"thoughtsTokenCount": 30,"totalTokenCount": 1242},"modelVersion": "gemini-2.5-flash","responseId": "r-1"}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 1200,"candidatesTokenCount": 15,"cachedContentTokenCount": 1024,"thoughtsTokenCount": 30,"totalTokenCount": 1245},"modelVersion": "gemini-2.5-flash","responseId": "r-1"}"#,
];
const BROKEN: &str =
    r#"{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}"#;

fn sse(chunks: &[&str]) -> Vec<u8> {
    chunks.iter().flat_map(|c| format!("data: {c}\r\n\r\n").into_bytes()).collect()
}

fn array(chunks: &[&str], closed: bool) -> Vec<u8> {
    let mut out = format!("[{}", chunks.join("\n,\r\n")).into_bytes();
    if closed {
        out.extend_from_slice(b"\n]");
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

#[derive(Debug, PartialEq)]
struct Seen {
    phase: Phase,
    usage: Usage,
    failure: Option<FailureKind>,
    needs_error_event: bool,
}

fn watch(json_array: bool, coding: Coding, reads: &[&[u8]]) -> Seen {
    let mut w =
        if json_array { StreamWatch::gemini_json_array(coding) } else { StreamWatch::new(Protocol::Gemini, coding) };
    for r in reads {
        w.push(r, UNIX_EPOCH);
    }
    let ending = w.ending(false);
    Seen {
        phase: w.phase(),
        usage: w.usage(),
        failure: ending.failure.map(|f| f.kind),
        needs_error_event: ending.needs_error_event,
    }
}

fn cut<'a>(bytes: &'a [u8], at: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = at.iter().map(|p| p % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for p in points.into_iter().chain([bytes.len()]) {
        out.push(&bytes[from..p]);
        from = p;
    }
    out
}

fn bodies() -> Vec<(&'static str, bool, Vec<u8>)> {
    vec![
        ("sse", false, sse(&CHUNKS)),
        ("array", true, array(&CHUNKS, true)),
        ("sse, error after output", false, sse(&[CHUNKS[0], CHUNKS[1], BROKEN])),
        ("array, error after output", true, array(&[CHUNKS[0], CHUNKS[1], BROKEN], true)),
        ("sse, error first", false, sse(&[BROKEN])),
        ("array, error first", true, array(&[BROKEN], true)),
        ("sse, cut off", false, sse(&CHUNKS[..2])),
        ("array, cut off", true, array(&CHUNKS[..2], false)),
    ]
}

#[test]
fn whole_streams_read_as_recorded() {
    let want_usage = Usage {
        input_tokens: Some(1200),
        output_tokens: Some(45),
        cache_read_tokens: Some(1024),
        cache_write_tokens: None,
    };
    for (name, json_array, body) in bodies() {
        let got = watch(json_array, Coding::Identity, &[&body]);
        let want = match name {
            "sse" | "array" => {
                Seen { phase: Phase::Output, usage: want_usage, failure: None, needs_error_event: false }
            }
            n if n.ends_with("error after output") => Seen {
                phase: Phase::Output,
                usage: Usage { output_tokens: Some(42), ..want_usage },
                failure: Some(FailureKind::Overloaded),
                needs_error_event: false,
            },
            n if n.ends_with("error first") => Seen {
                phase: Phase::FailedBeforeOutput(got_failure(&got)),
                usage: Usage::default(),
                failure: Some(FailureKind::Overloaded),
                needs_error_event: false,
            },
            _ => Seen {
                phase: Phase::Output,
                usage: Usage { output_tokens: Some(42), ..want_usage },
                failure: Some(FailureKind::Network),
                needs_error_event: true,
            },
        };
        assert_eq!(got, want, "{name}: committed at the first part, usage from usageMetadata, the ending");
    }
    let thought_only = watch(
        false,
        Coding::Identity,
        &[&sse(&[r#"{"candidates":[{"content":{"role":"model"}}],"usageMetadata":{"promptTokenCount":3}}"#])],
    );
    assert_eq!(thought_only.phase, Phase::Held, "a chunk without a part does not commit");
}

fn got_failure(s: &Seen) -> switchyard_core::routing::Failure {
    match s.phase {
        Phase::FailedBeforeOutput(f) => f,
        _ => switchyard_core::routing::Failure::network(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_cut_and_gzip_read_as_whole(at in proptest::collection::vec(any::<usize>(), 0..12), which in 0usize..8) {
        let (name, json_array, body) = bodies().swap_remove(which);
        let whole = watch(json_array, Coding::Identity, &[&body]);
        prop_assert_eq!(&watch(json_array, Coding::Identity, &cut(&body, &at)), &whole, "{} cut at {:?}", name, at);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        prop_assert_eq!(&watch(json_array, Coding::Identity, &bytes), &whole, "{} byte by byte", name);
        let gz = gzip(&body);
        prop_assert_eq!(&watch(json_array, Coding::Gzip, &cut(&gz, &at)), &whole, "{} gzip, cut", name);
    }
}
