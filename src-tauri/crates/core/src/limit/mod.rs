//! Limits and scopes, the words of docs/design.md's fourth round as types: what a limit caps
//! ([`LimitScope`], [`Measure`], [`Period`], [`LimitSpec`]), which limits a request meets
//! ([`matching`]), what it reserves ([`Estimate`]) and what a user may reach ([`UserScope`]).
//! Pure: windows are computed by the engine in the configured time zone, counters live in the
//! store.

mod scope;
mod spec;

pub use scope::{pattern_matches, UserScope};
pub use spec::{
    default_id, matching, Estimate, LimitScope, LimitSpec, Matched, Measure, Period, Requester, DEFAULT_OUTPUT_CAP,
};
