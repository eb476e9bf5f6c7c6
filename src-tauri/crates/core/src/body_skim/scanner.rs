//! The scanner behind [`BodySkim`]: one pass over the bytes, checking the JSON grammar, hashing
//! every value bottom-up (module docs of `body_skim`) and keeping the spans and digests the
//! skim wants.

use std::borrow::Cow;

use memchr::memchr2;

use super::memo::Known;
use super::strings::{block_masks, escaped_bytes, lane_stops};
use super::*;

/// The content of a message, as far as `is_human` cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Content {
    Absent,
    Text,
    /// Content blocks; `true` when one of them is not a tool result.
    Blocks(bool),
    Other,
}

/// A hook for an object's members: given the key, reads the value itself (returning its
/// digest) or leaves it to the generic reader (`None`).
type Hook<'h, 'b> = &'h mut dyn FnMut(&mut Scanner<'b>, &[u8]) -> Read<Option<Digest>>;

pub(super) struct Scanner<'b> {
    b: &'b [u8],
    /// Digests of values read before (`memo.rs`), when the caller keeps one.
    memo: Option<&'b DigestMemo>,
    i: usize,
    depth: u32,
    /// Digests of the elements of the arrays being read (innermost last).
    elements: Vec<Digest>,
    /// Members of the objects being read (innermost last).
    members: Vec<(Cow<'b, [u8]>, Digest)>,
    scratch: Vec<u8>,
}

impl<'b> Scanner<'b> {
    /// `anchors`: the messages will be read (their digests need the vectors); without them
    /// (a legacy body's model, read after its attempt) nothing is allocated until it is needed.
    pub(super) fn new(b: &'b [u8], memo: Option<&'b DigestMemo>, anchors: bool) -> Self {
        // Room for a small body up front: grown from empty, the vectors reallocated four times
        // each on a one-line chat body (1.4k of the 8k instructions of its keys, callgrind).
        let (elements, members, scratch) = if anchors {
            (Vec::with_capacity(16), Vec::with_capacity(16), Vec::with_capacity(512))
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        Scanner { b, memo, i: 0, depth: 0, elements, members, scratch }
    }

    /// Reads the value at the cursor with `read`, or takes what the memo knows of its bytes
    /// (`memo.rs`: only bytes read in full and found valid before, by the reader `seed` names).
    fn remembered(&mut self, seed: u64, read: impl FnOnce(&mut Self) -> Read<Known>) -> Read<Known> {
        self.ws();
        let start = self.i;
        let Some(memo) = self.memo else { return read(self) };
        if let Some((end, known)) = memo.recall(seed, self.b, start) {
            self.i = end;
            return Ok(known);
        }
        let known = read(self)?;
        memo.remember(seed, self.b, start, self.i, known);
        Ok(known)
    }

    /// A top-level member's value skipped (grammar checked), or known valid from the memo.
    fn skip_remembered(&mut self) -> Read<()> {
        self.remembered(SEED_MEMO_SKIP, |sc| sc.skip().map(|()| Known { digest: [0; 16], human: false })).map(drop)
    }

    /// A top-level member's digest, read or remembered.
    fn value_remembered(&mut self) -> Read<Digest> {
        self.remembered(SEED_MEMO_VALUE, |sc| sc.value().map(|digest| Known { digest, human: false })).map(|k| k.digest)
    }

    /// An item of `messages` / `input`, read or remembered (the class depends on the protocol).
    fn message_remembered(&mut self, protocol: Protocol) -> Read<(Digest, bool)> {
        let seed = match protocol {
            Protocol::Anthropic => SEED_MEMO_ANTHROPIC_ITEM,
            Protocol::Openai => SEED_MEMO_OPENAI_ITEM,
            Protocol::Gemini => SEED_MEMO_GEMINI_ITEM,
        };
        self.remembered(seed, |sc| sc.message(protocol).map(|(digest, human)| Known { digest, human }))
            .map(|k| (k.digest, k.human))
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// Skips whitespace and peeks.
    fn next(&mut self) -> Option<u8> {
        self.ws();
        self.peek()
    }

    fn expect(&mut self, c: u8) -> Read<()> {
        if self.next() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    fn enter(&mut self) -> Read<()> {
        self.depth += 1;
        self.i += 1;
        if self.depth > MAX_DEPTH {
            return Err(NotJson);
        }
        Ok(())
    }

    /// After a member or element: `true` at the container's end, `false` after a comma.
    fn end_or_comma(&mut self, close: u8) -> Read<bool> {
        match self.next() {
            Some(b',') => {
                self.i += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.i += 1;
                self.depth -= 1;
                Ok(true)
            }
            _ => Err(NotJson),
        }
    }

    /// Right after an opening bracket: `true` (and leaves) when the container is empty.
    fn empty(&mut self, close: u8) -> bool {
        if self.next() == Some(close) {
            self.i += 1;
            self.depth -= 1;
            true
        } else {
            false
        }
    }

    /// A string starting at the cursor (`"`). Short strings (keys, roles, types) end within
    /// a plain loop; long ones are searched with memchr; from the first backslash on,
    /// `escaped_string` takes over. Escape sequences are not checked here (module docs).
    fn string(&mut self) -> Read<Span> {
        if self.peek() != Some(b'"') {
            return Err(NotJson);
        }
        let b = self.b;
        let start = self.i + 1;
        let mut i = start;
        // two 16-byte lanes first: most strings are keys and short values
        for _ in 0..2 {
            let Some(lane) = b.get(i..i + 16).and_then(|l| <&[u8; 16]>::try_from(l).ok()) else { break };
            let stops = lane_stops(lane);
            if stops != 0 {
                let j = i + stops.trailing_zeros() as usize;
                if b[j] == b'\\' {
                    return self.escaped_string(start, j);
                }
                self.i = j + 1;
                return Ok(Span { start, end: j, escaped: false });
            }
            i += 16;
        }
        let j = i + memchr2(b'"', b'\\', b.get(i..).ok_or(NotJson)?).ok_or(NotJson)?;
        if b[j] == b'\\' {
            return self.escaped_string(start, j);
        }
        self.i = j + 1;
        Ok(Span { start, end: j, escaped: false })
    }

    /// The rest of a string from its first backslash (at `from`), 64 bytes at a time: a
    /// quote ends the string unless an odd run of backslashes precedes it (simdjson's
    /// branch-free escape masks; the masks come from SSE2 compares, `strings.rs`).
    fn escaped_string(&mut self, start: usize, from: usize) -> Read<Span> {
        let b = self.b;
        let mut i = from;
        let mut carry = 0u64; // 1 when the next block's first byte is escaped
        while let Some(block) = b.get(i..i + 64) {
            let (quotes, backslashes) = block_masks(block);
            let escaped = escaped_bytes(backslashes, &mut carry);
            let real = quotes & !escaped;
            if real != 0 {
                let end = i + real.trailing_zeros() as usize;
                self.i = end + 1;
                return Ok(Span { start, end, escaped: true });
            }
            i += 64;
            if backslashes == 0 && carry == 0 {
                // a block of plain text: memchr is faster until the next quote or backslash
                i += memchr2(b'"', b'\\', b.get(i..).ok_or(NotJson)?).ok_or(NotJson)?;
                if b[i] == b'"' {
                    self.i = i + 1;
                    return Ok(Span { start, end: i, escaped: true });
                }
            }
        }
        let mut escaped = carry != 0;
        while let Some(&c) = b.get(i) {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                self.i = i + 1;
                return Ok(Span { start, end: i, escaped: true });
            }
            i += 1;
        }
        Err(NotJson)
    }

    /// An object key, unescaped when it holds escapes.
    fn key(&mut self) -> Read<Cow<'b, [u8]>> {
        self.ws();
        let s = self.string()?;
        self.expect(b':')?;
        self.ws();
        let b = self.b;
        if s.escaped {
            decode(b, s).map(|k| Cow::Owned(k.into_owned().into_bytes())).ok_or(NotJson)
        } else {
            Ok(Cow::Borrowed(&b[s.start..s.end]))
        }
    }

    /// A number token (JSON grammar), returning its bytes.
    fn number(&mut self) -> Read<&'b [u8]> {
        let b = self.b;
        let start = self.i;
        let mut i = start;
        let digits = |i: &mut usize| {
            let from = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i > from
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                digits(&mut i);
            }
            _ => return Err(NotJson),
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if !digits(&mut i) {
                return Err(NotJson);
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if !digits(&mut i) {
                return Err(NotJson);
            }
        }
        self.i = i;
        Ok(&b[start..i])
    }

    fn word(&mut self, w: &[u8]) -> Read<()> {
        if self.b.get(self.i..self.i + w.len()) == Some(w) {
            self.i += w.len();
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    /// Skips a value, checking its grammar (no hashing).
    fn skip(&mut self) -> Read<()> {
        match self.next().ok_or(NotJson)? {
            b'"' => self.string().map(drop),
            b'{' => {
                self.enter()?;
                if self.empty(b'}') {
                    return Ok(());
                }
                loop {
                    self.key()?;
                    self.skip()?;
                    if self.end_or_comma(b'}')? {
                        return Ok(());
                    }
                }
            }
            b'[' => {
                self.enter()?;
                if self.empty(b']') {
                    return Ok(());
                }
                loop {
                    self.skip()?;
                    if self.end_or_comma(b']')? {
                        return Ok(());
                    }
                }
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number().map(drop),
        }
    }

    /// The digest of a value (module docs).
    fn value(&mut self) -> Read<Digest> {
        match self.next().ok_or(NotJson)? {
            b'"' => {
                let s = self.string()?;
                Ok(digest(SEED_STRING, &self.b[s.start..s.end]))
            }
            b'{' => self.object(&mut |_, _| Ok(None)),
            b'[' => self.array(&mut |sc| sc.value()),
            b't' => self.word(b"true").map(|()| digest(SEED_WORD, b"true")),
            b'f' => self.word(b"false").map(|()| digest(SEED_WORD, b"false")),
            b'n' => self.word(b"null").map(|()| digest(SEED_WORD, b"null")),
            _ => self.number().map(|n| digest(SEED_NUMBER, n)),
        }
    }

    /// An array's digest, each element read by `element`.
    fn array(&mut self, element: &mut dyn FnMut(&mut Self) -> Read<Digest>) -> Read<Digest> {
        self.enter()?;
        let base = self.elements.len();
        if !self.empty(b']') {
            loop {
                let d = element(self)?;
                self.elements.push(d);
                if self.end_or_comma(b']')? {
                    break;
                }
            }
        }
        let d = digest(SEED_ARRAY, self.elements[base..].as_flattened());
        self.elements.truncate(base);
        Ok(d)
    }

    /// An object's digest: members sorted by key, the last of a repeated key kept,
    /// `cache_control` left out; `hook` may read a member's value itself.
    fn object(&mut self, hook: Hook<'_, 'b>) -> Read<Digest> {
        self.enter()?;
        let base = self.members.len();
        if !self.empty(b'}') {
            loop {
                let key = self.key()?;
                if *key == *b"cache_control" {
                    self.skip()?;
                } else {
                    let d = match hook(self, &key)? {
                        Some(d) => d,
                        None => self.value()?,
                    };
                    self.members.push((key, d));
                }
                if self.end_or_comma(b'}')? {
                    break;
                }
            }
        }
        let members = &mut self.members[base..];
        members.sort_by(|a, b| a.0.cmp(&b.0)); // stable: repeated keys stay in body order
        self.scratch.clear();
        for (n, (key, d)) in members.iter().enumerate() {
            if members.get(n + 1).is_some_and(|next| next.0 == *key) {
                continue; // a later value of the same key wins
            }
            self.scratch.extend_from_slice(&(key.len() as u64).to_le_bytes());
            self.scratch.extend_from_slice(key);
            self.scratch.extend_from_slice(d);
        }
        let d = digest(SEED_OBJECT, &self.scratch);
        self.members.truncate(base);
        Ok(d)
    }

    /// A message (or Responses item): its digest and whether a person wrote it — exactly
    /// `turn::is_human`: a string, or `role: "user"` with string content or with content
    /// blocks not all tool results.
    fn message(&mut self, protocol: Protocol) -> Read<(Digest, bool)> {
        match self.next().ok_or(NotJson)? {
            b'"' => Ok((self.value()?, true)),
            b'{' => {
                let gemini = protocol == Protocol::Gemini;
                // Gemini reads a missing role as the user's.
                let mut user = gemini;
                let mut content = Content::Absent;
                let content_key: &[u8] = if gemini { b"parts" } else { b"content" };
                let d = self.object(&mut |sc, key| match key {
                    b"role" => {
                        user = false;
                        if sc.peek() != Some(b'"') {
                            return Ok(None);
                        }
                        let s = sc.string()?;
                        user = equals(sc.b, s, "user");
                        Ok(Some(digest(SEED_STRING, &sc.b[s.start..s.end])))
                    }
                    // Gemini's `parts` are its content blocks; it has no string form.
                    k if k == content_key => match sc.peek() {
                        Some(b'"') if !gemini => {
                            content = Content::Text;
                            Ok(None)
                        }
                        Some(b'[') => {
                            let (d, human) = sc.blocks(protocol)?;
                            content = Content::Blocks(human);
                            Ok(Some(d))
                        }
                        _ => {
                            content = Content::Other;
                            Ok(None)
                        }
                    },
                    _ => Ok(None),
                })?;
                let human = user && matches!(content, Content::Text | Content::Blocks(true));
                Ok((d, human))
            }
            _ => Ok((self.value()?, false)),
        }
    }

    /// Content blocks: their digest and whether one is not a tool result.
    fn blocks(&mut self, protocol: Protocol) -> Read<(Digest, bool)> {
        let mut human = false;
        let d = self.array(&mut |sc| {
            if sc.next() != Some(b'{') {
                human = true; // no `type`: not a tool result
                return sc.value();
            }
            let mut tool = false;
            let d = sc.object(&mut |sc, key| {
                if protocol == Protocol::Gemini {
                    // A part is a tool result when it carries a `functionResponse`.
                    tool |= key == b"functionResponse";
                    return Ok(None);
                }
                if key != b"type" {
                    return Ok(None);
                }
                tool = false;
                if sc.peek() != Some(b'"') {
                    return Ok(None);
                }
                let s = sc.string()?;
                tool = equals(sc.b, s, "tool_result")
                    || (protocol == Protocol::Openai && equals(sc.b, s, "function_call_output"));
                Ok(Some(digest(SEED_STRING, &sc.b[s.start..s.end])))
            })?;
            human |= !tool;
            Ok(d)
        })?;
        Ok((d, human))
    }

    /// `messages` or `input`: an array of items, or (`single`) any other value as one item.
    fn items(&mut self, protocol: Protocol, single: bool) -> Read<Items> {
        let mut items = Items::default();
        if self.next() != Some(b'[') {
            if single {
                let (d, human) = self.message(protocol)?;
                items.push(d, human);
            } else {
                self.skip()?;
            }
            return Ok(items);
        }
        self.enter()?;
        if !self.empty(b']') {
            loop {
                let (d, human) = self.message_remembered(protocol)?;
                items.push(d, human);
                if self.end_or_comma(b']')? {
                    break;
                }
            }
        }
        Ok(items)
    }

    /// A top-level string field: its span, or `None` (value skipped) when not a string.
    fn string_field(&mut self) -> Read<Option<Span>> {
        if self.peek() == Some(b'"') {
            self.string().map(Some)
        } else {
            self.skip().map(|()| None)
        }
    }

    /// `metadata`: its `user_id` string.
    fn metadata(&mut self) -> Read<Option<Span>> {
        if self.peek() != Some(b'{') {
            return self.skip().map(|()| None);
        }
        self.enter()?;
        let mut user_id = None;
        if self.empty(b'}') {
            return Ok(None);
        }
        loop {
            if *self.key()? == *b"user_id" {
                user_id = self.string_field()?;
            } else {
                self.skip()?;
            }
            if self.end_or_comma(b'}')? {
                return Ok(user_id);
            }
        }
    }

    /// The body: a JSON object whose top-level fields are read as `wants` says.
    pub(super) fn top(mut self, protocol: Protocol, wants: Wants, lazy: bool) -> Read<BodySkim<'b>> {
        let mut skim = BodySkim::empty(protocol);
        skim.body = self.b;
        skim.wants = wants;
        if self.next() != Some(b'{') {
            return Err(NotJson);
        }
        self.enter()?;
        let openai = protocol == Protocol::Openai;
        let gemini = protocol == Protocol::Gemini;
        if !self.empty(b'}') {
            loop {
                let key = self.key()?;
                match &*key {
                    b"model" => skim.model = self.string_field()?,
                    b"previous_response_id" if wants.previous_response_id => {
                        skim.previous_response_id = self.string_field()?
                    }
                    b"prompt_cache_key" if wants.prompt_cache_key => skim.prompt_cache_key = self.string_field()?,
                    b"metadata" if wants.user_id => skim.user_id = self.metadata()?,
                    b"stream" if wants.stream => {
                        skim.stream = match self.peek() {
                            Some(b't') => self.word(b"true").map(|()| Some(true))?,
                            Some(b'f') => self.word(b"false").map(|()| Some(false))?,
                            _ => self.skip().map(|()| None)?,
                        }
                    }
                    b"system" if wants.anchors && protocol == Protocol::Anthropic => {
                        skim.system = Some(self.value_remembered()?)
                    }
                    b"systemInstruction" if wants.anchors && gemini => skim.system = Some(self.value_remembered()?),
                    b"contents" if wants.anchors && gemini => skim.messages = Some(self.items(protocol, false)?),
                    b"instructions" if wants.anchors && openai => skim.system = Some(self.value_remembered()?),
                    b"messages" if wants.anchors && !gemini => skim.messages = Some(self.items(protocol, false)?),
                    b"input" if wants.anchors && openai => skim.input = Some(self.items(protocol, true)?),
                    _ => self.skip_remembered()?,
                }
                if self.end_or_comma(b'}')? {
                    break;
                }
                if lazy && skim.has_all_wanted() {
                    return Ok(skim);
                }
            }
        }
        self.ws();
        if self.i != self.b.len() {
            return Err(NotJson);
        }
        Ok(skim)
    }
}

impl BodySkim<'_> {
    /// Every wanted field has been seen (a lazy read may stop).
    fn has_all_wanted(&self) -> bool {
        let w = self.wants;
        let anchors = match self.protocol {
            Protocol::Anthropic => self.system.is_some() && self.messages.is_some(),
            Protocol::Openai => self.messages.is_some(),
            Protocol::Gemini => self.system.is_some() && self.messages.is_some(),
        };
        // Gemini carries the model in the path, never in the body.
        (self.model.is_some() || self.protocol == Protocol::Gemini)
            && (!w.anchors || anchors)
            && (!w.user_id || self.user_id.is_some())
            && (!w.prompt_cache_key || self.prompt_cache_key.is_some())
            && (!w.previous_response_id || self.previous_response_id.is_some())
            && (!w.stream || self.stream.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Where a string opened at byte 0 ends, byte by byte.
    fn reference_end(s: &[u8]) -> Option<usize> {
        let mut escaped = false;
        for (i, &c) in s.iter().enumerate().skip(1) {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                return Some(i);
            }
        }
        None
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn the_block_scan_ends_strings_where_a_byte_by_byte_scan_does(
            body in proptest::collection::vec(
                prop_oneof![3 => Just(b'a'), 1 => Just(b'\\'), 1 => Just(b'"'), 1 => Just(0xe9u8)], 0..400),
            escapes in proptest::collection::vec(
                prop_oneof![Just(&b"a"[..]), Just(&b"\\\""[..]), Just(&b"\\\\"[..]), Just(&b"\\n"[..])], 0..100),
            quote_free in any::<bool>(),
            plain in 0usize..200,
            more in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'\\'), Just(b'"')], 0..80),
            lead in 0usize..70,
        ) {
            // `lead` plain bytes first, so that escapes start anywhere in a block
            let mut s = vec![b'"'];
            s.extend(std::iter::repeat_n(b'x', lead));
            if quote_free {
                // escapes only, no closing quote yet: the scan must run through the plain run
                s.extend(escapes.concat());
            } else {
                s.extend(body);
            }
            // a long plain run (memchr takes over between blocks), then more escapes
            s.extend(std::iter::repeat_n(b'p', plain));
            s.extend(more);
            let mut sc = Scanner::new(&s, None, true);
            let got = sc.string().ok();
            let want = reference_end(&s);
            prop_assert_eq!(got.map(|span| span.end), want, "string end in {:?}", String::from_utf8_lossy(&s));
            if let (Some(span), Some(end)) = (got, want) {
                prop_assert_eq!(span.escaped, s[1..end].contains(&b'\\'), "escape flag of {:?}", String::from_utf8_lossy(&s));
            }
        }
    }
}
