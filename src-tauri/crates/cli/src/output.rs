//! Everything the CLI writes to stdout: JSON in `--json` mode, short human text otherwise.
//! Errors go to stderr as one line. This is the only module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde::Serialize;
use switchyard_engine::{
    AttemptView, ConnectionDetail, ConnectionView, EngineError, GateView, ProfileView, Removal, RoutingStatus,
    VerifyReport,
};

/// The result of one subcommand, ready to print.
pub enum Output {
    Connection(ConnectionDetail),
    ConnectionEdited(ConnectionView),
    Connections(Vec<ConnectionView>),
    Profile(ProfileView, &'static str),
    Profiles(Vec<ProfileView>),
    Removed(Removal, String),
    Routing(RoutingStatus),
    Verify(VerifyReport),
    Attempts(Vec<AttemptView>),
    /// The relay token (the relay's own credential, printed on request).
    Token(String),
    /// Nothing more to print (the relay printed as it ran).
    Done,
    Settings(serde_json::Value),
    /// Rendered by the subcommand itself (export, import): JSON text and human text.
    Rendered {
        json: String,
        text: String,
    },
}

pub fn print(out: &Output, json: bool) {
    if json {
        let text = match out {
            Output::Connection(d) => to_json(d),
            Output::ConnectionEdited(c) => to_json(c),
            Output::Connections(list) => to_json(list),
            Output::Profile(p, _) => to_json(p),
            Output::Profiles(list) => to_json(list),
            Output::Removed(r, _) => to_json(r),
            Output::Routing(r) => to_json(r),
            Output::Verify(r) => to_json(r),
            Output::Attempts(r) => to_json(r),
            Output::Token(t) => to_json(&serde_json::json!({ "token": t })),
            Output::Done => return,
            Output::Settings(v) => to_json(v),
            Output::Rendered { json, .. } => json.clone(),
        };
        println!("{text}");
        return;
    }
    match out {
        Output::Rendered { text, .. } => println!("{text}"),
        Output::Connection(d) => print_detail(d),
        Output::ConnectionEdited(c) => {
            println!("updated connection '{}' (revision {}, basis {})", c.slug, c.revision, &c.basis_fingerprint[..12]);
        }
        Output::Connections(list) if list.is_empty() => {
            println!("no connections yet; add one with: switchyard connection add SLUG --protocol openai --base-url URL --secret-stdin");
        }
        Output::Connections(list) => {
            println!("{:<20} {:<10} {:<9} {:<9} {:>8}  BASE URL", "SLUG", "PROTOCOL", "MODE", "STATE", "PROFILES");
            for c in list {
                println!(
                    "{:<20} {:<10} {:<9} {:<9} {:>8}  {}",
                    c.slug, c.protocol, c.routing_mode, c.routing_state, c.profile_count, c.base_url
                );
            }
        }
        Output::Profile(p, verb) => println!("{verb} profile '{}' ({}), revision {}", p.label, p.id, p.revision),
        Output::Profiles(list) => print_profiles(list),
        Output::Routing(r) => print_routing(r),
        Output::Attempts(list) => print_attempts(list),
        Output::Token(t) => println!("{t}"),
        Output::Done => {}
        Output::Settings(v) => {
            if let Some(map) = v.as_object() {
                for (k, val) in map {
                    println!("{k:<24} {}", val.as_str().map_or_else(|| val.to_string(), str::to_string));
                }
            }
        }
        Output::Verify(r) => {
            for v in &r.results {
                let kind = v.failure_kind.as_deref().map(|k| format!(" [{k}]")).unwrap_or_default();
                println!("{:<20} {:<12}{kind} {}", v.label, v.outcome, v.detail);
            }
            println!();
            if let Some(restored) = &r.routing_restored {
                println!("{restored}");
            }
            print_routing(&r.routing);
        }
        Output::Removed(r, what) => {
            println!(
                "removed {what}: {} profile(s), {} keychain entr(y/ies) deleted",
                r.profiles_removed, r.secrets_deleted
            );
            if r.secrets_pending > 0 {
                println!(
                    "{} keychain entr(y/ies) could not be deleted now and will be removed at next start",
                    r.secrets_pending
                );
            }
        }
    }
}

fn print_detail(d: &ConnectionDetail) {
    let c = &d.connection;
    println!("connection {} ({})", c.slug, c.id);
    println!("  protocol   {}", c.protocol);
    println!("  base url   {}", c.base_url);
    println!("  models     {}", if c.models.is_empty() { "(none configured)".into() } else { c.models.join(", ") });
    for m in &c.mapping {
        println!("  map        {} -> {}", m.from, m.to);
    }
    for h in &c.headers {
        println!("  header     {}: {}", h.name, h.value);
    }
    println!("  routing    {} ({})", c.routing_mode, c.routing_state);
    println!("  revision   {}", c.revision);
    print_profiles(&d.profiles);
}

fn print_profiles(list: &[ProfileView]) {
    if list.is_empty() {
        println!("no profiles; add one with: switchyard profile add SLUG --label NAME --secret-stdin");
        return;
    }
    println!(
        "{:<35} {:<20} {:>6} {:>8} {:<8} {:<8} {:<10} {:>4}",
        "ID", "LABEL", "WEIGHT", "PRIORITY", "ENABLED", "PRIMARY", "CREDENTIAL", "REV"
    );
    for p in list {
        println!(
            "{:<35} {:<20} {:>6} {:>8} {:<8} {:<8} {:<10} {:>4}",
            p.id,
            p.label,
            p.weight,
            p.priority,
            if p.enabled { "yes" } else { "no" },
            if p.primary { "yes" } else { "" },
            p.credential,
            p.revision
        );
    }
}

fn print_routing(r: &RoutingStatus) {
    let by = match (&r.activated_at, &r.activated_by) {
        (Some(at), Some(by)) => format!(", activated {at} by {by}"),
        _ => String::new(),
    };
    println!("connection {}: {} ({}){by}", r.slug, r.mode, r.state);
    if let Some(pending) = &r.pending_mode {
        println!("  {pending} routing is pending (from an import): add credentials, enable the profiles and verify; it switches on when the gates hold");
    }
    if let Some(note) = &r.note {
        println!("  {note}");
    }
    print_gates(&r.gates);
    println!("{:<20} {:>6} {:<8} {:<10} {:<9} HEALTH", "PROFILE", "WEIGHT", "ENABLED", "CREDENTIAL", "EVIDENCE");
    for p in &r.profiles {
        let health: Vec<String> = p
            .health
            .iter()
            .filter(|h| h.state != "closed" || h.model.is_none())
            .map(|h| {
                let scope = h.model.as_deref().unwrap_or("key");
                let kind = h.kind.as_deref().map(|k| format!(" {k}")).unwrap_or_default();
                let until = h.until.as_deref().map(|u| format!(" until {u}")).unwrap_or_default();
                format!("{scope}: {}{kind}{until}", h.state)
            })
            .collect();
        let evidence = match &p.evidence_detail {
            Some(d) => match &d.stale_reason {
                Some(why) => format!("stale ({why})"),
                None => format!("{} ({})", p.evidence, d.outcome),
            },
            None => p.evidence.clone(),
        };
        println!(
            "{:<20} {:>6} {:<8} {:<10} {:<9} {}",
            p.label,
            p.weight,
            if p.enabled { "yes" } else { "no" },
            p.credential,
            evidence,
            health.join("; ")
        );
    }
}

fn print_attempts(list: &[AttemptView]) {
    if list.is_empty() {
        println!("no attempts recorded yet");
        return;
    }
    println!(
        "{:<24} {:<35} {:<3} {:<20} {:<14} {:>6} {:<16} {:>7} {:>9}",
        "AT", "PROFILE", "#", "REASON", "MODEL", "STATUS", "FAILURE", "TTFB_MS", "TOKENS"
    );
    for a in list {
        let tokens = match (a.input_tokens, a.output_tokens) {
            (None, None) => String::new(),
            (i, o) => format!("{}/{}", i.unwrap_or(0), o.unwrap_or(0)),
        };
        println!(
            "{:<24} {:<35} {:<3} {:<20} {:<14} {:>6} {:<16} {:>7} {:>9}",
            a.at,
            a.profile,
            a.attempt,
            a.reason,
            a.model.as_deref().unwrap_or("-"),
            a.status.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            a.failure_kind.as_deref().unwrap_or(""),
            a.ttfb_ms.map(|s| s.to_string()).unwrap_or_default(),
            tokens
        );
    }
}

/// The relay's first stdout line (scripts wait for it).
pub fn print_listening(addr: std::net::SocketAddr) {
    use std::io::Write;
    println!("relay listening on http://{addr}");
    let _ = std::io::stdout().flush();
}

fn print_gates(g: &GateView) {
    if g.ok {
        println!("gates: ok");
    } else {
        println!("gates: not met: {}", g.failures.join("; "));
    }
    for m in &g.models {
        let excluded: Vec<String> = m.excluded.iter().map(|e| format!("{} ({})", e.label, e.reason)).collect();
        let eligible = if m.eligible_labels.is_empty() { "none".to_string() } else { m.eligible_labels.join(", ") };
        let others = if excluded.is_empty() { String::new() } else { format!("; not: {}", excluded.join(", ")) };
        println!("  model {}: {eligible}{others}", m.model);
    }
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"internal\",\"message\":\"{e}\"}}}}"))
}

/// One line on stderr; in JSON mode also `{"error": {"code", "message"}}` on stdout.
pub fn print_error(e: &EngineError, json: bool) {
    let message = e.to_string().replace('\n', " ");
    if json {
        let mut body = serde_json::json!({ "error": { "code": e.code().as_str(), "message": message } });
        if let EngineError::GateFailed { gates, .. } = e {
            body["gates"] = serde_json::to_value(gates.as_ref()).unwrap_or_default();
        }
        println!("{body}");
    }
    eprintln!("error: {message}");
    if let (EngineError::GateFailed { gates, .. }, false) = (e, json) {
        print_gates(gates);
    }
}
