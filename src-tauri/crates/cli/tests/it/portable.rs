//! `switchyard export` / `switchyard import` end to end over temp data dirs and the real
//! keychain (run under `scripts/with-keychain`): round trip, no secret in any output, dry run,
//! conflicts, refusing to overwrite, and bad files exiting 2 with the JSON path.

use std::path::Path;

use crate::common::{run, TestResult};
use serde_json::Value;

const CANARY: &str = "sk-canary-5e1d0c7b9a3f2e41";

fn setup(dir: &Path) -> TestResult {
    let add = run(
        dir,
        &[
            "connection",
            "add",
            "main",
            "--protocol",
            "openai",
            "--base-url",
            "https://api.example.com/v1",
            "--model",
            "gpt-a",
            "--header",
            "OpenAI-Organization: org-1",
            "--secret-stdin",
        ],
        Some(&format!("{CANARY}-1\n")),
    )?;
    assert_eq!(add.code, 0, "connection add succeeds: {}", add.stderr);
    let add = run(
        dir,
        &["profile", "add", "main", "--label", "backup", "--weight", "4", "--secret-stdin"],
        Some(&format!("{CANARY}-2\n")),
    )?;
    assert_eq!(add.code, 0, "profile add succeeds: {}", add.stderr);
    Ok(())
}

/// The export with refs removed (refs are export-local).
fn without_refs(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    if let Some(conns) = v["connections"].as_array_mut() {
        for c in conns {
            c.as_object_mut().map(|o| o.remove("ref"));
            for p in c["profiles"].as_array_mut().into_iter().flatten() {
                p.as_object_mut().map(|o| o.remove("ref"));
            }
        }
    }
    v
}

#[test]
fn export_import_round_trip_without_secrets() -> TestResult {
    let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    setup(a.path())?;
    let exported = run(a.path(), &["export"], None)?;
    assert_eq!(exported.code, 0, "export to stdout succeeds: {}", exported.stderr);
    assert!(!exported.stdout.contains("canary") && !exported.stderr.contains("canary"), "no secret reaches an export");
    let file = a.path().join("shared.json");
    let path = file.to_string_lossy().to_string();
    let written = run(a.path(), &["--json", "export", "main", "--out", &path], None)?;
    assert_eq!(written.code, 0, "export --out succeeds: {}", written.stderr);
    let on_disk = std::fs::read_to_string(&file)?;
    assert_eq!(on_disk.trim_end(), exported.stdout.trim_end(), "file and stdout agree");
    assert!(!on_disk.contains("canary"), "no secret reaches the file");

    let again = run(a.path(), &["export", "--out", &path], None)?;
    assert_eq!(again.code, 5, "an existing file is not overwritten without --force");
    assert!(again.stderr.contains("--force"), "the error says how: {}", again.stderr);
    let forced = run(a.path(), &["export", "--out", &path, "--force"], None)?;
    assert_eq!(forced.code, 0, "--force overwrites: {}", forced.stderr);

    // The first open creates the database (its pages still in the WAL); the second open
    // checkpoints them into the file. From then on an open that writes nothing changes no byte.
    for _ in 0..2 {
        let list = run(b.path(), &["connection", "list"], None)?;
        assert_eq!(list.code, 0, "a fresh data dir opens: {}", list.stderr);
    }
    let files = |dir: &Path| -> Vec<Vec<u8>> {
        ["switchyard.db", "switchyard.db-wal"].iter().map(|f| std::fs::read(dir.join(f)).unwrap_or_default()).collect()
    };
    let before = files(b.path());
    let dry = run(b.path(), &["--json", "import", &path, "--dry-run"], None)?;
    assert_eq!(dry.code, 0, "dry run succeeds: {}", dry.stderr);
    let report: Value = serde_json::from_str(&dry.stdout)?;
    assert_eq!(report["dry_run"], true, "the report says dry run");
    assert_eq!(report["connections"][0]["action"], "create", "it would create main");
    assert!(files(b.path()) == before, "a dry run leaves the database file and its WAL byte for byte as they were");

    let real = run(b.path(), &["import", &path], None)?;
    assert_eq!(real.code, 0, "import succeeds: {}", real.stderr);
    assert!(real.stdout.contains("create  main"), "human text lists the connection: {}", real.stdout);
    assert!(real.stdout.contains("profile rotate"), "human text says what to do next");
    let back = run(b.path(), &["export"], None)?;
    assert_eq!(
        without_refs(&back.stdout),
        without_refs(&exported.stdout),
        "export → import → export is equal up to refs"
    );
    let shown = run(b.path(), &["--json", "profile", "list", "main"], None)?;
    let profiles: Value = serde_json::from_str(&shown.stdout)?;
    for p in profiles.as_array().into_iter().flatten() {
        assert_eq!(p["enabled"], false, "imported profiles are disabled");
        assert_eq!(p["credential"], "missing", "imported profiles have no credential");
    }
    Ok(())
}

#[test]
fn conflicts_rename_by_default_or_skip() -> TestResult {
    let dir = tempfile::tempdir()?;
    setup(dir.path())?;
    let file = dir.path().join("shared.json");
    let path = file.to_string_lossy().to_string();
    assert_eq!(run(dir.path(), &["export", "--out", &path], None)?.code, 0, "export");
    let renamed = run(dir.path(), &["import", &path], None)?;
    assert_eq!(renamed.code, 0, "import with a taken slug renames: {}", renamed.stderr);
    assert!(renamed.stdout.contains("rename  main -> main-2"), "it says so: {}", renamed.stdout);
    let skipped = run(dir.path(), &["--json", "import", &path, "--on-conflict", "skip"], None)?;
    let report: Value = serde_json::from_str(&skipped.stdout)?;
    assert_eq!(report["skipped"], 1, "skip leaves the existing connection alone");
    let bogus = run(dir.path(), &["import", &path, "--on-conflict", "overwrite"], None)?;
    assert_eq!(bogus.code, 2, "there is no overwrite choice");
    Ok(())
}

#[test]
fn bad_files_exit_2_with_the_path_and_write_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let bad_weight = r#"{"format":"switchyard.config","version":1,"connections":[{"ref":"c1","slug":"x","protocol":"openai","base_url":"https://h.example/v1","profiles":[{"ref":"p1","label":"a","weight":0,"primary":true}]}]}"#;
    let secret_field = r#"{"format":"switchyard.config","version":1,"connections":[{"ref":"c1","slug":"x","protocol":"openai","base_url":"https://h.example/v1","api_key":"sk-canary-zz"}]}"#;
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(1024 * 1024 + 10));
    let cases = [
        (bad_weight.to_string(), "error: connections[0].profiles[0].weight: must be between 1 and 1000 (got 0)"),
        (secret_field.to_string(), "error: connections[0].api_key: is a credential field"),
        ("{\"format\": ".to_string(), "error: document: malformed JSON at line 1"),
        (r#"{"format":"switchyard.config","version":2}"#.to_string(), "error: version: unsupported version 2"),
        (huge, "error: document: is larger than 1 MiB"),
    ];
    for (i, (body, want)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("bad-{i}.json"));
        std::fs::write(&file, body)?;
        let r = run(dir.path(), &["import", &file.to_string_lossy()], None)?;
        assert_eq!(r.code, 2, "invalid file {i} exits 2: {}", r.stderr);
        let lines: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "one error line for file {i}: {}", r.stderr);
        assert!(lines[0].starts_with(want), "file {i}: want `{want}`, got `{}`", lines[0]);
        assert!(!r.stderr.contains("canary"), "the error never echoes a secret");
    }
    let missing = run(dir.path(), &["import", "/nonexistent/shared.json"], None)?;
    assert_eq!(missing.code, 4, "a missing file is not found");
    let list = run(dir.path(), &["--json", "connection", "list"], None)?;
    assert_eq!(list.stdout.trim(), "[]", "no refused file wrote a connection");
    Ok(())
}
