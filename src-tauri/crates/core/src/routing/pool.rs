//! Pools across connections (invariant 24), the pure part: a member (`CONN[=MODEL][:WEIGHT]`),
//! which members serve a requested model and under which name, the member a conversation
//! is assigned (sticky while warm, else SWRR over conversations or the priority order), the
//! order the other members take a turn over in (hand-off, only before output), and the pool's
//! gates (`pool activate`: every member ready and at least two; routing: at least one). The
//! engine loads pools, keeps the bindings and SWRR states and drives the one routing loop;
//! nothing here does I/O.

use std::fmt;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::selection::Strategy;
use super::swrr::{select_priority, Candidate, Swrr};
use crate::lru::Lru;
use crate::secret_shape::quoted_or_hidden;
use crate::validate::{validate_model, validate_slug, InvalidInput};

/// The most members a pool may have.
pub const MAX_POOL_MEMBERS: usize = 16;

/// The heaviest weight a member may carry.
pub const MAX_MEMBER_WEIGHT: u32 = 100;

/// How long a conversation keeps its member after its last call (the default conversation
/// affinity window of a connection).
pub const POOL_WARM_WINDOW: Duration = Duration::from_secs(10 * 60);

/// The most conversations a pool board remembers (the oldest is forgotten first).
pub const MAX_POOL_CONVERSATIONS: usize = 50_000;

/// One member of a pool: a connection, the model it is asked for (`None`: the requested model
/// as is, where the connection enables it), its weight (balanced) and its place in the order
/// (priority: the order members were given in).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PoolMember {
    pub slug: String,
    pub model: Option<String>,
    pub weight: u32,
}

impl PoolMember {
    /// Parses `CONN`, `CONN=MODEL`, `CONN:WEIGHT` or `CONN=MODEL:WEIGHT` (weight 1 when absent).
    /// The model is checked as any model name ([`validate_model`]: no `../`, no quotes, no key,
    /// at most 200 characters); an error repeats the member only when it is safe to echo.
    pub fn parse(text: &str) -> Result<PoolMember, InvalidInput> {
        let text = text.trim();
        let shown = quoted_or_hidden(text);
        let (head, weight) = match text.rsplit_once(':') {
            Some((h, w)) if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) => {
                let weight: u32 = w.parse().map_err(|_| InvalidInput::new("member", format!("{shown}: bad weight")))?;
                (h, weight)
            }
            _ => (text, 1),
        };
        if weight == 0 || weight > MAX_MEMBER_WEIGHT {
            return Err(InvalidInput::new("member", format!("{shown}: weight must be 1..={MAX_MEMBER_WEIGHT}")));
        }
        let (slug, model) = match head.split_once('=') {
            Some((s, m)) => (s.trim(), Some(m.trim())),
            None => (head.trim(), None),
        };
        validate_slug(slug).map_err(|e| InvalidInput::new("member", format!("{shown}: {}", e.message)))?;
        if let Some(m) = model {
            // A leading '-' would reach the CLI backend's `--model` as an option; `../` would
            // climb a Gemini path; a key is no model (issue 39).
            validate_model(m)
                .map_err(|e| InvalidInput::new("member", format!("{shown}: the model after '=' {}", e.message)))?;
        }
        Ok(PoolMember { slug: slug.to_string(), model: model.map(str::to_string), weight })
    }

    /// The member's name in reports, bindings and pinned paths: `CONN` or `CONN=MODEL`.
    pub fn key(&self) -> String {
        match &self.model {
            Some(m) => format!("{}={m}", self.slug),
            None => self.slug.clone(),
        }
    }

    /// The model this member is asked for when the client asked for `requested`.
    pub fn model_for<'a>(&'a self, requested: &'a str) -> &'a str {
        self.model.as_deref().unwrap_or(requested)
    }

    /// Whether this member serves `requested`, given the models its connection can serve now:
    /// a member naming its model serves every requested name as that model; one that does not
    /// serves the requested model only where its connection does.
    pub fn serves(&self, requested: &str, served: &[String]) -> bool {
        let model = self.model_for(requested);
        served.iter().any(|m| m == model)
    }
}

impl fmt::Display for PoolMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.key(), self.weight)
    }
}

/// Why a pool's member list is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("a pool needs at least one member")]
    Empty,
    #[error("a pool has at most {MAX_POOL_MEMBERS} members")]
    TooMany,
    #[error("member '{0}' is given twice")]
    Repeated(String),
}

/// Checks a member list: not empty, bounded, no member twice.
pub fn check_members(members: &[PoolMember]) -> Result<(), PoolError> {
    if members.is_empty() {
        return Err(PoolError::Empty);
    }
    if members.len() > MAX_POOL_MEMBERS {
        return Err(PoolError::TooMany);
    }
    for (i, m) in members.iter().enumerate() {
        if members[..i].iter().any(|o| o.key() == m.key()) {
            return Err(PoolError::Repeated(m.key()));
        }
    }
    Ok(())
}

/// A member as selection sees it: its name, weight and place in the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSlot {
    pub key: String,
    pub weight: u32,
    pub order: usize,
}

impl MemberSlot {
    pub fn of(members: &[PoolMember]) -> Vec<MemberSlot> {
        members.iter().enumerate().map(|(order, m)| MemberSlot { key: m.key(), weight: m.weight, order }).collect()
    }
}

impl Candidate for MemberSlot {
    fn id(&self) -> &str {
        &self.key
    }
    fn weight(&self) -> u32 {
        self.weight
    }
    fn priority(&self) -> i64 {
        i64::try_from(self.order).unwrap_or(i64::MAX)
    }
}

/// Why a request's first attempt went to its member (recorded as the hand-off's cause is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberReason {
    /// The conversation's member while it is warm.
    Sticky,
    /// A new (or cold) conversation, assigned by SWRR over conversations.
    Swrr,
    /// The first member of the order that can serve (priority pools).
    Priority,
    /// The request continues a response only this member's account can read.
    Continuity,
    /// The path names the member (`/c/POOL@MEMBER/…`, `exec POOL`).
    Pinned,
}

impl MemberReason {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberReason::Sticky => "sticky",
            MemberReason::Swrr => "swrr",
            MemberReason::Priority => "priority",
            MemberReason::Continuity => "continuity",
            MemberReason::Pinned => "pinned",
        }
    }
}

/// The member chosen for a request, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberPick {
    pub index: usize,
    pub reason: MemberReason,
}

/// Chooses the member of a request among `able` (indices into `slots`: members that serve
/// the model and may serve now): the warm conversation's `sticky` member while it is able,
/// else SWRR over conversations (balanced; `swrr` is the pool's state for the model) or the
/// first able member of the order (priority).
pub fn choose_member(
    strategy: Strategy,
    slots: &[MemberSlot],
    able: &[usize],
    sticky: Option<usize>,
    swrr: &mut Swrr,
) -> Option<MemberPick> {
    if let Some(s) = sticky.filter(|s| able.contains(s)) {
        return Some(MemberPick { index: s, reason: MemberReason::Sticky });
    }
    match strategy {
        Strategy::Balanced => swrr.select(slots, able).map(|index| MemberPick { index, reason: MemberReason::Swrr }),
        Strategy::Priority => {
            select_priority(slots, able).map(|index| MemberPick { index, reason: MemberReason::Priority })
        }
    }
}

/// The members that take a turn over when `chosen` cannot serve it before output, in the
/// order they are tried: heavier first, then the order (balanced); the order (priority).
pub fn hand_off_order(strategy: Strategy, slots: &[MemberSlot], able: &[usize], chosen: usize) -> Vec<usize> {
    let mut rest: Vec<usize> = able.iter().copied().filter(|&i| i != chosen && i < slots.len()).collect();
    match strategy {
        Strategy::Balanced => rest.sort_by(|&a, &b| slots[b].weight.cmp(&slots[a].weight).then(a.cmp(&b))),
        Strategy::Priority => rest.sort_by_key(|&i| slots[i].order),
    }
    rest
}

/// Whether a turn may move to another member now: only before any output reached the client.
pub fn may_hand_off(committed: bool) -> bool {
    !committed
}

/// Which member each warm conversation of each pool is on: (pool, conversation, requested
/// model) → member key, forgotten after [`POOL_WARM_WINDOW`] without a call. Memory only.
#[derive(Debug)]
pub struct PoolBindings {
    bound: Lru<(String, String, String), String>,
}

impl Default for PoolBindings {
    fn default() -> Self {
        PoolBindings::new(MAX_POOL_CONVERSATIONS, POOL_WARM_WINDOW)
    }
}

impl PoolBindings {
    pub fn new(capacity: usize, window: Duration) -> Self {
        PoolBindings { bound: Lru::new(capacity, Some(window)) }
    }

    /// The member `conversation` is kept on, while warm.
    pub fn get(&mut self, pool: &str, conversation: &str, model: &str, now: Instant) -> Option<&str> {
        let key = (pool.to_string(), conversation.to_string(), model.to_string());
        self.bound.get(&key, now).map(String::as_str)
    }

    /// Keeps `conversation` on `member` (a new assignment, a hand-off, or a call that
    /// refreshes it).
    pub fn bind(&mut self, pool: &str, conversation: &str, model: &str, member: &str, now: Instant) {
        let key = (pool.to_string(), conversation.to_string(), model.to_string());
        self.bound.insert(key, member.to_string(), now);
    }

    /// Forgets where `conversation` of `pool` was kept for `model`.
    pub fn remove(&mut self, pool: &str, conversation: &str, model: &str) {
        self.bound.remove(&(pool.to_string(), conversation.to_string(), model.to_string()));
    }

    /// Forgets every conversation of `pool` (its members or mode changed).
    pub fn forget_pool(&mut self, pool: &str) {
        self.bound.retain(|(p, _, _), _| p != pool);
    }

    pub fn len(&self) -> usize {
        self.bound.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }
}

/// Why a member does not count toward a pool's gates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum MemberOut {
    /// The member's connection was removed.
    ConnectionMissing,
    /// The connection speaks another protocol than the pool.
    ProtocolMismatch,
    /// No profile of the connection has current evidence for the member's model.
    NoEvidence(String),
    /// The connection routes nothing now (its gates or its primary cannot serve).
    NotServing(String),
}

impl fmt::Display for MemberOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemberOut::ConnectionMissing => f.write_str("its connection was removed"),
            MemberOut::ProtocolMismatch => f.write_str("its connection speaks another protocol than the pool"),
            MemberOut::NoEvidence(m) => write!(f, "no current evidence for model '{m}'"),
            MemberOut::NotServing(why) => write!(f, "its connection cannot serve now: {why}"),
        }
    }
}

/// One member's line of a pool's gate report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberGate {
    pub key: String,
    /// `None`: the member counts.
    pub out: Option<MemberOut>,
}

/// A pool's gate report: whether `pool activate` may pass (every member counts and at least
/// two do), whether a pool that is active keeps routing (at least one counts), and why each
/// member that does not count is out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolGates {
    pub members: Vec<MemberGate>,
}

/// The fewest members that must count for `pool activate`.
pub const MIN_ACTIVATION_MEMBERS: usize = 2;

impl PoolGates {
    pub fn counting(&self) -> usize {
        self.members.iter().filter(|m| m.out.is_none()).count()
    }

    /// `pool activate` passes: every member counts and at least two do.
    pub fn activation_ok(&self) -> bool {
        self.members.iter().all(|m| m.out.is_none()) && self.counting() >= MIN_ACTIVATION_MEMBERS
    }

    /// An active pool routes: at least one member counts (else it is suspended).
    pub fn routes(&self) -> bool {
        self.counting() >= 1
    }

    /// Why activation fails, in one line (empty when it passes).
    pub fn why_not(&self) -> String {
        let mut parts: Vec<String> =
            self.members.iter().filter_map(|m| m.out.as_ref().map(|o| format!("member '{}': {o}", m.key))).collect();
        if self.counting() < MIN_ACTIVATION_MEMBERS {
            parts.push(format!(
                "{} member(s) can serve; a pool needs at least {MIN_ACTIVATION_MEMBERS}",
                self.counting()
            ));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_parse_with_model_and_weight() {
        let m = PoolMember::parse("kimi=kimi-k2:3").unwrap();
        assert_eq!(m, PoolMember { slug: "kimi".into(), model: Some("kimi-k2".into()), weight: 3 });
        assert_eq!(PoolMember::parse("glm").unwrap().weight, 1, "weight 1 when absent");
        assert_eq!(PoolMember::parse("glm:2").unwrap().model, None, "a weight without a model");
        assert!(PoolMember::parse("glm:0").is_err(), "a zero weight never serves");
        assert!(PoolMember::parse("Bad Slug").is_err(), "slugs are validated as connection slugs");
        assert!(PoolMember::parse("glm=").is_err(), "an empty model after '='");
    }

    /// Issue 39: a member's model starting with '-' would reach the CLI backend's `--model` as
    /// an option.
    #[test]
    fn a_member_model_starting_with_a_dash_is_refused() {
        for bad in ["c=--dangerously-skip-permissions", "c=-x:2"] {
            let err = PoolMember::parse(bad).err();
            assert_eq!(err.map(|e| e.field), Some("member".to_string()), "'{bad}': refused, not taken as a model");
        }
        assert!(PoolMember::parse("c=claude-haiku-4-5:2").is_ok(), "a dash inside a model name is ordinary");
    }

    /// Issue 39: member models skipped the model-name check (`../`, a key, 100 KB, quotes) and a
    /// key-shaped member was echoed in the error.
    #[test]
    fn a_member_model_is_checked_as_any_model_and_a_key_never_echoed() {
        let key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
        let long = format!("c={}", "m".repeat(100 * 1024));
        for bad in ["c=../../v1/files", "c=a/../b", "c=m\"x", "c=m'x", "c=m?alt=sse", &long, &format!("c={key}")] {
            let err = PoolMember::parse(bad).err().map(|e| (e.field, e.message));
            let Some((field, message)) = err else { panic!("{:.40}: must be refused", bad) };
            assert_eq!(field, "member", "{:.40}: the member field", bad);
            assert!(!message.contains(key), "a key-shaped member is never echoed: {message}");
            assert!(message.len() < 400, "nor 100 KB of it: {} bytes", message.len());
        }
        assert!(PoolMember::parse("gem=gemini-2.5-pro:2").is_ok(), "a plain model with dots and dashes");
        assert!(PoolMember::parse("or=anthropic/claude-3.5").is_ok(), "a '/' inside a name is a router's namespace");
    }

    #[test]
    fn a_repeated_member_is_refused() {
        let a = PoolMember::parse("a").unwrap();
        assert_eq!(check_members(&[a.clone(), a]), Err(PoolError::Repeated("a".into())));
        assert_eq!(check_members(&[]), Err(PoolError::Empty));
    }
}
