//! Profiles: the table of `profile list` (also under `connection show`) and the one-line
//! result of `profile add|edit|rotate`.

use serde::Serialize;
use switchyard_engine::ProfileView;

use super::Render;

/// `profile add|edit|rotate`: the profile as it is now; `verb` says in the text what was
/// done to it.
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
        format!("{} profile '{}' ({}), revision {}", self.verb, p.label, p.id, p.revision)
    }
}

impl Render for Vec<ProfileView> {
    fn text(&self) -> String {
        table(self).join("\n")
    }
}

/// The profiles as a table (or how to add the first).
pub fn table(list: &[ProfileView]) -> Vec<String> {
    if list.is_empty() {
        return vec!["no profiles; add one with: switchyard profile add SLUG --label NAME --secret-stdin".to_string()];
    }
    let mut out = vec![format!(
        "{:<35} {:<20} {:>6} {:>8} {:<8} {:<8} {:<10} {:>4}",
        "ID", "LABEL", "WEIGHT", "PRIORITY", "ENABLED", "PRIMARY", "CREDENTIAL", "REV"
    )];
    for p in list {
        out.push(format!(
            "{:<35} {:<20} {:>6} {:>8} {:<8} {:<8} {:<10} {:>4}",
            p.id,
            p.label,
            p.weight,
            p.priority,
            if p.enabled { "yes" } else { "no" },
            if p.primary { "yes" } else { "" },
            p.credential,
            p.revision
        ));
    }
    out
}
