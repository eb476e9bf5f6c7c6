//! Desktop alerts (issues 17 and 28): which changes deserve a notification — a connection
//! suspended, every key of an active connection cooling down, an account's login expired or
//! gone (or about to expire), an account's subscription window rejected, a key out of quota —
//! found by comparing two snapshots of one connection ([`ConnectionState`], built from its
//! [`RoutingStatus`] and its [`QuotaView`]). Pure: what it looks at is plain data; the
//! per-connection gap and the baseline live in `alert_watch.rs`, the desktop shell shows what
//! comes out. A key that was not in the previous snapshot is a baseline of its own (a profile
//! just added as `external` is `missing` until it signs in: that is not news).

use switchyard_core::states::{CircuitState, CredentialHealthState, ProfileKind};
use switchyard_core::RoutingState;

use crate::views::{LimitStatusView, QuotaView, QuotaWindowView, RoutingStatus};

/// A subscription window the provider answered `rejected` for, not reset since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedWindow {
    /// The window's name and model (`unified_5h|`, `unified_7d_opus|`): what tells two apart.
    pub key: String,
    /// In words: `5-hour window`, `weekly opus window`, `subscription limit`.
    pub text: String,
    /// When it resets, as a weekday and time in the user's time zone (`Tue 14:05`).
    pub resets: Option<String>,
}

/// What alerts look at in one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyState {
    /// The profile's id: keys are matched by it (a renamed key is the same key).
    pub id: String,
    pub label: String,
    pub enabled: bool,
    /// Its credential-wide circuit is open or half open (a cooldown or a failed key).
    pub cooling: bool,
    /// One of its circuits was opened by a quota answer.
    pub quota_exhausted: bool,
    pub kind: ProfileKind,
    /// Its credential health (`expired` and `missing` keep it out of routing).
    pub login: CredentialHealthState,
    /// The expiry the health was judged by (RFC 3339), for the text.
    pub expires_at: Option<String>,
    /// Its subscription windows the provider rejected (empty without quota readings).
    pub rejected: Vec<RejectedWindow>,
}

/// One cap on a connection (a limit on `connection:SLUG`), as its current window stands.
#[derive(Debug, Clone, PartialEq)]
pub struct CapState {
    pub id: String,
    /// In words: `$5.00 a day`, `60 requests a minute`.
    pub text: String,
    /// Used and reserved of the capacity, 0–1 (a zero cap is full).
    pub share: f64,
    /// Requests it refused in this window.
    pub refused: i64,
    /// When the window resets (RFC 3339): tells one window from the next.
    pub window: Option<String>,
}

impl CapState {
    /// From a `limits status` row.
    pub fn of(v: &LimitStatusView) -> Self {
        let amount = |x: f64| if v.measure == "usd" { format!("${x:.2}") } else { format!("{x:.0} {}", v.measure) };
        let per = v.period.as_deref().map_or(" in flight".to_string(), |p| format!(" a {p}"));
        let share = if v.capacity <= 0.0 { 1.0 } else { ((v.used + v.reserved) / v.capacity).min(1.0) };
        CapState {
            id: v.id.clone(),
            text: format!("{}{per}", amount(v.capacity)),
            share,
            refused: v.refused,
            window: v.resets_at.clone(),
        }
    }

    /// Whether it refuses requests now (nothing left of it, or it refused some this window).
    pub fn capped(&self) -> bool {
        self.share >= 1.0 || self.refused > 0
    }
}

/// The share of a cap used that earns a warning.
pub const CAP_NEAR: f64 = 0.8;

/// What alerts look at in one connection.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionState {
    pub slug: String,
    /// `legacy`, `balanced` or `priority`.
    pub mode: String,
    pub suspended: bool,
    /// Why it is suspended (from the status), for the alert's text.
    pub note: Option<String>,
    pub keys: Vec<KeyState>,
    /// The caps on the connection (issue 41): limits on `connection:SLUG`.
    pub caps: Vec<CapState>,
}

impl ConnectionState {
    /// The connection as its routing status shows it (no windows: see [`Self::with_quota`]).
    pub fn from_status(s: &RoutingStatus) -> Self {
        let keys = s
            .profiles
            .iter()
            .map(|p| KeyState {
                id: p.id.clone(),
                label: p.label.clone(),
                enabled: p.enabled,
                cooling: p.health.iter().any(|h| h.model.is_none() && h.state != CircuitState::Closed),
                quota_exhausted: p
                    .health
                    .iter()
                    .any(|h| h.state != CircuitState::Closed && h.kind.as_deref() == Some("quota_exhausted")),
                kind: p.kind,
                login: p.credential_health.state,
                expires_at: p.credential_health.expires_at.clone(),
                rejected: Vec::new(),
            })
            .collect();
        ConnectionState {
            slug: s.slug.clone(),
            mode: s.mode.to_string(),
            suspended: s.state == RoutingState::Suspended,
            note: s.note.clone(),
            keys,
            caps: Vec::new(),
        }
    }

    /// The same with the connection's caps as they stand.
    pub fn with_caps(mut self, caps: &[LimitStatusView]) -> Self {
        self.caps = caps.iter().map(CapState::of).collect();
        self
    }

    /// Whether a cap refuses its requests now (the tray marks the connection).
    pub fn capped(&self) -> bool {
        self.caps.iter().any(CapState::capped)
    }

    /// The same with each key's rejected subscription windows from the connection's quota view.
    pub fn with_quota(mut self, q: &QuotaView) -> Self {
        for key in &mut self.keys {
            let windows = q.profiles.iter().find(|p| p.id == key.id).map(|p| p.windows.as_slice()).unwrap_or_default();
            key.rejected = rejected_windows(windows);
        }
        self
    }

    /// An active balanced/priority connection whose every enabled key is cooling down: its
    /// requests get no answer until one comes back.
    pub fn all_cooling(&self) -> bool {
        let mut enabled = self.keys.iter().filter(|k| k.enabled).peekable();
        self.mode != "legacy" && !self.suspended && enabled.peek().is_some() && enabled.all(|k| k.cooling)
    }
}

/// The subscription windows (and the overall subscription status) answered `rejected` and
/// not reset since; per-minute API limits never say `rejected`.
pub fn rejected_windows(windows: &[QuotaWindowView]) -> Vec<RejectedWindow> {
    windows
        .iter()
        .filter(|w| !w.stale && w.status.as_deref() == Some("rejected"))
        .filter(|w| !matches!(w.kind.as_str(), "requests" | "tokens"))
        .map(|w| RejectedWindow {
            key: format!("{}|{}", w.name, w.model.as_deref().unwrap_or_default()),
            text: window_text(w),
            resets: w.resets_local.clone(),
        })
        .collect()
}

/// A window in words, as a notification names it.
fn window_text(w: &QuotaWindowView) -> String {
    let mut text = match (w.kind.as_str(), w.family.as_deref()) {
        ("five_hour", _) => "5-hour window".to_string(),
        ("seven_day", _) => "weekly window".to_string(),
        ("seven_day_model", Some(family)) => format!("weekly {family} window"),
        ("seven_day_model", None) => "weekly model window".to_string(),
        ("codex_primary", _) => "Codex primary window".to_string(),
        ("codex_secondary", _) => "Codex secondary window".to_string(),
        ("overall", _) => "subscription limit".to_string(),
        _ => w.name.replace('_', " "),
    };
    if let Some(model) = &w.model {
        text.push_str(&format!(" ({model})"));
    }
    text
}

/// Why a notification is shown; the order is the severity (most severe first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AlertKind {
    Suspended,
    AllCooling,
    /// A login or token became `expired` or `missing`: the account is out of routing.
    LoginExpired,
    /// A subscription window of an account was rejected: the account (or, for a model's
    /// weekly window, that model) cools until the window resets.
    WindowRejected,
    QuotaExhausted,
    /// A cap on the connection refused its first request of a window (issue 41).
    CapReached,
    /// A cap on the connection passed 80 % of its window.
    CapNear,
    /// A token or login became `expiring`: still in use, renew it before the date.
    LoginExpiring,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub slug: String,
    pub kind: AlertKind,
    pub title: String,
    pub body: String,
}

fn unusable(state: CredentialHealthState) -> bool {
    matches!(state, CredentialHealthState::Expired | CredentialHealthState::Missing)
}

/// The day of an RFC 3339 time (`2027-01-05`), for text.
fn day(at: &Option<String>) -> Option<&str> {
    at.as_deref().and_then(|t| t.get(..10))
}

/// What brings the key back, by kind.
fn sign_in_hint(slug: &str, k: &KeyState) -> String {
    match k.kind {
        ProfileKind::Token => format!(
            "paste a new token (Profiles → Sign in again, or switchyard profile rotate {slug} {} --secret-stdin)",
            k.label
        ),
        ProfileKind::External | ProfileKind::Oauth => {
            format!("sign in again: switchyard profile login {slug} {}", k.label)
        }
        ProfileKind::ApiKey => "put its key back (Profiles → Replace key)".to_string(),
    }
}

fn login_alerts(slug: &str, prev: &ConnectionState, next: &ConnectionState, out: &mut Vec<Alert>) {
    let before = |k: &KeyState| prev.keys.iter().find(|p| p.id == k.id).map(|p| p.login);
    let mut gone = Vec::new();
    let mut expiring = Vec::new();
    for k in next.keys.iter().filter(|k| k.enabled) {
        let Some(was) = before(k) else { continue };
        if unusable(k.login) && !unusable(was) {
            gone.push(k);
        } else if k.login == CredentialHealthState::Expiring && was != CredentialHealthState::Expiring && !unusable(was)
        {
            expiring.push(k);
        }
    }
    if let Some(first) = gone.first() {
        let what = |k: &KeyState| match (k.login, k.kind) {
            (CredentialHealthState::Expired, ProfileKind::Token) => format!("{}'s token expired", k.label),
            (CredentialHealthState::Expired, _) => format!("{}'s login expired", k.label),
            (_, ProfileKind::External | ProfileKind::Oauth) => format!("{} is no longer signed in", k.label),
            (_, ProfileKind::Token) => format!("{}'s token is gone from the keychain", k.label),
            (_, ProfileKind::ApiKey) => format!("{}'s key is gone from the keychain", k.label),
        };
        let names: Vec<String> = gone.iter().map(|k| what(k)).collect();
        out.push(Alert {
            slug: slug.to_string(),
            kind: AlertKind::LoginExpired,
            title: if gone.len() == 1 {
                format!("{slug}: {}", what(first))
            } else {
                format!("{slug}: {} accounts need signing in", gone.len())
            },
            body: format!(
                "{}: routing leaves {} out until then; {}.",
                names.join("; "),
                if gone.len() == 1 { "it" } else { "them" },
                sign_in_hint(slug, first)
            ),
        });
    }
    if let Some(first) = expiring.first() {
        let when = |k: &KeyState| day(&k.expires_at).map(|d| format!(" on {d}")).unwrap_or_default();
        let names: Vec<String> = expiring.iter().map(|k| format!("{} expires{}", k.label, when(k))).collect();
        out.push(Alert {
            slug: slug.to_string(),
            kind: AlertKind::LoginExpiring,
            title: format!("{slug}: {} expires soon", first.label),
            body: format!("{}; it keeps working until then — {}.", names.join("; "), sign_in_hint(slug, first)),
        });
    }
}

fn window_alerts(slug: &str, prev: &ConnectionState, next: &ConnectionState, out: &mut Vec<Alert>) {
    let before = |k: &KeyState| prev.keys.iter().find(|p| p.id == k.id);
    let mut lines = Vec::new();
    for k in next.keys.iter().filter(|k| k.enabled) {
        let Some(was) = before(k) else { continue };
        let fresh: Vec<&RejectedWindow> =
            k.rejected.iter().filter(|w| !was.rejected.iter().any(|p| p.key == w.key)).collect();
        // The overall status repeats the window that binds; name that window when one is there.
        let named: Vec<&RejectedWindow> = match fresh.iter().any(|w| !w.key.starts_with("unified|")) {
            true => fresh.into_iter().filter(|w| !w.key.starts_with("unified|")).collect(),
            false => fresh,
        };
        if named.is_empty() {
            continue;
        }
        let windows: Vec<String> = named
            .iter()
            .map(|w| match &w.resets {
                Some(at) => format!("{} (resets {at})", w.text),
                None => w.text.clone(),
            })
            .collect();
        lines.push((k.label.as_str(), named[0].text.clone(), windows.join(", ")));
    }
    let Some((label, window, _)) = lines.first() else { return };
    let title = match lines.len() {
        1 => format!("{slug}: {label}'s {window} is used up"),
        n => format!("{slug}: {n} accounts reached a subscription limit"),
    };
    let detail: Vec<String> = lines.iter().map(|(label, _, windows)| format!("{label}: {windows}")).collect();
    out.push(Alert {
        slug: slug.to_string(),
        kind: AlertKind::WindowRejected,
        title,
        body: format!("{}. Other accounts take its requests until the reset.", detail.join("; ")),
    });
}

/// The alerts of the change from `prev` to `next` (one connection), most severe first.
pub fn alerts_between(prev: &ConnectionState, next: &ConnectionState) -> Vec<Alert> {
    let slug = &next.slug;
    let mut out = Vec::new();
    if next.suspended && !prev.suspended {
        let why = next.note.clone().unwrap_or_else(|| "its routing gates no longer hold".into());
        out.push(Alert {
            slug: slug.clone(),
            kind: AlertKind::Suspended,
            title: format!("{slug}: routing suspended"),
            body: format!("Requests use the primary key only (legacy) until this is fixed: {why}"),
        });
    }
    if next.all_cooling() && !prev.all_cooling() {
        out.push(Alert {
            slug: slug.clone(),
            kind: AlertKind::AllCooling,
            title: format!("{slug}: every key is cooling down"),
            body: "Requests fail until a key's cooldown ends and its probe succeeds.".into(),
        });
    }
    login_alerts(slug, prev, next, &mut out);
    window_alerts(slug, prev, next, &mut out);
    // A key whose window was rejected is told about by that window's alert, not again here.
    let was_exhausted = |id: &str| prev.keys.iter().any(|k| k.id == id && k.quota_exhausted);
    let spent: Vec<&str> = next
        .keys
        .iter()
        .filter(|k| k.quota_exhausted && !was_exhausted(&k.id) && k.rejected.is_empty())
        .map(|k| k.label.as_str())
        .collect();
    if !spent.is_empty() {
        let keys = spent.join(", ");
        out.push(Alert {
            slug: slug.clone(),
            kind: AlertKind::QuotaExhausted,
            title: format!("{slug}: key out of quota"),
            body: format!("{keys} reached its usage quota; other keys take its requests where they can."),
        });
    }
    cap_alerts(slug, prev, next, &mut out);
    out.sort_by_key(|a| a.kind);
    out
}

/// A cap reached in a window — used up, or refusing (a request bigger than what is left is
/// refused before the cap is full) — and a cap passing 80 % (once per window each). A cap set
/// since the previous look counts from nothing used: one set and filled between two looks (3 s)
/// still alerts, and one set below what the window already spent says so at once.
fn cap_alerts(slug: &str, prev: &ConnectionState, next: &ConnectionState, out: &mut Vec<Alert>) {
    for cap in &next.caps {
        let unused = CapState { share: 0.0, refused: 0, ..cap.clone() };
        let was = prev.caps.iter().find(|c| c.id == cap.id).unwrap_or(&unused);
        let same_window = was.window == cap.window;
        let resets =
            cap.window.as_deref().and_then(|w| w.get(..16)).map(|w| format!(" (resets {} UTC)", w.replace('T', " ")));
        if cap.capped() && (!was.capped() || !same_window) {
            out.push(Alert {
                slug: slug.to_string(),
                kind: AlertKind::CapReached,
                title: format!("{slug}: {} cap reached", cap.text),
                body: format!(
                    "The relay refuses {slug}'s requests until the window resets{}; raise or remove the cap in Limits.",
                    resets.unwrap_or_default()
                ),
            });
        } else if cap.share >= CAP_NEAR && !cap.capped() && (was.share < CAP_NEAR || !same_window) {
            out.push(Alert {
                slug: slug.to_string(),
                kind: AlertKind::CapNear,
                title: format!("{slug}: {:.0} % of the {} cap used", cap.share * 100.0, cap.text),
                body: format!(
                    "Past the cap the relay refuses {slug}'s requests until the window resets{}.",
                    resets.unwrap_or_default()
                ),
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An enabled API key with these circuit facts (`alert_watch.rs` tests use it too).
    pub(crate) fn key(label: &str, cooling: bool, quota: bool) -> KeyState {
        KeyState {
            id: format!("p_{label}"),
            label: label.into(),
            enabled: true,
            cooling,
            quota_exhausted: quota,
            kind: ProfileKind::ApiKey,
            login: CredentialHealthState::Static,
            expires_at: None,
            rejected: Vec::new(),
        }
    }

    pub(crate) fn conn(mode: &str, suspended: bool, keys: Vec<KeyState>) -> ConnectionState {
        ConnectionState { slug: "team".into(), mode: mode.into(), suspended, note: None, keys, caps: Vec::new() }
    }

    fn cap(share: f64, refused: i64, window: &str) -> CapState {
        CapState {
            id: "connection-team-usd-day".into(),
            text: "$5.00 a day".into(),
            share,
            refused,
            window: Some(window.into()),
        }
    }

    #[test]
    fn a_cap_warns_at_80_percent_and_alerts_on_its_first_refusal_once_per_window() {
        let with =
            |caps: Vec<CapState>| ConnectionState { caps, ..conn("legacy", false, vec![key("a", false, false)]) };
        let day1 = "2027-01-02T00:00:00.000Z";
        let (low, near, full) =
            (with(vec![cap(0.5, 0, day1)]), with(vec![cap(0.85, 0, day1)]), with(vec![cap(1.0, 2, day1)]));
        assert_eq!(kinds(&with(vec![]), &near), [AlertKind::CapNear], "a cap set since the last look counts from 0");
        assert_eq!(kinds(&with(vec![]), &low), [], "a new cap with room says nothing");
        assert_eq!(
            kinds(&with(vec![]), &with(vec![cap(1.0, 1, day1)])),
            [AlertKind::CapReached],
            "set and filled between two looks"
        );
        assert_eq!(kinds(&low, &near), [AlertKind::CapNear], "passing 80 % warns");
        assert_eq!(kinds(&near, &near), [], "once");
        assert_eq!(kinds(&near, &full), [AlertKind::CapReached], "the first refusal alerts");
        let refusing = with(vec![cap(0.9, 1, day1)]);
        assert_eq!(kinds(&near, &refusing), [AlertKind::CapReached], "a refusal before the cap is full alerts too");
        assert_eq!(kinds(&refusing, &full), [], "and the cap filling up after it does not again");
        let used_up = with(vec![cap(1.0, 0, day1)]);
        assert_eq!(kinds(&low, &used_up), [AlertKind::CapReached], "used up: the next request is refused");
        assert_eq!(kinds(&full, &with(vec![cap(1.0, 5, day1)])), [], "more refusals in the window do not");
        let next_day = with(vec![cap(1.0, 1, "2027-01-03T00:00:00.000Z")]);
        assert_eq!(kinds(&full, &next_day), [AlertKind::CapReached], "a new window's first refusal alerts again");
        let title = alerts_between(&near, &full)[0].title.clone();
        assert_eq!(title, "team: $5.00 a day cap reached");
        assert!(full.capped() && !low.capped(), "the tray marks a refusing cap only");
    }

    fn kinds(p: &ConnectionState, n: &ConnectionState) -> Vec<AlertKind> {
        alerts_between(p, n).iter().map(|a| a.kind).collect()
    }

    fn account(label: &str, kind: ProfileKind, login: CredentialHealthState) -> KeyState {
        KeyState { kind, login, expires_at: Some("2027-01-05T10:00:00.000Z".into()), ..key(label, false, false) }
    }

    fn rejected(name: &str, text: &str) -> RejectedWindow {
        RejectedWindow { key: format!("{name}|"), text: text.into(), resets: Some("Tue 14:05".into()) }
    }

    #[test]
    fn transitions_into_trouble_alert_and_staying_there_does_not() {
        let ok = conn("balanced", false, vec![key("a", false, false), key("b", false, false)]);
        let suspended = conn("balanced", true, ok.keys.clone());
        assert_eq!(kinds(&ok, &suspended), [AlertKind::Suspended]);
        assert_eq!(kinds(&suspended, &suspended), [], "no repeat while it stays suspended");
        let cooling = conn("balanced", false, vec![key("a", true, false), key("b", true, true)]);
        assert_eq!(kinds(&ok, &cooling), [AlertKind::AllCooling, AlertKind::QuotaExhausted]);
        let one_cooling = conn("balanced", false, vec![key("a", true, false), key("b", false, false)]);
        assert_eq!(kinds(&ok, &one_cooling), [], "one key cooling is what failover is for");
        let legacy = conn("legacy", false, vec![key("a", true, false)]);
        assert_eq!(kinds(&conn("legacy", false, vec![key("a", false, false)]), &legacy), [], "legacy has no pool");
        let body = &alerts_between(&ok, &cooling)[1].body;
        assert!(body.starts_with("b reached its usage quota"), "names the key: {body}");
    }

    #[test]
    fn a_disabled_key_does_not_count_as_cooling() {
        let mut off = key("b", false, false);
        off.enabled = false;
        assert!(conn("priority", false, vec![key("a", true, false), off]).all_cooling());
        assert!(!conn("priority", false, vec![]).all_cooling(), "no enabled key is not 'all cooling'");
    }

    #[test]
    fn a_rejected_window_is_one_alert_naming_the_account_the_window_and_its_reset() {
        let before = conn("balanced", false, vec![key("max-1", false, false), key("max-2", false, false)]);
        let mut spent = before.clone();
        spent.keys[0].rejected =
            vec![rejected("unified", "subscription limit"), rejected("unified_5h", "5-hour window")];
        spent.keys[0].quota_exhausted = true;
        spent.keys[0].cooling = true;
        let found = alerts_between(&before, &spent);
        assert_eq!(
            found.iter().map(|a| a.kind).collect::<Vec<_>>(),
            [AlertKind::WindowRejected],
            "one alert: the window's, not a second 'out of quota' for the same account"
        );
        assert_eq!(
            found[0].title, "team: max-1's 5-hour window is used up",
            "names the window, not the overall status"
        );
        assert!(
            found[0].body.starts_with("max-1: 5-hour window (resets Tue 14:05)"),
            "and when it resets: {}",
            found[0].body
        );
        assert_eq!(kinds(&spent, &spent), [], "no repeat while it stays rejected");
        let mut weekly_too = spent.clone();
        weekly_too.keys[0].rejected.push(rejected("unified_7d", "weekly window"));
        assert_eq!(kinds(&spent, &weekly_too), [AlertKind::WindowRejected], "another window of it: news again");
        assert_eq!(kinds(&spent, &before), [], "the reset is not an alert");
        assert_eq!(
            kinds(&before, &spent),
            [AlertKind::WindowRejected],
            "rejected again after the reset: alerted again"
        );
        let mut only_overall = before.clone();
        only_overall.keys[1].rejected = vec![rejected("unified", "subscription limit")];
        let title = &alerts_between(&before, &only_overall)[0].title;
        assert_eq!(title, "team: max-2's subscription limit is used up", "no window named: the overall status");
        let mut off = spent.clone();
        off.keys[0].enabled = false;
        assert_eq!(kinds(&before, &off), [], "a disabled key's windows are not news");
    }

    #[test]
    fn an_expired_or_missing_login_is_one_alert_and_expiring_is_a_milder_one() {
        use CredentialHealthState as H;
        let ok = conn(
            "balanced",
            false,
            vec![account("tok", ProfileKind::Token, H::Ok), account("cli", ProfileKind::External, H::Ok)],
        );
        let mut expired = ok.clone();
        expired.keys[0].login = H::Expired;
        let found = alerts_between(&ok, &expired);
        assert_eq!(found.iter().map(|a| a.kind).collect::<Vec<_>>(), [AlertKind::LoginExpired], "one alert");
        assert_eq!(found[0].title, "team: tok's token expired");
        assert!(found[0].body.contains("profile rotate team tok"), "says how to bring it back: {}", found[0].body);
        assert_eq!(kinds(&expired, &expired), [], "no repeat while it stays expired");

        let mut signed_out = ok.clone();
        signed_out.keys[1].login = H::Missing;
        let found = alerts_between(&ok, &signed_out);
        assert_eq!(found[0].title, "team: cli is no longer signed in");
        assert!(found[0].body.contains("switchyard profile login team cli"), "the command: {}", found[0].body);

        let mut both = expired.clone();
        both.keys[1].login = H::Missing;
        assert_eq!(kinds(&ok, &both), [AlertKind::LoginExpired], "two accounts at once: still one alert");
        assert!(alerts_between(&ok, &both)[0].title.contains("2 accounts"));
        assert_eq!(kinds(&expired, &both), [AlertKind::LoginExpired], "the second one later is news of its own");
        assert_eq!(kinds(&expired, &ok), [], "signing in again is not an alert");

        let mut expiring = ok.clone();
        expiring.keys[0].login = H::Expiring;
        let found = alerts_between(&ok, &expiring);
        assert_eq!(found.iter().map(|a| a.kind).collect::<Vec<_>>(), [AlertKind::LoginExpiring]);
        assert!(found[0].body.contains("tok expires on 2027-01-05"), "the day: {}", found[0].body);
        assert_eq!(kinds(&expiring, &expiring), []);
        assert_eq!(kinds(&expiring, &expired), [AlertKind::LoginExpired], "expiring, then expired: told again");
        assert_eq!(kinds(&expired, &expiring), [], "a new token that expires soon is not news");
    }

    #[test]
    fn a_new_key_is_its_own_baseline() {
        use CredentialHealthState as H;
        let before = conn("legacy", false, vec![key("a", false, false)]);
        let mut after = before.clone();
        let mut added = account("fresh", ProfileKind::External, H::Missing);
        added.rejected = vec![rejected("unified_5h", "5-hour window")];
        after.keys.push(added);
        assert_eq!(kinds(&before, &after), [], "an external profile just added is missing until it signs in");
        let mut renamed = after.clone();
        renamed.keys[1].label = "renamed".into();
        renamed.keys[1].login = H::Ok;
        let mut out_again = renamed.clone();
        out_again.keys[1].login = H::Missing;
        assert_eq!(kinds(&renamed, &out_again), [AlertKind::LoginExpired], "matched by id across a rename");
    }

    #[test]
    fn rejected_windows_are_read_from_the_quota_view_live_ones_only() {
        let w = |name: &str, kind: &str, status: &str, stale: bool| QuotaWindowView {
            name: name.into(),
            kind: kind.into(),
            model: None,
            family: (kind == "seven_day_model").then(|| "opus".to_string()),
            limit: None,
            remaining: None,
            utilization: Some(1.0),
            resets_at: None,
            seen_at: String::new(),
            status: Some(status.into()),
            window_minutes: None,
            age_secs: 0,
            resets_in_secs: None,
            stale,
            binding: false,
            exhausts_at: None,
            exhausts_in_secs: None,
            resets_local: Some("Wed 09:00".into()),
            exhausts_local: None,
        };
        let found = rejected_windows(&[
            w("unified_5h", "five_hour", "rejected", false),
            w("unified_7d", "seven_day", "allowed_warning", false),
            w("unified_7d_opus", "seven_day_model", "rejected", false),
            w("codex_7d", "seven_day", "rejected", true),
        ]);
        let texts: Vec<&str> = found.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["5-hour window", "weekly opus window"], "rejected and not reset since; a warning is not");
        assert_eq!(found[0].resets.as_deref(), Some("Wed 09:00"));
    }
}
