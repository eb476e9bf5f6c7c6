//! One row of a classification table: which answers it matches (status, the structured
//! `type`/`code` fields of the error body, header values, and — only where nothing structured
//! exists, and only to keep an answer from failing over — the error message), the kind and
//! scope it assigns, and where the cooldown's end comes from.

use switchyard_core::routing::{FailureKind, Scope};

use crate::headers::{Agreed, HeaderSource};

/// The statuses a rule accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusMatch {
    /// Any status, including 200 for an error event inside a stream.
    Any,
    Is(u16),
    /// Inclusive range.
    Range(u16, u16),
}

impl StatusMatch {
    pub fn matches(self, status: u16) -> bool {
        match self {
            StatusMatch::Any => true,
            StatusMatch::Is(s) => s == status,
            StatusMatch::Range(lo, hi) => (lo..=hi).contains(&status),
        }
    }
}

/// Where a failure's cooldown end (`Failure::retry_at_ms`) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// `retry-after-ms`, `Retry-After`, else the latest reset of an exhausted limit
    /// (`hint::retry_at_ms`).
    Hint,
    /// The reset of this quota-table window (e.g. `unified_5h`, read and bounded as every
    /// reading is), else the hint: a rejected subscription window cools until it resets.
    Window(&'static str),
    /// The error body's `resets_at` (unix seconds) or `resets_in_seconds` (Codex
    /// `usage_limit_reached`), within a week of now, else the hint.
    BodyReset,
}

/// The parts of an answer a rule reads.
pub struct Answer<'a, H: HeaderSource + ?Sized> {
    pub status: u16,
    pub headers: &'a H,
    /// The error object's `type`.
    pub error_type: Option<&'a str>,
    /// The error object's `code`.
    pub error_code: Option<&'a str>,
    /// The error object's `message` (read only by rows with [`Rule::message`]).
    pub message: Option<&'a str>,
}

/// A classification rule. Rows are tried in order; the first whose every given field
/// matches wins. `name` is also the fixture file stem under `tests/fixtures/<dialect>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub name: &'static str,
    pub status: StatusMatch,
    /// The error object's `type`, when the rule requires one.
    pub error_type: Option<&'static str>,
    /// The error object's `code`, when the rule requires one.
    pub error_code: Option<&'static str>,
    /// Headers that must each be sent once with this value (ASCII case-insensitive), e.g.
    /// `anthropic-ratelimit-unified-5h-status: rejected`.
    pub headers: &'static [(&'static str, &'static str)],
    /// Text the error's `message` must contain (ASCII case-insensitive). Only for refusals that
    /// carry no structured field of their own, and only in rows of scope `request`: wording may
    /// keep an answer from failing over, never make one fail over (invariant 6; the taxonomy
    /// tests hold every table to it).
    pub message: Option<&'static str>,
    pub kind: FailureKind,
    pub scope: Scope,
    pub until: Until,
}

impl Rule {
    pub fn matches<H: HeaderSource + ?Sized>(&self, a: &Answer<'_, H>) -> bool {
        self.status.matches(a.status)
            && self.error_type.is_none_or(|t| a.error_type == Some(t))
            && self.error_code.is_none_or(|c| a.error_code == Some(c))
            && self.headers.iter().all(|(name, want)| match a.headers.header_agreed(name) {
                Agreed::One(v) => v.eq_ignore_ascii_case(want),
                Agreed::Absent | Agreed::Conflicting => false,
            })
            && self.message.is_none_or(|needle| a.message.is_some_and(|m| contains_ignoring_case(m, needle)))
    }

    /// This row, matching only when every header of `headers` carries its value.
    pub(crate) const fn when_headers(mut self, headers: &'static [(&'static str, &'static str)]) -> Rule {
        self.headers = headers;
        self
    }

    /// This row, matching only when the message contains `needle` (request-scope rows only).
    pub(crate) const fn when_message(mut self, needle: &'static str) -> Rule {
        self.message = Some(needle);
        self
    }

    /// This row, cooling until `until`.
    pub(crate) const fn until(mut self, until: Until) -> Rule {
        self.until = until;
        self
    }
}

fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Shorthand for table rows.
pub(crate) const fn row(
    name: &'static str,
    status: StatusMatch,
    error_type: Option<&'static str>,
    error_code: Option<&'static str>,
    kind: FailureKind,
    scope: Scope,
) -> Rule {
    Rule { name, status, error_type, error_code, headers: &[], message: None, kind, scope, until: Until::Hint }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_core::routing::{FailureKind::*, Scope::*};

    fn answer<'a>(headers: &'a [(&'a str, &'a str)], message: Option<&'a str>) -> Answer<'a, [(&'a str, &'a str)]> {
        Answer { status: 429, headers, error_type: Some("rate_limit_error"), error_code: None, message }
    }

    #[test]
    fn header_values_must_all_match_once() {
        let r = row("r", StatusMatch::Is(429), Some("rate_limit_error"), None, QuotaExhausted, Credential)
            .when_headers(&[("x-a", "rejected"), ("x-b", "five_hour")]);
        assert!(r.matches(&answer(&[("X-A", "Rejected"), ("x-b", "five_hour")], None)), "both, any case");
        assert!(!r.matches(&answer(&[("x-a", "rejected")], None)), "one missing");
        assert!(
            !r.matches(&answer(&[("x-a", "rejected"), ("x-a", "allowed"), ("x-b", "five_hour")], None)),
            "contradicted"
        );
    }

    #[test]
    fn message_needles_ignore_case() {
        let r =
            row("r", StatusMatch::Any, Some("rate_limit_error"), None, BadRequest, Request).when_message("extra usage");
        assert!(r.matches(&answer(&[], Some("Extra usage is required for long context requests."))), "any case");
        assert!(!r.matches(&answer(&[], Some("rate limit"))), "other words");
        assert!(!r.matches(&answer(&[], None)), "no message");
    }
}
