//! `switchyard settings`: one line per setting, by its JSON name, sorted by name.

use switchyard_engine::SettingsView;

use super::Render;

impl Render for SettingsView {
    fn text(&self) -> String {
        [
            ("codex_backend_url", self.codex_backend_url.clone()),
            ("data_dir", self.data_dir.clone()),
            ("evidence_max_age_days", format!("{:?}", self.evidence_max_age_days)),
            ("ledger_retention_rows", self.ledger_retention_rows.to_string()),
            ("oauth_issuer", self.oauth_issuer.clone()),
            ("oauth_token_url", self.oauth_token_url.clone()),
            ("relay_port", self.relay_port.to_string()),
            ("time_zone", self.time_zone.clone()),
        ]
        .iter()
        .map(|(name, value)| format!("{name:<24} {value}"))
        .collect::<Vec<_>>()
        .join("\n")
    }
}
