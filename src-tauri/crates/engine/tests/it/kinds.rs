//! Profile kinds through the engine (docs/design.md, invariants 20 and 21): a token on the real
//! keychain round-trips its kind and never reaches the DB file or an export; an import brings
//! kinds back `missing`; an external profile's directory is owner-only and its health follows
//! the official CLI's credential file; a token's expiry excludes it at the decision's clock —
//! in `routing status` and in the relay's snapshot — and a new token brings it back in place;
//! verification never sends a subscription credential; and what is refused.

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use switchyard_core::routing::{evaluate, Exclusion, NoCircuits};
use switchyard_engine::{
    Conflict, Engine, EngineError, ErrorCode, NewConnection, NewCredential, NewProfile, Router, Secret, DB_FILE,
};
use switchyard_vault::MemoryVault;

use crate::common::{open, ManualClock, TestResult};

const TOKEN_CANARY: &str = "sk-ant-oat01-canary-7f3e9b21c4d8a605";
const DAY: i64 = 24 * 3600 * 1000;
/// 2027-01-15T08:00:00Z.
const T0: i64 = 1_800_000_000_000;

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map(|t| format!("{t:.3}")).unwrap_or_default()
}

fn anthropic(slug: &str) -> NewConnection {
    NewConnection {
        slug: slug.into(),
        protocol: "anthropic".into(),
        // Nothing listens here: a verification that sent anything would come back unverified.
        base_url: "http://127.0.0.1:9".into(),
        models: vec!["m1".into()],
        ..Default::default()
    }
}

fn labelled(label: &str) -> NewProfile {
    NewProfile { label: label.into(), weight: Some(2), priority: None }
}

fn kind(kind: &str, client: Option<&str>, expires: Option<String>) -> NewCredential {
    NewCredential { kind: Some(kind.into()), client: client.map(str::to_string), expires_at: expires }
}

/// The DB file and its WAL, as bytes.
fn db_bytes(dir: &Path) -> Vec<u8> {
    let mut all = std::fs::read(dir.join(DB_FILE)).unwrap_or_default();
    all.extend(std::fs::read(dir.join(format!("{DB_FILE}-wal"))).unwrap_or_default());
    all
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn a_token_round_trips_its_kind_and_never_reaches_the_db_or_an_export() -> TestResult {
    let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let engine = open(a.path()).await?;
    engine.connection_add(anthropic("subs"), None).await?;
    let expires = rfc3339(engine.now_ms() + 30 * DAY);
    let added = engine
        .profile_add_kind(
            "subs",
            labelled("max-1"),
            kind("token", None, Some(expires.clone())),
            Some(Secret::new(TOKEN_CANARY)),
        )
        .await?;
    assert_eq!(added.kind.as_str(), "token", "the kind is what was asked for");
    assert_eq!(added.client.map(|c| c.as_str()), Some("claude-code"), "a token is Claude Code's by default");
    assert_eq!(added.credential_health.state.as_str(), "ok", "thirty days from expiry is ok");
    assert_eq!(added.credential_health.expires_at.as_deref(), Some(expires.as_str()), "the expiry is shown");
    assert_eq!(added.config_dir, None, "only external profiles have a config directory");
    let listed = engine.profile_list("subs").await?;
    assert_eq!(listed.len(), 1, "the token is listed");
    assert_eq!((listed[0].kind.as_str(), listed[0].credential.as_str()), ("token", "present"), "kind and presence");
    let json = serde_json::to_string(&listed)?;
    assert!(
        json.contains("\"credential_health\":{\"state\":\"ok\""),
        "the JSON field is named apart from health: {json}"
    );
    assert!(!json.contains(TOKEN_CANARY), "the token is not in the view");

    let export = engine.export(None).await?;
    assert!(!export.contains(TOKEN_CANARY), "the token is never exported");
    assert!(export.contains("\"kind\": \"token\""), "the kind is: {export}");
    assert!(export.contains(&format!("\"expires_at\": \"{expires}\"")), "and the expiry");
    engine.close().await;
    assert!(!contains(&db_bytes(a.path()), TOKEN_CANARY), "the token is not in the DB file or its WAL");

    let other = open(b.path()).await?;
    other.import(&export, false, Conflict::Rename).await?;
    let imported = other.profile_list("subs").await?;
    assert_eq!(imported[0].kind.as_str(), "token", "the kind arrives");
    assert_eq!(
        imported[0].credential_health.state.as_str(),
        "missing",
        "without its token: missing until one is pasted"
    );
    assert!(!imported[0].enabled, "imported profiles arrive disabled");
    other.close().await;
    assert!(!contains(&db_bytes(b.path()), TOKEN_CANARY), "nor in the importer's DB");
    Ok(())
}

#[tokio::test]
async fn an_old_file_without_kinds_imports_api_keys() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let old = serde_json::json!({
        "format": "switchyard.config", "version": 1,
        "connections": [{"ref": "c1", "slug": "old", "protocol": "openai", "base_url": "https://api.example.com/v1",
            "profiles": [{"ref": "p1", "label": "k", "primary": true}]}]
    });
    engine.import(&old.to_string(), false, Conflict::Rename).await?;
    let p = &engine.profile_list("old").await?[0];
    assert_eq!((p.kind.as_str(), p.client), ("api_key", None), "a file written before kinds holds API keys");
    assert_eq!(p.credential_health.state.as_str(), "missing", "an imported key is missing until it is added");
    Ok(())
}

#[tokio::test]
async fn an_external_profile_has_an_owner_only_directory_and_follows_the_cli_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let openai =
        NewConnection { protocol: "openai".into(), base_url: "http://127.0.0.1:9/v1".into(), ..anthropic("subs") };
    engine.connection_add(openai, None).await?;
    let mismatch =
        engine.profile_add_kind("subs", labelled("cc"), kind("external", Some("claude-code"), None), None).await;
    assert_eq!(
        mismatch.err().map(|e| e.code()),
        Some(ErrorCode::Invalid),
        "Claude Code does not speak OpenAI's protocol"
    );
    let added = engine.profile_add_kind("subs", labelled("work"), kind("external", Some("codex"), None), None).await?;
    let config_dir = added.config_dir.clone().ok_or("an external profile shows its config directory")?;
    let config_dir = Path::new(&config_dir);
    assert!(config_dir.starts_with(std::path::absolute(dir.path())?), "it lives under the data dir");
    assert!(config_dir.ends_with(format!("accounts/{}", added.id)), "named after the profile id, not the label");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(config_dir)?.permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "only the user may read the CLI's login");
    }
    assert_eq!(
        (added.credential_health.state.as_str(), added.credential.as_str()),
        ("missing", "missing"),
        "not signed in yet"
    );
    assert_eq!(engine.routing_status("subs").await?.gates.models[0].excluded[0].reason, "missing", "routing says why");

    // The CLI signed in: only the file's existence counts (its content is never read).
    std::fs::write(config_dir.join("auth.json"), b"not json at all")?;
    let shown = engine.profile_show("subs", "work").await?;
    assert_eq!(shown.credential_health.state.as_str(), "ok", "the credential file exists: ok");
    let report = engine.verify("subs", Some("work"), true, &|_| {}).await?;
    assert_eq!(
        report.results[0].outcome.as_str(),
        "verified",
        "models inferred, nothing sent: {}",
        report.results[0].detail
    );
    assert!(report.routing.gates.models[0].eligible.contains(&added.id), "a signed-in external profile counts");

    std::fs::remove_file(config_dir.join("auth.json"))?;
    let status = engine.routing_status("subs").await?;
    assert_eq!(status.gates.models[0].excluded[0].reason, "missing", "signed out: missing again, evidence or not");
    assert_eq!(status.profiles[0].credential_health.state.as_str(), "missing", "the status shows the health too");

    let home = engine.profile_add_kind("subs", labelled("home"), kind("external", Some("codex"), None), None).await?;
    let home_dir = home.config_dir.ok_or("home's directory")?;
    assert!(Path::new(&home_dir).is_dir(), "a second account, a second directory");
    engine.profile_remove("subs", "home").await?;
    assert!(!Path::new(&home_dir).exists(), "the directory goes with its profile");
    assert!(config_dir.is_dir(), "and only that one");
    engine.connection_remove("subs").await?;
    assert!(!config_dir.exists(), "removing the connection removes its profiles' directories");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_excluded_at_the_decision_clock_and_a_new_one_brings_it_back() -> TestResult {
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock(AtomicI64::new(T0)));
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    engine.connection_add(anthropic("subs"), None).await?;
    let expiry = T0 + 2 * DAY;
    let tok = engine
        .profile_add_kind(
            "subs",
            labelled("max-1"),
            kind("token", None, Some(rfc3339(expiry))),
            Some(Secret::new(TOKEN_CANARY)),
        )
        .await?;
    let other = engine
        .profile_add_kind(
            "subs",
            labelled("max-2"),
            kind("token", None, None),
            Some(Secret::new(format!("{TOKEN_CANARY}-2"))),
        )
        .await?;
    assert_eq!(tok.credential_health.state.as_str(), "expiring", "two days left: expiring");
    assert_eq!(other.credential_health.state.as_str(), "ok", "no known expiry: ok");
    let report = engine.verify("subs", None, false, &|_| {}).await?;
    for r in &report.results {
        assert_eq!(
            r.outcome.as_str(),
            "verified",
            "a token is not sent to verify (nothing listens there): {}",
            r.detail
        );
    }
    assert_eq!(report.routing.gates.models[0].eligible.len(), 2, "both tokens serve before the expiry");

    let router = Router::start(engine.clone());
    let snapshot = router.snapshot("subs").await?;
    let eligible_at = |now_ms| evaluate(&snapshot.profiles, "m1", &snapshot.criteria(now_ms), &NoCircuits);
    assert_eq!(eligible_at(expiry - 1).eligible().len(), 2, "one ms before expiry the snapshot has both");
    let after = eligible_at(expiry);
    assert_eq!(after.eligible().len(), 1, "the same snapshot, at expiry: the token is out without a reload");
    assert_eq!(after.excluded()[0].1, Exclusion::Expired, "because it expired");
    assert_eq!(snapshot.served_models(expiry), vec!["m1".to_string()], "the other token still serves m1");

    clock.0.store(expiry + 1, Ordering::SeqCst);
    let status = engine.routing_status("subs").await?;
    let excluded = &status.gates.models[0].excluded;
    assert_eq!(excluded.len(), 1, "only the expired token is out");
    assert_eq!(
        (excluded[0].label.as_str(), excluded[0].reason.as_str()),
        ("max-1", "expired"),
        "routing status says why"
    );
    let shown = status.profiles.iter().find(|p| p.id == tok.id).ok_or("the expired profile is still listed")?;
    assert_eq!(shown.credential_health.state.as_str(), "expired", "its health is expired");
    assert_eq!(shown.weight, 2, "it keeps its weight");

    let refused =
        engine.profile_rotate_until("subs", "max-1", Secret::new("sk-ant-oat01-new"), Some(&rfc3339(T0))).await;
    assert_eq!(refused.err().map(|e| e.code()), Some(ErrorCode::Invalid), "a new token cannot come already expired");
    let back = engine
        .profile_rotate_until("subs", "max-1", Secret::new("sk-ant-oat01-fresh-token"), Some(&rfc3339(T0 + 90 * DAY)))
        .await?;
    assert_eq!(
        (back.id.as_str(), back.weight, back.priority),
        (tok.id.as_str(), tok.weight, tok.priority),
        "same place"
    );
    assert_eq!(back.credential_health.state.as_str(), "ok", "a fresh token is ok");
    let report = engine.verify("subs", Some("max-1"), false, &|_| {}).await?;
    assert_eq!(report.routing.gates.models[0].eligible.len(), 2, "verified again, it serves again");
    router.flush().await;
    Ok(())
}

#[tokio::test]
async fn what_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine =
        Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), Arc::new(switchyard_engine::SystemClock)).await?;
    engine.connection_add(anthropic("subs"), None).await?;
    let code = |r: Result<_, EngineError>| r.err().map(|e| (e.code(), e.to_string()));
    let cases = [
        (kind("oauth", None, None), Some("sk-ant-oat01-a"), "an owned login takes no secret"),
        (kind("oauth", None, None), None, "and is for OpenAI connections only"),
        (kind("external", Some("claude-code"), None), Some("sk-ant-oat01-a"), "an external profile takes no secret"),
        (kind("external", None, None), None, "external needs its client"),
        (kind("token", None, None), None, "a token needs the token"),
        (kind("token", None, None), Some("sk-ant-api03-canary-key"), "an API key pasted as a token"),
        (kind("token", None, None), Some("sk-ant-oat01-canary with-space"), "a token with a space"),
        (kind("api_key", None, Some(rfc3339(T0 * 2))), Some("sk-a"), "an API key with an expiry"),
    ];
    for (k, secret, why) in cases {
        let got = code(engine.profile_add_kind("subs", labelled("x"), k, secret.map(Secret::new)).await);
        let (c, message) = got.ok_or(why)?;
        assert_eq!(c, ErrorCode::Invalid, "{why}: exit 2 ({message})");
        assert!(!message.contains("canary"), "{why}: the error never repeats the secret ({message})");
    }
    assert!(engine.profile_list("subs").await?.is_empty(), "nothing was added");
    let ext = engine.profile_add_kind("subs", labelled("e"), kind("external", Some("claude-code"), None), None).await?;
    let rotate = engine.profile_rotate("subs", &ext.label, Secret::new("sk-ant-oat01-x")).await;
    assert_eq!(rotate.err().map(|e| e.code()), Some(ErrorCode::Precondition), "an external profile signs in again");
    Ok(())
}
