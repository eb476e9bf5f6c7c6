//! A limit: its scope, measure, capacity and period, its stable id, and which limits a request
//! meets.

use std::fmt;

use crate::InvalidInput;

/// What a limit caps.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LimitScope {
    /// One relay user.
    User(String),
    /// Each relay user without a `user:NAME` limit of the same measure and period, counted per
    /// user.
    Users,
    /// Requests sent to a connection by its slug (not those reaching it through a pool or a
    /// fallback hop).
    Connection(String),
    /// Requests sent to a pool by its name.
    Pool(String),
}

impl LimitScope {
    /// `user:NAME`, `users`, `connection:SLUG`, `pool:POOL`.
    pub fn parse(text: &str) -> Result<Self, InvalidInput> {
        let bad = || InvalidInput::new("scope", "must be user:NAME, users, connection:SLUG or pool:POOL");
        if text == "users" {
            return Ok(LimitScope::Users);
        }
        let (kind, name) = text.split_once(':').ok_or_else(bad)?;
        let plain = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
        if !plain {
            return Err(InvalidInput::new("scope", "a name of 1-64 characters of a-z, 0-9, '.', '_' or '-'"));
        }
        match kind {
            "user" => Ok(LimitScope::User(name.to_string())),
            "connection" => Ok(LimitScope::Connection(name.to_string())),
            "pool" => Ok(LimitScope::Pool(name.to_string())),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for LimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitScope::User(n) => write!(f, "user:{n}"),
            LimitScope::Users => f.write_str("users"),
            LimitScope::Connection(n) => write!(f, "connection:{n}"),
            LimitScope::Pool(n) => write!(f, "pool:{n}"),
        }
    }
}

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Measure {
    Requests,
    /// Input + output + cache tokens.
    Tokens,
    /// Millionths of a USD at the price table's rates.
    Usd,
    /// Requests in flight at once (slots with a lease).
    Concurrency,
}

impl Measure {
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Requests => "requests",
            Measure::Tokens => "tokens",
            Measure::Usd => "usd",
            Measure::Concurrency => "concurrency",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Measure::Requests, Measure::Tokens, Measure::Usd, Measure::Concurrency]
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

/// A limit's calendar window (in the configured time zone; the engine computes its bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    Minute,
    Hour,
    Day,
    /// Monday to Monday.
    Week,
    Month,
}

impl Period {
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Minute => "minute",
            Period::Hour => "hour",
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Period::Minute, Period::Hour, Period::Day, Period::Week, Period::Month]
            .into_iter()
            .find(|p| p.as_str() == text)
    }
}

/// One limit as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitSpec {
    pub id: String,
    pub scope: LimitScope,
    pub measure: Measure,
    /// Requests, tokens, millionths of a USD, or slots.
    pub capacity: i64,
    /// `None` for concurrency (a limit of requests in flight has no window).
    pub period: Option<Period>,
}

/// The id a limit gets when none is given: its scope, measure and period, so setting the same
/// limit again changes its capacity (`user:alice` USD per day → `user-alice-usd-day`).
pub fn default_id(scope: &LimitScope, measure: Measure, period: Option<Period>) -> String {
    let scope = scope.to_string().replace(':', "-");
    match period {
        Some(p) => format!("{scope}-{}-{}", measure.as_str(), p.as_str()),
        None => format!("{scope}-{}", measure.as_str()),
    }
}

/// Who sends a request, and where: what the limits are matched against.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    /// The relay user (`None`: the install's own token).
    pub user: Option<&'a str>,
    /// The connection the request names (`None` when it names a pool).
    pub connection: Option<&'a str>,
    /// The pool the request names.
    pub pool: Option<&'a str>,
}

/// A limit a request meets, and whose counter it takes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched<'a> {
    pub spec: &'a LimitSpec,
    /// The user for a `users` limit, else "".
    pub subject: &'a str,
}

/// The limits `who` meets among `specs`, in the order of `specs`. `users` applies to a user
/// without a `user:NAME` limit of the same measure and period (their own replaces it).
pub fn matching<'a>(specs: &'a [LimitSpec], who: Requester<'a>) -> Vec<Matched<'a>> {
    let own = |measure: Measure, period: Option<Period>, name: &str| {
        specs
            .iter()
            .any(|s| s.measure == measure && s.period == period && matches!(&s.scope, LimitScope::User(n) if n == name))
    };
    specs
        .iter()
        .filter_map(|spec| {
            let hit = match &spec.scope {
                LimitScope::User(name) => who.user == Some(name.as_str()),
                LimitScope::Users => who.user.is_some_and(|u| !own(spec.measure, spec.period, u)),
                LimitScope::Connection(slug) => who.connection == Some(slug.as_str()),
                LimitScope::Pool(pool) => who.pool == Some(pool.as_str()),
            };
            let subject = match spec.scope {
                LimitScope::Users => who.user.unwrap_or(""),
                _ => "",
            };
            hit.then_some(Matched { spec, subject })
        })
        .collect()
}

/// The output a request may produce when its body names no cap (`max_tokens` and friends): a
/// reservation must be a worst case, and no model this tool routes answers more in one call.
pub const DEFAULT_OUTPUT_CAP: u64 = 64_000;

/// A request's worst case, before it is sent: input tokens estimated from the body's length
/// (4 bytes a token, the providers' rule of thumb, rounded up) and the output cap it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Estimate {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Estimate {
    /// From a body of `body_bytes` naming `output_cap` (`None`: [`DEFAULT_OUTPUT_CAP`]).
    pub fn of(body_bytes: u64, output_cap: Option<u64>) -> Self {
        Estimate { input_tokens: body_bytes.div_ceil(4), output_tokens: output_cap.unwrap_or(DEFAULT_OUTPUT_CAP) }
    }

    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// The worst-case cost in millionths of a USD at `input` and `output` USD per million
    /// tokens, rounded up (a reservation never falls short of what it may cost).
    pub fn micro_usd(&self, input: f64, output: f64) -> i64 {
        let usd = self.input_tokens as f64 * input + self.output_tokens as f64 * output; // micro-USD: tokens × USD/Mtok
        usd.max(0.0).ceil().min(i64::MAX as f64) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, scope: &str, measure: Measure, period: Option<Period>) -> LimitSpec {
        LimitSpec {
            id: id.into(),
            scope: LimitScope::parse(scope).unwrap_or(LimitScope::Users),
            measure,
            capacity: 1,
            period,
        }
    }

    #[test]
    fn scopes_read_and_print_the_same() {
        for text in ["user:alice", "users", "connection:work", "pool:team.a"] {
            let scope = LimitScope::parse(text).expect("a valid scope");
            assert_eq!(scope.to_string(), text, "a scope prints as it is written");
        }
        for bad in ["user", "user:", "group:x", "user:Alice", "connection:a b", "sk-ant-x"] {
            assert!(LimitScope::parse(bad).is_err(), "'{bad}' is no scope");
        }
    }

    #[test]
    fn a_user_s_own_limit_replaces_the_users_default_of_the_same_measure_and_period() {
        let day = Some(Period::Day);
        let specs = vec![
            spec("all-usd", "users", Measure::Usd, day),
            spec("all-rpm", "users", Measure::Requests, Some(Period::Minute)),
            spec("alice-usd", "user:alice", Measure::Usd, day),
            spec("conn", "connection:work", Measure::Requests, Some(Period::Minute)),
        ];
        let ids = |user, connection| -> Vec<(String, String)> {
            matching(&specs, Requester { user, connection, pool: None })
                .into_iter()
                .map(|m| (m.spec.id.clone(), m.subject.to_string()))
                .collect()
        };
        assert_eq!(
            ids(Some("alice"), Some("work")),
            vec![("all-rpm".into(), "alice".into()), ("alice-usd".into(), "".into()), ("conn".into(), "".into())],
            "alice's own USD limit replaces the users' one; the users' request limit still counts her"
        );
        assert_eq!(
            ids(Some("bob"), Some("other")),
            vec![("all-usd".into(), "bob".into()), ("all-rpm".into(), "bob".into())],
            "bob is counted per user under both defaults"
        );
        assert_eq!(
            ids(None, Some("work")),
            vec![("conn".into(), "".into())],
            "the install's own token meets only the connection's"
        );
    }

    #[test]
    fn a_reservation_is_a_worst_case_rounded_up() {
        let e = Estimate::of(401, Some(100));
        assert_eq!(e.input_tokens, 101, "401 bytes are at most 101 tokens at 4 bytes a token, rounded up");
        assert_eq!(e.tokens(), 201);
        // $0 input, $100 per million output: 100 tokens cost $0.01 = 10,000 micro-USD.
        assert_eq!(e.micro_usd(0.0, 100.0), 10_000);
        assert_eq!(Estimate::of(1, Some(1)).micro_usd(0.5, 0.5), 1, "a fraction of a micro-USD rounds up");
        assert_eq!(Estimate::of(0, None).output_tokens, DEFAULT_OUTPUT_CAP, "no cap named: the default worst case");
    }

    #[test]
    fn default_ids_name_scope_measure_and_period() {
        let scope = LimitScope::parse("user:alice").expect("scope");
        assert_eq!(default_id(&scope, Measure::Usd, Some(Period::Day)), "user-alice-usd-day");
        assert_eq!(default_id(&LimitScope::Users, Measure::Concurrency, None), "users-concurrency");
    }
}
