//! Moved keys beyond the first set-up (issue 27): a key moved on a second set-up is taken out of
//! the original kept by the first, a Codex `env_key` holding a key, and a key that would stay in
//! the file elsewhere refused before anything is written.

use switchyard_client_setup as cs;
use switchyard_engine::ErrorCode;

use crate::common::{backups, must_fail, write, TestResult, World};

#[tokio::test]
async fn a_key_moved_on_a_second_set_up_leaves_the_first_original_too() -> TestResult {
    let w = World::start().await?;
    let engine = &w.engine;
    let key = "sk-ant-second-canary-000042";
    let settings = w.root.path().join(".claude/settings.json");
    let original =
        format!("{{\n  \"a\": \"\\u0061\",\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{key}\"\n  }}\n}}\n");
    write(&settings, &original)?;
    let r = w.req("claude-code", "cc");
    let first = cs::setup(engine, &r, &cs::preview(engine, &r).await?.file_hash).await?;
    assert!(first.written && first.moved_to.is_none(), "a first set-up without --move-key");
    assert!(first.preview.notes.iter().any(|n| n.contains("--move-key")), "it says the key is still there");
    let mut moving = r.clone();
    moving.move_key = Some("later".into());
    let second = cs::setup(engine, &moving, &cs::preview(engine, &moving).await?.file_hash).await?;
    assert!(second.moved_to.is_some(), "the key moved on the second set-up");
    assert!(!std::fs::read_to_string(&settings)?.contains(key), "gone from the file");
    w.nowhere_kept(key)?;
    w.restores("claude-code", &settings, &original).await?;
    w.stop().await
}

#[tokio::test]
async fn a_codex_env_key_holding_a_key_is_reported_and_moved() -> TestResult {
    let w = World::start().await?;
    let engine = &w.engine;
    let key = "sk-proj-envkey-canary-0123456789abcdef";
    let config = w.root.path().join(".codex/config.toml");
    let original = format!("[model_providers.mine]\nbase_url = \"https://x.example/v1\"\nenv_key = '{key}'\n\n[model_providers.ok]\nenv_key = \"OPENAI_API_KEY\"\n");
    write(&config, &original)?;
    let mut r = w.req("codex", "cx");
    let preview = cs::preview(engine, &r).await?;
    assert_eq!(preview.plain_keys, vec!["model_providers.mine.env_key".to_string()], "a variable name is not a key");
    assert!(!preview.diff.contains(key), "the preview masks it");
    r.move_key = Some("from-env-key".into());
    cs::setup(engine, &r, &preview.file_hash).await?;
    let after = std::fs::read_to_string(&config)?;
    assert!(!after.contains(key) && after.contains("env_key = \"OPENAI_API_KEY\""), "only the key left:\n{after}");
    w.nowhere_kept(key)?;
    w.restores("codex", &config, &original).await?; // a single-quoted literal as written
    w.stop().await
}

#[tokio::test]
async fn a_key_that_would_stay_elsewhere_in_the_file_is_refused_before_anything_is_written() -> TestResult {
    let w = World::start().await?;
    let engine = &w.engine;
    let key = "sk-ant-twice-canary-0000042";
    let settings = w.root.path().join(".claude/settings.json");
    let text = format!("{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{key}\"\n  }},\n  \"note\": \"{key}\"\n}}\n");
    write(&settings, &text)?;
    let mut r = w.req("claude-code", "cc");
    r.move_key = Some("twice".into());
    let e = must_fail(cs::preview(engine, &r).await, "the key would stay in \"note\"")?;
    assert_eq!(e.code(), ErrorCode::Precondition, "{e}");
    assert!(e.to_string().contains("line 6") && !e.to_string().contains(key), "says where, not what: {e}");
    assert_eq!(std::fs::read_to_string(&settings)?, text, "nothing written");
    assert!(backups(w.data.path()).is_empty() && engine.profile_list("cc").await?.len() == 1, "nothing kept or added");
    w.stop().await
}
