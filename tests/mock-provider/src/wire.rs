//! The wire: how an answer's bytes travel. One [`Outlet`] per answer applies the key's
//! [`Wire`] to every dialect alike: keep-alive pings before content events, CRLF line ends,
//! gzip or brotli when scripted and accepted, and the cutting of a stream into body writes.

use std::io::{self, Write};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::Value;

use crate::quota::QuotaStep;
use crate::script::{Chunking, Wire};
use crate::sse::{broken_body, event_stream, Ending, Frame};
use crate::subscription::Subscription;

/// Which API an answer speaks (its pings and tool shapes differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Anthropic `/v1/messages`.
    Anthropic,
    /// OpenAI `/v1/chat/completions`.
    Chat,
    /// OpenAI `/v1/responses`.
    Responses,
}

/// A content coding the mock can apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Gzip,
    Brotli,
}

impl Encoding {
    fn token(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Brotli => "br",
        }
    }
}

/// How one answer is written: the key's wire, the dialect, and the coding the request accepts.
#[derive(Debug, Clone)]
pub(crate) struct Outlet {
    wire: Wire,
    dialect: Dialect,
    encoding: Option<Encoding>,
    /// Limit headers to add (`quota.rs`).
    quota: Option<QuotaStep>,
    /// Subscription window headers to add (`subscription.rs`).
    subscription: Option<Subscription>,
}

impl Outlet {
    /// The outlet for a request with this `accept-encoding` header.
    pub fn new(wire: Wire, dialect: Dialect, accept_encoding: Option<&str>) -> Self {
        let encoding = if wire.brotli && accepts(accept_encoding, "br") {
            Some(Encoding::Brotli)
        } else if wire.gzip && accepts(accept_encoding, "gzip") {
            Some(Encoding::Gzip)
        } else {
            None
        };
        Outlet { wire, dialect, encoding, quota: None, subscription: None }
    }

    /// Adds the step's limit headers to the answer, if any.
    pub fn quota(self, quota: Option<QuotaStep>) -> Self {
        Outlet { quota, ..self }
    }

    /// Adds the subscription's window headers to the answer, if any.
    pub fn subscription(self, subscription: Option<Subscription>) -> Self {
        Outlet { subscription, ..self }
    }

    /// A 200 event stream of `frames`: pinged, line ends set, compressed, then cut into
    /// writes. A dying stream's compressed bytes are flushed but never finished.
    pub fn stream(&self, frames: Vec<Frame>, ending: Ending) -> Response {
        let plain = shape(frames, self.wire, self.dialect);
        let encoded = match self.encoding {
            None => plain,
            Some(encoding) => match compress(plain, encoding, ending == Ending::Complete) {
                Ok(encoded) => encoded,
                Err(e) => return compression_failed(&e),
            },
        };
        let pieces = split(encoded, self.wire.chunking);
        let mut response = event_stream(pieces, ending, self.wire.chunking != Chunking::Events);
        self.mark(&mut response);
        response
    }

    /// A 200 JSON answer (compressed when accepted); when `dies`, only the first half of
    /// its bytes is sent before the connection drops.
    pub fn json(&self, value: &Value, dies: bool) -> Response {
        let mut bytes = Bytes::from(value.to_string());
        if let Some(encoding) = self.encoding {
            match compress(vec![bytes], encoding, true) {
                Ok(encoded) => bytes = Bytes::from(encoded.concat()),
                Err(e) => return compression_failed(&e),
            }
        }
        let body = if dies { broken_body(vec![bytes.slice(..bytes.len() / 2)]) } else { bytes.into() };
        let mut response =
            (StatusCode::OK, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body)
                .into_response();
        self.mark(&mut response);
        response
    }

    /// Adds `content-encoding` when the body is compressed, and the limit headers if any.
    fn mark(&self, response: &mut Response) {
        if let Some(encoding) = self.encoding {
            response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding.token()));
        }
        if let Some(step) = self.quota {
            crate::quota::mark(response, self.dialect, step);
        }
        if let Some(subscription) = &self.subscription {
            crate::subscription::mark(response, self.dialect, subscription);
        }
    }
}

fn compression_failed(error: &io::Error) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, format!("mock provider: compression failed: {error}")).into_response()
}

/// Whether an `accept-encoding` header lists `coding` (case-insensitive, not with `q=0`).
fn accepts(header: Option<&str>, coding: &str) -> bool {
    header.unwrap_or_default().split(',').any(|entry| {
        let mut parts = entry.split(';').map(str::trim);
        let named = parts.next().is_some_and(|name| name.eq_ignore_ascii_case(coding));
        let refused = parts.any(|p| {
            p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")).and_then(|q| q.parse::<f32>().ok()) == Some(0.0)
        });
        named && !refused
    })
}

/// The stream's plain writes, one per frame: a ping block before each content frame when
/// `pings`, and every `\n` turned into `\r\n` when `crlf` (frame data is JSON, which holds
/// no raw line breaks).
fn shape(frames: Vec<Frame>, wire: Wire, dialect: Dialect) -> Vec<Bytes> {
    let pings: &[&str] = match dialect {
        Dialect::Anthropic => &[": keep-alive\n\n", "event: ping\ndata: {\"type\":\"ping\"}\n\n"],
        Dialect::Chat | Dialect::Responses => &[": ping\n\n"],
    };
    let mut out = Vec::with_capacity(frames.len());
    for frame in frames {
        if wire.pings && frame.content {
            out.extend(pings.iter().map(|p| Bytes::from_static(p.as_bytes())));
        }
        out.push(frame.bytes);
    }
    if wire.crlf {
        for piece in &mut out {
            *piece = crlf(piece);
        }
    }
    out
}

fn crlf(bytes: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 8);
    for &b in bytes {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out.into()
}

/// A compressor writing into a buffer that is drained after each piece.
enum Compressor {
    Gzip(GzEncoder<Vec<u8>>),
    Brotli(Box<brotli::CompressorWriter<Vec<u8>>>),
}

impl Compressor {
    fn new(encoding: Encoding) -> Self {
        match encoding {
            Encoding::Gzip => Compressor::Gzip(GzEncoder::new(Vec::new(), Compression::default())),
            Encoding::Brotli => Compressor::Brotli(Box::new(brotli::CompressorWriter::new(Vec::new(), 4096, 5, 22))),
        }
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Compressor::Gzip(w) => w,
            Compressor::Brotli(w) => w.as_mut(),
        }
    }

    /// The compressed bytes produced so far, taken out of the buffer.
    fn drain(&mut self) -> Vec<u8> {
        match self {
            Compressor::Gzip(w) => std::mem::take(w.get_mut()),
            Compressor::Brotli(w) => std::mem::take(w.get_mut()),
        }
    }

    /// The compressed stream's remaining bytes, its end included.
    fn finish(self) -> io::Result<Vec<u8>> {
        match self {
            Compressor::Gzip(w) => w.finish(),
            Compressor::Brotli(w) => Ok(w.into_inner()),
        }
    }
}

/// Compresses `pieces` as one stream, flushing after each piece so that the compressed
/// pieces line up with the plain ones (each decodes as soon as it arrives). `finish` ends
/// the stream (its trailer joins the last piece); without it the stream stays open.
fn compress(pieces: Vec<Bytes>, encoding: Encoding, finish: bool) -> io::Result<Vec<Bytes>> {
    let mut compressor = Compressor::new(encoding);
    let count = pieces.len();
    let mut out = Vec::with_capacity(count);
    for (i, piece) in pieces.into_iter().enumerate() {
        compressor.writer().write_all(&piece)?;
        if i + 1 < count || !finish {
            compressor.writer().flush()?;
            out.push(Bytes::from(compressor.drain()));
        }
    }
    if finish {
        let mut last = compressor.drain();
        last.extend(compressor.finish()?);
        out.push(Bytes::from(last));
    }
    out.retain(|piece| !piece.is_empty());
    Ok(out)
}

/// Cuts a stream's writes by `chunking`: `events` keeps them, `whole` joins them into one,
/// `bytes` and `seeded` re-cut their concatenation. Joined, the result is always the input.
pub(crate) fn split(pieces: Vec<Bytes>, chunking: Chunking) -> Vec<Bytes> {
    let mut sizes: Box<dyn FnMut() -> usize> = match chunking {
        Chunking::Events => return pieces,
        Chunking::Whole => return vec![Bytes::from(pieces.concat())],
        Chunking::Bytes(n) => Box::new(move || n.max(1)),
        Chunking::Seeded(seed) => {
            let mut rng = XorShift::new(seed);
            Box::new(move || rng.write_size())
        }
    };
    let mut all = Bytes::from(pieces.concat());
    let mut out = Vec::new();
    while !all.is_empty() {
        out.push(all.split_to(sizes().min(all.len())));
    }
    out
}

/// A xorshift64 generator: deterministic write sizes for a seed.
#[derive(Debug, Clone)]
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // xorshift's state must not be zero; seed 0 gets a fixed odd constant instead.
        XorShift(if seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { seed })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A size in 1..=64.
    fn write_size(&mut self) -> usize {
        usize::try_from(self.next() % 64).unwrap_or(0) + 1
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn frames() -> Vec<Bytes> {
        (0..20).map(|i| Bytes::from(format!("event: e{i}\ndata: {{\"n\":{i}}}\n\n"))).collect()
    }

    #[test]
    fn events_keep_the_frames_and_whole_is_one_write() {
        assert_eq!(split(frames(), Chunking::Events), frames(), "events: one write per frame, untouched");
        let whole = split(frames(), Chunking::Whole);
        assert_eq!(whole.len(), 1, "whole: a single write");
        assert_eq!(whole[0], frames().concat(), "holding every frame, the last one included");
    }

    #[test]
    fn bytes_cut_every_n_and_join_back() {
        let all = frames().concat();
        for n in [1, 7, 64, all.len(), all.len() + 5] {
            let pieces = split(frames(), Chunking::Bytes(n));
            assert!(pieces.iter().all(|p| !p.is_empty() && p.len() <= n), "bytes({n}): no write is empty or over n");
            assert!(pieces[..pieces.len() - 1].iter().all(|p| p.len() == n), "bytes({n}): all but the last are n");
            assert_eq!(pieces.concat(), all, "bytes({n}): the writes join to the stream");
        }
        assert_eq!(split(frames(), Chunking::Bytes(0)).len(), all.len(), "bytes(0) counts as 1");
    }

    #[test]
    fn seeded_cuts_are_deterministic_and_between_1_and_64() {
        let all = frames().concat();
        let a = split(frames(), Chunking::Seeded(42));
        let sizes = |p: &[Bytes]| p.iter().map(Bytes::len).collect::<Vec<_>>();
        assert_eq!(sizes(&a), sizes(&split(frames(), Chunking::Seeded(42))), "the same seed, the same cuts");
        assert_ne!(sizes(&a), sizes(&split(frames(), Chunking::Seeded(7))), "another seed, other cuts");
        assert!(a[..a.len() - 1].iter().all(|p| (1..=64).contains(&p.len())), "sizes 1..=64: {:?}", sizes(&a));
        assert!(sizes(&a).iter().collect::<std::collections::HashSet<_>>().len() > 3, "sizes vary");
        assert_eq!(a.concat(), all, "the writes join to the stream");
        assert_eq!(split(frames(), Chunking::Seeded(0)).concat(), all, "seed 0 works too");
    }

    #[test]
    fn accept_encoding_lists_codings_unless_refused() {
        assert!(accepts(Some("gzip, deflate, br"), "gzip"), "a listed coding");
        assert!(accepts(Some("deflate, GZIP;q=0.5"), "gzip"), "case and weights");
        assert!(!accepts(Some("gzip;q=0"), "gzip"), "q=0 refuses");
        assert!(!accepts(Some("identity"), "gzip"), "an unlisted coding");
        assert!(!accepts(None, "gzip"), "no header");
        assert!(!accepts(Some("x-gzip-ish"), "gzip"), "names match whole");
    }

    #[test]
    fn pings_precede_content_and_crlf_ends_every_line() {
        let frames = vec![
            Frame { bytes: Bytes::from_static(b"data: a\n\n"), content: false },
            Frame { bytes: Bytes::from_static(b"data: b\n\n"), content: true },
        ];
        let wire = Wire::default().pings().crlf();
        assert_eq!(
            shape(frames.clone(), wire, Dialect::Chat).concat(),
            b"data: a\r\n\r\n: ping\r\n\r\ndata: b\r\n\r\n",
            "an OpenAI ping comment before the content frame, CRLF everywhere"
        );
        assert_eq!(
            shape(frames, Wire::default().pings(), Dialect::Anthropic).concat(),
            b"data: a\n\n: keep-alive\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\ndata: b\n\n",
            "Anthropic: a keep-alive comment and a ping event"
        );
    }

    #[test]
    fn compressed_pieces_decode_to_the_stream() -> io::Result<()> {
        let all = frames().concat();
        let gz = compress(frames(), Encoding::Gzip, true)?;
        assert_eq!(gz.len(), frames().len(), "one compressed write per frame");
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&gz.concat()[..]).read_to_end(&mut plain)?;
        assert_eq!(plain, all, "gzip round-trips");
        let br = compress(frames(), Encoding::Brotli, true)?;
        let mut plain = Vec::new();
        brotli::Decompressor::new(&br.concat()[..], 4096).read_to_end(&mut plain)?;
        assert_eq!(plain, all, "brotli round-trips");
        Ok(())
    }
}
