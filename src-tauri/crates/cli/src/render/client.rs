//! `switchyard client setup|status|restore`: the change as a diff (or why there is none) and
//! its notes, what set-up wrote or moved, whether a client points at Switchyard, what restore
//! put back. `--json` is `switchyard-client-setup`'s view of each.

use serde::Serialize;
use switchyard_client_setup::{
    ClientPreview, ClientRestoreReport, ClientSetupReport, ClientStatus, Restored, MOVED_KEY,
};

use super::Render;

/// `client setup --dry-run`: the preview alone.
impl Render for ClientPreview {
    fn text(&self) -> String {
        let mut text = preview(self);
        text.push_str("(dry run: nothing written)");
        text.trim_end().to_string()
    }
}

impl Render for ClientSetupReport {
    fn text(&self) -> String {
        let mut text = preview(&self.preview);
        if self.written {
            text.push_str(&format!(
                "wrote {} (original kept in {}; undo with: switchyard client restore {})",
                self.preview.path,
                self.backup.as_deref().unwrap_or("?"),
                self.preview.client
            ));
        }
        if let Some(p) = &self.moved_to {
            text.push_str(&format!(
                "\nmoved the provider key into the keychain as profile '{}' ({}) of '{}'",
                p.label, p.id, self.preview.slug
            ));
        }
        text.trim_end().to_string()
    }
}

/// The diff, or that nothing changes, then the notes (each line ending in a newline).
fn preview(p: &ClientPreview) -> String {
    let mut text = if p.changes {
        p.diff.clone()
    } else {
        format!("{} already points at {}; nothing to change\n", p.path, p.base_url)
    };
    for note in &p.notes {
        text.push_str(&format!("note: {note}\n"));
    }
    text
}

impl Render for ClientStatus {
    fn text(&self) -> String {
        let s = self;
        let mut text = match (&s.slug, s.port) {
            (Some(slug), Some(port)) if s.pointed => format!(
                "{} points at Switchyard: connection '{slug}' on port {port}{}",
                s.client,
                if s.token_current { "" } else { " (with an old relay token: run client setup again)" }
            ),
            _ if s.exists => format!("{} is not pointed at Switchyard ({})", s.client, s.path),
            _ => format!("{} has no config file yet ({})", s.client, s.path),
        };
        if s.restorable {
            text.push_str(&format!("\noriginal kept: switchyard client restore {} undoes the set-up", s.client));
        }
        for k in &s.plain_keys {
            text.push_str(&format!("\nplain-text provider key: {k}"));
        }
        text
    }
}

/// `client restore`: the restore report; the text also says when a placeholder was left
/// where a moved key was.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Restore {
    pub report: ClientRestoreReport,
    #[serde(skip)]
    pub placeholder_left: bool,
}

impl From<Restored> for Restore {
    fn from(r: Restored) -> Self {
        Restore { report: r.report, placeholder_left: r.placeholder_left }
    }
}

impl Render for Restore {
    fn text(&self) -> String {
        let r = &self.report;
        if r.removed {
            format!("removed {} (it did not exist before set-up)", r.path)
        } else if self.placeholder_left {
            format!("restored {} with \"{MOVED_KEY}\" where the moved key was (its profile no longer holds it): put the key there yourself", r.path)
        } else {
            format!("restored {} to its original bytes", r.path)
        }
    }
}
