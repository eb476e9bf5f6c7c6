//! Gemini's stream without `alt=sse`: one JSON array whose elements arrive as they are made
//! (`[{…}\n,\r\n{…}\n]`). The splitter lends each top-level element's text once it is whole,
//! however the bytes are cut; it tracks only strings, escapes and nesting depth. Pure.

use std::ops::ControlFlow;

#[derive(Debug, Default)]
pub struct ArraySplitter {
    /// Bytes of the element being read.
    pending: Vec<u8>,
    /// Past the opening `[`.
    opened: bool,
    /// Past the closing `]`.
    closed: bool,
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl ArraySplitter {
    /// Reads the next bytes; `on_element` gets each whole element (may stop the read).
    pub fn push(&mut self, bytes: &[u8], mut on_element: impl FnMut(&str) -> ControlFlow<()>) {
        for &b in bytes {
            if self.closed {
                return;
            }
            if self.depth == 0 {
                match b {
                    b'[' if !self.opened => self.opened = true,
                    b']' if self.opened => self.closed = true,
                    b'{' | b'[' | b'"' if self.opened => {
                        self.pending.clear();
                        self.pending.push(b);
                        if b == b'"' {
                            self.in_string = true;
                        }
                        self.depth = 1;
                    }
                    _ => {} // whitespace, commas; anything else is not ours to judge
                }
                continue;
            }
            self.pending.push(b);
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => {
                        self.in_string = false;
                        if self.depth == 1 && self.pending.first() == Some(&b'"') {
                            self.depth = 0;
                        }
                    }
                    _ => {}
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth -= 1,
                    _ => {}
                }
            }
            if self.depth == 0 {
                let text = String::from_utf8_lossy(&self.pending);
                if on_element(&text).is_break() {
                    self.closed = true;
                    return;
                }
            }
        }
    }

    /// The closing `]` was read: the array is complete.
    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

/// What the relay appends when a JSON-array stream breaks after output: one more element in
/// Gemini's error shape and the closing bracket, so a client never reads a clean end.
pub fn interrupted_tail() -> Vec<u8> {
    let msg = "the upstream stream ended before the response was complete (switchyard)";
    format!(",\r\n{}\r\n]", serde_json::json!({"error": {"code": 502, "message": msg, "status": "UNAVAILABLE"}}))
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> (Vec<String>, bool) {
        let mut s = ArraySplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, |e| {
                out.push(e.to_string());
                ControlFlow::Continue(())
            });
        }
        (out, s.is_closed())
    }

    #[test]
    fn elements_come_whole_however_cut() {
        let body = "[{\"a\":\"}]\\\"[\"}\n,\r\n{\"b\":[1,{\"c\":2}]}\n]";
        let whole = split(&[body.as_bytes()]);
        assert_eq!(whole.0, vec!["{\"a\":\"}]\\\"[\"}", "{\"b\":[1,{\"c\":2}]}"], "brackets in strings are text");
        assert!(whole.1, "closed");
        let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
        assert_eq!(split(&bytes), whole, "byte by byte");
        assert!(!split(&[b"[{\"a\":1}"]).1, "no closing bracket: not closed");
        let tail = String::from_utf8(interrupted_tail()).unwrap_or_default();
        let (els, closed) = split(&[b"[{\"a\":1}", tail.as_bytes()]);
        assert!(closed && els.len() == 2 && els[1].contains("\"error\""), "the tail is an error element and closes");
    }
}
