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

use xxhash_rust::xxh3::{xxh3_128_with_seed, Xxh3};

use crate::connection::Protocol;
use crate::conversation::{conversation_key_with, ConversationKey, ConversationSource};
use crate::hex_text::hex_text;
use crate::turn::{turn_key_with, ClientIds, Cut, TurnSource};

mod memo;
mod scanner;
mod strings;

pub use memo::{DigestMemo, DEFAULT_MEMO_ENTRIES, DEFAULT_MEMO_MIN_BYTES};
use scanner::Scanner;

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
// Memo keys (raw bytes), one seed per reader of the value (`memo.rs`).
const SEED_MEMO_SKIP: u64 = 0x4d45_4d4f_534b_0008;
const SEED_MEMO_VALUE: u64 = 0x4d45_4d4f_5641_0009;
const SEED_MEMO_ANTHROPIC_ITEM: u64 = 0x4d45_4d4f_414e_000a;
const SEED_MEMO_OPENAI_ITEM: u64 = 0x4d45_4d4f_4f41_000b;
const SEED_MEMO_GEMINI_ITEM: u64 = 0x4d45_4d4f_4745_000c;

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
        Scanner::new(body, None, true).top(protocol, Wants::EVERYTHING, false)
    }

    /// Reads only what `wants` asks for, stopping once all of it has been seen (module docs).
    pub fn read_for(protocol: Protocol, body: &'b [u8], wants: Wants) -> Result<Self, NotJson> {
        Scanner::new(body, None, wants.anchors).top(protocol, wants, true)
    }

    /// `read`, taking the digests of messages (and of the system prompt, and the validity of
    /// other large top-level values) seen before from `memo`, and adding those it reads
    /// (`memo.rs`). The same result as `read`.
    pub fn read_remembered(protocol: Protocol, body: &'b [u8], memo: &'b DigestMemo) -> Result<Self, NotJson> {
        Scanner::new(body, Some(memo), true).top(protocol, Wants::EVERYTHING, false)
    }

    /// `read_for` with a memo (`read_remembered`). The same result as `read_for`.
    pub fn read_for_remembered(
        protocol: Protocol,
        body: &'b [u8],
        wants: Wants,
        memo: &'b DigestMemo,
    ) -> Result<Self, NotJson> {
        Scanner::new(body, Some(memo), wants.anchors).top(protocol, wants, true)
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

    /// Both keys of one request ([`BodySkim::turn_key`], [`BodySkim::conversation_key`]), the
    /// anchor hashed once where the turn and the opening end at the same human message — a
    /// conversation's first turn and every tool round of it (issue 40: the anchor is ~1k
    /// instructions of a routed request).
    pub fn keys(&self, slug: &str, ids: &ClientIds) -> ((String, TurnSource), (ConversationKey, ConversationSource)) {
        let (_, items) = self.anchored();
        let one_anchor = items.first_human == items.last_human;
        let mut kept = None;
        let turn = turn_key_with(slug, ids, || {
            let anchor = self.anchor(slug, Cut::LastHuman);
            if one_anchor {
                kept = Some(anchor.clone());
            }
            anchor
        });
        let conversation =
            conversation_key_with(slug, ids, || kept.take().unwrap_or_else(|| self.anchor(slug, Cut::FirstHuman)));
        (turn, conversation)
    }

    /// The system prompt's digest and the items an anchor reads, as `turn::anchor_through`
    /// chooses them.
    fn anchored(&self) -> (Option<Digest>, &Items) {
        static NONE: Items = Items { digests: Vec::new(), first_human: None, last_human: None };
        match (self.protocol, &self.messages) {
            (Protocol::Anthropic, m) => (self.system, m.as_ref().unwrap_or(&NONE)),
            (Protocol::Openai, Some(m)) => (None, m),
            (Protocol::Openai, None) => (self.system, self.input.as_ref().unwrap_or(&NONE)),
            (Protocol::Gemini, m) => (self.system, m.as_ref().unwrap_or(&NONE)),
        }
    }

    /// Hash of the connection, the system prompt and the items through the `cut` human one
    /// (all of them when none is human), as `turn::anchor_through` chooses them.
    fn anchor(&self, slug: &str, cut: Cut) -> String {
        debug_assert!(self.wants.anchors, "an anchor of a skim read without Wants::anchors");
        let (system, items) = self.anchored();
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
        hex_text("", &digest(SEED_ANCHOR, &framed))
    }
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
