//! Everything the CLI writes to stdout: JSON in `--json` mode, short human text otherwise.
//! Errors go to stderr as one line. This is the only module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde::Serialize;
use switchyard_engine::{
    AttemptView, ConnectionDetail, ConnectionView, EngineError, FallbackStatus, GateView, ProfileView, QuotaView,
    QuotaWindowView, Removal, RoutingStatus, VerifyReport,
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
    /// `routing status`: the routing status with the fallback chain (`"fallback"` in JSON).
    RoutingWithFallback(RoutingStatus, FallbackStatus),
    /// A fallback chain command's result.
    Fallback(FallbackStatus),
    Verify(VerifyReport),
    Attempts(Vec<AttemptView>),
    Quota(QuotaView),
    /// The relay token (the relay's own credential, printed on request).
    Token(String),
    /// Nothing more to print (the relay printed as it ran).
    Done,
    /// Nothing to print; the process exits with this code (`exec`: the child's).
    Exit(u8),
    Settings(switchyard_engine::SettingsView),
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
            Output::RoutingWithFallback(r, f) => to_json(&with_fallback(r, f)),
            Output::Fallback(f) => to_json(f),
            Output::Verify(r) => to_json(r),
            Output::Attempts(r) => to_json(r),
            Output::Quota(q) => to_json(&quota_json(q)),
            Output::Token(t) => to_json(&serde_json::json!({ "token": t })),
            Output::Done | Output::Exit(_) => return,
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
        Output::RoutingWithFallback(r, f) => {
            print_routing(r);
            print_fallback(f);
        }
        Output::Fallback(f) => print_fallback(f),
        Output::Attempts(list) => print_attempts(list),
        Output::Quota(q) => print_quota(q),
        Output::Token(t) => println!("{t}"),
        Output::Done | Output::Exit(_) => {}
        Output::Settings(view) => {
            // One line per setting, by name (the JSON object's key order).
            if let Some(map) = serde_json::to_value(view).ok().as_ref().and_then(|v| v.as_object()) {
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

/// The routing status as JSON with `"fallback": {"chain", "active", "gates", …}` added.
fn with_fallback(r: &RoutingStatus, f: &FallbackStatus) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        map.insert("fallback".into(), serde_json::to_value(f).unwrap_or_default());
    }
    v
}

fn print_fallback(f: &FallbackStatus) {
    if f.chain.is_empty() {
        println!("fallback: none");
        return;
    }
    let hops: Vec<String> = f
        .chain
        .iter()
        .map(|h| match &h.model {
            Some(m) => format!("{}={m}", h.slug),
            None => h.slug.clone(),
        })
        .collect();
    let state = match (f.active, f.activated) {
        (true, _) => "active",
        (false, true) => "suspended",
        (false, false) => "inactive",
    };
    println!("fallback: {} ({state})", hops.join(" -> "));
    if let Some(note) = &f.note {
        println!("  {note}");
    }
    if !f.gates.ok {
        for why in &f.gates.failures {
            println!("  gate: {why}");
        }
    } else if !f.activated {
        println!("  gates hold: `switchyard routing fallback-activate` turns it on");
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
    match r.affinity.mode.as_str() {
        "conversation" => {
            println!("  affinity: conversation ({} min window; balanced routing only)", r.affinity.window_min)
        }
        mode => println!("  affinity: {mode} (balanced routing only)"),
    }
    if r.quota_aware.enabled {
        println!(
            "  quota-aware: on ({} % reserve; keys with a spent window are skipped until its reset)",
            r.quota_aware.reserve_pct
        );
    } else {
        println!("  quota-aware: off");
    }
    print_gates(&r.gates);
    println!(
        "{:<20} {:>6} {:<8} {:<10} {:<9} {:>7} HEALTH",
        "PROFILE", "WEIGHT", "ENABLED", "CREDENTIAL", "EVIDENCE", "CACHE"
    );
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
            None => p.evidence.to_string(),
        };
        println!(
            "{:<20} {:>6} {:<8} {:<10} {:<9} {:>7} {}",
            p.label,
            p.weight,
            if p.enabled { "yes" } else { "no" },
            p.credential,
            evidence,
            crate::cache_lines::ratio(p.cache.read_tokens, p.cache.input_tokens),
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
        "{:<24} {:<35} {:<3} {:<20} {:<14} {:>6} {:<16} {:>7} {:>9} {:>7}",
        "AT", "PROFILE", "#", "REASON", "MODEL", "STATUS", "FAILURE", "TTFB_MS", "TOKENS", "CACHE"
    );
    for a in list {
        let tokens = match (a.input_tokens, a.output_tokens) {
            (None, None) => String::new(),
            (i, o) => format!("{}/{}", i.unwrap_or(0), o.unwrap_or(0)),
        };
        let reason = match &a.moved {
            Some(why) => format!("{} (moved: {why})", a.reason),
            None => a.reason.clone(),
        };
        println!(
            "{:<24} {:<35} {:<3} {:<20} {:<14} {:>6} {:<16} {:>7} {:>9} {:>7}",
            a.at,
            a.profile,
            a.attempt,
            reason,
            a.model.as_deref().unwrap_or("-"),
            a.status.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            a.failure_kind.as_deref().unwrap_or(""),
            a.ttfb_ms.map(|s| s.to_string()).unwrap_or_default(),
            tokens,
            crate::cache_lines::attempt_ratio(a)
        );
    }
    for line in crate::cache_lines::cache_summary(list) {
        println!("{line}");
    }
}

/// `quota --json` exactly as docs/interface.md fixes it: `null` where the provider said nothing.
fn quota_json(q: &QuotaView) -> serde_json::Value {
    let window = |w: &QuotaWindowView| {
        serde_json::json!({
            "name": w.name,
            "model": w.model,
            "limit": w.limit,
            "remaining": w.remaining,
            "utilization": w.utilization,
            "resets_at": w.resets_at,
            "seen_at": w.seen_at,
        })
    };
    let profiles: Vec<serde_json::Value> = q
        .profiles
        .iter()
        .map(|p| serde_json::json!({"id": p.id, "windows": p.windows.iter().map(window).collect::<Vec<_>>()}))
        .collect();
    serde_json::json!({ "profiles": profiles })
}

fn print_quota(q: &QuotaView) {
    println!("connection {}: latest limit readings (\"unknown\" where the provider sent nothing)", q.slug);
    for p in &q.profiles {
        println!("profile {} ({})", p.label, p.id);
        if p.windows.is_empty() {
            println!("  unknown: no answer has reported limits yet");
        }
        for w in &p.windows {
            println!("  {}", quota_line(w));
        }
    }
}

/// One window: what is left or used, when it resets, how old the reading is. A reading whose
/// window has reset since is shown as stale, without its numbers.
fn quota_line(w: &QuotaWindowView) -> String {
    let mut name = match &w.model {
        Some(m) => format!("{} [{m}]", w.name),
        None => w.name.clone(),
    };
    if let Some(minutes) = w.window_minutes {
        name.push_str(&format!(" ({} window)", span(i64::from(minutes) * 60)));
    }
    let seen = format!("as of {} ago", span(i64::from(w.age_secs)));
    if w.stale {
        let ago = w.resets_in_secs.map(|s| format!(" {} ago", span(-i64::from(s)))).unwrap_or_default();
        return format!("{name:<32} stale: the window reset{ago}; reading ignored  {seen}");
    }
    let mut left = match (w.remaining, w.limit) {
        (Some(r), Some(l)) => vec![format!("{r}/{l} left")],
        (Some(r), None) => vec![format!("{r} left (limit unknown)")],
        (None, Some(l)) => vec![format!("remaining unknown of {l}")],
        (None, None) => vec![],
    };
    if let Some(u) = w.utilization {
        left.push(format!("{:.0}% used", u * 100.0));
    }
    if let Some(status) = &w.status {
        left.push(status.clone());
    }
    let left = if left.is_empty() { "unknown".to_string() } else { left.join(", ") };
    let resets = match w.resets_in_secs {
        Some(s) => format!("resets in {}", span(i64::from(s))),
        None => "reset unknown".to_string(),
    };
    format!("{name:<32} {left:<28} {resets:<22} {seen}")
}

/// `42 s`, `3 min`, `2 h 10 min`, `6 d 4 h`.
fn span(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => match (secs % 3600) / 60 {
            0 => format!("{} h", secs / 3600),
            m => format!("{} h {m} min", secs / 3600),
        },
        _ => match (secs % 86_400) / 3600 {
            0 => format!("{} d", secs / 86_400),
            h => format!("{} d {h} h", secs / 86_400),
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_engine::ProfileQuota;

    fn window(stale: bool) -> QuotaWindowView {
        QuotaWindowView {
            name: "requests".into(),
            model: Some("m1".into()),
            limit: Some(50),
            remaining: Some(48),
            utilization: None,
            resets_at: Some("2027-01-15T08:01:00.000Z".into()),
            seen_at: "2027-01-15T08:00:00.000Z".into(),
            status: Some("allowed".into()),
            window_minutes: None,
            age_secs: 180,
            resets_in_secs: Some(if stale { -300 } else { 42 }),
            stale,
        }
    }

    fn view() -> QuotaView {
        QuotaView {
            slug: "c".into(),
            profiles: vec![
                ProfileQuota { id: "p_a".into(), label: "a".into(), windows: vec![window(false)] },
                ProfileQuota { id: "p_b".into(), label: "b".into(), windows: vec![] },
            ],
        }
    }

    #[test]
    fn quota_json_has_exactly_the_contract_fields() {
        let got = quota_json(&view());
        let want = serde_json::json!({"profiles": [
            {"id": "p_a", "windows": [{
                "name": "requests", "model": "m1", "limit": 50, "remaining": 48, "utilization": null,
                "resets_at": "2027-01-15T08:01:00.000Z", "seen_at": "2027-01-15T08:00:00.000Z",
            }]},
            {"id": "p_b", "windows": []},
        ]});
        assert_eq!(got, want, "docs/interface.md fixes this shape; null where the provider said nothing");
    }

    #[test]
    fn quota_lines_say_unknown_stale_and_how_old() {
        let live = quota_line(&window(false));
        assert!(
            live.contains("48/50 left") && live.contains("resets in 42 s"),
            "remaining/limit and countdown: {live}"
        );
        assert!(live.contains("as of 3 min ago"), "the reading's age: {live}");
        let stale = quota_line(&window(true));
        assert!(stale.contains("stale") && !stale.contains("48/50"), "a reset window's numbers are not shown: {stale}");
        let nothing =
            QuotaWindowView { limit: None, remaining: None, status: None, resets_in_secs: None, ..window(false) };
        let line = quota_line(&nothing);
        assert!(line.contains("unknown") && line.contains("reset unknown"), "never a guess: {line}");
        assert_eq!(
            [span(59), span(61), span(7_200), span(7_260), span(90_000)],
            ["59 s", "1 min", "2 h", "2 h 1 min", "1 d 1 h"]
        );
    }
}
