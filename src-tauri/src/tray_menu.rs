//! What the tray menu shows (issues 17 and 28), as plain data: the relay's status, each
//! connection's routing mode and readiness with a quick switch between legacy and the activated
//! modes (offered only while the gates pass; the engine checks them again on the click), its
//! keys with their credential health where it needs something (`max-1 (expired)`), "Open
//! Switchyard" and "Quit". `tray.rs` turns this into Tauri menu items; ids parse back into
//! [`TrayAction`]s.

use switchyard_engine::{
    CredentialHealthState, PoolView, ProfileKind, ProfileReadiness, RoutingMode, RoutingState, RoutingStatus, Strategy,
};

use crate::relay::RelayStatus;

/// One clickable (or greyed) line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayEntry {
    pub id: String,
    pub text: String,
    pub enabled: bool,
    /// `Some` for the mode switch (a check item).
    pub checked: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayNode {
    Item(TrayEntry),
    Separator,
    /// `items` are the mode switches; `keys` (after a separator) the connection's keys.
    Submenu {
        text: String,
        items: Vec<TrayEntry>,
        keys: Vec<TrayEntry>,
    },
}

/// What a menu click asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayAction {
    Open,
    Quit,
    /// `legacy` deactivates; `balanced` / `priority` activate (behind the gates).
    SetMode {
        slug: String,
        mode: RoutingMode,
    },
}

pub const OPEN_ID: &str = "open";
pub const QUIT_ID: &str = "quit";
const RELAY_ID: &str = "relay";
const MODES: [(RoutingMode, &str); 3] = [
    (RoutingMode::Legacy, "Legacy (primary key only)"),
    (RoutingMode::Balanced, "Balanced"),
    (RoutingMode::Priority, "Priority"),
];

fn mode_id(mode: RoutingMode, slug: &str) -> String {
    format!("mode:{mode}:{slug}")
}

impl TrayAction {
    pub fn parse(id: &str) -> Option<TrayAction> {
        match id {
            OPEN_ID => Some(TrayAction::Open),
            QUIT_ID => Some(TrayAction::Quit),
            _ => {
                let rest = id.strip_prefix("mode:")?;
                let (mode, slug) = rest.split_once(':')?;
                let mode = mode.parse::<RoutingMode>().ok()?;
                Some(TrayAction::SetMode { slug: slug.to_string(), mode })
            }
        }
    }
}

/// The relay line, e.g. "Relay: listening on http://127.0.0.1:4141" (`None`: not reported yet).
pub fn relay_text(relay: Option<&RelayStatus>) -> String {
    let Some(relay) = relay else { return "Relay: starting".into() };
    match (relay.state.as_str(), &relay.url, &relay.error) {
        ("listening", Some(url), _) => format!("Relay: listening on {url}"),
        (_, _, Some(error)) => format!("Relay: {} — {error}", relay.state),
        (state, _, _) => format!("Relay: {state}"),
    }
}

/// A connection's line: its mode and whether it is ready, e.g. "team — balanced · active".
pub fn connection_text(s: &RoutingStatus) -> String {
    let readiness = if s.state == RoutingState::Suspended {
        "suspended (routing as legacy)"
    } else if s.mode != RoutingMode::Legacy {
        "active"
    } else if s.gates.ok {
        "gates pass"
    } else {
        "gates fail"
    };
    format!("{} — {} · {readiness}", s.slug, s.mode)
}

/// A key's line: its label, with its credential health when that needs something:
/// `max-1 (expired)`, `max-2 (expiring 2027-01-05)`, `cli (not signed in)`, `a (no key)`.
pub fn key_text(p: &ProfileReadiness) -> String {
    let health = &p.credential_health;
    let day = health.expires_at.as_deref().and_then(|t| t.get(..10));
    let suffix = match (health.state, p.kind) {
        (CredentialHealthState::Static | CredentialHealthState::Ok, _) => None,
        (CredentialHealthState::Expiring, _) => Some(match day {
            Some(day) => format!("expiring {day}"),
            None => "expiring".to_string(),
        }),
        (CredentialHealthState::Expired, _) => Some("expired".to_string()),
        (CredentialHealthState::Missing, ProfileKind::External | ProfileKind::Oauth) => {
            Some("not signed in".to_string())
        }
        (CredentialHealthState::Missing, ProfileKind::Token) => Some("no token".to_string()),
        (CredentialHealthState::Missing, ProfileKind::ApiKey) => Some("no key".to_string()),
    };
    let disabled = if p.enabled { "" } else { ", disabled" };
    match suffix {
        Some(s) => format!("{} ({s}{disabled})", p.label),
        None if !p.enabled => format!("{} (disabled)", p.label),
        None => p.label.clone(),
    }
}

/// The whole menu for this relay status and these connections (slug order kept).
pub fn tray_model(relay: Option<&RelayStatus>, connections: &[RoutingStatus]) -> Vec<TrayNode> {
    let mut nodes = vec![
        TrayNode::Item(TrayEntry { id: RELAY_ID.into(), text: relay_text(relay), enabled: false, checked: None }),
        TrayNode::Separator,
    ];
    if connections.is_empty() {
        nodes.push(TrayNode::Item(TrayEntry {
            id: "none".into(),
            text: "No connections yet".into(),
            enabled: false,
            checked: None,
        }));
    }
    for s in connections {
        let items = MODES
            .iter()
            .map(|&(mode, label)| {
                let current = s.mode == mode;
                let allowed = if mode == RoutingMode::Legacy { !current } else { !current && s.gates.ok };
                TrayEntry { id: mode_id(mode, &s.slug), text: label.into(), enabled: allowed, checked: Some(current) }
            })
            .collect();
        let keys = s
            .profiles
            .iter()
            .map(|p| TrayEntry { id: format!("key:{}", p.id), text: key_text(p), enabled: false, checked: None })
            .collect();
        nodes.push(TrayNode::Submenu { text: connection_text(s), items, keys });
    }
    nodes.push(TrayNode::Separator);
    nodes.push(TrayNode::Item(TrayEntry {
        id: OPEN_ID.into(),
        text: "Open Switchyard".into(),
        enabled: true,
        checked: None,
    }));
    nodes.push(TrayNode::Item(TrayEntry { id: QUIT_ID.into(), text: "Quit".into(), enabled: true, checked: None }));
    nodes
}

/// `nodes` with each connection in `capped` (a cap refusing its requests) marked: `team — legacy ·
/// gates pass · capped`.
pub fn with_caps(mut nodes: Vec<TrayNode>, capped: &[String]) -> Vec<TrayNode> {
    for node in &mut nodes {
        if let TrayNode::Submenu { text, .. } = node {
            if capped.iter().any(|slug| text.starts_with(&format!("{slug} — "))) {
                text.push_str(" · capped");
            }
        }
    }
    nodes
}

/// A pool's line, e.g. "fleet — pool balanced · active · ga:3 kb:2 dc:1".
pub fn pool_text(p: &PoolView) -> String {
    let members: Vec<String> = p
        .members
        .iter()
        .map(|m| if m.ready { format!("{}:{}", m.slug, m.weight) } else { format!("{} (out)", m.slug) })
        .collect();
    format!("{} — pool {} · {} · {}", p.name, p.mode.map_or("-", Strategy::as_str), p.state, members.join(" "))
}

/// `nodes` with one (greyed) line per pool before the closing "Open"/"Quit" part.
pub fn with_pools(mut nodes: Vec<TrayNode>, pools: &[PoolView]) -> Vec<TrayNode> {
    if pools.is_empty() {
        return nodes;
    }
    let at = nodes.iter().rposition(|n| *n == TrayNode::Separator).unwrap_or(nodes.len());
    let lines = pools.iter().map(|p| {
        TrayNode::Item(TrayEntry { id: format!("pool:{}", p.name), text: pool_text(p), enabled: false, checked: None })
    });
    let mut tail = nodes.split_off(at);
    nodes.push(TrayNode::Separator);
    nodes.extend(lines);
    nodes.append(&mut tail);
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_connection_is_marked_and_no_other() {
        let sub = |text: &str| TrayNode::Submenu { text: text.into(), items: Vec::new(), keys: Vec::new() };
        let nodes = vec![sub("team — legacy · gates pass"), sub("team-b — balanced · active")];
        let marked = with_caps(nodes, &["team".to_string()]);
        let texts: Vec<String> = marked
            .iter()
            .filter_map(|n| match n {
                TrayNode::Submenu { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["team — legacy · gates pass · capped", "team-b — balanced · active"], "by slug, exactly");
    }

    #[test]
    fn ids_parse_back_into_actions() {
        assert_eq!(TrayAction::parse("open"), Some(TrayAction::Open));
        assert_eq!(TrayAction::parse("quit"), Some(TrayAction::Quit));
        assert_eq!(
            TrayAction::parse(&mode_id(RoutingMode::Balanced, "team:a")),
            Some(TrayAction::SetMode { slug: "team:a".into(), mode: RoutingMode::Balanced }),
            "the slug is everything after the mode"
        );
        assert_eq!(TrayAction::parse("mode:fastest:team"), None, "unknown modes are not actions");
        assert_eq!(TrayAction::parse("relay"), None, "the status line is not clickable");
    }

    #[test]
    fn pools_are_listed_before_open_and_quit() {
        let member = |slug: &str, weight: i32, ready: bool| switchyard_engine::PoolMemberView {
            member: slug.into(),
            slug: slug.into(),
            model: None,
            weight,
            order: 0,
            ready,
            why_out: (!ready).then(|| "its connection was removed".into()),
        };
        let pool = PoolView {
            name: "fleet".into(),
            protocol: "anthropic".into(),
            mode: Some(Strategy::Balanced),
            state: switchyard_engine::PoolState::Active,
            members: vec![member("ga", 3, true), member("kb", 2, false)],
            last_launched: None,
            revision: 1,
        };
        let nodes = with_pools(tray_model(None, &[]), &[pool]);
        let texts: Vec<String> = nodes
            .iter()
            .filter_map(|n| match n {
                TrayNode::Item(e) => Some(e.text.clone()),
                _ => None,
            })
            .collect();
        let at = texts.iter().position(|t| t.starts_with("fleet")).expect("the pool is listed");
        assert_eq!(texts[at], "fleet — pool balanced · active · ga:3 kb (out)", "mode, state, members and who is out");
        assert!(at < texts.iter().position(|t| t == "Open Switchyard").unwrap_or(0), "before Open and Quit");
    }
}
