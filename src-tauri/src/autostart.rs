//! Starting with the user's session (issue 17), off by default. The wish is the engine's
//! setting (`start_with_system`); on Linux this writes or removes an XDG autostart entry,
//! `$XDG_CONFIG_HOME/autostart/switchyard.desktop` (else `~/.config/autostart/...`), that
//! starts this very binary. Chosen over tauri-plugin-autostart: no crate, no JS surface, and a
//! file the user can see (the plugin writes the same kind of file on Linux). macOS and
//! Windows are not wired yet (the setting is kept; the entry is refused as unsupported).

use std::path::{Path, PathBuf};

/// The autostart entry's file name.
pub const ENTRY_FILE: &str = "switchyard.desktop";
/// Marks an entry as this app's, so removal never touches another file.
const MARK: &str = "X-Switchyard-Autostart=true";

/// Where the entry goes: `$XDG_CONFIG_HOME/autostart`, else `$HOME/.config/autostart`.
pub fn entry_path() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("autostart").join(ENTRY_FILE))
}

/// The entry's text for the binary at `exe`.
pub fn desktop_entry(exe: &Path) -> String {
    let exe = exe.display().to_string();
    // Desktop Entry Exec quoting: a path with spaces is quoted, `"` `\` `$` `` ` `` escaped.
    let quoted = if exe.chars().any(|c| c.is_whitespace() || "\"\\$`".contains(c)) {
        let escaped: String =
            exe.chars().flat_map(|c| if "\"\\$`".contains(c) { vec!['\\', c] } else { vec![c] }).collect();
        format!("\"{escaped}\"")
    } else {
        exe
    };
    format!(
        "[Desktop Entry]\nType=Application\nName=Switchyard\nComment=Starts the Switchyard relay with your session\n\
         Exec={quoted}\nIcon=switchyard-desktop\nTerminal=false\nX-GNOME-Autostart-enabled=true\n{MARK}\n"
    )
}

/// Makes the entry at `path` match `on` (written for `exe`, or removed if it is ours).
pub fn apply_at(path: &Path, on: bool, exe: &Path) -> std::io::Result<()> {
    if on {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = desktop_entry(exe);
        if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            let tmp = path.with_extension("desktop.tmp");
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, path)?;
        }
        Ok(())
    } else {
        match std::fs::read_to_string(path) {
            Ok(text) if text.lines().any(|l| l == MARK) => std::fs::remove_file(path),
            // Not ours (or unreadable): leave it.
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Whether the entry at `path` is present and ours.
pub fn present_at(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.lines().any(|l| l == MARK))
}

/// Makes the OS match the wish `on` for this binary; `Err` says why in words.
pub fn apply(on: bool) -> Result<Option<PathBuf>, String> {
    if !cfg!(target_os = "linux") {
        return if on { Err("starting with the system is only wired on Linux so far".into()) } else { Ok(None) };
    }
    let path = entry_path().ok_or("neither XDG_CONFIG_HOME nor HOME is set")?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    apply_at(&path, on, &exe).map_err(|e| format!("cannot update {}: {e}", path.display()))?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_starts_this_binary_and_is_marked_as_ours() {
        let text = desktop_entry(Path::new("/usr/bin/switchyard-desktop"));
        assert!(text.starts_with("[Desktop Entry]\n"), "{text}");
        assert!(text.lines().any(|l| l == "Exec=/usr/bin/switchyard-desktop"), "{text}");
        assert!(text.lines().any(|l| l == MARK), "marked, so removal only takes our file");
        let spaced = desktop_entry(Path::new("/opt/My Apps/switch$yard"));
        assert!(spaced.lines().any(|l| l == "Exec=\"/opt/My Apps/switch\\$yard\""), "{spaced}");
    }

    #[test]
    fn apply_writes_then_removes_only_its_own_entry() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("autostart").join(ENTRY_FILE);
        let exe = Path::new("/usr/bin/switchyard-desktop");
        apply_at(&path, true, exe)?;
        assert!(present_at(&path), "written, directory created");
        apply_at(&path, true, exe)?;
        apply_at(&path, false, exe)?;
        assert!(!path.exists(), "removed when turned off");
        apply_at(&path, false, exe)?;
        std::fs::write(&path, "[Desktop Entry]\nExec=someone-else\n")?;
        apply_at(&path, false, exe)?;
        assert!(path.exists(), "a file that is not ours is left alone");
        Ok(())
    }
}
