//! A one-pass skim of a request body for routing (docs/design.md, "Body skim"): the model, the
//! ids the body may carry (`metadata.user_id`, `prompt_cache_key`, `previous_response_id`),
//! `stream`, and the digests behind the turn anchor and the conversation opening — read
//! straight off the bytes, without building a `serde_json::Value` tree. Keys come out with
//! the precedence of `turn.rs` and `conversation.rs` (the same `turn_key_with` /
//! `conversation_key_with`); only the anchor hash differs from the `Value`-based one (same
//! SAME/DIFFERENT decisions, other bytes: keys made before and after the switch never match).
//!
//! **Canonical form.** Every JSON value gets a 128-bit digest `D`, Merkle style:
//! - a string: XXH3-128 of its raw bytes between the quotes, escapes as written (a client
//!   serialises one conversation the same way on every call; `"\u0041"` and `"A"` differ);
//! - a number: XXH3-128 of its token as written (`1.0` and `1` differ);
//! - `true`, `false`, `null`: XXH3-128 of the word;
//! - an array: XXH3-128 of its elements' digests in order;
//! - an object: XXH3-128 of its members sorted by key (keys unescaped, compared bytewise;
//!   a repeated key keeps its last value, as `serde_json` does), each member as key length,
//!   key bytes and value digest; members named `cache_control` are left out at any depth.
//!
//! Each kind hashes with its own seed, so kinds never collide by construction. Whitespace is
//! never hashed. The anchor through the `cut` human message is XXH3-128 of the connection
//! slug and of the digests of the system prompt (or `instructions`) and of the messages
//! (or `input` items) through that message — both cuts share the digests, so the body is
//! read once for both.
//!
//! **Why XXH3-128 suffices.** These keys are not a security boundary: a client that wants to
//! share a turn or a conversation with another one can send `x-switchyard-turn` /
//! `x-switchyard-conversation` anyway, and a key only picks which profile of the caller's
//! own connection serves a call. What matters is that two different conversations do not
//! collide by accident; XXH3-128 is a well-mixed 128-bit hash (it passes SMHasher), so an
//! accidental collision of two digests is ~2^-128 per pair (~2^-64 after a birthday bound
//! of 2^32 live conversations) — far below any failure we could observe. It hashes at
//! memory speed (tens of GB/s), where SHA-256 costs ~2 ns per byte.
//!
//! **Strictness.** The skim checks the JSON grammar (nesting, commas, colons, strings,
//! numbers, literals, nothing after the object, nesting at most 127 deep as `serde_json`)
//! but, for speed, not the escape sequences, the UTF-8 or the control characters inside
//! strings it does not decode (a backslash always escapes the next byte), nor the range of
//! numbers (`1e400`): such a body, which `serde_json` rejects, gets keys instead of "not JSON" (the
//! provider refuses it anyway). The strings it hands out (`model`, ids) are valid UTF-8 or
//! absent.
//!
//! **Lazy reading.** `BodySkim::read_for` reads only what `Wants` asks for and stops as soon
//! as every wanted field has been seen, leaving the rest of the body unread and unchecked
//! (so there the *first* occurrence of a repeated top-level key wins, where `read` and
//! `serde_json` take the last). A field that is wanted but absent costs a full read.

use std::borrow::Cow;

use memchr::memchr2;
use xxhash_rust::xxh3::{xxh3_128_with_seed, Xxh3};

use crate::connection::Protocol;
use crate::conversation::{conversation_key_with, ConversationKey, ConversationSource};
use crate::turn::{turn_key_with, ClientIds, Cut, TurnSource};

/// Deepest nesting accepted: `serde_json`'s recursion limit (128) refuses 128 levels.
const MAX_DEPTH: u32 = 127;

// One seed per kind of value (domain separation).
const SEED_STRING: u64 = 0x5354_5249_4e47_0001;
const SEED_NUMBER: u64 = 0x4e55_4d42_4552_0002;
const SEED_WORD: u64 = 0x574f_5244_0000_0003;
const SEED_ARRAY: u64 = 0x4152_5241_5900_0004;
const SEED_OBJECT: u64 = 0x4f42_4a45_4354_0005;
const SEED_PREFIX: u64 = 0x5052_4546_4958_0006;
const SEED_ANCHOR: u64 = 0x414e_4348_4f52_0007;

type Digest = [u8; 16];

fn digest(seed: u64, bytes: &[u8]) -> Digest {
    xxh3_128_with_seed(bytes, seed).to_le_bytes()
}

/// The body is not a JSON object: route it as a body with no conversation (`BodySkim::empty`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request body is not a JSON object")]
pub struct NotJson;

type Read<T> = Result<T, NotJson>;

/// What `BodySkim::read_for` must find in the body. `model` is always wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wants {
    /// System prompt and messages: the turn anchor and the conversation opening.
    pub anchors: bool,
    /// `metadata.user_id` (a Claude Code session).
    pub user_id: bool,
    pub prompt_cache_key: bool,
    pub previous_response_id: bool,
    pub stream: bool,
}

impl Wants {
    /// Only the model (legacy forwarding: the keys are computed later, off the request path).
    pub const MODEL: Wants =
        Wants { anchors: false, user_id: false, prompt_cache_key: false, previous_response_id: false, stream: false };

    pub const EVERYTHING: Wants =
        Wants { anchors: true, user_id: true, prompt_cache_key: true, previous_response_id: true, stream: true };

    /// What the keys still need once the headers have been read (`ClientIds::read_headers`):
    /// the anchors unless a turn id and a conversation id both came in headers; the body's
    /// session unless an agent's session header outranks it (it also keys the ledger's
    /// session); `prompt_cache_key` unless the conversation is already named; and
    /// `previous_response_id` for the Responses API. (So the ids of a lazy skim may lack a
    /// `prompt_cache_key` that no key would use.)
    pub fn for_ids(headers: &ClientIds, responses_api: bool) -> Wants {
        let turn_decided = headers.explicit_turn.is_some() || headers.client_turn.is_some();
        let conversation_decided = headers.explicit_conversation.is_some() || headers.has_agent_session_header();
        Wants {
            anchors: !turn_decided || !conversation_decided,
            user_id: !headers.has_agent_session_header(),
            prompt_cache_key: !conversation_decided,
            previous_response_id: responses_api,
            stream: false,
        }
    }
}

/// A string in the body: its raw bytes between the quotes.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    escaped: bool,
}

/// Messages (or Responses `input` items) as digests, with where the human ones are.
#[derive(Debug, Clone, Default)]
struct Items {
    digests: Vec<Digest>,
    first_human: Option<usize>,
    last_human: Option<usize>,
}

impl Items {
    fn push(&mut self, d: Digest, human: bool) {
        if human {
            self.first_human.get_or_insert(self.digests.len());
            self.last_human = Some(self.digests.len());
        }
        self.digests.push(d);
    }
}

/// What routing needs from a request body, read in one pass (module docs).
#[derive(Debug, Clone)]
pub struct BodySkim<'b> {
    protocol: Protocol,
    body: &'b [u8],
    model: Option<Span>,
    previous_response_id: Option<Span>,
    prompt_cache_key: Option<Span>,
    user_id: Option<Span>,
    stream: Option<bool>,
    /// Anthropic `system` or Responses `instructions`.
    system: Option<Digest>,
    messages: Option<Items>,
    /// Responses `input` (OpenAI only).
    input: Option<Items>,
    wants: Wants,
}

impl<'b> BodySkim<'b> {
    /// Reads the whole body (and checks it is a JSON object).
    pub fn read(protocol: Protocol, body: &'b [u8]) -> Result<Self, NotJson> {
        Scanner::new(body).top(protocol, Wants::EVERYTHING, false)
    }

    /// Reads only what `wants` asks for, stopping once all of it has been seen (module docs).
    pub fn read_for(protocol: Protocol, body: &'b [u8], wants: Wants) -> Result<Self, NotJson> {
        Scanner::new(body).top(protocol, wants, true)
    }

    /// A body that is not JSON: no model, no ids, no conversation (the keys then depend on
    /// the headers and the connection only, as the `Value`-based keys of `Value::Null`).
    pub fn empty(protocol: Protocol) -> Self {
        BodySkim {
            protocol,
            body: b"",
            model: None,
            previous_response_id: None,
            prompt_cache_key: None,
            user_id: None,
            stream: None,
            system: None,
            messages: None,
            input: None,
            wants: Wants::EVERYTHING,
        }
    }

    fn text(&self, s: Option<Span>) -> Option<Cow<'b, str>> {
        s.and_then(|s| decode(self.body, s))
    }

    /// The top-level `model` when it is a string (borrowed unless it holds escapes).
    pub fn model(&self) -> Option<Cow<'b, str>> {
        self.text(self.model)
    }

    /// The top-level `previous_response_id`, when a non-empty string.
    pub fn previous_response_id(&self) -> Option<Cow<'b, str>> {
        self.text(self.previous_response_id).filter(|s| !s.is_empty())
    }

    /// The top-level `prompt_cache_key` string.
    pub fn prompt_cache_key(&self) -> Option<Cow<'b, str>> {
        self.text(self.prompt_cache_key)
    }

    /// `metadata.user_id` as sent (a JSON string holding Claude Code's `session_id`, or a
    /// plain id); `ClientIds::with_body_ids` reads the session out of it.
    pub fn user_id(&self) -> Option<Cow<'b, str>> {
        self.text(self.user_id)
    }

    /// The body with its top-level `model` string replaced by `model` (the client's bytes
    /// otherwise untouched: no parse, no re-serialisation); `None` when the body has no
    /// string `model`. With a repeated `model` key the one `model()` reads is replaced.
    pub fn with_model(&self, model: &str) -> Option<Vec<u8>> {
        let s = self.model?;
        let quoted = serde_json::to_vec(model).ok()?;
        let (before, after) = (self.body.get(..s.start - 1)?, self.body.get(s.end + 1..)?);
        let mut out = Vec::with_capacity(before.len() + quoted.len() + after.len());
        out.extend_from_slice(before);
        out.extend_from_slice(&quoted);
        out.extend_from_slice(after);
        Some(out)
    }

    /// The top-level `stream` when it is a boolean.
    pub fn stream(&self) -> Option<bool> {
        self.stream
    }

    /// The ids of a request: those read from its headers plus what this body says.
    pub fn client_ids(&self, headers: ClientIds) -> ClientIds {
        headers.with_body_ids(self.user_id().as_deref(), self.prompt_cache_key().as_deref())
    }

    /// The turn key (`turn::turn_key`'s precedence; the anchor from this skim).
    pub fn turn_key(&self, slug: &str, ids: &ClientIds) -> (String, TurnSource) {
        turn_key_with(slug, ids, || self.anchor(slug, Cut::LastHuman))
    }

    /// The conversation key (`conversation::conversation_key`'s precedence; the opening from
    /// this skim).
    pub fn conversation_key(&self, slug: &str, ids: &ClientIds) -> (ConversationKey, ConversationSource) {
        conversation_key_with(slug, ids, || self.anchor(slug, Cut::FirstHuman))
    }

    /// Hash of the connection, the system prompt and the items through the `cut` human one
    /// (all of them when none is human), as `turn::anchor_through` chooses them.
    fn anchor(&self, slug: &str, cut: Cut) -> String {
        debug_assert!(self.wants.anchors, "an anchor of a skim read without Wants::anchors");
        let none = Items::default();
        let (system, items) = match (self.protocol, &self.messages) {
            (Protocol::Anthropic, m) => (self.system, m.as_ref().unwrap_or(&none)),
            (Protocol::Openai, Some(m)) => (None, m),
            (Protocol::Openai, None) => (self.system, self.input.as_ref().unwrap_or(&none)),
        };
        let human = match cut {
            Cut::FirstHuman => items.first_human,
            Cut::LastHuman => items.last_human,
        };
        let through = human.map_or(items.digests.len(), |i| i + 1);
        let mut prefix = Xxh3::with_seed(SEED_PREFIX);
        match system {
            Some(d) => {
                prefix.update(&[1]);
                prefix.update(&d);
            }
            None => prefix.update(&[0]),
        }
        prefix.update(items.digests[..through].as_flattened());
        let mut framed = Vec::with_capacity(slug.len() + 24);
        framed.extend_from_slice(&(slug.len() as u64).to_le_bytes());
        framed.extend_from_slice(slug.as_bytes());
        framed.extend_from_slice(&prefix.digest128().to_le_bytes());
        hex::encode(digest(SEED_ANCHOR, &framed))
    }
}

/// Bit `k` set where `block[k]` is a quote, and where it is a backslash (SWAR, 8 bytes a word).
fn block_masks(block: &[u8]) -> (u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // 0x80 in each byte of `v` equal to `c`, gathered into 8 bits.
    let eq = |v: u64, c: u8| {
        let x = v ^ (ONES * u64::from(c));
        let zero = !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7);
        (zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    };
    let (mut quotes, mut backslashes) = (0u64, 0u64);
    for (k, word) in block.chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let v = u64::from_le_bytes(w);
        quotes |= eq(v, b'"') << (8 * k);
        backslashes |= eq(v, b'\\') << (8 * k);
    }
    (quotes, backslashes)
}

/// The bytes escaped by a backslash in a 64-byte block (simdjson's `find_escaped`): a run
/// of backslashes escapes the byte after it when the run is odd. `carry` says the block
/// starts escaped, and is set for the next block.
fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslashes = backslashes & !*carry;
    let follows = (backslashes << 1) | *carry;
    let odd_starts = backslashes & !EVEN & !follows;
    let (even_starts, overflow) = odd_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    (EVEN ^ (even_starts << 1)) & follows
}

/// A string's text: borrowed when it has no escapes, `None` when it is not valid UTF-8.
fn decode(body: &[u8], s: Span) -> Option<Cow<'_, str>> {
    if s.escaped {
        serde_json::from_slice::<String>(body.get(s.start - 1..s.end + 1)?).ok().map(Cow::Owned)
    } else {
        std::str::from_utf8(body.get(s.start..s.end)?).ok().map(Cow::Borrowed)
    }
}

/// Whether a string equals `text` once unescaped.
fn equals(body: &[u8], s: Span, text: &str) -> bool {
    if s.escaped {
        decode(body, s).is_some_and(|d| d == text)
    } else {
        body.get(s.start..s.end) == Some(text.as_bytes())
    }
}

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

struct Scanner<'b> {
    b: &'b [u8],
    i: usize,
    depth: u32,
    /// Digests of the elements of the arrays being read (innermost last).
    elements: Vec<Digest>,
    /// Members of the objects being read (innermost last).
    members: Vec<(Cow<'b, [u8]>, Digest)>,
    scratch: Vec<u8>,
}

impl<'b> Scanner<'b> {
    fn new(b: &'b [u8]) -> Self {
        Scanner { b, i: 0, depth: 0, elements: Vec::new(), members: Vec::new(), scratch: Vec::new() }
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
        let short = (start + 32).min(b.len());
        while i < short {
            match b[i] {
                b'"' => {
                    self.i = i + 1;
                    return Ok(Span { start, end: i, escaped: false });
                }
                b'\\' => return self.escaped_string(start, i),
                _ => i += 1,
            }
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
    /// branch-free escape masks, on 64-bit words: `unsafe` SIMD is forbidden here).
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
                let mut user = false;
                let mut content = Content::Absent;
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
                    b"content" => match sc.peek() {
                        Some(b'"') => {
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
                let (d, human) = self.message(protocol)?;
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
    fn top(mut self, protocol: Protocol, wants: Wants, lazy: bool) -> Read<BodySkim<'b>> {
        let mut skim = BodySkim::empty(protocol);
        skim.body = self.b;
        skim.wants = wants;
        if self.next() != Some(b'{') {
            return Err(NotJson);
        }
        self.enter()?;
        let openai = protocol == Protocol::Openai;
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
                    b"system" if wants.anchors && !openai => skim.system = Some(self.value()?),
                    b"instructions" if wants.anchors && openai => skim.system = Some(self.value()?),
                    b"messages" if wants.anchors => skim.messages = Some(self.items(protocol, false)?),
                    b"input" if wants.anchors && openai => skim.input = Some(self.items(protocol, true)?),
                    _ => self.skip()?,
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
        };
        self.model.is_some()
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
            let mut sc = Scanner::new(&s);
            let got = sc.string().ok().map(|span| span.end);
            prop_assert_eq!(got, reference_end(&s), "string end in {:?}", String::from_utf8_lossy(&s));
        }
    }
}
