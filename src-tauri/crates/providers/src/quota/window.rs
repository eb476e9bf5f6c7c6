//! One limit window as one answer reported it ([`QuotaWindow`]) and the kind of window it is
//! ([`WindowKind`]): the values every dialect's quota table and the learned quota produce.

/// The kind of a limit window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowKind {
    /// A 5-hour subscription window (Anthropic `unified-5h`, a 300-minute Codex window).
    FiveHour,
    /// A weekly subscription window of the whole account (Anthropic `unified-7d`, a
    /// 10 080-minute Codex window).
    SevenDay,
    /// A weekly subscription window of one model family (Anthropic `unified-7d_opus`,
    /// `unified-7d_sonnet`).
    SevenDayModel,
    /// A Codex window in the primary slot whose length is unknown or not one we know.
    CodexPrimary,
    /// The same in the secondary slot.
    CodexSecondary,
    /// The account's overall subscription status (Anthropic `unified-status`/`-reset` and the
    /// representative claim: which window binds).
    Overall,
    /// A request-count limit (API keys).
    Requests,
    /// A token-count limit (API keys; input and output token limits too).
    Tokens,
    /// A per-minute quota learned from a refusal (Gemini: `gemini/learned.rs`).
    PerMinute,
    /// A per-day quota learned from a refusal, resetting at Pacific midnight (Gemini).
    PerDay,
}

impl WindowKind {
    pub const ALL: [WindowKind; 10] = [
        WindowKind::FiveHour,
        WindowKind::SevenDay,
        WindowKind::SevenDayModel,
        WindowKind::CodexPrimary,
        WindowKind::CodexSecondary,
        WindowKind::Overall,
        WindowKind::Requests,
        WindowKind::Tokens,
        WindowKind::PerMinute,
        WindowKind::PerDay,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WindowKind::FiveHour => "five_hour",
            WindowKind::SevenDay => "seven_day",
            WindowKind::SevenDayModel => "seven_day_model",
            WindowKind::CodexPrimary => "codex_primary",
            WindowKind::CodexSecondary => "codex_secondary",
            WindowKind::Overall => "overall",
            WindowKind::Requests => "requests",
            WindowKind::Tokens => "tokens",
            WindowKind::PerMinute => "per_minute",
            WindowKind::PerDay => "per_day",
        }
    }

    /// A usage window of a subscription, reported as a share used: what forecasting applies to
    /// (per-minute API limits refill before an hour's rate says anything).
    pub fn is_subscription(self) -> bool {
        matches!(
            self,
            WindowKind::FiveHour
                | WindowKind::SevenDay
                | WindowKind::SevenDayModel
                | WindowKind::CodexPrimary
                | WindowKind::CodexSecondary
        )
    }
}

/// One limit window as one answer reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaWindow {
    /// The window's name (`requests`, `unified_5h`, `unified_7d_opus`, `codex_5h`,
    /// `codex_primary`, …): the table row's, or for a Codex window of a known length that
    /// length's (`codex.rs`).
    pub name: &'static str,
    pub kind: WindowKind,
    /// The provider scopes this window per model (the reading belongs to the model called);
    /// otherwise it is the whole account's.
    pub per_model: bool,
    /// The window is one model family's (`opus`, `sonnet`): it holds for the models whose name
    /// contains the family, whatever model was called.
    pub family: Option<&'static str>,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Share used, 0.0 ..= 1.0.
    pub utilization: Option<f64>,
    /// When the window resets (unix ms).
    pub resets_at_ms: Option<i64>,
    /// The provider's status word for the window (e.g. `allowed`, `rejected`), lower case.
    pub status: Option<String>,
    /// The window's length as the provider states it.
    pub window_minutes: Option<u32>,
    /// Which window binds the account now, as the provider names it (Anthropic's
    /// representative claim: `five_hour`, `seven_day`, `seven_day_opus`, …), on the overall
    /// window only.
    pub claim: Option<String>,
}
