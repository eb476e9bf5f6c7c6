//! A connection's CLI backend setting (`routing cli-backend`): on or off, the per-profile cap,
//! and the profiles it applies to.

use switchyard_engine::CliBackendView;

use super::Render;

impl Render for CliBackendView {
    fn text(&self) -> String {
        let state = if self.enabled { "on" } else { "off" };
        let mut out = vec![format!(
            "cli backend of '{}': {state} (at most {} run(s) per profile at once)",
            self.slug, self.max_concurrent
        )];
        if self.profiles.is_empty() {
            out.push("  no external Claude Code profile: nothing serves through the CLI".to_string());
        } else if self.enabled {
            out.push(format!("  served through `claude -p`: {}", self.profiles.join(", ")));
        } else {
            out.push(format!("  would serve through `claude -p` when on: {}", self.profiles.join(", ")));
        }
        out.join("\n")
    }
}
