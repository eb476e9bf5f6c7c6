//! The checked-in `ui/src/bindings.ts` must be exactly what tauri-specta generates from the
//! commands; regenerate with `SWITCHYARD_WRITE_BINDINGS=1 cargo test -p switchyard-desktop --test it bindings`.

#[test]
fn checked_in_bindings_match_the_commands() -> Result<(), Box<dyn std::error::Error>> {
    let checked_in_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
    let fresh = tempfile_path("bindings.ts");
    switchyard_desktop::export_bindings(&fresh)?;
    let generated = std::fs::read_to_string(&fresh)?;
    if std::env::var_os("SWITCHYARD_WRITE_BINDINGS").is_some() {
        std::fs::write(&checked_in_path, &generated)?;
    }
    let checked_in = std::fs::read_to_string(&checked_in_path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "ui/src/bindings.ts drifted from the Rust commands; run SWITCHYARD_WRITE_BINDINGS=1 cargo test -p switchyard-desktop --test it bindings"
    );
    Ok(())
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("switchyard-{}-{name}", std::process::id()))
}
