//! Errors of the `switchyard` binary never repeat text that may be a pasted key: argument
//! errors name the argument, input errors name the field, header refusals name the header.
//! Run under `scripts/with-keychain`.

use std::path::Path;

use crate::common::{add_legacy, run, run_env, TestResult};

const CANARY: &str = "sk-canary-echo-123";

/// Every byte of every file in the data dir (DB, WAL, lock), as text to grep.
fn data_dir_text(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if let Ok(bytes) = std::fs::read(entry.path()) {
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    text
}

#[test]
fn argument_and_input_errors_name_the_field_not_the_value() -> TestResult {
    let dir = tempfile::tempdir()?;
    let seed = add_legacy(dir.path(), "main", "sk-own-key-1\n")?;
    assert_eq!(seed.code, 0, "seed connection: {}", seed.stderr);
    let url_with_key = format!("https://user:{CANARY}@api.example.com/v1");
    let model_with_space = format!("{CANARY} x");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["profile", "edit", "main", "primary", "--weight", CANARY], 2, "--weight"),
        (vec!["connection", "show", "main", CANARY], 2, "argument"),
        (vec![CANARY], 2, "command"),
        (vec!["import", "f.json", "--on-conflict", CANARY], 2, "--on-conflict"),
        (vec!["connection", "add", CANARY, "--protocol", "openai", "--base-url", "https://a.example"], 2, "slug"),
        (vec!["connection", "add", "x", "--protocol", CANARY, "--base-url", "https://a.example"], 2, "protocol"),
        (vec!["connection", "add", "x", "--protocol", "openai", "--base-url", &url_with_key], 2, "base_url"),
        (vec!["connection", "edit", "main", "--model", &model_with_space], 2, "model"),
        (vec!["connection", "edit", "main", "--map", CANARY], 2, "map"),
        (vec!["profile", "edit", "main", "primary", "--label", CANARY], 2, "label"),
        (vec!["profile", "rotate", "main", CANARY, "--secret-stdin"], 4, "profile"),
        (vec!["connection", "show", CANARY], 4, "connection"),
    ];
    for (args, code, field) in cases {
        let r = run(dir.path(), &args, Some("sk-own-key-2\n"))?;
        assert_eq!(r.code, code, "{args:?} exits {code}: {}", r.stderr);
        assert!(r.stderr.contains(field), "{args:?}: the error names '{field}': {}", r.stderr);
        assert!(
            !r.stderr.contains("canary") && !r.stdout.contains("canary"),
            "{args:?}: the error must not repeat the text typed: {}",
            r.stderr
        );
        let json = run(dir.path(), &[&["--json"], args.as_slice()].concat(), Some("sk-own-key-2\n"))?;
        assert!(!json.stdout.contains("canary"), "{args:?}: nor the JSON error: {}", json.stdout);
    }
    Ok(())
}

#[test]
fn framing_and_credential_headers_are_refused_by_name() -> TestResult {
    let dir = tempfile::tempdir()?;
    let add = |header: &str| {
        run(
            dir.path(),
            &["connection", "add", "x", "--protocol", "openai", "--base-url", "https://a.example", "--header", header],
            None,
        )
    };
    for name in ["content-length", "Transfer-Encoding", "host", "te", "proxy-connection", "x-api-key", "x-auth-token"] {
        let r = add(&format!("{name}: 1"))?;
        assert_eq!(r.code, 2, "'{name}' is refused as invalid input: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("header: '{}'", name.to_ascii_lowercase())),
            "the refusal names '{name}': {}",
            r.stderr
        );
    }
    for value in [CANARY.to_string(), format!("Bearer {CANARY}")] {
        let r = add(&format!("X-Custom: {value}"))?;
        assert_eq!(r.code, 2, "a credential-looking value is refused: {}", r.stderr);
        assert!(r.stderr.contains("'x-custom'"), "the refusal names the header: {}", r.stderr);
        assert!(r.stderr.contains("switchyard profile add"), "and points at profiles: {}", r.stderr);
        assert!(!r.stderr.contains("canary"), "the value is not repeated: {}", r.stderr);
    }
    let listed = run(dir.path(), &["--json", "connection", "list"], None)?;
    assert_eq!(listed.stdout.trim(), "[]", "no refused header created a connection");
    assert!(!data_dir_text(dir.path()).contains("canary"), "no refused value reached the data dir");
    Ok(())
}

/// Issue 39: `--help` printed `SWITCHYARD_STORE`'s value — a team store's URL with its password —
/// as clap's `[env: SWITCHYARD_STORE=…]`. The variable is named, its value never shown, in the
/// top-level help and every subcommand's (the option is global).
#[test]
fn help_names_the_store_variable_but_never_its_password() -> TestResult {
    let dir = tempfile::tempdir()?;
    let url = format!("postgres://team:{CANARY}@db.example:5432/switchyard");
    for args in [vec!["--help"], vec!["relay", "serve", "--help"], vec!["store", "copy", "--help"]] {
        let out = run_env(dir.path(), &args, None, &[("SWITCHYARD_STORE", url.as_str())])?;
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(text.contains("SWITCHYARD_STORE"), "{args:?}: the variable is named");
        assert!(!text.contains(CANARY), "{args:?}: the store URL's password is never printed:\n{text}");
        assert!(!text.contains("db.example"), "{args:?}: nor the URL at all");
    }
    Ok(())
}
