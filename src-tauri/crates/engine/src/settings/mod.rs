//! Every setting once, in one typed table: its stored key, its default, how its stored text
//! parses and the range a value must be in; global or per connection (the key then ends in
//! `:<connection id>`). Reads fall back to the default when a value is unset, unreadable or
//! out of range; writes check the range and are compare-and-swap on the revision read (a
//! concurrent change is a conflict, never lost). The user-facing names the CLI's `settings`
//! command takes (`relay-port`, …) are [`UserSetting`]s, converted here too, so no front end
//! keeps its own mapping. What each setting means lives with its use case (`readiness/gates.rs`,
//! `relay_settings.rs`, `affinity.rs`, …), which reads it through [`Engine::setting`].

use std::time::Duration;

use serde::Serialize;
use switchyard_core::routing::{QuotaPolicy, MAX_RESERVE_PCT};
use switchyard_core::InvalidInput;
use switchyard_store::{settings, AnyConnection, StoreError};

pub(crate) mod values;

pub(crate) use values::{AffinitySetting, CliBackendSetting, ExecPosition};

use crate::context::Context;
use crate::error::EngineError;
use values::{
    DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_MAX_EVIDENCE_AGE_MS, DEFAULT_RELAY_PORT, MAX_CLI_CONCURRENCY,
    MAX_RETENTION_ROWS, MIN_RETENTION_ROWS, RETENTION_ROWS,
};

/// A value a setting holds, as stored text.
pub(crate) trait Stored: Sized {
    fn read(text: &str) -> Option<Self>;
    fn write(&self) -> String;
}

impl Stored for i64 {
    fn read(text: &str) -> Option<Self> {
        text.parse().ok()
    }
    fn write(&self) -> String {
        self.to_string()
    }
}

impl Stored for bool {
    fn read(text: &str) -> Option<Self> {
        Some(text == "true")
    }
    fn write(&self) -> String {
        (if *self { "true" } else { "false" }).to_string()
    }
}

impl Stored for Option<String> {
    fn read(text: &str) -> Option<Self> {
        Some(Some(text.to_string()))
    }
    fn write(&self) -> String {
        self.clone().unwrap_or_default()
    }
}

/// `turn:<window ms>` / `conversation:<window ms>` (the window kept under `turn` too, so
/// switching back restores it).
impl Stored for AffinitySetting {
    fn read(text: &str) -> Option<Self> {
        let (mode, ms) = text.split_once(':')?;
        let window = Duration::from_millis(ms.parse::<u64>().ok()?);
        match mode {
            "turn" => Some(AffinitySetting { conversation: false, window }),
            "conversation" => Some(AffinitySetting { conversation: true, window }),
            _ => None,
        }
    }
    fn write(&self) -> String {
        let mode = if self.conversation { "conversation" } else { "turn" };
        format!("{mode}:{}", self.window.as_millis())
    }
}

/// `on:<reserve pct>` / `off:<reserve pct>` (the reserve kept while off).
impl Stored for QuotaPolicy {
    fn read(text: &str) -> Option<Self> {
        let (mode, pct) = text.split_once(':')?;
        let reserve_pct = pct.parse::<u8>().ok()?;
        match mode {
            "on" => Some(QuotaPolicy { enabled: true, reserve_pct }),
            "off" => Some(QuotaPolicy { enabled: false, reserve_pct }),
            _ => None,
        }
    }
    fn write(&self) -> String {
        format!("{}:{}", if self.enabled { "on" } else { "off" }, self.reserve_pct)
    }
}

/// `id=current;id=current` (profile ids never hold `=` or `;`).
impl Stored for ExecPosition {
    fn read(text: &str) -> Option<Self> {
        let entries = text.split(';').filter(|e| !e.is_empty()).map(|e| {
            let (id, w) = e.split_once('=')?;
            Some((id.to_string(), w.parse::<i64>().ok()?))
        });
        entries.collect::<Option<Vec<_>>>().map(ExecPosition)
    }
    fn write(&self) -> String {
        self.0.iter().map(|(id, w)| format!("{id}={w}")).collect::<Vec<_>>().join(";")
    }
}

/// One setting: where it is stored, its default and its range.
pub(crate) struct Setting<T: 'static> {
    /// The stored key (per connection: `<key>:<connection id>`).
    pub key: &'static str,
    pub per_connection: bool,
    pub default: fn() -> T,
    /// `Err(why)` for a value out of range (`why` completes "FIELD must …"); stored values
    /// out of range read as the default.
    pub check: fn(&T) -> Result<(), String>,
    /// The field an out-of-range value is reported under.
    pub field: &'static str,
}

fn any<T>(_: &T) -> Result<(), String> {
    Ok(())
}

fn between(value: i64, low: i64, high: i64, unit: &str) -> Result<(), String> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(format!("must be between {low} and {high}{unit} (got {value})"))
    }
}

/// How old evidence may be before it is stale (ms; at least one minute; default 7 days).
pub(crate) const EVIDENCE_MAX_AGE_MS: Setting<i64> = Setting {
    key: "evidence_max_age_ms",
    per_connection: false,
    default: || DEFAULT_MAX_EVIDENCE_AGE_MS,
    check: |ms| if *ms >= 60_000 { Ok(()) } else { Err("must be at least one minute".into()) },
    field: "max_age",
};

/// The relay's port (1024–65535; default 4141).
pub(crate) const RELAY_PORT: Setting<i64> = Setting {
    key: "relay_port",
    per_connection: false,
    default: || i64::from(DEFAULT_RELAY_PORT),
    check: |port| between(*port, 1024, 65_535, ""),
    field: "relay_port",
};

/// How many rows the attempts table keeps (1 000 – 10 000 000).
pub(crate) const LEDGER_RETENTION_ROWS: Setting<i64> = Setting {
    key: "ledger_retention_rows",
    per_connection: false,
    default: || RETENTION_ROWS,
    check: |rows| between(*rows, MIN_RETENTION_ROWS, MAX_RETENTION_ROWS, ""),
    field: "ledger_retention_rows",
};

/// Whether the desktop app starts with the user's session (default off).
pub(crate) const START_WITH_SYSTEM: Setting<bool> = Setting {
    key: "start_with_system",
    per_connection: false,
    default: || false,
    check: any,
    field: "start_with_system",
};

/// The IANA time zone usage counts days in; unset: the system's.
pub(crate) const TIME_ZONE: Setting<Option<String>> =
    Setting { key: "time_zone", per_connection: false, default: || None, check: any, field: "time_zone" };

/// Per connection: how long the relay waits for the provider's first byte (ms; 1 s – 1 h;
/// default 300 s).
pub(crate) const FIRST_BYTE_TIMEOUT_MS: Setting<i64> = Setting {
    key: "first_byte_timeout_ms",
    per_connection: true,
    default: || i64::try_from(DEFAULT_FIRST_BYTE_TIMEOUT.as_millis()).unwrap_or(300_000),
    check: |ms| match (1_000..=3_600_000).contains(ms) && ms % 1000 == 0 {
        true => Ok(()),
        false => Err("must be between 1 and 3600 seconds".into()),
    },
    field: "first_byte_timeout_secs",
};

/// Per connection: what balanced routing keeps on one key (default: conversations, 10 min).
pub(crate) const AFFINITY: Setting<AffinitySetting> = Setting {
    key: "affinity",
    per_connection: true,
    default: AffinitySetting::default,
    check: |a| {
        let minutes = i64::try_from(a.window.as_secs() / 60).unwrap_or(i64::MAX);
        match a.window.as_secs() % 60 {
            0 => between(minutes, 1, 24 * 60, " minutes"),
            _ => Err("must be whole minutes".into()),
        }
    },
    field: "window_min",
};

/// Per connection: quota-aware selection (default off, no reserve).
pub(crate) const QUOTA_AWARE: Setting<QuotaPolicy> = Setting {
    key: "quota_aware",
    per_connection: true,
    default: QuotaPolicy::default,
    check: |p| between(i64::from(p.reserve_pct), 0, i64::from(MAX_RESERVE_PCT), " percent"),
    field: "reserve_pct",
};

/// Per connection: external Claude Code profiles also serve through the official CLI (default
/// off, at most 2 runs per profile at once).
pub(crate) const CLI_BACKEND: Setting<CliBackendSetting> = Setting {
    key: "cli_backend",
    per_connection: true,
    default: CliBackendSetting::default,
    check: |s| between(i64::from(s.max_concurrent), 1, i64::from(MAX_CLI_CONCURRENCY), ""),
    field: "max_concurrent",
};

/// Per connection: where `switchyard exec` stands in its round robin over the connection's
/// external logins (SWRR's current weights; `config/exec_account.rs`). A position, not a choice
/// anyone makes: no user-facing name.
pub(crate) const EXEC_POSITION: Setting<ExecPosition> = Setting {
    key: "exec_position",
    per_connection: true,
    default: ExecPosition::default,
    check: any,
    field: "exec_position",
};

/// Owned logins (docs/design.md, section 14): the issuer of ChatGPT sign-ins (default
/// `https://auth.openai.com`), its token endpoint (default `<issuer>/oauth/token`) and the
/// backend an owned login's requests go to (default ChatGPT's Codex backend). Unset: the default;
/// tests point them at the mock provider.
pub(crate) const OAUTH_ISSUER: Setting<Option<String>> =
    Setting { key: "oauth_issuer", per_connection: false, default: || None, check: http_url, field: "oauth-issuer" };
pub(crate) const OAUTH_TOKEN_URL: Setting<Option<String>> = Setting {
    key: "oauth_token_url",
    per_connection: false,
    default: || None,
    check: http_url,
    field: "oauth-token-url",
};
pub(crate) const CODEX_BACKEND: Setting<Option<String>> = Setting {
    key: "codex_backend_url",
    per_connection: false,
    default: || None,
    check: http_url,
    field: "codex-backend-url",
};

/// An absolute `https://` URL, or `http://` to loopback (a test's mock); unset is fine. The URL
/// is parsed and its host judged — `http://localhost.evil.example`, `http://localhost@evil.example`
/// or `http://127.0.0.1.evil.example` are not loopback — and no settings URL carries user info
/// or a hidden character: refresh tokens, codes and access tokens go where these name.
fn http_url(value: &Option<String>) -> Result<(), String> {
    let Some(text) = value else { return Ok(()) };
    let text = text.trim();
    if text.chars().any(switchyard_core::secret_shape::is_hidden) {
        return Err("must not hold a control or invisible character".into());
    }
    let url = reqwest::Url::parse(text).map_err(|e| format!("must be an absolute https:// URL ({e})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password (user@host)".into());
    }
    let Some(host) = url.host() else { return Err("must name a host".into()) };
    let loopback = match host {
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err("must be an https:// URL (or http:// to 127.0.0.1, localhost or [::1])".into()),
    }
}

/// Whose setting: the installation's, or one connection's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    Global,
    Connection(&'a str),
}

impl<T: Stored> Setting<T> {
    fn stored_key(&self, scope: Scope<'_>) -> String {
        match scope {
            Scope::Connection(id) if self.per_connection => format!("{}:{id}", self.key),
            _ => self.key.to_string(),
        }
    }

    fn valid(&self, text: &str) -> Option<T> {
        T::read(text).filter(|v| (self.check)(v).is_ok())
    }

    #[cfg(test)]
    /// `text` as stored, read as the setting reads it (the default when unreadable or out of
    /// range).
    pub(crate) fn parse_stored(&self, text: &str) -> T {
        self.valid(text).unwrap_or_else(self.default)
    }

    /// The value on `conn` (a connection the caller holds).
    pub(crate) async fn read(&self, conn: &mut AnyConnection, scope: Scope<'_>) -> Result<T, StoreError> {
        let stored = settings::get(conn, &self.stored_key(scope)).await?;
        Ok(stored.and_then(|(text, _)| self.valid(&text)).unwrap_or_else(self.default))
    }
}

impl Context {
    /// The value of `setting` (its default when unset, unreadable or out of range).
    pub(crate) async fn setting<T: Stored>(&self, setting: &Setting<T>, scope: Scope<'_>) -> Result<T, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(setting.read(&mut conn, scope).await?)
    }

    /// Sets `setting` to `change(current)`, checked against its range, compare-and-swap on
    /// the revision read. Returns the value written.
    pub(crate) async fn update_setting<T: Stored>(
        &self,
        setting: &Setting<T>,
        scope: Scope<'_>,
        change: impl FnOnce(T) -> T,
    ) -> Result<T, EngineError> {
        let key = setting.stored_key(scope);
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, &key).await?;
        let before = current.as_ref().and_then(|(text, _)| setting.valid(text)).unwrap_or_else(setting.default);
        let next = change(before);
        (setting.check)(&next).map_err(|why| InvalidInput::new(setting.field, why))?;
        settings::put(&mut conn, &key, &next.write(), current.map(|(_, rev)| rev), self.now_ms()).await?;
        Ok(next)
    }

    /// Sets `setting` to `value` (range-checked, compare-and-swap).
    pub(crate) async fn set_setting<T: Stored>(
        &self,
        setting: &Setting<T>,
        scope: Scope<'_>,
        value: T,
    ) -> Result<(), EngineError> {
        self.update_setting(setting, scope, |_| value).await.map(|_| ())
    }

    /// Removes `setting` (back to its default).
    pub(crate) async fn clear_setting<T: Stored>(
        &self,
        setting: &Setting<T>,
        scope: Scope<'_>,
    ) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        settings::remove(&mut conn, &setting.stored_key(scope)).await?;
        Ok(())
    }
}

/// The settings a user changes by name (`switchyard settings NAME VALUE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserSetting {
    EvidenceMaxAgeDays,
    RelayPort,
    TimeZone,
    LedgerRetentionRows,
    OauthIssuer,
    OauthTokenUrl,
    CodexBackendUrl,
}

impl UserSetting {
    pub const ALL: [UserSetting; 7] = [
        UserSetting::EvidenceMaxAgeDays,
        UserSetting::RelayPort,
        UserSetting::TimeZone,
        UserSetting::LedgerRetentionRows,
        UserSetting::OauthIssuer,
        UserSetting::OauthTokenUrl,
        UserSetting::CodexBackendUrl,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            UserSetting::EvidenceMaxAgeDays => "evidence-max-age-days",
            UserSetting::RelayPort => "relay-port",
            UserSetting::TimeZone => "time-zone",
            UserSetting::LedgerRetentionRows => "ledger-retention-rows",
            UserSetting::OauthIssuer => "oauth-issuer",
            UserSetting::OauthTokenUrl => "oauth-token-url",
            UserSetting::CodexBackendUrl => "codex-backend-url",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Every user setting's value now (`switchyard settings`, `--json`).
#[derive(Debug, Clone, Serialize)]
pub struct SettingsView {
    pub evidence_max_age_days: f64,
    pub relay_port: u16,
    pub time_zone: String,
    pub ledger_retention_rows: i64,
    pub data_dir: String,
    /// Owned logins' endpoints as in effect (the defaults when unset).
    pub oauth_issuer: String,
    pub oauth_token_url: String,
    pub codex_backend_url: String,
}

const DAY_MS: i64 = 24 * 3600 * 1000;

impl Context {
    /// Sets one user setting from the text the user typed (days for the evidence age, a port,
    /// an IANA name or `system`, a row count).
    pub async fn set_user_setting(&self, which: UserSetting, text: &str) -> Result<(), EngineError> {
        let number = || {
            text.parse::<i64>()
                .map_err(|_| EngineError::Invalid(InvalidInput::new(which.name(), "must be a whole number")))
        };
        match which {
            UserSetting::EvidenceMaxAgeDays => self.set_max_evidence_age_ms(number()?.saturating_mul(DAY_MS)).await,
            UserSetting::RelayPort => self.set_relay_port(number()?).await,
            UserSetting::TimeZone => self.set_time_zone(text).await,
            UserSetting::LedgerRetentionRows => self.set_ledger_retention_rows(number()?).await,
            UserSetting::OauthIssuer => self.set_url_setting(&OAUTH_ISSUER, text).await,
            UserSetting::OauthTokenUrl => self.set_url_setting(&OAUTH_TOKEN_URL, text).await,
            UserSetting::CodexBackendUrl => self.set_url_setting(&CODEX_BACKEND, text).await,
        }
    }

    /// Sets a URL setting; `default` (or an empty text) clears it.
    async fn set_url_setting(&self, setting: &Setting<Option<String>>, text: &str) -> Result<(), EngineError> {
        let text = text.trim();
        if text.is_empty() || text == "default" {
            return self.clear_setting(setting, Scope::Global).await;
        }
        self.set_setting(setting, Scope::Global, Some(text.trim_end_matches('/').to_string())).await
    }

    /// Every user setting's value now.
    pub async fn settings_view(&self) -> Result<SettingsView, EngineError> {
        let endpoints = self.login_endpoints().await?;
        Ok(SettingsView {
            oauth_issuer: endpoints.issuer,
            oauth_token_url: endpoints.token_url,
            codex_backend_url: endpoints.backend_url,
            evidence_max_age_days: self.max_evidence_age_ms().await? as f64 / DAY_MS as f64,
            relay_port: self.relay_port().await?,
            time_zone: self.time_zone().await?.name,
            ledger_retention_rows: self.ledger_retention_rows().await?,
            data_dir: self.data_dir().display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::http_url;

    fn judged(url: &str) -> Result<(), String> {
        http_url(&Some(url.to_string()))
    }

    #[test]
    fn a_settings_url_is_judged_by_its_parsed_host_not_its_prefix() {
        for remote in [
            "http://localhost.evil.example/oauth/token",
            "http://localhost@evil.example/oauth/token",
            "http://127.0.0.1.evil.example/",
            "http://[::1]@evil.example/",
            "http://localhost:1@203.0.113.7/",
            "http://203.0.113.7/",
            "https://user:pw@auth.example/",
            "https://token@auth.example/",
            "ftp://localhost/",
            "https://auth.example/\u{1b}[2J",
            "localhost:8080",
        ] {
            assert!(judged(remote).is_err(), "{remote}: secrets would leave in clear or to a user-info host");
        }
        for fine in [
            "https://auth.openai.com",
            "https://chatgpt.com/backend-api/codex",
            "http://127.0.0.1:4010/oauth/token",
            "http://127.5.0.1/x",
            "http://localhost:1455",
            "http://LOCALHOST/x",
            "http://[::1]:8080/oauth",
        ] {
            assert_eq!(judged(fine), Ok(()), "{fine} is https or plain http to loopback");
        }
        assert_eq!(http_url(&None), Ok(()), "unset is the default endpoint");
    }
}
