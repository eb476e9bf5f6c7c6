//! Content codings on the side: the relay passes a compressed answer to the client byte for
//! byte (clients send `accept-encoding`) and decodes a copy only to read it — stream events,
//! usage, error bodies. Decoders are push-style (feed chunks cut anywhere, get what they
//! decode so far). Also the one encoding step the relay needs: an error event appended to an
//! interrupted stream, as another gzip member or zstd frame (both formats concatenate).

use std::borrow::Cow;
use std::io::Write;

use flate2::write::{MultiGzDecoder, ZlibDecoder};

/// The codings the relay can read: RFC 9110 `gzip`/`x-gzip`, `deflate` (zlib), `br`, `zstd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
    Zstd,
    /// Anything else, or several codings stacked: passed through, never read.
    Unreadable,
}

impl Coding {
    /// The coding a `content-encoding` header value names (`None` = identity).
    pub fn from_header(value: Option<&str>) -> Self {
        let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Coding::Identity;
        };
        match v.to_ascii_lowercase().as_str() {
            "identity" => Coding::Identity,
            "gzip" | "x-gzip" => Coding::Gzip,
            "deflate" => Coding::Deflate,
            "br" => Coding::Brotli,
            "zstd" => Coding::Zstd,
            _ => Coding::Unreadable,
        }
    }

    /// `bytes` encoded so that, appended to a stream of this coding, a decoder reads them
    /// after the stream's own content. `None` where the format cannot be continued (deflate,
    /// brotli, unknown): the caller then ends the stream as broken instead.
    pub fn continuation(self, bytes: &[u8]) -> Option<Vec<u8>> {
        match self {
            Coding::Identity => Some(bytes.to_vec()),
            Coding::Gzip => {
                let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                enc.write_all(bytes).ok()?;
                enc.finish().ok()
            }
            Coding::Zstd => zstd::stream::encode_all(bytes, 1).ok(),
            Coding::Deflate | Coding::Brotli | Coding::Unreadable => None,
        }
    }
}

enum Inner {
    Identity,
    Gzip(Box<MultiGzDecoder<Vec<u8>>>),
    Deflate(Box<ZlibDecoder<Vec<u8>>>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Vec<u8>>>),
    Zstd(Box<zstd::stream::write::Decoder<'static, Vec<u8>>>),
    /// Unreadable coding, or the bytes did not decode: nothing more is read.
    Failed,
}

/// A push-style decoder of one body.
pub struct Decoder {
    inner: Inner,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_failed() { "Decoder(failed)" } else { "Decoder" })
    }
}

impl Decoder {
    pub fn new(coding: Coding) -> Self {
        let inner = match coding {
            Coding::Identity => Inner::Identity,
            Coding::Gzip => Inner::Gzip(Box::new(MultiGzDecoder::new(Vec::new()))),
            Coding::Deflate => Inner::Deflate(Box::new(ZlibDecoder::new(Vec::new()))),
            Coding::Brotli => Inner::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(Vec::new(), 4096))),
            Coding::Zstd => match zstd::stream::write::Decoder::new(Vec::new()) {
                Ok(d) => Inner::Zstd(Box::new(d)),
                Err(_) => Inner::Failed,
            },
            Coding::Unreadable => Inner::Failed,
        };
        Decoder { inner }
    }

    /// Whether the body could not be read (unknown coding or corrupt bytes).
    pub fn is_failed(&self) -> bool {
        matches!(self.inner, Inner::Failed)
    }

    /// The decoded bytes `chunk` completes (borrowed when the body is not encoded); empty
    /// once the decoder failed.
    pub fn push<'a>(&mut self, chunk: &'a [u8]) -> Cow<'a, [u8]> {
        let out = match &mut self.inner {
            Inner::Identity => return Cow::Borrowed(chunk),
            Inner::Failed => return Cow::Borrowed(&[]),
            Inner::Gzip(d) => feed(d.as_mut(), chunk),
            Inner::Deflate(d) => feed(d.as_mut(), chunk),
            Inner::Brotli(d) => feed(d.as_mut(), chunk),
            Inner::Zstd(d) => feed(d.as_mut(), chunk),
        };
        match out {
            Some(v) => Cow::Owned(v),
            None => {
                self.inner = Inner::Failed;
                Cow::Borrowed(&[])
            }
        }
    }

    /// A whole body decoded at once (`None` when it does not decode).
    pub fn decode_all(coding: Coding, body: &[u8]) -> Option<Cow<'_, [u8]>> {
        let mut d = Decoder::new(coding);
        let out = d.push(body);
        (!d.is_failed()).then_some(out)
    }
}

/// A write-style decoder whose sink is a `Vec` it can hand out.
trait Sink: Write {
    fn take(&mut self) -> Vec<u8>;
}

impl Sink for MultiGzDecoder<Vec<u8>> {
    fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.get_mut())
    }
}

impl Sink for ZlibDecoder<Vec<u8>> {
    fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.get_mut())
    }
}

impl Sink for brotli_decompressor::DecompressorWriter<Vec<u8>> {
    fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.get_mut())
    }
}

impl Sink for zstd::stream::write::Decoder<'static, Vec<u8>> {
    fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.get_mut())
    }
}

fn feed(d: &mut impl Sink, chunk: &[u8]) -> Option<Vec<u8>> {
    d.write_all(chunk).ok()?;
    d.flush().ok()?;
    Some(d.take())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        Coding::Gzip.continuation(bytes).unwrap_or_default()
    }

    #[test]
    fn every_coding_decodes_when_fed_byte_by_byte() {
        let text = b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".repeat(20);
        let deflated = {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            let _ = e.write_all(&text);
            e.finish().unwrap_or_default()
        };
        let brotli = {
            let mut out = Vec::new();
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            let _ = w.write_all(&text);
            drop(w);
            out
        };
        let zstd = Coding::Zstd.continuation(&text).unwrap_or_default();
        for (coding, encoded) in
            [(Coding::Gzip, gzip(&text)), (Coding::Deflate, deflated), (Coding::Brotli, brotli), (Coding::Zstd, zstd)]
        {
            let mut d = Decoder::new(coding);
            let mut got = Vec::new();
            for b in &encoded {
                got.extend_from_slice(&d.push(std::slice::from_ref(b)));
            }
            assert!(!d.is_failed(), "{coding:?} decodes");
            assert_eq!(got, text, "{coding:?} fed one byte at a time gives the original");
        }
    }

    #[test]
    fn appended_members_and_bad_bytes() {
        let mut both = gzip(b"first ");
        both.extend(gzip(b"second"));
        assert_eq!(
            Decoder::decode_all(Coding::Gzip, &both).as_deref(),
            Some(&b"first second"[..]),
            "a gzip member appended by the relay is read after the stream's own"
        );
        assert_eq!(Decoder::decode_all(Coding::Gzip, b"not gzip at all"), None, "corrupt bytes fail, not panic");
        assert_eq!(Coding::from_header(Some("GZIP")), Coding::Gzip, "codings are case-insensitive");
        assert_eq!(Coding::from_header(Some("gzip, br")), Coding::Unreadable, "stacked codings are not read");
        assert_eq!(Coding::Brotli.continuation(b"x"), None, "brotli cannot be continued");
    }
}
