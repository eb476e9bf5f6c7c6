//! Starting with the system through the real commands over Tauri's mock runtime (issue 17):
//! off by default; turning it on writes the XDG autostart entry for this binary and persists
//! the wish in the engine; turning it off removes the entry. A binary of its own (not in
//! `it/`): it sets `XDG_CONFIG_HOME` for the whole process, which would race the other IPC tests.

#[path = "it/common/mod.rs"]
mod common;

use common::Shell;

use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn autostart_writes_and_removes_the_xdg_entry_and_persists_the_wish() -> TestResult {
    let config = tempfile::tempdir()?;
    // The only test in this binary, so setting the variable races nothing.
    std::env::set_var("XDG_CONFIG_HOME", config.path());
    let entry = config.path().join("autostart").join("switchyard.desktop");
    let shell = Shell::start()?;

    let off = shell.ok("autostart_status", json!({}))?;
    assert_eq!(off, json!({ "enabled": false, "entry": null }), "off by default");
    assert!(!entry.exists());

    let on = shell.ok("autostart_set", json!({ "enabled": true }))?;
    assert_eq!(on["enabled"], true, "{on}");
    assert_eq!(on["entry"], entry.display().to_string(), "the entry written is reported: {on}");
    let text = std::fs::read_to_string(&entry)?;
    let exe = std::env::current_exe()?;
    assert!(text.lines().any(|l| l == format!("Exec={}", exe.display())), "starts this binary: {text}");
    assert_eq!(shell.ok("autostart_status", json!({}))?["enabled"], true, "the wish is persisted by the engine");

    let off = shell.ok("autostart_set", json!({ "enabled": false }))?;
    assert_eq!(off, json!({ "enabled": false, "entry": null }));
    assert!(!entry.exists(), "turning it off removes the entry");
    let bad = shell.err("autostart_set", json!({ "enabled": "yes" }))?;
    assert!(bad.to_string().contains("enabled"), "a non-boolean is refused: {bad}");
    Ok(())
}
