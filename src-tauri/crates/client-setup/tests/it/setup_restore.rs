//! Client set-up on a temp HOME with pre-existing config files (unrelated settings and comments
//! that must survive): diff preview, write, status, byte-identical restore; refusal when the
//! file moved since the preview; malformed files; a plain-text key moved into the keychain.
//! Real keychain (run under scripts/with-keychain), real HTTP to the mock provider.
//! (Moved from the engine's tests with the code; the calls are the crate's functions now.)

use std::path::Path;

use switchyard_client_setup as cs;
use switchyard_engine::{Engine, ErrorCode};
use switchyard_mock_provider::{KeyScript, MockProvider};

use crate::common::{backups, engine_with, home, must_fail, parsed, req, write, TestResult};

const CLAUDE_SETTINGS: &str = r#"{
  "theme": "dark",
  "env": {
    "KEEP_ME": "1"
  },
  "permissions": { "allow": ["Bash(ls:*)"] },
  "zzz_last": [1, 2, 3]
}
"#;

const CODEX_CONFIG: &str = r#"# my Codex settings — this comment must survive
model = "gpt-a"   # the model I like

[features]
plugins = false   # offline

[model_providers.other]
name = "other"
base_url = "https://example.com/v1"
"#;

const OPENCODE_CONFIG: &str = r#"{
  // opencode config with comments (JSONC)
  "$schema": "https://opencode.ai/config.json",
  "theme": "opencode", /* inline */
  "provider": {
    "ollama": { "npm": "@ai-sdk/openai-compatible", "options": { "baseURL": "http://localhost:11434/v1" } },
  },
}
"#;

/// Preview, write, status and restore for one client whose file already exists.
async fn round_trip(engine: &Engine, root: &Path, client: &str, slug: &str, path: &Path, original: &str) -> TestResult {
    let token = engine.relay_token(false).await?;
    let r = req(root, client, slug);
    let preview = cs::preview(engine, &r).await?;
    assert!(preview.changes, "{client}: set-up changes the file");
    assert!(
        preview.diff.starts_with(&format!("--- {}\n+++ ", path.display())),
        "{client}: a unified diff: {}",
        preview.diff
    );
    assert!(preview.diff.contains("127.0.0.1:4999/c/"), "{client}: the diff shows the relay URL: {}", preview.diff);
    assert!(!preview.diff.contains(token.expose()), "{client}: the preview never shows the relay token");
    assert_eq!(std::fs::read_to_string(path)?, original, "{client}: a preview writes nothing");

    let report = cs::setup(engine, &r, &preview.file_hash).await?;
    assert!(report.written, "{client}: set-up wrote the file");
    let after = std::fs::read_to_string(path)?;
    assert!(after.contains(token.expose()), "{client}: the relay token is in the file");
    let status = cs::status(engine, parsed(client), &home(root)).await?;
    assert!(
        status.pointed && status.token_current && status.restorable,
        "{client}: status sees the set-up: {status:?}"
    );
    assert_eq!(
        (status.slug.as_deref(), status.port),
        (Some(slug), Some(4999)),
        "{client}: status names the connection"
    );

    let again = cs::preview(engine, &r).await?;
    assert!(!again.changes && again.diff.is_empty(), "{client}: a second set-up changes nothing: {}", again.diff);

    let restored = cs::restore(engine, parsed(client), &home(root), false).await?.report;
    assert!(restored.restored && !restored.removed, "{client}: restore wrote the original back");
    assert_eq!(std::fs::read(path)?, original.as_bytes(), "{client}: restore is byte-identical");
    let status = cs::status(engine, parsed(client), &home(root)).await?;
    assert!(!status.pointed && !status.restorable, "{client}: after restore nothing points at Switchyard: {status:?}");
    Ok(())
}

#[tokio::test]
async fn each_client_is_set_up_keeping_its_settings_and_comments_and_restored_byte_for_byte() -> TestResult {
    let data = tempfile::tempdir()?;
    let root = tempfile::tempdir()?;
    let mock = MockProvider::start().await?;
    let engine = engine_with(data.path(), &mock).await?;

    let claude = root.path().join(".claude/settings.json");
    write(&claude, CLAUDE_SETTINGS)?;
    round_trip(&engine, root.path(), "claude-code", "cc", &claude, CLAUDE_SETTINGS).await?;

    let codex = root.path().join(".codex/config.toml");
    write(&codex, CODEX_CONFIG)?;
    let r = req(root.path(), "codex", "cx");
    let p = cs::preview(&engine, &r).await?;
    cs::setup(&engine, &r, &p.file_hash).await?;
    let text = std::fs::read_to_string(&codex)?;
    for kept in [
        "# my Codex settings — this comment must survive",
        "model = \"gpt-a\"   # the model I like",
        "plugins = false   # offline",
        "[model_providers.other]",
    ] {
        assert!(text.contains(kept), "codex: '{kept}' survives set-up:\n{text}");
    }
    assert!(
        text.contains("model_provider = \"switchyard\"") && text.contains("[model_providers.switchyard]"),
        "codex: the provider is set:\n{text}"
    );
    assert!(text.contains("base_url = \"http://127.0.0.1:4999/c/cx/v1\""), "codex: the relay URL with /v1:\n{text}");
    cs::restore(&engine, parsed("codex"), &home(root.path()), false).await?;
    round_trip(&engine, root.path(), "codex", "cx", &codex, CODEX_CONFIG).await?;

    let opencode = root.path().join(".config/opencode/opencode.jsonc");
    write(&opencode, OPENCODE_CONFIG)?;
    let r = req(root.path(), "opencode", "cc");
    let p = cs::preview(&engine, &r).await?;
    cs::setup(&engine, &r, &p.file_hash).await?;
    let text = std::fs::read_to_string(&opencode)?;
    for kept in ["// opencode config with comments (JSONC)", "/* inline */", "\"ollama\": { \"npm\""] {
        assert!(text.contains(kept), "opencode: '{kept}' survives set-up:\n{text}");
    }
    assert!(
        text.contains("\"@ai-sdk/anthropic\"") && text.contains("\"model\": \"switchyard/claude-a\""),
        "opencode: provider and model set:\n{text}"
    );
    cs::restore(&engine, parsed("opencode"), &home(root.path()), false).await?;
    round_trip(&engine, root.path(), "opencode", "cc", &opencode, OPENCODE_CONFIG).await?;

    // A file that did not exist is removed again by restore.
    let fresh = tempfile::tempdir()?;
    let r = req(fresh.path(), "claude-code", "cc");
    let p = cs::preview(&engine, &r).await?;
    assert!(!p.exists && p.file_hash == "absent", "no file yet: {p:?}");
    cs::setup(&engine, &r, &p.file_hash).await?;
    let restored = cs::restore(&engine, parsed("claude-code"), &home(fresh.path()), false).await?.report;
    assert!(
        restored.removed && !fresh.path().join(".claude/settings.json").exists(),
        "restore removes a file set-up created"
    );

    let wrong =
        must_fail(cs::preview(&engine, &req(root.path(), "codex", "cc")).await, "codex on an anthropic connection")?;
    assert_eq!(wrong.code(), ErrorCode::Invalid, "the protocol mismatch is refused: {wrong}");
    engine.close().await;
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_file_changed_since_the_preview_or_malformed_is_never_written() -> TestResult {
    let data = tempfile::tempdir()?;
    let root = tempfile::tempdir()?;
    let mock = MockProvider::start().await?;
    let engine = engine_with(data.path(), &mock).await?;
    let claude = root.path().join(".claude/settings.json");
    write(&claude, CLAUDE_SETTINGS)?;
    let r = req(root.path(), "claude-code", "cc");
    let preview = cs::preview(&engine, &r).await?;
    let edited = CLAUDE_SETTINGS.replace("dark", "light");
    std::fs::write(&claude, &edited)?;
    let refused = must_fail(cs::setup(&engine, &r, &preview.file_hash).await, "the file moved since the preview")?;
    assert_eq!(refused.code(), ErrorCode::Conflict, "a stale preview is a conflict: {refused}");
    assert_eq!(std::fs::read_to_string(&claude)?, edited, "nothing written after a stale preview");
    assert!(backups(data.path()).is_empty(), "no backup kept for a refused write");

    let canary = "sk-ant-malformed-canary-42";
    for (client, rel, bad) in [
        (
            "claude-code",
            ".claude/settings.json",
            format!("{{\n  \"env\": {{ \"ANTHROPIC_API_KEY\": \"{canary}\" \n  \"x\": 1 }}\n}}\n"),
        ),
        ("codex", ".codex/config.toml", format!("model = \"{canary}\"\n[broken\n")),
        ("opencode", ".config/opencode/opencode.json", format!("{{ \"provider\": {{ \"x\": \"{canary}\" ]\n")),
    ] {
        let path = root.path().join(rel);
        write(&path, &bad)?;
        let slug = if client == "codex" { "cx" } else { "cc" };
        let e = must_fail(cs::preview(&engine, &req(root.path(), client, slug)).await, "malformed")?;
        assert_eq!(e.code(), ErrorCode::Invalid, "{client}: a malformed file is code invalid: {e}");
        let msg = e.to_string();
        assert!(msg.contains("line ") && msg.contains("nothing was written"), "{client}: the error says where: {msg}");
        assert!(!msg.contains(canary), "{client}: the error never repeats the file's text: {msg}");
        let e = must_fail(cs::setup(&engine, &req(root.path(), client, slug), "absent").await, "malformed")?;
        assert_eq!(e.code(), ErrorCode::Invalid, "{client}: set-up refuses too");
        assert_eq!(std::fs::read_to_string(&path)?, bad, "{client}: a malformed file is left as it was");
        let s = cs::status(&engine, parsed(client), &home(root.path())).await;
        assert!(s.is_err(), "{client}: status reports the malformed file instead of guessing");
    }
    assert!(backups(data.path()).is_empty(), "no backup kept for malformed files");
    engine.close().await;
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_plain_text_key_moves_into_the_keychain_and_restore_brings_the_file_back() -> TestResult {
    let data = tempfile::tempdir()?;
    let root = tempfile::tempdir()?;
    let mock = MockProvider::start().await?;
    let moved_key = "sk-ant-moved-canary-0042";
    mock.set_key(moved_key, KeyScript::new(["claude-a"]));
    let engine = engine_with(data.path(), &mock).await?;
    let claude = root.path().join(".claude/settings.json");
    let original =
        format!("{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{moved_key}\",\n    \"KEEP\": \"yes\"\n  }}\n}}\n");
    write(&claude, &original)?;

    let plain = cs::preview(&engine, &req(root.path(), "claude-code", "cc")).await?;
    assert_eq!(plain.plain_keys, vec!["env.ANTHROPIC_API_KEY".to_string()], "the preview names the plain key");
    assert!(!plain.diff.contains(moved_key), "the preview never shows the provider key: {}", plain.diff);
    let status = cs::status(&engine, parsed("claude-code"), &home(root.path())).await?;
    assert_eq!(status.plain_keys, vec!["env.ANTHROPIC_API_KEY".to_string()], "status names the plain key too");

    let mut r = req(root.path(), "claude-code", "cc");
    r.move_key = Some("from-claude".into());
    let preview = cs::preview(&engine, &r).await?;
    let report = cs::setup(&engine, &r, &preview.file_hash).await?;
    let profile = report.moved_to.ok_or("the moved key became a profile")?;
    assert_eq!(profile.label, "from-claude", "the profile has the label asked for");
    let after = std::fs::read_to_string(&claude)?;
    assert!(!after.contains(moved_key) && !after.contains("ANTHROPIC_API_KEY"), "the key left the file:\n{after}");
    assert!(after.contains("\"KEEP\": \"yes\""), "the other env entry stayed:\n{after}");
    for f in backups(data.path()) {
        assert!(
            !std::fs::read_to_string(&f)?.contains(moved_key),
            "the kept original holds no plain key: {}",
            f.display()
        );
    }
    let verified = engine.verify("cc", Some("from-claude"), false, &|_| {}).await?;
    assert_eq!(verified.results.len(), 1, "only the moved profile was verified");
    assert_eq!(
        verified.results[0].outcome,
        switchyard_core::states::VerifyOutcome::Verified,
        "the moved key verifies against the mock: {:?}",
        verified.results[0]
    );
    assert!(mock.hits(moved_key) >= 1, "the mock saw the moved key");

    cs::restore(&engine, parsed("claude-code"), &home(root.path()), false).await?;
    assert_eq!(
        std::fs::read_to_string(&claude)?,
        original,
        "restore is byte-identical, the key put back from the keychain"
    );
    engine.close().await;
    mock.shutdown().await?;
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_config_stays_a_link_and_its_target_is_edited_and_restored() -> TestResult {
    let data = tempfile::tempdir()?;
    let root = tempfile::tempdir()?;
    let mock = MockProvider::start().await?;
    let engine = engine_with(data.path(), &mock).await?;
    let target = root.path().join("dotfiles/claude-settings.json");
    write(&target, CLAUDE_SETTINGS)?;
    let link = root.path().join(".claude/settings.json");
    std::fs::create_dir_all(root.path().join(".claude"))?;
    std::os::unix::fs::symlink(&target, &link)?;
    let r = req(root.path(), "claude-code", "cc");
    let p = cs::preview(&engine, &r).await?;
    cs::setup(&engine, &r, &p.file_hash).await?;
    assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "the link is still a link");
    assert!(std::fs::read_to_string(&target)?.contains("ANTHROPIC_BASE_URL"), "the link's target was edited");
    cs::restore(&engine, parsed("claude-code"), &home(root.path()), false).await?;
    assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "restore keeps the link");
    assert_eq!(std::fs::read_to_string(&target)?, CLAUDE_SETTINGS, "the target is byte-identical again");
    engine.close().await;
    mock.shutdown().await?;
    Ok(())
}
