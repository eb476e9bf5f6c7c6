//! Profiles: the table of `profile list` (also under `connection show`) with each profile's
//! kind and credential health, and the one-line result of `profile add|edit|rotate|login`.

use serde::Serialize;
use switchyard_core::states::CredentialPresence;
use switchyard_engine::ProfileView;

use super::Render;

/// `profile add|edit|rotate|login`: the profile as it is now; `verb` says in the text what
/// was done to it.
#[derive(Serialize)]
#[serde(transparent)]
pub struct ProfileChanged {
    #[serde(skip)]
    pub verb: &'static str,
    pub profile: ProfileView,
}

impl Render for ProfileChanged {
    fn text(&self) -> String {
        let p = &self.profile;
        let mut out = vec![format!(
            "{} profile '{}' ({}), revision {}: {}, {}",
            self.verb,
            p.label,
            p.id,
            p.revision,
            p.kind,
            health(p)
        )];
        out.extend(note(p));
        out.extend(login_line(p));
        out.join("\n")
    }
}

impl Render for Vec<ProfileView> {
    fn text(&self) -> String {
        table(self).join("\n")
    }
}

/// The profiles as a table (or how to add the first), then a line for each profile whose
/// credential needs something (or where an external one signs in).
pub fn table(list: &[ProfileView]) -> Vec<String> {
    if list.is_empty() {
        return vec!["no profiles; add one with: switchyard profile add SLUG --label NAME --secret-stdin".to_string()];
    }
    let mut out = vec![format!(
        "{:<35} {:<20} {:<8} {:<30} {:>6} {:>8} {:<8} {:<8} {:>4}",
        "ID", "LABEL", "KIND", "HEALTH", "WEIGHT", "PRIORITY", "ENABLED", "PRIMARY", "REV"
    )];
    for p in list {
        out.push(format!(
            "{:<35} {:<20} {:<8} {:<30} {:>6} {:>8} {:<8} {:<8} {:>4}",
            p.id,
            p.label,
            p.kind,
            health(p),
            p.weight,
            p.priority,
            if p.enabled { "yes" } else { "no" },
            if p.primary { "yes" } else { "" },
            p.revision
        ));
    }
    out.extend(list.iter().filter_map(note));
    out.extend(list.iter().filter_map(login_line));
    out
}

/// An owned login's account, plan and last refresh, in one line (never a token).
fn login_line(p: &ProfileView) -> Option<String> {
    let login = p.login.as_ref()?;
    let account = login.account_id.as_deref()?;
    let plan = login.plan.as_deref().map(|plan| format!(" ({plan})")).unwrap_or_default();
    let refreshed = match (&login.refreshed_at, &login.last_refresh) {
        (Some(at), Some(how)) => format!(", last refresh {how} at {at}"),
        _ => String::new(),
    };
    Some(format!("  {}: ChatGPT account {account}{plan}{refreshed}", p.label))
}

/// The health word, with the expiry it was judged by (`unknown` when the keychain could not
/// be asked: the health then cannot be told).
pub fn health(p: &ProfileView) -> String {
    if p.credential == CredentialPresence::Unknown {
        return "unknown (keychain)".to_string();
    }
    let h = &p.credential_health;
    match (&h.expires_at, h.state.as_str()) {
        (Some(at), "expired" | "expiring") => format!("{} {}", h.state, day(at)),
        (Some(at), _) => format!("{} until {}", h.state, day(at)),
        (None, _) => h.state.to_string(),
    }
}

/// What a profile's credential needs, in one line (`None` when nothing).
fn note(p: &ProfileView) -> Option<String> {
    let reason = p.credential_health.reason.as_deref();
    match (&p.config_dir, &p.client, reason) {
        (Some(dir), Some(client), Some(why)) => {
            Some(format!("  {}: {why} ({client} keeps its login in {dir})", p.label))
        }
        (_, _, Some(why)) => Some(format!("  {}: {why}", p.label)),
        _ => None,
    }
}

/// The date of an RFC 3339 time (the table is for people; `--json` has the whole time).
fn day(at: &str) -> &str {
    at.get(..10).unwrap_or(at)
}
