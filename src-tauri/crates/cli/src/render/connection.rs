//! Connections: the detail of `connection add|show` (with its profiles), the list, the
//! result of `connection edit`, and what a removal (of a connection or a profile) deleted.

use serde::Serialize;
use switchyard_engine::{ConnectionDetail, ConnectionView, Removal};

use super::{profile, Render};

impl Render for ConnectionDetail {
    fn text(&self) -> String {
        let c = &self.connection;
        let mut out = vec![
            format!("connection {} ({})", c.slug, c.id),
            format!("  protocol   {}", c.protocol),
            format!("  base url   {}", c.base_url),
            format!(
                "  models     {}",
                if c.models.is_empty() { "(none configured)".into() } else { c.models.join(", ") }
            ),
        ];
        out.extend(c.mapping.iter().map(|m| format!("  map        {} -> {}", m.from, m.to)));
        out.extend(c.headers.iter().map(|h| format!("  header     {}: {}", h.name, h.value)));
        out.push(format!("  routing    {} ({})", c.routing_mode, c.routing_state));
        out.push(format!("  revision   {}", c.revision));
        out.extend(profile::table(&self.profiles));
        out.join("\n")
    }
}

impl Render for Vec<ConnectionView> {
    fn text(&self) -> String {
        if self.is_empty() {
            return "no connections yet; add one with: switchyard connection add SLUG --protocol openai --base-url URL --secret-stdin".to_string();
        }
        let mut out =
            vec![format!("{:<20} {:<10} {:<9} {:<9} {:>8}  BASE URL", "SLUG", "PROTOCOL", "MODE", "STATE", "PROFILES")];
        for c in self {
            out.push(format!(
                "{:<20} {:<10} {:<9} {:<9} {:>8}  {}",
                c.slug, c.protocol, c.routing_mode, c.routing_state, c.profile_count, c.base_url
            ));
        }
        out.join("\n")
    }
}

/// `connection edit`: the connection as it is now.
#[derive(Serialize)]
#[serde(transparent)]
pub struct ConnectionEdited(pub ConnectionView);

impl Render for ConnectionEdited {
    fn text(&self) -> String {
        let c = &self.0;
        let basis = c.basis_fingerprint.get(..12).unwrap_or(&c.basis_fingerprint);
        format!("updated connection '{}' (revision {}, basis {basis})", c.slug, c.revision)
    }
}

/// `connection remove`, `profile remove`: what was deleted; `what` names the removed thing
/// in the text.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Removed {
    #[serde(skip)]
    pub what: String,
    pub removal: Removal,
}

impl Render for Removed {
    fn text(&self) -> String {
        let r = &self.removal;
        let mut out = vec![format!(
            "removed {}: {} profile(s), {} keychain entr(y/ies) deleted",
            self.what, r.profiles_removed, r.secrets_deleted
        )];
        if r.secrets_pending > 0 {
            out.push(format!(
                "{} keychain entr(y/ies) could not be deleted now and will be removed at next start",
                r.secrets_pending
            ));
        }
        out.join("\n")
    }
}
