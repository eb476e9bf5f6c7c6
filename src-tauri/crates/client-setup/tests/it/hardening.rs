//! Moved keys beyond the first set-up (issue 27): a key moved on a second set-up is taken out of
//! the original kept by the first, a Codex `env_key` holding a key, and a key that would stay in
//! the file elsewhere refused before anything is written. Issue 39: files with control characters
//! or what only jsonc-parser reads refused naming the file, a link out of HOME refused naming its
//! target (one inside HOME followed and named), and two set-ups raced on one file.

use std::path::Path;
use std::sync::Arc;

use switchyard_client_setup as cs;
use switchyard_engine::{ErrorCode, NewConnection};
use switchyard_mock_provider::MockProvider;

use crate::common::{backups, engine_with, home, must_fail, parsed, req, secret, write, TestResult, World};

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

/// `text` at `path` is refused by preview and set-up: code `invalid`, the file's path and a line
/// named, never `canary`; the file stays as it was and nothing is kept. The file is removed after.
async fn refused_as_malformed(
    w: &World,
    client: &str,
    slug: &str,
    path: &Path,
    text: &str,
    canary: &str,
) -> TestResult {
    write(path, text)?;
    let r = w.req(client, slug);
    let refusals = [
        ("preview", must_fail(cs::preview(&w.engine, &r).await, client)?),
        ("setup", must_fail(cs::setup(&w.engine, &r, "absent").await, client)?),
    ];
    for (what, e) in refusals {
        let shown = e.to_string();
        assert_eq!(e.code(), ErrorCode::Invalid, "{client} {what}: refused as a malformed file: {shown}");
        assert!(
            shown.contains(&path.display().to_string()) && shown.contains("line "),
            "{client} {what}: names the file and where in it: {shown}"
        );
        assert!(!shown.contains(canary), "{client} {what}: never what the file holds: {shown}");
    }
    assert_eq!(std::fs::read(path)?, text.as_bytes(), "{client}: the file is as it was");
    assert!(backups(w.data.path()).is_empty(), "{client}: nothing kept");
    std::fs::remove_file(path)?;
    Ok(())
}

/// Issue 39: a NUL in a value, a raw line break in a string and a no-break space between values
/// (settings.json), a NUL in a JSONC comment (opencode) and in a TOML comment (Codex) were read
/// (jsonc-parser reads all three JSON ones) and the file rewritten; errors named the client, not
/// the file. Each is refused now, naming the file and the line.
#[tokio::test]
async fn control_characters_and_what_only_jsonc_parser_reads_are_refused_naming_the_file() -> TestResult {
    let w = World::start().await?;
    let canary = "sk-ant-malformed-canary-000039";
    let claude = w.root.path().join(".claude/settings.json");
    let keyed = |rest: &str| format!("{{\n  \"env\": {{\"ANTHROPIC_API_KEY\": \"{canary}\"}},\n  {rest}\n}}\n");
    refused_as_malformed(&w, "claude-code", "cc", &claude, &keyed("\"a\": \"x\0y\""), canary).await?;
    refused_as_malformed(&w, "claude-code", "cc", &claude, &keyed("\"a\": \"two\nlines\""), canary).await?;
    refused_as_malformed(&w, "claude-code", "cc", &claude, &keyed("\"a\":\u{a0}1"), canary).await?;
    let opencode = w.root.path().join(".config/opencode/opencode.jsonc");
    let commented = format!("{{\n  // {canary}\0\n  \"theme\": \"x\"\n}}\n");
    refused_as_malformed(&w, "opencode", "cc", &opencode, &commented, canary).await?;
    let codex = w.root.path().join(".codex/config.toml");
    refused_as_malformed(&w, "codex", "cx", &codex, &format!("# {canary}\0\nmodel = \"gpt-a\"\n"), canary).await?;
    w.stop().await
}

const LINKED: &str = "{\n  \"theme\": \"dark\"\n}\n";

/// Issue 39: a settings.json linked to a file outside HOME was written through, the preview
/// naming only the link. Refused now (code precondition) naming the real target; the target and
/// the link stay as they were and nothing is kept.
#[cfg(unix)]
#[tokio::test]
async fn a_config_linked_out_of_home_is_refused_naming_its_real_target() -> TestResult {
    let w = World::start().await?;
    let elsewhere = tempfile::tempdir()?;
    let target = elsewhere.path().join("claude.json");
    write(&target, LINKED)?;
    let link = w.root.path().join(".claude/settings.json");
    std::fs::create_dir_all(w.root.path().join(".claude"))?;
    std::os::unix::fs::symlink(&target, &link)?;
    let r = w.req("claude-code", "cc");
    let refusals = [
        ("preview", must_fail(cs::preview(&w.engine, &r).await, "a link out of HOME")?),
        ("setup", must_fail(cs::setup(&w.engine, &r, "absent").await, "a link out of HOME")?),
    ];
    for (what, e) in refusals {
        assert_eq!(e.code(), ErrorCode::Precondition, "{what}: {e}");
        assert!(e.to_string().contains(&target.display().to_string()), "{what}: names where the link leads: {e}");
    }
    assert_eq!(std::fs::read_to_string(&target)?, LINKED, "the target is untouched");
    assert_eq!(std::fs::read_link(&link)?, target, "the link is untouched");
    assert!(backups(w.data.path()).is_empty(), "nothing kept");
    w.stop().await
}

/// Issue 39: a dotfile manager's link inside HOME is followed as before, and the preview now says
/// where set-up writes (it named only the link).
#[cfg(unix)]
#[tokio::test]
async fn a_config_linked_inside_home_is_followed_and_the_preview_names_its_target() -> TestResult {
    let w = World::start().await?;
    let target = w.root.path().join("dotfiles/claude.json");
    write(&target, LINKED)?;
    let link = w.root.path().join(".claude/settings.json");
    std::fs::create_dir_all(w.root.path().join(".claude"))?;
    std::os::unix::fs::symlink("../dotfiles/claude.json", &link)?;
    let r = w.req("claude-code", "cc");
    let preview = cs::preview(&w.engine, &r).await?;
    assert!(
        preview.notes.iter().any(|n| n.contains("is a link to") && n.contains("dotfiles/claude.json")),
        "the preview names where set-up writes: {:?}",
        preview.notes
    );
    assert!(cs::setup(&w.engine, &r, &preview.file_hash).await?.written, "written through the link");
    assert!(std::fs::read_to_string(&target)?.contains("127.0.0.1:4999/c/cc"), "into its target");
    assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "the link stays a link");
    w.restores("claude-code", &target, LINKED).await?;
    assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "restore keeps the link too");
    w.stop().await
}

/// Issue 39: two set-ups of one file with different connections, both previewed from the same
/// original and run at once, could both pass the hash check — one keeping the other's output as
/// "the original", or a manifest outliving its write — and restore then refused (3 rounds in 10).
/// With one set-up or restore of a file at a time, the later one finds the file changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_set_ups_raced_on_one_file_leave_one_writer_and_a_byte_exact_restore() -> TestResult {
    let (data, root) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let mock = MockProvider::start().await?;
    let engine = Arc::new(engine_with(data.path(), &mock).await?);
    let second = NewConnection {
        slug: "cc2".into(),
        protocol: "anthropic".into(),
        base_url: mock.base_url(),
        models: vec!["claude-b".into()],
        ..Default::default()
    };
    engine.connection_add(second, Some(secret("sk-ant-second-0002"))).await?;
    let settings = root.path().join(".claude/settings.json");
    for round in 0..40 {
        write(&settings, LINKED)?;
        let (a, b) = (req(root.path(), "claude-code", "cc"), req(root.path(), "claude-code", "cc2"));
        let (pa, pb) = (cs::preview(&engine, &a).await?, cs::preview(&engine, &b).await?);
        assert_eq!(pa.file_hash, pb.file_hash, "round {round}: both previews read the same original");
        let spawn = |r: cs::ClientRequest, hash: String| {
            let engine = Arc::clone(&engine);
            tokio::spawn(async move { cs::setup(&engine, &r, &hash).await })
        };
        let (ta, tb) = (spawn(a, pa.file_hash), spawn(b, pb.file_hash));
        let results = [ta.await?, tb.await?];
        let written = results.iter().filter(|r| r.as_ref().is_ok_and(|s| s.written)).count();
        let conflicts =
            results.iter().filter(|r| r.as_ref().err().is_some_and(|e| e.code() == ErrorCode::Conflict)).count();
        assert_eq!(
            (written, conflicts),
            (1, 1),
            "round {round}: one set-up writes, the other finds the file changed: {results:?}"
        );
        cs::restore(&engine, parsed("claude-code"), &home(root.path()), false).await?;
        assert_eq!(std::fs::read(&settings)?, LINKED.as_bytes(), "round {round}: the original is back byte for byte");
        assert!(backups(data.path()).is_empty(), "round {round}: no backup left");
    }
    engine.close().await;
    mock.shutdown().await?;
    Ok(())
}
