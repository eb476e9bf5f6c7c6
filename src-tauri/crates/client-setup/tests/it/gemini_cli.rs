//! Gemini CLI set-up (issue 30): `~/.gemini/.env` (under `$GEMINI_CLI_HOME` when set) gains the
//! relay's base URL and token with every other line kept; status reads it back; restore is byte
//! for byte; a `GOOGLE_API_KEY` in plain text is moved into the keychain and left out of the kept
//! original. Real keychain, real HTTP to the mock provider.

use switchyard_client_setup as cs;
use switchyard_engine::{ErrorCode, NewConnection};

use crate::common::{backups, must_fail, parsed, secret, write, TestResult, World};

const ENV_FILE: &str =
    "# Gemini CLI settings — this comment must survive\nGEMINI_MODEL=gemini-2.5-pro  # my default\nexport DEBUG='0'\n";

async fn world_with_gemini() -> Result<World, Box<dyn std::error::Error>> {
    let w = World::start().await?;
    let gemini = NewConnection {
        slug: "gem".into(),
        protocol: "gemini".into(),
        base_url: w.mock.base_url(),
        models: vec!["gemini-2.5-flash".into()],
        ..Default::default()
    };
    w.engine.connection_add(gemini, Some(secret("g-setup-primary-0001"))).await?;
    Ok(w)
}

#[tokio::test]
async fn gemini_cli_s_env_file_is_set_up_under_its_home_and_restored_byte_for_byte() -> TestResult {
    let w = world_with_gemini().await?;
    let gemini_home = w.root.path().join("elsewhere");
    let path = gemini_home.join(".gemini/.env");
    write(&path, ENV_FILE)?;
    let mut home = w.home();
    home.gemini_cli_home = Some(gemini_home.clone());
    let mut r = w.req("gemini-cli", "gem");
    r.home = home.clone();
    let token = w.engine.relay_token(false).await?;

    let preview = cs::preview(&w.engine, &r).await?;
    assert_eq!(preview.path, path.display().to_string(), "$GEMINI_CLI_HOME/.gemini/.env is the file");
    assert!(preview.diff.contains("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4999/c/gem"), "the diff: {}", preview.diff);
    assert!(!preview.diff.contains(token.expose()), "the preview never shows the relay token");
    let report = cs::setup(&w.engine, &r, &preview.file_hash).await?;
    assert!(report.written, "written");
    let after = std::fs::read_to_string(&path)?;
    assert_eq!(
        after,
        format!("{ENV_FILE}GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4999/c/gem\nGEMINI_API_KEY={}\n", token.expose()),
        "two lines appended (no /v1beta: Gemini CLI adds it), every other byte kept"
    );
    let status = cs::status(&w.engine, parsed("gemini-cli"), &home).await?;
    assert!(status.pointed && status.token_current && status.restorable, "status sees it: {status:?}");
    assert_eq!((status.slug.as_deref(), status.port), (Some("gem"), Some(4999)), "and names the connection");
    let again = cs::preview(&w.engine, &r).await?;
    assert!(!again.changes, "a second set-up changes nothing: {}", again.diff);
    cs::restore(&w.engine, parsed("gemini-cli"), &home, false).await?;
    assert_eq!(std::fs::read(&path)?, ENV_FILE.as_bytes(), "restore is byte-identical");

    let wrong = cs::preview(&w.engine, &w.req("gemini-cli", "cc")).await;
    assert!(wrong.is_err(), "gemini-cli on an anthropic connection is refused");
    let opencode = cs::preview(&w.engine, &w.req("opencode", "gem")).await;
    let message = opencode.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("is gemini"), "opencode cannot speak Gemini's own API: {message}");
    Ok(())
}

#[tokio::test]
async fn a_plain_google_api_key_is_moved_into_the_keychain_and_kept_nowhere() -> TestResult {
    let w = world_with_gemini().await?;
    let key = "AIza-canary-gemini-setup-0001";
    let path = w.root.path().join(".gemini/.env");
    let original = format!("{ENV_FILE}GOOGLE_API_KEY={key}\n");
    write(&path, &original)?;
    let plain = cs::preview(&w.engine, &w.req("gemini-cli", "gem")).await?;
    assert_eq!(plain.plain_keys, vec!["GOOGLE_API_KEY".to_string()], "the preview names the plain key");
    assert!(!plain.diff.contains(key), "and never shows it: {}", plain.diff);

    let mut r = w.req("gemini-cli", "gem");
    r.move_key = Some("from-gemini".into());
    let preview = cs::preview(&w.engine, &r).await?;
    let report = cs::setup(&w.engine, &r, &preview.file_hash).await?;
    assert_eq!(report.moved_to.map(|p| p.label).as_deref(), Some("from-gemini"), "the key became a profile");
    let after = std::fs::read_to_string(&path)?;
    assert!(!after.contains(key) && !after.contains("GOOGLE_API_KEY"), "the key left the file:\n{after}");
    assert!(after.contains("GEMINI_MODEL=gemini-2.5-pro  # my default"), "other lines stay:\n{after}");
    for f in backups(w.data.path()) {
        assert!(!std::fs::read_to_string(&f)?.contains(key), "the kept original holds no plain key: {}", f.display());
    }
    cs::restore(&w.engine, parsed("gemini-cli"), &w.home(), false).await?;
    assert_eq!(std::fs::read_to_string(&path)?, original, "restore puts the key back from the keychain, byte for byte");
    Ok(())
}

/// Issue 39: lines set-up's reader skipped or read otherwise were read by Gemini CLI's dotenv —
/// `GOOGLE_API_KEY: key` was neither reported nor moved and stayed in use, and so did a key
/// after an unclosed quote or with text after its closing quote; a NUL went through. Each file
/// is refused now by preview, set-up and status, naming the file and line 4, never the key.
#[tokio::test]
async fn a_line_gemini_cli_reads_otherwise_than_set_up_is_refused_naming_the_file() -> TestResult {
    let w = world_with_gemini().await?;
    let key = "AIza-canary-unreadable-0039";
    let path = w.root.path().join(".gemini/.env");
    let r = w.req("gemini-cli", "gem");
    let lines = [
        ("NAME: value", format!("GOOGLE_API_KEY: {key}")),
        ("an unclosed quote", format!("GOOGLE_API_KEY=\"{key}")),
        ("text after the closing quote", format!("GOOGLE_API_KEY=\"{key}\" x")),
        ("a NUL", format!("GOOGLE_API_KEY={key}\0")),
    ];
    for (what, line) in lines {
        let text = format!("{ENV_FILE}{line}\n");
        write(&path, &text)?;
        let refusals = [
            must_fail(cs::preview(&w.engine, &r).await, what)?,
            must_fail(cs::setup(&w.engine, &r, "absent").await, what)?,
            must_fail(cs::status(&w.engine, parsed("gemini-cli"), &w.home()).await, what)?,
        ];
        for e in refusals {
            let shown = e.to_string();
            assert_eq!(e.code(), ErrorCode::Invalid, "{what}: refused as a malformed file: {shown}");
            assert!(
                shown.contains(&path.display().to_string()) && shown.contains("line 4"),
                "{what}: names the file and the line: {shown}"
            );
            assert!(!shown.contains(key), "{what}: never the key: {shown}");
        }
        assert_eq!(std::fs::read_to_string(&path)?, text, "{what}: the file is as it was");
        assert!(backups(w.data.path()).is_empty(), "{what}: nothing kept");
    }
    Ok(())
}
