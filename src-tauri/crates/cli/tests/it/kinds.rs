//! Profile kinds through the `switchyard` binary (docs/interface.md, "Profile kinds"): a token
//! pasted on stdin is listed with its kind and health and its canary appears nowhere — not in
//! the data dir's files, any output, nor the export; an external profile gets an owner-only
//! config directory and reads `missing` until `profile login` runs the official CLI (a stub
//! here, through `SWITCHYARD_CLAUDE_BIN`) with `CLAUDE_CONFIG_DIR` pointing at it; an expired
//! token drops out of routing and `routing status` says why; `--kind oauth` is refused on an
//! Anthropic connection.
//! Run under `scripts/with-keychain`.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::common::{run, run_env, Run, TestResult};

const CANARY: &str = "sk-ant-oat01-canary-5d2f8e1b7a3c9046";

fn ok(r: Run, what: &str) -> Result<Run, Box<dyn std::error::Error>> {
    if r.code != 0 {
        return Err(format!("{what} exited {}: {}{}", r.code, r.stderr, r.stdout).into());
    }
    Ok(r)
}

fn json(r: &Run) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(serde_json::from_str(&r.stdout)?)
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or_default()
}

/// RFC 3339 for unix second `at`.
fn rfc3339_at(at: i64) -> String {
    jiff::Timestamp::from_second(at).map(|t| t.to_string()).unwrap_or_default()
}

/// RFC 3339 for `secs_from_now` seconds from now.
fn rfc3339_in(secs_from_now: i64) -> String {
    rfc3339_at(now_secs() + secs_from_now)
}

/// Every byte of every file under `dir` (DB, WAL, lock, account directories).
fn files_under(dir: &Path, out: &mut Vec<u8>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.extend(bytes);
        }
    }
}

/// An Anthropic connection without a key, nothing listening at its base URL (verification of
/// a subscription credential sends nothing).
fn add_subs(dir: &Path, slug: &str) -> TestResult {
    let args =
        ["connection", "add", slug, "--protocol", "anthropic", "--base-url", "http://127.0.0.1:9", "--model", "m1"];
    ok(run(dir, &args, None)?, "connection add")?;
    Ok(())
}

#[test]
fn a_token_is_listed_with_kind_and_health_and_its_canary_appears_nowhere() -> TestResult {
    let dir = tempfile::tempdir()?;
    add_subs(dir.path(), "subs")?;
    let expires = rfc3339_in(30 * 24 * 3600);
    let mut outputs = Vec::new();
    let added = run(
        dir.path(),
        &["profile", "add", "subs", "--label", "max-1", "--kind", "token", "--expires", &expires, "--secret-stdin"],
        Some(&format!("{CANARY}\n")),
    )?;
    outputs.push(ok(added, "profile add --kind token")?);
    let listed = ok(run(dir.path(), &["--json", "profile", "list", "subs"], None)?, "profile list --json")?;
    let rows = json(&listed)?;
    let row = &rows[0];
    assert_eq!(row["kind"], "token", "the kind is listed: {row}");
    assert_eq!(row["client"], "claude-code", "a token is Claude Code's by default");
    assert_eq!(row["credential_health"]["state"], "ok", "thirty days left: ok");
    assert_eq!(row["credential_health"]["reason"], Value::Null, "a plain ok says nothing more");
    let shown_expiry = row["credential_health"]["expires_at"].as_str().unwrap_or_default();
    assert_eq!(&shown_expiry[..19], &expires[..19], "the expiry is shown (RFC 3339 UTC)");
    assert_eq!(row["config_dir"], Value::Null, "only external profiles have a config directory");
    outputs.push(listed);
    let text = ok(run(dir.path(), &["profile", "list", "subs"], None)?, "profile list")?;
    let header = text.stdout.lines().next().unwrap_or_default();
    assert!(header.contains("KIND") && header.contains("HEALTH"), "the table has KIND and HEALTH columns: {header}");
    assert!(text.stdout.contains("token") && text.stdout.contains("ok until"), "and fills them: {}", text.stdout);
    outputs.push(text);
    outputs.push(ok(run(dir.path(), &["verify", "subs"], None)?, "verify")?);
    outputs.push(ok(run(dir.path(), &["routing", "status", "subs"], None)?, "routing status")?);
    let export = ok(run(dir.path(), &["export"], None)?, "export")?;
    assert!(export.stdout.contains("\"kind\": \"token\""), "the export carries the kind: {}", export.stdout);
    outputs.push(export);

    for r in &outputs {
        assert!(!r.stdout.contains(CANARY) && !r.stderr.contains(CANARY), "no output repeats the token");
        assert!(!r.stdout.contains("canary"), "not even part of it: {}", r.stdout);
    }
    let mut bytes = Vec::new();
    files_under(dir.path(), &mut bytes);
    assert!(!bytes.is_empty(), "the data dir has files to search");
    assert!(!bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()), "the token is in no file of the data dir");
    Ok(())
}

#[test]
fn an_external_profile_signs_in_with_the_official_cli_in_its_own_directory() -> TestResult {
    let dir = tempfile::tempdir()?;
    add_subs(dir.path(), "subs")?;
    let refused = run(
        dir.path(),
        &[
            "profile",
            "add",
            "subs",
            "--label",
            "work",
            "--kind",
            "external",
            "--client",
            "claude-code",
            "--secret-stdin",
        ],
        Some(&format!("{CANARY}\n")),
    )?;
    assert_eq!(refused.code, 2, "an external profile takes no secret: {}", refused.stderr);
    let added = ok(
        run(
            dir.path(),
            &["--json", "profile", "add", "subs", "--label", "work", "--kind", "external", "--client", "claude-code"],
            None,
        )?,
        "profile add --kind external",
    )?;
    let view = json(&added)?;
    assert_eq!((view["kind"].as_str(), view["client"].as_str()), (Some("external"), Some("claude-code")), "{view}");
    assert_eq!(view["credential_health"]["state"], "missing", "not signed in yet");
    let config_dir = view["config_dir"].as_str().ok_or("an external profile shows its config_dir")?.to_string();
    let meta = std::fs::metadata(&config_dir)?;
    assert!(meta.is_dir(), "the config directory exists");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o700, "owner-only, like the data dir");
    }

    // A stub of Claude Code: records what it got, fails when asked to, else "signs in".
    let stub = dir.path().join("claude-stub");
    let log = dir.path().join("stub.log");
    std::fs::write(
        &stub,
        "#!/bin/sh\nprintf '%s\\n%s\\n' \"$CLAUDE_CONFIG_DIR\" \"$*\" > \"$STUB_LOG\"\necho 'stub: browser flow done'\n\
         [ -n \"$STUB_FAIL\" ] && exit 3\necho '{}' > \"$CLAUDE_CONFIG_DIR/.credentials.json\"\n",
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755))?;
    }
    let stub_path = stub.to_string_lossy().to_string();
    let log_path = log.to_string_lossy().to_string();
    let env = [("SWITCHYARD_CLAUDE_BIN", stub_path.as_str()), ("STUB_LOG", log_path.as_str())];

    let failed =
        run_env(dir.path(), &["profile", "login", "subs", "work"], None, &[env[0], env[1], ("STUB_FAIL", "1")])?;
    assert_eq!(failed.code, 5, "a login that failed is a precondition error: {}", failed.stderr);
    assert!(failed.stderr.contains("exited with 3"), "and says how it ended: {}", failed.stderr);
    let still = json(&ok(run(dir.path(), &["--json", "profile", "list", "subs"], None)?, "list")?)?;
    assert_eq!(still[0]["credential_health"]["state"], "missing", "still not signed in");

    let signed = ok(
        run_env(
            dir.path(),
            &["--json", "profile", "login", "subs", "work", "--", "--email", "me@example.com"],
            None,
            &env,
        )?,
        "login",
    )?;
    let view = json(&signed)?;
    assert_eq!(view["credential_health"]["state"], "ok", "the CLI's credential file exists: ok ({})", signed.stdout);
    assert!(
        signed.stderr.contains("stub: browser flow done"),
        "the CLI's own output reaches the terminal (stderr with --json)"
    );
    let seen = std::fs::read_to_string(&log)?;
    let mut lines = seen.lines();
    assert_eq!(
        lines.next(),
        Some(config_dir.as_str()),
        "the stub ran with CLAUDE_CONFIG_DIR = the profile's directory"
    );
    assert_eq!(
        lines.next(),
        Some("auth login --email me@example.com"),
        "Claude Code's own login, then the extra arguments"
    );
    let listed = json(&ok(run(dir.path(), &["--json", "profile", "list", "subs"], None)?, "list")?)?;
    assert_eq!(listed[0]["credential_health"]["state"], "ok", "profile list agrees");

    let token_login = {
        let args = ["profile", "add", "subs", "--label", "tok", "--kind", "token", "--secret-stdin"];
        ok(run(dir.path(), &args, Some(&format!("{CANARY}\n")))?, "add token")?;
        run_env(dir.path(), &["profile", "login", "subs", "tok"], None, &env)?
    };
    assert_eq!(token_login.code, 5, "a token profile does not sign in (paste a new token): {}", token_login.stderr);
    Ok(())
}

#[test]
fn an_expired_token_is_not_eligible_and_routing_status_says_why() -> TestResult {
    let dir = tempfile::tempdir()?;
    add_subs(dir.path(), "subs")?;
    // Whole seconds: the expiry is some 6 s ahead, enough for the adds, verify and a status.
    let expiry = now_secs() + 6;
    let soon = rfc3339_at(expiry);
    for (label, expires) in [("max-1", Some(soon.as_str())), ("max-2", None)] {
        let mut args = vec!["profile", "add", "subs", "--label", label, "--kind", "token", "--secret-stdin"];
        if let Some(at) = expires {
            args.extend(["--expires", at]);
        }
        ok(run(dir.path(), &args, Some(&format!("{CANARY}-{label}\n")))?, "add token")?;
    }
    ok(run(dir.path(), &["verify", "subs"], None)?, "verify (sends nothing)")?;
    let before = json(&ok(run(dir.path(), &["--json", "routing", "status", "subs"], None)?, "status")?)?;
    assert_eq!(before["gates"]["models"][0]["eligible"].as_array().map(Vec::len), Some(2), "both serve: {before}");
    let expiring = before["profiles"][0]["credential_health"]["state"].as_str();
    assert_eq!(expiring, Some("expiring"), "seconds from expiry it is expiring");

    while now_secs() <= expiry {
        std::thread::sleep(Duration::from_millis(200));
    }
    let after = json(&ok(run(dir.path(), &["--json", "routing", "status", "subs"], None)?, "status")?)?;
    let model = &after["gates"]["models"][0];
    assert_eq!(model["eligible"].as_array().map(Vec::len), Some(1), "the expired token no longer counts: {after}");
    assert_eq!(model["excluded"][0]["label"], "max-1", "it is the excluded one");
    assert_eq!(model["excluded"][0]["reason"], "expired", "and the reason is its expiry");
    assert_eq!(after["profiles"][0]["credential_health"]["state"], "expired", "its health says so too");
    let text = ok(run(dir.path(), &["routing", "status", "subs"], None)?, "status")?;
    assert!(text.stdout.contains("max-1 (expired)"), "the text names the reason: {}", text.stdout);
    assert!(text.stdout.contains("the token has expired"), "and what to do: {}", text.stdout);

    let id = after["profiles"][0]["id"].as_str().unwrap_or_default().to_string();
    let later = rfc3339_in(90 * 24 * 3600);
    let rotated = run(
        dir.path(),
        &["--json", "profile", "rotate", "subs", "max-1", "--expires", &later, "--secret-stdin"],
        Some("sk-ant-oat01-a-fresh-one\n"),
    )?;
    let view = json(&ok(rotated, "rotate")?)?;
    assert_eq!(
        (view["id"].as_str(), view["credential_health"]["state"].as_str()),
        (Some(id.as_str()), Some("ok")),
        "same profile, ok"
    );
    ok(run(dir.path(), &["verify", "subs", "max-1"], None)?, "verify")?;
    let back = json(&ok(run(dir.path(), &["--json", "routing", "status", "subs"], None)?, "status")?)?;
    assert_eq!(back["gates"]["models"][0]["eligible"].as_array().map(Vec::len), Some(2), "a new token brings it back");
    Ok(())
}

#[test]
fn oauth_is_for_openai_connections_only() -> TestResult {
    let dir = tempfile::tempdir()?;
    add_subs(dir.path(), "subs")?;
    let r = run(dir.path(), &["profile", "add", "subs", "--label", "o", "--kind", "oauth"], None)?;
    assert_eq!(r.code, 2, "a usage error: {}", r.stderr);
    assert!(r.stderr.contains("OpenAI connections only"), "it says so: {}", r.stderr);
    let bad = run(
        dir.path(),
        &["profile", "add", "subs", "--label", "t", "--kind", "token", "--secret-stdin"],
        Some("sk-ant-api03-canary\n"),
    )?;
    assert_eq!(bad.code, 2, "an API key pasted as a token is refused: {}", bad.stderr);
    assert!(!bad.stderr.contains("canary"), "without repeating it: {}", bad.stderr);
    Ok(())
}
