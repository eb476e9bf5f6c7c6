//! `store copy --to postgres://…`: a keychain data dir (the desktop's SQLite store — its commands
//! run without the suite's Postgres mapping) moved onto an empty team store through the binary
//! (runs under `scripts/with-postgres`, skipped without SWITCHYARD_TEST_PG). The team store then
//! holds the same profiles (ids, weights, evidence: balanced routing stays active), prices and a
//! key fee (REAL columns), a fallback chain, a pool, the ledger and the relay users; a replica on
//! it serves with the copied keys, which are sealed (absent from `pg_dump`); an official-CLI
//! login and an owned login are not copied (the owned one's tokens appear nowhere on the team
//! store); a second copy into the now non-empty store is refused and writes nothing.

use std::process::Command;

use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider, OauthConfig};

use crate::common::{post_messages, run_sqlite, serve_with, TestResult};
use crate::store_postgres::{database, master_key, run_on};

const KEY_A: &str = "sk-canary-copy-a-51f0";
const KEY_B: &str = "sk-canary-copy-b-8e2c";
const LOGIN: &str = "canary-copy-login-";

fn json(out: &str) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(serde_json::from_str(out).map_err(|e| format!("{e}: {out}"))?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keychain_data_dir_moves_onto_an_empty_team_store_with_its_keys_sealed() -> TestResult {
    let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return Ok(()) };
    let url = database(&server, "sy_cli_store_copy")?;
    let mock = MockProvider::start().await?;
    mock.set_key(KEY_A, KeyScript::new(["m1"]));
    mock.set_key(KEY_B, KeyScript::new(["m1"]));
    mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-copy".into(),
        token_prefix: LOGIN.into(),
        ..Default::default()
    });
    let (desk, team, keys) = (tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?);
    let key = master_key(keys.path())?;
    let ok = |args: &[&str], stdin: Option<&str>| -> Result<String, Box<dyn std::error::Error>> {
        let r = run_sqlite(desk.path(), args, stdin)?;
        assert_eq!(r.code, 0, "{args:?} on the desktop data dir: {}", r.stderr);
        Ok(r.stdout)
    };
    let base = mock.base_url();
    ok(
        &["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"],
        Some(KEY_A),
    )?;
    ok(&["profile", "add", "c", "--label", "two", "--weight", "3", "--secret-stdin"], Some(KEY_B))?;
    ok(&["profile", "add", "c", "--label", "cx", "--kind", "external", "--client", "claude-code"], None)?;
    ok(&["verify", "c", "primary"], None)?;
    ok(&["verify", "c", "two"], None)?;
    ok(&["routing", "activate", "c", "balanced"], None)?;
    ok(&["prices", "set", "m1", "--input", "3", "--output", "15"], None)?;
    ok(&["prices", "fee", "c", "two", "--monthly", "20"], None)?;
    ok(
        &["connection", "add", "d", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"],
        Some(KEY_B),
    )?;
    ok(&["routing", "fallback", "c", "d"], None)?;
    ok(&["pool", "add", "team", "--protocol", "anthropic", "--member", "c:2", "--member", "d"], None)?;
    ok(
        &["connection", "add", "ox", "--protocol", "openai", "--base-url", &format!("{base}/v1"), "--model", "gpt-5"],
        None,
    )?;
    ok(&["settings", "oauth-issuer", &base], None)?;
    ok(&["profile", "login", "ox", "owned", "--kind", "oauth"], None)?;
    let alice = json(&ok(&["--json", "relay", "users", "add", "alice"], None)?)?["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut serve = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    serve.arg("--data-dir").arg(desk.path()).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    serve.env_remove("SWITCHYARD_TEST_PG");
    let relay = serve_with(serve)?;
    let answer = post_messages(&relay.addr, &alice, "")?;
    assert!(relay.stop()?, "the desktop relay stops cleanly");
    assert!(answer.starts_with("HTTP/1.1 200"), "served on the desktop: {answer:.120}");
    let before = json(&ok(&["--json", "profile", "list", "c"], None)?)?;

    let to_file = run_sqlite(
        desk.path(),
        &["store", "copy", "--to", "/tmp/other.db", "--master-key-file", &key.display().to_string()],
        None,
    )?;
    assert_eq!(to_file.code, 2, "a copy goes to a postgres:// store: {}", to_file.stderr);
    assert!(to_file.stderr.contains("postgres://"), "refused by the copy, saying where it goes: {}", to_file.stderr);
    assert!(desk.path().join("switchyard.db").exists(), "the desktop data dir is an SQLite store");

    let key_arg = key.display().to_string();
    let copy =
        run_sqlite(desk.path(), &["--json", "store", "copy", "--to", &url, "--master-key-file", &key_arg], None)?;
    assert_eq!(copy.code, 0, "copied: {}", copy.stderr);
    for text in [&copy.stdout, &copy.stderr] {
        assert!(!text.contains(KEY_A) && !text.contains(KEY_B) && !text.contains(&alice), "no secret printed: {text}");
    }
    assert!(copy.stderr.contains("copying attempts"), "progress per table on stderr: {}", copy.stderr);
    let report = json(&copy.stdout)?;
    assert_eq!(report["secrets"], 3, "the keys of c (2) and d (1) sealed into the team store: {report}");
    let attempts = report["tables"].as_array().and_then(|t| t.iter().find(|r| r[0] == "attempts")).cloned();
    assert_eq!(attempts.map(|r| r[1].clone()), Some(Value::from(1)), "the ledger row copied: {report}");
    let again: Vec<&str> = report["sign_in_again"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(again, ["cx", "owned"], "the official-CLI login and the owned login are not copied: {report}");
    assert!(!report["target"].as_str().unwrap_or_default().is_empty(), "the report names the target");

    // The team store, read from another machine's data dir.
    let on_team = |args: &[&str]| -> Result<Value, Box<dyn std::error::Error>> {
        let r = run_on(team.path(), &url, Some(&key), args, None)?;
        assert_eq!(r.code, 0, "{args:?} on the team store: {}", r.stderr);
        json(&r.stdout)
    };
    let after = on_team(&["--json", "profile", "list", "c"])?;
    let ids = |v: &Value| -> Vec<(Value, Value, Value)> {
        v.as_array()
            .map(|ps| ps.iter().map(|p| (p["id"].clone(), p["label"].clone(), p["weight"].clone())).collect())
            .unwrap_or_default()
    };
    assert_eq!(ids(&after), ids(&before), "the same profiles with their ids and weights");
    let status = on_team(&["--json", "routing", "status", "c"])?;
    assert_eq!(
        (status["mode"].as_str(), status["state"].as_str()),
        (Some("balanced"), Some("active")),
        "evidence came along: {status}"
    );
    let users = on_team(&["--json", "relay", "users", "list"])?;
    assert_eq!(users[0]["name"], "alice", "the relay users: {users}");
    assert_eq!(status["fallback"]["chain"][0]["slug"], "d", "the fallback chain: {status}");
    let prices = on_team(&["--json", "prices"])?.to_string();
    assert!(
        prices.contains("\"m1\"") && prices.contains("15") && prices.contains("20"),
        "prices and the fee: {prices}"
    );
    let pools = on_team(&["--json", "pool", "list"])?.to_string();
    assert!(pools.contains("\"team\""), "the pool: {pools}");
    let owned = on_team(&["--json", "profile", "list", "ox"])?;
    assert_eq!(
        owned[0]["credential_health"]["state"], "missing",
        "the owned login arrives without its tokens: {owned}"
    );

    // A replica on the team store serves with the copied keys and alice's token.
    let hits_before = mock.hits(KEY_A) + mock.hits(KEY_B);
    let mut replica = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    replica.arg("--data-dir").arg(team.path()).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    replica.env("SWITCHYARD_STORE", &url).env("SWITCHYARD_MASTER_KEY_FILE", &key);
    let relay = serve_with(replica)?;
    let answer = post_messages(&relay.addr, &alice, "")?;
    assert!(relay.stop()?, "the replica stops cleanly");
    assert!(answer.starts_with("HTTP/1.1 200"), "the team relay serves: {answer:.160}");
    assert_eq!(mock.hits(KEY_A) + mock.hits(KEY_B), hits_before + 1, "with a key opened from the sealed vault");
    let rows = on_team(&["--json", "attempts", "c"])?;
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "the new row is written after the copied one: {rows}");

    let dump = Command::new("pg_dump").args(["--dbname", &url]).output()?;
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(dump.contains("sealed_secrets"), "the dump is of the team store");
    assert!(!dump.contains(KEY_A) && !dump.contains(KEY_B) && !dump.contains(&alice), "no key or token in pg_dump");
    assert!(!dump.contains(LOGIN), "and no owned login's token");

    let again = run_sqlite(desk.path(), &["store", "copy", "--to", &url, "--master-key-file", &key_arg], None)?;
    assert_eq!(again.code, 5, "a second copy is refused: {}", again.stderr);
    assert!(again.stderr.contains("not empty"), "saying why: {}", again.stderr);
    let rows = on_team(&["--json", "attempts", "c"])?;
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "and wrote nothing");
    mock.shutdown().await?;
    Ok(())
}

/// A team store a replica has served from (its own settings and relay token) still takes a copy
/// sealed under the same master key, not under another; a database holding another
/// application's tables is refused before anything of Switchyard is created in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_takes_a_store_a_replica_opened_but_not_another_key_or_another_application() -> TestResult {
    let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return Ok(()) };
    let (desk, replica, keys, other_keys) =
        (tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?);
    let (key, other_key) = (master_key(keys.path())?, master_key(other_keys.path())?);
    std::fs::write(&other_key, crate::common::master_key_hex(0xef))?;
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", "http://127.0.0.1:9", "--secret-stdin"];
    let made = run_sqlite(desk.path(), &add, Some(KEY_A))?;
    assert_eq!(made.code, 0, "{}", made.stderr);
    let copy_to = |url: &str, key: &std::path::Path| {
        run_sqlite(desk.path(), &["store", "copy", "--to", url, "--master-key-file", &key.display().to_string()], None)
    };

    // A replica made its relay token there, sealed under the team's key: still empty enough.
    let opened = database(&server, "sy_cli_copy_opened")?;
    let token = run_on(replica.path(), &opened, Some(&key), &["relay", "token"], None)?;
    assert_eq!(token.code, 0, "a replica's own relay token on the team store: {}", token.stderr);
    let copied = copy_to(&opened, &key)?;
    assert_eq!(copied.code, 0, "a store a replica opened takes the copy: {}", copied.stderr);
    let listed = run_on(replica.path(), &opened, Some(&key), &["--json", "connection", "list"], None)?;
    assert!(listed.stdout.contains("\"c\""), "copied: {}", listed.stdout);

    // The same, but sealed under another key: the copy would leave the store unreadable.
    let other = database(&server, "sy_cli_copy_other_key")?;
    let token = run_on(replica.path(), &other, Some(&other_key), &["relay", "token"], None)?;
    assert_eq!(token.code, 0, "{}", token.stderr);
    let refused = copy_to(&other, &key)?;
    assert_eq!(refused.code, 5, "another master key is refused: {}", refused.stderr);
    assert!(refused.stderr.contains("master key"), "saying which: {}", refused.stderr);

    // Another application's database: refused, and no Switchyard table appears in it.
    let foreign = database(&server, "sy_cli_copy_foreign")?;
    let made = Command::new("psql").arg(&foreign).args(["-q", "-c", "CREATE TABLE orders (id int)"]).output()?;
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let refused = copy_to(&foreign, &key)?;
    assert_eq!(refused.code, 5, "a database of another application is refused: {}", refused.stderr);
    assert!(refused.stderr.contains("not a Switchyard store"), "saying why: {}", refused.stderr);
    let tables = Command::new("psql")
        .arg(&foreign)
        .args([
            "-tAc",
            "SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = 'public'",
        ])
        .output()?;
    assert_eq!(String::from_utf8_lossy(&tables.stdout).trim(), "orders", "nothing was migrated into it");
    Ok(())
}
