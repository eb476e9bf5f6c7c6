//! CLI journeys over a temp data dir with the real keychain (run under `scripts/with-keychain`).

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-7f3a9c1e5b2d4f60";

/// Everything a run printed, kept to grep for the canary.
#[derive(Default)]
struct Transcript(String);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn switchyard(dir: &Path) -> Result<Command, Box<dyn std::error::Error>> {
    let mut cmd = Command::cargo_bin("switchyard")?;
    cmd.arg("--data-dir").arg(dir).env("SWITCHYARD_LOG", "debug");
    Ok(cmd)
}

fn run(t: &mut Transcript, mut cmd: Command) -> Run {
    let out = cmd.output();
    let (code, stdout, stderr) = match out {
        Ok(o) => (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        Err(e) => (-1, String::new(), e.to_string()),
    };
    t.0.push_str(&stdout);
    t.0.push_str(&stderr);
    Run { code, stdout, stderr }
}

/// The user-facing error lines (debug logs are on, to grep them for the canary too).
fn error_lines(r: &Run) -> Vec<&str> {
    r.stderr.lines().filter(|l| l.starts_with("error:") || l.starts_with("error[")).collect()
}

fn json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or(Value::Null)
}

/// Every byte of every file under `dir` (DB, WAL, anything else) as lossy text.
fn all_files_text(dir: &Path) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                text.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }
    text
}

#[test]
fn full_journey_never_leaks_the_canary() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut t = Transcript::default();

    let mut add = switchyard(dir.path())?;
    add.args([
        "--json",
        "connection",
        "add",
        "main",
        "--protocol",
        "openai",
        "--base-url",
        "https://api.example.com/v1/",
    ])
    .args(["--model", "gpt-a", "--model", "gpt-b", "--header", "OpenAI-Organization: org-1", "--secret-stdin"])
    .write_stdin(format!("{CANARY}-primary\n"));
    let r = run(&mut t, add);
    assert_eq!(r.code, 0, "legacy connection add succeeds: {}", r.stderr);
    let created = json(&r);
    assert_eq!(created["connection"]["routing_mode"], "legacy", "a new connection starts in legacy mode");
    assert_eq!(created["profiles"][0]["primary"], true, "the key becomes the primary profile");
    assert_eq!(created["connection"]["base_url"], "https://api.example.com/v1", "the base URL is normalised");

    for (label, weight) in [("second", "2"), ("third", "3")] {
        let mut add = switchyard(dir.path())?;
        add.args(["--json", "profile", "add", "main", "--label", label, "--weight", weight, "--secret-env", "SY_KEY"])
            .env("SY_KEY", format!("{CANARY}-{label}"));
        let r = run(&mut t, add);
        assert_eq!(r.code, 0, "profile add {label} succeeds: {}", r.stderr);
        assert_eq!(json(&r)["weight"].as_i64(), weight.parse().ok(), "the weight is stored");
    }

    let mut list = switchyard(dir.path())?;
    list.args(["--json", "profile", "list", "main"]);
    let r = run(&mut t, list);
    let profiles = json(&r);
    assert_eq!(profiles.as_array().map(Vec::len), Some(3), "three profiles listed");
    assert!(
        profiles.as_array().into_iter().flatten().all(|p| p["credential"] == "present"),
        "every secret is in the keychain"
    );
    let rev = profiles[1]["revision"].as_i64().unwrap_or_default();

    let mut edit = switchyard(dir.path())?;
    edit.args(["profile", "edit", "main", "second", "--weight", "5", "--if-revision"]).arg((rev + 1).to_string());
    let r = run(&mut t, edit);
    assert_eq!(r.code, 3, "a stale --if-revision exits 3: {}", r.stderr);
    assert_eq!(error_lines(&r).len(), 1, "one-line error: {}", r.stderr);

    let mut edit = switchyard(dir.path())?;
    edit.args(["--json", "profile", "edit", "main", "second", "--weight", "5", "--if-revision"]).arg(rev.to_string());
    let r = run(&mut t, edit);
    assert_eq!(r.code, 0, "the current revision is accepted: {}", r.stderr);
    assert_eq!(json(&r)["weight"], 5, "the edit took effect");

    let mut rotate = switchyard(dir.path())?;
    rotate
        .args(["--json", "profile", "rotate", "main", "third", "--secret-stdin"])
        .write_stdin(format!("{CANARY}-rotated"));
    let r = run(&mut t, rotate);
    assert_eq!(r.code, 0, "rotation succeeds: {}", r.stderr);
    assert_eq!(json(&r)["credential_revision"], 2, "rotation bumps the credential revision");

    let mut remove = switchyard(dir.path())?;
    remove.args(["profile", "remove", "main", "third"]);
    let r = run(&mut t, remove);
    assert_eq!(r.code, 0, "removing a secondary profile succeeds: {}", r.stderr);

    let mut remove_primary = switchyard(dir.path())?;
    remove_primary.args(["profile", "remove", "main", "primary"]);
    let r = run(&mut t, remove_primary);
    assert_eq!(r.code, 5, "removing the primary is a failed precondition: {}", r.stderr);
    assert!(r.stderr.contains("--primary"), "the message says how to promote another: {}", r.stderr);

    let mut show = switchyard(dir.path())?;
    show.args(["connection", "show", "main"]);
    let r = run(&mut t, show);
    assert!(r.stdout.contains("second") && !r.stdout.contains("third"), "human show lists what is left: {}", r.stdout);

    assert!(!t.0.contains("canary"), "the canary appeared in CLI output");
    let files = all_files_text(dir.path());
    assert!(files.contains("switchyard.") && !files.is_empty(), "the data dir holds the database");
    assert!(!files.contains("canary"), "the canary appeared in a file under the data dir");
    Ok(())
}

fn state(dir: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let mut show = switchyard(dir)?;
    show.args(["--json", "connection", "show", "main"]);
    let out = show.output()?;
    let mut list = switchyard(dir)?;
    list.args(["--json", "connection", "list"]);
    let listed = list.output()?;
    Ok(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&listed.stdout)))
}

#[test]
fn bad_input_names_the_field_exits_right_and_changes_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut t = Transcript::default();
    let mut add = switchyard(dir.path())?;
    add.args([
        "connection",
        "add",
        "main",
        "--protocol",
        "openai",
        "--base-url",
        "https://api.example.com",
        "--secret-env",
        "K",
    ])
    .env("K", CANARY);
    assert_eq!(run(&mut t, add).code, 0, "seed connection");
    let before = state(dir.path())?;

    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["connection", "add", "x", "--protocol", "vertex", "--base-url", "https://a"], 2, "protocol"),
        (vec!["connection", "add", "x", "--protocol", "openai", "--base-url", "not a url"], 2, "base_url"),
        (
            vec!["connection", "add", "x", "--protocol", "openai", "--base-url", "https://a", "--header", "nocolon"],
            2,
            "header",
        ),
        (vec!["connection", "add", "main", "--protocol", "openai", "--base-url", "https://a"], 3, "slug"),
        (vec!["profile", "add", "main", "--label", "w", "--weight", "0", "--secret-env", "K"], 2, "weight"),
        (vec!["profile", "add", "main", "--label", "primary", "--secret-env", "K"], 3, "label"),
        (vec!["profile", "edit", "main", "ghost", "--weight", "2"], 4, "profile"),
        (vec!["profile", "edit", "main", "primary", "--weight", "2", "--if-revision", "99"], 3, "revision"),
        (vec!["connection", "edit", "main", "--base-url", "https://b", "--if-revision", "99"], 3, "revision"),
        (vec!["connection", "show", "nope"], 4, "connection"),
        (vec!["profile", "add", "main", "--label", "nosecret"], 2, "secret"),
    ];
    for (args, code, field) in cases {
        let mut cmd = switchyard(dir.path())?;
        cmd.args(&args).env("K", CANARY);
        let r = run(&mut t, cmd);
        assert_eq!(r.code, code, "{args:?} must exit {code}: {}", r.stderr);
        let errors = error_lines(&r);
        assert_eq!(errors.len(), 1, "{args:?}: the error is one line: {}", r.stderr);
        assert!(errors[0].contains(field), "{args:?}: the error names '{field}': {}", errors[0]);
    }
    assert_eq!(state(dir.path())?, before, "refused commands changed the stored state");
    assert!(!t.0.contains("canary"), "the canary appeared in error output");
    Ok(())
}

#[test]
fn keychain_unavailable_exits_6_and_creates_no_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut t = Transcript::default();
    let mut add = switchyard(dir.path())?;
    add.args([
        "connection",
        "add",
        "main",
        "--protocol",
        "openai",
        "--base-url",
        "https://api.example.com",
        "--secret-stdin",
    ])
    .write_stdin(CANARY)
    .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/switchyard-test-bus")
    .env_remove("DISPLAY");
    let r = run(&mut t, add);
    assert_eq!(r.code, 6, "no keychain must exit 6: {}", r.stderr);
    assert!(r.stderr.contains("keychain"), "the message says the keychain is the problem: {}", r.stderr);
    let mut list = switchyard(dir.path())?;
    list.args(["--json", "connection", "list"]);
    let r = run(&mut t, list);
    assert_eq!(json(&r), serde_json::json!([]), "no connection row was created");
    assert!(!t.0.contains("canary"), "the canary appeared in output");
    assert!(!all_files_text(dir.path()).contains("canary"), "no plain-file fallback holds the secret");
    Ok(())
}

#[test]
fn settings_are_validated_and_stored() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut t = Transcript::default();
    let mut set = switchyard(dir.path())?;
    set.args(["--json", "settings", "evidence-max-age-days", "2"]);
    let r = run(&mut t, set);
    assert_eq!(r.code, 0, "a valid max age is stored: {}", r.stderr);
    assert_eq!(json(&r)["evidence_max_age_days"], 2.0, "and shown back");
    let mut bad = switchyard(dir.path())?;
    bad.args(["settings", "relay-port", "80"]);
    let r = run(&mut t, bad);
    assert_eq!(r.code, 2, "privileged ports are refused: {}", r.stderr);
    let mut show = switchyard(dir.path())?;
    show.args(["--json", "settings"]);
    let r = run(&mut t, show);
    assert_eq!(json(&r)["relay_port"], 4141, "the refused port changed nothing");
    Ok(())
}
