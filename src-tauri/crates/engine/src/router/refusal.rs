//! Why a request gets no attempt, or no answer of the provider's ([`Refusal`]: the
//! `x-switchyard-reason` the relay answers with), and the refusal as the loop carries it
//! ([`Unavailable`]: status, `Retry-After`, message).

/// Why a request got no answer of the provider's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Legacy routing: the primary cannot serve (no primary, no secret, or, with an active
    /// chain, cooling and no hop could take the request).
    PrimaryUnavailable,
    /// Routed: no profile is eligible for the model now.
    NoEligibleProfile,
    /// The request continues a response (`previous_response_id`) whose profile (or pool member)
    /// cannot serve now; no other account could read it.
    Continuity,
    /// The profiles that could serve now are subscription credentials of another official
    /// client (a token for Claude Code asked for by an SDK; invariant 20): 403.
    ClientNotAllowed,
    /// The request names a profile (`x-switchyard-profile`) that is not an external login of
    /// this connection: 400, nothing sent.
    ProfileNotPinnable,
    /// The named external profile cannot serve now (disabled, not signed in, cooling until its
    /// window resets): 503, or 429 with `Retry-After` while it cools; never another account.
    PinnedUnavailable,
    /// The pool does not route now (not active, suspended) or no member can take the request:
    /// 503.
    PoolUnavailable,
    /// A forwarded body went over the relay's limit while it streamed upstream: 413.
    BodyTooLarge,
    /// An owned login cannot serve until it is signed in again (expired: the provider refused
    /// its renewal; or signed out): 503, with the command that signs it in.
    LoginExpired,
    /// An owned login's token endpoint or backend setting names another than it was signed in
    /// with: its tokens are not sent there. 503, saying which setting and how to set it back.
    LoginMoved,
    /// A limit the request meets has no room for its reservation (invariant 29): 429 with
    /// `x-switchyard-reason: limit:<id>` and `retry-after`; never a failover.
    Limit,
    /// A USD limit meets a request for a model without a price (invariant 30): 403, naming the
    /// command that sets one.
    LimitNeedsPrice,
    /// The store that holds the limits cannot be reached (invariant 30): 503, nothing sent.
    LimitsUnavailable,
}

impl Refusal {
    /// The `x-switchyard-reason` the relay answers with.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::PrimaryUnavailable => "primary_unavailable",
            Refusal::NoEligibleProfile => "no_eligible_profile",
            Refusal::Continuity => "continuity",
            Refusal::ClientNotAllowed => "client_not_allowed",
            Refusal::ProfileNotPinnable => "profile_not_pinnable",
            Refusal::PinnedUnavailable => "pinned_unavailable",
            Refusal::PoolUnavailable => "pool_unavailable",
            Refusal::BodyTooLarge => "body_too_large",
            Refusal::LoginExpired => "login_expired",
            Refusal::LoginMoved => "login_endpoints_changed",
            Refusal::Limit => "limit",
            Refusal::LimitNeedsPrice => "limit_needs_price",
            Refusal::LimitsUnavailable => "limits_unavailable",
        }
    }
}

/// A request that gets no attempt now, and why: what [`Routed::Unavailable`] carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unavailable {
    pub status: u16,
    pub retry_after_secs: Option<u64>,
    pub message: String,
    pub why: Refusal,
    /// The limit a [`Refusal::Limit`] or [`Refusal::LimitNeedsPrice`] names.
    pub limit: Option<String>,
}

impl Unavailable {
    pub(crate) fn new(why: Refusal, status: u16, retry_after_secs: Option<u64>, message: String) -> Self {
        Unavailable { status, retry_after_secs, message, why, limit: None }
    }
}
