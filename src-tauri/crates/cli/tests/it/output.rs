//! What people and scripts read (docs/interface.md): tables name profiles by label while
//! `--json` keeps the ids, `verify` exits 7 when an enabled key did not end verified (a key
//! the provider refuses, a provider that cannot be reached), and `routing status` names the
//! OS user who activated routing even when `USER` is not set.

use crate::common;

use std::path::Path;

use crate::common::{run, TestResult};
use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::Store;

const CANARY: &str = "sk-canary-cli-output-5e1c";

/// A connection's id and its profiles' (label, id) pairs.
struct Ids {
    connection: String,
    profiles: Vec<(String, String)>,
}

fn ids(d: &Path, slug: &str) -> Result<Ids, Box<dyn std::error::Error>> {
    let shown: Value = serde_json::from_str(&run(d, &["--json", "connection", "show", slug], None)?.stdout)?;
    let text = |v: &Value| v.as_str().map(str::to_string).ok_or("a string");
    let profiles = shown["profiles"].as_array().ok_or("profiles")?;
    let profiles = profiles.iter().map(|p| Ok((text(&p["label"])?, text(&p["id"])?))).collect::<Result<_, &str>>()?;
    Ok(Ids { connection: text(&shown["connection"]["id"])?, profiles })
}

/// Successful attempts of `profiles` (one each, in order, oldest first), each a prompt of 1000
/// tokens with 400 read from the cache.
fn attempts_of(connection: &str, profiles: &[&str]) -> Vec<AttemptRow> {
    let answered = AttemptRow {
        connection_id: connection.to_string(),
        reason: "swrr".into(),
        model: Some("m1".into()),
        status: Some(200),
        input_tokens: Some(1000),
        cache_read_tokens: Some(400),
        ..Default::default()
    };
    let at = |n: usize| 1_795_000_000_000 + i64::try_from(n).unwrap_or(0);
    let row = |(n, p): (usize, &&str)| AttemptRow {
        at_ms: at(n),
        turn: format!("t-{n}"),
        profile_id: p.to_string(),
        ..answered.clone()
    };
    profiles.iter().enumerate().map(row).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_name_profiles_by_label_and_json_keeps_the_ids() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    assert_eq!(common::add_legacy(d, "c", CANARY)?.code, 0, "connection added");
    assert_eq!(run(d, &["profile", "edit", "c", "primary", "--label", "team-key"], None)?.code, 0, "renamed");
    let spare = run(d, &["profile", "add", "c", "--label", "spare", "--secret-stdin"], Some(CANARY))?;
    assert_eq!(spare.code, 0, "second profile added: {}", spare.stderr);
    let Ids { connection, profiles } = ids(d, "c")?;
    let id_of = |label: &str| profiles.iter().find(|(l, _)| l == label).map(|(_, id)| id.clone()).unwrap_or_default();
    let (team, gone) = (id_of("team-key"), id_of("spare"));
    let store = Store::open(&d.join("switchyard.db")).await?;
    let rows = attempts_of(&connection, &[&team, &gone, &team]);
    attempts::insert_batch(&mut *store.acquire().await?, rows).await?;
    store.close().await;
    let removed = run(d, &["profile", "remove", "c", "spare"], None)?;
    assert_eq!(removed.code, 0, "the spare profile is removed; its ledger rows stay: {}", removed.stderr);

    for args in [["attempts", "c"], ["usage", "c"]] {
        let out = run(d, &args, None)?;
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        for label in ["team-key", "(removed)"] {
            assert!(out.stdout.contains(label), "{args:?} names profiles by label ({label}): {}", out.stdout);
        }
        for id in [&team, &gone] {
            assert!(!out.stdout.contains(id.as_str()), "no profile id in the {args:?} table: {}", out.stdout);
        }
    }
    let table = run(d, &["attempts", "c"], None)?;
    assert!(
        table.stdout.contains("profile team-key: 40.0 % (800 of 2000)"),
        "the cache lines under the attempts table name the label too: {}",
        table.stdout
    );

    let listed: Value = serde_json::from_str(&run(d, &["--json", "attempts", "c"], None)?.stdout)?;
    let listed = listed.as_array().ok_or("an array")?;
    let ids_seen: Vec<&str> = listed.iter().filter_map(|r| r["profile"].as_str()).collect();
    assert_eq!(ids_seen, [team.as_str(), gone.as_str(), team.as_str()], "attempts --json keeps the ids, newest first");
    assert!(listed.iter().all(|r| r.get("label").is_none()), "and carries no label (docs/interface.md)");
    let summed: Value = serde_json::from_str(&run(d, &["--json", "usage", "c"], None)?.stdout)?;
    let mut keys: Vec<&str> =
        summed["rows"].as_array().ok_or("rows")?.iter().filter_map(|r| r["key"].as_str()).collect();
    keys.sort_unstable();
    let mut want = [team.as_str(), gone.as_str()];
    want.sort_unstable();
    assert_eq!(keys, want, "usage --json rows are keyed by profile id");
    assert!(summed["rows"][0].get("label").is_none(), "usage --json rows carry no label");
    Ok(())
}

/// `connection add SLUG` (openai at `base`, model m1) with `secret` as its primary key.
fn add_openai(d: &Path, slug: &str, base: &str, secret: &str) -> Result<common::Run, Box<dyn std::error::Error>> {
    let args =
        ["connection", "add", slug, "--protocol", "openai", "--base-url", base, "--model", "m1", "--secret-stdin"];
    run(d, &args, Some(secret))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_exits_7_when_an_enabled_key_did_not_end_verified() -> TestResult {
    let mock = MockProvider::start().await?;
    let good = format!("{CANARY}-good");
    mock.set_key(&good, KeyScript::new(["m1"]));
    let refused = format!("{CANARY}-refused"); // unknown to the mock: 401
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = format!("{}/v1", mock.base_url());
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        format!("http://{}/v1", listener.local_addr()?)
    };
    assert_eq!(add_openai(d, "ok", &base, &good)?.code, 0, "ok added");
    assert_eq!(add_openai(d, "revoked", &base, &refused)?.code, 0, "revoked added");
    assert_eq!(add_openai(d, "down", &closed, &good)?.code, 0, "down added");

    let fine = run(d, &["verify", "ok"], None)?;
    assert_eq!(fine.code, 0, "every enabled key verified: exit 0: {}{}", fine.stdout, fine.stderr);

    let auth = run(d, &["verify", "revoked"], None)?;
    assert_eq!(auth.code, 7, "a key the provider refuses (401) must not exit 0: {}{}", auth.stdout, auth.stderr);
    assert!(auth.stdout.contains("auth_invalid"), "the report is printed as usual: {}", auth.stdout);
    assert!(auth.stderr.contains("primary"), "stderr names the key that is not verified: {}", auth.stderr);
    let auth_json = run(d, &["--json", "verify", "revoked"], None)?;
    assert_eq!(auth_json.code, 7, "--json too: {}", auth_json.stderr);
    let report: Value = serde_json::from_str(&auth_json.stdout)?;
    assert_eq!(report["results"][0]["outcome"], "auth_invalid", "stdout stays the verify report, not an error object");
    assert!(report.get("error").is_none(), "no error object: {report}");

    let network = run(d, &["verify", "down"], None)?;
    assert_eq!(
        network.code, 7,
        "every key ended `unverified [network]`: `verify down && …` must not go on: {}{}",
        network.stdout, network.stderr
    );
    assert!(network.stdout.contains("unverified") && network.stdout.contains("[network]"), "{}", network.stdout);

    let off = run(d, &["profile", "add", "ok", "--label", "off", "--secret-stdin"], Some(&refused))?;
    assert_eq!(off.code, 0, "{}", off.stderr);
    assert_eq!(run(d, &["profile", "edit", "ok", "off", "--disable"], None)?.code, 0, "disabled");
    let disabled = run(d, &["verify", "ok"], None)?;
    assert!(disabled.stdout.contains("auth_invalid"), "the disabled key is verified and refused: {}", disabled.stdout);
    assert_eq!(
        disabled.code, 0,
        "a disabled key does not route: its refusal does not fail verify: {}",
        disabled.stderr
    );

    for r in [&fine, &auth, &auth_json, &network, &disabled] {
        assert!(!r.stdout.contains("canary") && !r.stderr.contains("canary"), "no secret in verify output");
    }
    mock.shutdown().await?;
    Ok(())
}

/// `switchyard --data-dir DIR ARGS…` with no `USER`, `USERNAME` or `LOGNAME` in its
/// environment, as in many CI shells and service managers.
fn run_without_user(d: &Path, args: &[&str]) -> Result<common::Run, Box<dyn std::error::Error>> {
    let mut cmd = assert_cmd::Command::cargo_bin("switchyard")?;
    cmd.arg("--data-dir").arg(d).args(args).env_remove("USER").env_remove("USERNAME").env_remove("LOGNAME");
    let out = cmd.output()?;
    Ok(common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_status_names_the_os_user_who_activated() -> TestResult {
    let mock = MockProvider::start().await?;
    let (a, b) = (format!("{CANARY}-a"), format!("{CANARY}-b"));
    mock.set_key(&a, KeyScript::new(["m1"]));
    mock.set_key(&b, KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    assert_eq!(add_openai(d, "c", &format!("{}/v1", mock.base_url()), &a)?.code, 0, "connection added");
    assert_eq!(run(d, &["profile", "add", "c", "--label", "b", "--secret-stdin"], Some(&b))?.code, 0);
    assert_eq!(run(d, &["verify", "c"], None)?.code, 0, "both keys verified");
    let activated = run_without_user(d, &["routing", "activate", "c", "balanced"])?;
    assert_eq!(activated.code, 0, "{}", activated.stderr);

    let status: Value = serde_json::from_str(&run(d, &["--json", "routing", "status", "c"], None)?.stdout)?;
    let by = status["activated_by"].as_str().unwrap_or_default().to_string();
    assert!(by.starts_with("cli:") && by.len() > 4, "the CLI and a user: {by}");
    assert_ne!(by, "cli:unknown", "the OS knows who runs the command even without USER in the environment");
    let me = std::process::Command::new("id").arg("-un").output()?;
    if me.status.success() {
        let me = String::from_utf8_lossy(&me.stdout).trim().to_string();
        assert_eq!(by, format!("cli:{me}"), "the user name the OS has for this uid");
    }
    let human = run(d, &["routing", "status", "c"], None)?;
    assert!(human.stdout.contains(&format!("by {by}")), "people see it too: {}", human.stdout);
    mock.shutdown().await?;
    Ok(())
}
