//! `store copy`: rows per table, the secrets sealed and under which master key, and the
//! profiles that need a sign-in or a key on the team store. `--json`: the engine's report.

use serde::Serialize;
use switchyard_engine::{CopiedProfile, StoreCopyReport};

use super::Render;

/// `store copy`'s report, serialised as the engine gives it.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct StoreCopied(pub StoreCopyReport);

fn names(profiles: &[CopiedProfile]) -> String {
    profiles.iter().map(|p| format!("{}/{} ({})", p.connection, p.label, p.kind)).collect::<Vec<_>>().join(", ")
}

impl Render for StoreCopied {
    fn text(&self) -> String {
        let r = &self.0;
        let mut out = format!("copied into {}:\n", r.target);
        for (table, rows) in &r.tables {
            out.push_str(&format!("  {table:<16} {rows:>8} rows\n"));
        }
        out.push_str(&format!(
            "sealed {} keys and tokens under master key {}; start every replica with SWITCHYARD_STORE set to the \
             team store and SWITCHYARD_MASTER_KEY_FILE pointing at that key file",
            r.secrets, r.key_id
        ));
        if !r.sign_in_again.is_empty() {
            out.push_str(&format!(
                "\nsign in again on the team store (logins are not copied): {}",
                names(&r.sign_in_again)
            ));
        }
        if !r.without_secret.is_empty() {
            out.push_str(&format!(
                "\nno key in this data dir's vault, so none copied (add it with profile rotate): {}",
                names(&r.without_secret)
            ));
        }
        out
    }
}
