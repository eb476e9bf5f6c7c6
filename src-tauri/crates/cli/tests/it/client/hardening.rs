//! Issue 27's client set-up defects and holes, through the `switchyard` binary (so each runs
//! unchanged against the code before the fix): a Codex key moved out of config.toml, an escaped
//! key masked and moved, duplicate members refused, owner-only writes, FIFOs and devices,
//! capped previews, two keys, other secrets in context lines, dangling links, restore after the
//! moved key's profile changed, port 0, a byte order mark. Nothing prints a canary key.

use std::path::{Path, PathBuf};

use super::{client, client_env, Out};
use crate::common::{run, TestResult};

/// A data dir with one connection, and a temp HOME for the clients.
struct Fixture {
    data: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    /// Connection `slug` (`openai` or `anthropic`) whose primary holds `key`.
    fn new(slug: &str, protocol: &str, key: &str) -> Result<Self, Box<dyn std::error::Error>> {
        let f = Fixture { data: tempfile::tempdir()?, home: tempfile::tempdir()? };
        let base = if protocol == "openai" { "https://api.openai.com/v1" } else { "https://api.anthropic.com" };
        let args = ["connection", "add", slug, "--protocol", protocol, "--base-url", base, "--secret-stdin"];
        let out = run(f.d(), &args, Some(key))?;
        assert_eq!(out.code, 0, "connection add {slug}: {}", out.stderr);
        Ok(f)
    }

    /// An anthropic connection `cc` with `key`.
    fn claude(key: &str) -> Result<Self, Box<dyn std::error::Error>> {
        Fixture::new("cc", "anthropic", key)
    }

    fn d(&self) -> &Path {
        self.data.path()
    }

    fn h(&self) -> &Path {
        self.home.path()
    }

    /// Claude Code's settings.json under HOME.
    fn settings(&self) -> PathBuf {
        self.h().join(".claude/settings.json")
    }

    /// `switchyard client …` (or any command) with HOME and the data dir.
    fn run(&self, args: &[&str]) -> Result<Out, Box<dyn std::error::Error>> {
        client(self.d(), self.h(), args)
    }
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))?;
    std::fs::write(path, text)
}

/// Every kept file under the data dir's client backups, as text.
fn kept(data: &Path) -> Vec<(PathBuf, String)> {
    let mut out = vec![];
    let Ok(dirs) = std::fs::read_dir(data.join("client-backups")) else { return out };
    for d in dirs.flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            out.push((f.path(), String::from_utf8_lossy(&std::fs::read(f.path()).unwrap_or_default()).into_owned()));
        }
    }
    out
}

fn never_printed(outs: &[&Out], canary: &str) {
    for o in outs {
        assert!(
            !o.stdout.contains(canary) && !o.stderr.contains(canary),
            "'{canary}' was printed:\n{}{}",
            o.stdout,
            o.stderr
        );
    }
}

fn nowhere_kept(data: &Path, canary: &str) {
    for (path, text) in kept(data) {
        assert!(!text.contains(canary), "the kept {} holds '{canary}':\n{text}", path.display());
    }
}

#[test]
fn codex_move_key_takes_the_key_out_of_config_toml_and_the_kept_original() -> TestResult {
    let f = Fixture::new("cx", "openai", "sk-oai-cli-codex-0001")?;
    let (d, h) = (f.d(), f.h());
    let canary = "codex-bearer-canary-0123456789";
    let original = format!(
        "model = \"gpt-a\"\n\n[model_providers.other]\nname = \"other\"\nbase_url = \"https://example.com/v1\"\nexperimental_bearer_token = \"sk-proj-{canary}\"\n"
    );
    let config = h.join(".codex/config.toml");
    write(&config, &original)?;
    let moved = f.run(&["client", "setup", "codex", "cx", "--move-key", "from-codex"])?;
    assert_eq!(moved.code, 0, "set-up with --move-key: {}{}", moved.stdout, moved.stderr);
    assert!(moved.stdout.contains("moved the provider key into the keychain"), "{}", moved.stdout);
    let after = std::fs::read_to_string(&config)?;
    assert!(
        !after.contains(canary) && after.contains("[model_providers.other]"),
        "the key left config.toml, its table stayed:\n{after}"
    );
    nowhere_kept(d, canary);
    let listed = run(d, &["profile", "list", "cx"], None)?;
    assert!(listed.stdout.contains("from-codex"), "the key became a profile: {}", listed.stdout);
    let restored = f.run(&["client", "restore", "codex"])?;
    assert_eq!(restored.code, 0, "restore: {}", restored.stderr);
    assert_eq!(std::fs::read_to_string(&config)?, original, "restore puts the key back byte for byte");
    never_printed(&[&moved, &restored], canary);
    assert!(!listed.stdout.contains(canary), "profile list never shows the key");
    Ok(())
}

#[test]
fn an_escaped_key_is_masked_in_previews_and_leaves_the_file_and_the_kept_original() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-escaped-0001")?;
    let (d, h) = (f.d(), f.h());
    let canary = "escaped-canary-0042";
    let cases = [
        ("claude-code", ".claude/settings.json", format!("{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"\\u0073k-ant-{canary}\",\n    \"KEEP\": \"1\"\n  }}\n}}\n")),
        ("opencode", ".config/opencode/opencode.json", format!("{{\n  \"provider\": {{\n    \"anthropic\": {{ \"options\": {{ \"apiKey\": \"\\u0073k-ant-{canary}\" }} }}\n  }}\n}}\n")),
    ];
    for (name, rel, original) in cases {
        let path = h.join(rel);
        write(&path, &original)?;
        let dry = f.run(&["client", "setup", name, "cc", "--dry-run"])?;
        let json = f.run(&["--json", "client", "setup", name, "cc", "--dry-run"])?;
        assert_eq!((dry.code, json.code), (0, 0), "{name}: previews: {}{}", dry.stderr, json.stderr);
        assert!(dry.stdout.contains("<provider key>"), "{name}: the key is shown as a placeholder:\n{}", dry.stdout);
        let moved = f.run(&["client", "setup", name, "cc", "--move-key", &format!("esc-{name}")])?;
        assert_eq!(moved.code, 0, "{name}: --move-key: {}{}", moved.stdout, moved.stderr);
        assert!(!std::fs::read_to_string(&path)?.contains(canary), "{name}: the key left the file");
        nowhere_kept(d, canary);
        never_printed(&[&dry, &json, &moved], canary);
        let restored = f.run(&["client", "restore", name])?;
        assert_eq!(restored.code, 0, "{name}: restore: {}", restored.stderr);
        assert_eq!(std::fs::read_to_string(&path)?, original, "{name}: restored byte for byte, escapes and all");
        std::fs::remove_file(&path)?;
    }
    Ok(())
}

#[test]
fn duplicate_members_on_set_up_paths_are_refused_at_the_second_copy() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-dup-0001")?;
    let canary = "dup-canary-0000000000";
    let settings = f.settings();
    let twice = format!(
        "{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"sk-ant-first-0000000000\",\n    \"ANTHROPIC_API_KEY\": \"sk-ant-{canary}\"\n  }}\n}}\n"
    );
    write(&settings, &twice)?;
    let dry = f.run(&["client", "setup", "claude-code", "cc", "--dry-run"])?;
    let moved = f.run(&["client", "setup", "claude-code", "cc", "--move-key", "dup"])?;
    for out in [&dry, &moved] {
        assert_eq!(out.code, 2, "a duplicated key is refused as invalid: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("line 4, column 5"), "names the second copy: {}", out.stderr);
    }
    assert_eq!(std::fs::read_to_string(&settings)?, twice, "nothing written");
    never_printed(&[&dry, &moved], canary);

    let url_twice = "{\n  \"env\": {\n    \"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:4777/c/cc\",\n    \"ANTHROPIC_BASE_URL\": \"https://elsewhere.example\"\n  }\n}\n";
    write(&settings, url_twice)?;
    let status = f.run(&["client", "status", "claude-code"])?;
    assert_eq!(
        status.code, 2,
        "status does not say 'points at Switchyard' for a file it cannot read one way: {}",
        status.stdout
    );
    assert!(!status.stdout.contains("points at Switchyard"), "{}", status.stdout);
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_world_readable_config_is_written_owner_only_and_restored_with_its_mode() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::claude("sk-ant-cli-mode-0001")?;
    let settings = f.settings();
    write(&settings, "{}\n")?;
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o644))?;
    let set = f.run(&["client", "setup", "claude-code", "cc"])?;
    assert_eq!(set.code, 0, "{}", set.stderr);
    let mode = std::fs::metadata(&settings)?.permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the file holding the relay token is owner-only");
    assert!(set.stdout.contains("can be read by other users"), "set-up says why: {}", set.stdout);
    assert_eq!(f.run(&["client", "restore", "claude-code"])?.code, 0);
    assert_eq!(std::fs::metadata(&settings)?.permissions().mode() & 0o777, 0o644, "restore puts the mode back");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_as_config_is_refused_without_hanging() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-fifo-0001")?;
    let h = f.h();
    let settings = f.settings();
    std::fs::create_dir_all(h.join(".claude"))?;
    let made = std::process::Command::new("mkfifo").arg(&settings).status()?;
    assert!(made.success(), "mkfifo");
    for args in [&["client", "setup", "claude-code", "cc", "--dry-run"][..], &["client", "status", "claude-code"]] {
        let out = f.run(args)?;
        assert_eq!(out.code, 2, "a FIFO is refused at once: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    }
    std::fs::remove_file(&settings)?;
    std::os::unix::fs::symlink("/dev/zero", &settings)?;
    let out = f.run(&["client", "setup", "claude-code", "cc", "--dry-run"])?;
    assert_eq!(out.code, 2, "a link to /dev/zero is refused: {}", out.stderr);
    Ok(())
}

#[test]
fn a_huge_one_line_config_prints_a_bounded_preview_and_a_larger_one_is_refused() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-huge-0001")?;
    let settings = f.settings();
    write(&settings, &format!("{{\"blob\": \"{}\"}}", "x".repeat(900 * 1024)))?;
    let dry = f.run(&["client", "setup", "claude-code", "cc", "--dry-run"])?;
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stdout.len() < 16 * 1024, "the preview is bounded: {} bytes", dry.stdout.len());
    assert!(dry.stdout.contains("more characters not shown"), "and says what it cut");
    write(&settings, &format!("{{\"blob\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)))?;
    let big = f.run(&["client", "setup", "claude-code", "cc", "--dry-run"])?;
    assert_eq!(big.code, 2, "a config over the size cap is refused: {}", big.stdout);
    Ok(())
}

#[test]
fn keys_in_both_api_key_and_auth_token_move_together_or_are_refused() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-both-0001")?;
    let d = f.d();
    let settings = f.settings();
    let (a, b) = ("sk-ant-both-canary-aaaa0001", "sk-ant-both-canary-bbbb0002");
    let different = format!(
        "{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{a}\",\n    \"ANTHROPIC_AUTH_TOKEN\": \"{b}\"\n  }}\n}}\n"
    );
    write(&settings, &different)?;
    let refused = f.run(&["client", "setup", "claude-code", "cc", "--move-key", "both"])?;
    assert_eq!(refused.code, 5, "two different keys: refused: {}{}", refused.stdout, refused.stderr);
    assert_eq!(std::fs::read_to_string(&settings)?, different, "nothing written");
    assert!(kept(d).is_empty(), "nothing kept");
    let listed = run(d, &["profile", "list", "cc"], None)?;
    assert!(!listed.stdout.contains("both"), "no profile made: {}", listed.stdout);

    let same = format!(
        "{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{a}\",\n    \"ANTHROPIC_AUTH_TOKEN\": \"{a}\"\n  }}\n}}\n"
    );
    write(&settings, &same)?;
    let moved = f.run(&["client", "setup", "claude-code", "cc", "--move-key", "both"])?;
    assert_eq!(moved.code, 0, "one key in both places moves: {}", moved.stderr);
    assert!(!std::fs::read_to_string(&settings)?.contains("both-canary"), "neither copy stays");
    nowhere_kept(d, "both-canary");
    never_printed(&[&refused, &moved], "both-canary");
    assert_eq!(f.run(&["client", "restore", "claude-code"])?.code, 0);
    assert_eq!(std::fs::read_to_string(&settings)?, same, "both copies come back");
    Ok(())
}

#[test]
fn other_secrets_in_the_diff_context_are_masked() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-context-0001")?;
    let settings = f.settings();
    let text = "{\n  \"env\": {\n    \"OPENAI_API_KEY\": \"sk-proj-ctx-canary-1111111111\",\n    \"GH_TOKEN\": \"ghp_ctxcanary2222222222222222222222222222\",\n    \"HDR\": \"Bearer ctx-canary-3333\"\n  }\n}\n";
    write(&settings, text)?;
    let dry = f.run(&["client", "setup", "claude-code", "cc", "--dry-run"])?;
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains(" \"OPENAI_API_KEY\": \"<secret>\""),
        "context lines are shown, masked:\n{}",
        dry.stdout
    );
    never_printed(&[&dry], "canary");
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_dangling_symlink_stays_a_link_through_setup_and_restore() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-link-0001")?;
    let h = f.h();
    std::fs::create_dir_all(h.join(".claude"))?;
    std::fs::create_dir_all(h.join("dotfiles"))?;
    let link = h.join(".claude/settings.json");
    std::os::unix::fs::symlink("../dotfiles/claude.json", &link)?;
    let set = f.run(&["client", "setup", "claude-code", "cc"])?;
    assert_eq!(set.code, 0, "{}", set.stderr);
    assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "the link is still a link");
    assert!(
        std::fs::read_to_string(h.join("dotfiles/claude.json"))?.contains("ANTHROPIC_BASE_URL"),
        "written through it"
    );
    let restored = f.run(&["client", "restore", "claude-code"])?;
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink(), "restore keeps the link");
    assert!(!h.join("dotfiles/claude.json").exists(), "and removes the file set-up created behind it");
    Ok(())
}

#[test]
fn restore_after_the_moved_keys_profile_changed_says_so_and_force_leaves_the_placeholder() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-gone-0001")?;
    let d = f.d();
    let settings = f.settings();
    let canary = "sk-ant-gone-canary-0000001";
    write(&settings, &format!("{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{canary}\"\n  }}\n}}\n"))?;
    assert_eq!(f.run(&["client", "setup", "claude-code", "cc", "--move-key", "moved"])?.code, 0);
    let written = std::fs::read_to_string(&settings)?;
    let rotated = run(d, &["profile", "rotate", "cc", "moved", "--secret-stdin"], Some("sk-ant-rotated-0000002"))?;
    assert_eq!(rotated.code, 0, "rotate: {}", rotated.stderr);
    let refused = f.run(&["client", "restore", "claude-code"])?;
    assert_eq!(refused.code, 5, "a rotated key cannot rebuild the original: {}{}", refused.stdout, refused.stderr);
    assert!(refused.stderr.contains("--force"), "says what --force does: {}", refused.stderr);
    assert_eq!(std::fs::read_to_string(&settings)?, written, "nothing written");
    assert_eq!(run(d, &["profile", "remove", "cc", "moved"], None)?.code, 0, "remove the profile");
    let refused = f.run(&["client", "restore", "claude-code"])?;
    assert_eq!(refused.code, 5, "a removed profile cannot either: {}", refused.stderr);
    let forced = f.run(&["client", "restore", "claude-code", "--force"])?;
    assert_eq!(forced.code, 0, "--force restores: {}", forced.stderr);
    let back = std::fs::read_to_string(&settings)?;
    assert!(back.contains("__switchyard_moved_key__") && !back.contains(canary), "with the placeholder:\n{back}");
    assert!(forced.stdout.contains("__switchyard_moved_key__"), "and says so: {}", forced.stdout);
    never_printed(&[&refused, &forced], canary);
    Ok(())
}

#[test]
fn relay_port_zero_is_never_written_into_a_client_config() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-port-0001")?;
    let (d, h) = (f.d(), f.h());
    let out = client_env(d, h, &["client", "setup", "claude-code", "cc"], &[("SWITCHYARD_RELAY_PORT", "0")])?;
    assert_eq!(out.code, 2, "port 0 is refused: {}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("port 0"), "says why: {}", out.stderr);
    assert!(!h.join(".claude/settings.json").exists(), "nothing written");
    Ok(())
}

#[test]
fn a_config_starting_with_a_byte_order_mark_is_set_up_and_restored() -> TestResult {
    let f = Fixture::claude("sk-ant-cli-bom-0001")?;
    let settings = f.settings();
    let original = "\u{feff}{\n  \"theme\": \"dark\"\n}\n";
    write(&settings, original)?;
    let set = f.run(&["client", "setup", "claude-code", "cc"])?;
    assert_eq!(set.code, 0, "a BOM is accepted: {}", set.stderr);
    let after = std::fs::read_to_string(&settings)?;
    assert!(after.starts_with('\u{feff}') && after.contains("ANTHROPIC_BASE_URL"), "and kept: {after:?}");
    assert_eq!(f.run(&["client", "restore", "claude-code"])?.code, 0);
    assert_eq!(std::fs::read_to_string(&settings)?, original, "byte-identical");
    Ok(())
}
