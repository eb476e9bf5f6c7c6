//! Everything the CLI writes to stdout: JSON in `--json` mode, short human text otherwise.
//! Errors go to stderr as one line. This is the only module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde::Serialize;
use switchyard_engine::{ConnectionDetail, ConnectionView, EngineError, ProfileView, Removal};

/// The result of one subcommand, ready to print.
pub enum Output {
    Connection(ConnectionDetail),
    ConnectionEdited(ConnectionView),
    Connections(Vec<ConnectionView>),
    Profile(ProfileView, &'static str),
    Profiles(Vec<ProfileView>),
    Removed(Removal, String),
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
            Output::Rendered { json, .. } => json.clone(),
        };
        println!("{text}");
        return;
    }
    match out {
        Output::Rendered { text, .. } => println!("{text}"),
        Output::Connection(d) => print_detail(d),
        Output::ConnectionEdited(c) => {
            println!(
                "updated connection '{}' (revision {}, basis {})",
                c.slug,
                c.revision,
                &c.basis_fingerprint[..12]
            );
        }
        Output::Connections(list) if list.is_empty() => {
            println!("no connections yet; add one with: switchyard connection add SLUG --protocol openai --base-url URL --secret-stdin");
        }
        Output::Connections(list) => {
            println!(
                "{:<20} {:<10} {:<9} {:<9} {:>8}  BASE URL",
                "SLUG", "PROTOCOL", "MODE", "STATE", "PROFILES"
            );
            for c in list {
                println!(
                    "{:<20} {:<10} {:<9} {:<9} {:>8}  {}",
                    c.slug,
                    c.protocol,
                    c.routing_mode,
                    c.routing_state,
                    c.profile_count,
                    c.base_url
                );
            }
        }
        Output::Profile(p, verb) => println!(
            "{verb} profile '{}' ({}), revision {}",
            p.label, p.id, p.revision
        ),
        Output::Profiles(list) => print_profiles(list),
        Output::Removed(r, what) => {
            println!(
                "removed {what}: {} profile(s), {} keychain entr(y/ies) deleted",
                r.profiles_removed, r.secrets_deleted
            );
            if r.secrets_pending > 0 {
                println!("{} keychain entr(y/ies) could not be deleted now and will be removed at next start", r.secrets_pending);
            }
        }
    }
}

fn print_detail(d: &ConnectionDetail) {
    let c = &d.connection;
    println!("connection {} ({})", c.slug, c.id);
    println!("  protocol   {}", c.protocol);
    println!("  base url   {}", c.base_url);
    println!(
        "  models     {}",
        if c.models.is_empty() {
            "(none configured)".into()
        } else {
            c.models.join(", ")
        }
    );
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
        println!(
            "no profiles; add one with: switchyard profile add SLUG --label NAME --secret-stdin"
        );
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

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"internal\",\"message\":\"{e}\"}}}}"))
}

/// One line on stderr; in JSON mode also `{"error": {"code", "message"}}` on stdout.
pub fn print_error(e: &EngineError, json: bool) {
    let message = e.to_string().replace('\n', " ");
    if json {
        let body =
            serde_json::json!({ "error": { "code": e.code().as_str(), "message": message } });
        println!("{body}");
    }
    eprintln!("error: {message}");
}
