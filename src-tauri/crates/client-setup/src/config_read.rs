//! Reading a client's config file, and where writes to it go. Only a regular file is read, and
//! at most [`MAX_CONFIG_BYTES`]: a FIFO, a device (`/dev/zero`) or a directory is refused
//! without being opened for long (the open does not wait for a FIFO's writer), and so is text
//! holding a control character other than tab, LF and CR. A symlinked config — dotfile
//! managers — is followed, dangling or not: writes go to the link's target, so the link stays a
//! link; a target outside HOME and outside the config's own directory is refused ([`check_link`]).

use std::io::Read;
use std::path::{Path, PathBuf};

use switchyard_engine::{EngineError, InvalidInput};

use crate::config_file::line_column;

/// The largest config file set-up reads (1 MiB; the clients' own files are a few KiB).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// How many links a chain may have before set-up gives up following it.
const MAX_LINKS: usize = 40;

/// A config file as read.
pub(crate) struct ConfigText {
    /// `None`: there is no file (or a dangling link).
    pub text: Option<String>,
    /// Where writes go: the path itself, or the end of its chain of links.
    pub real: PathBuf,
    /// Unix permission bits of the file, when it exists.
    pub mode: Option<u32>,
}

fn invalid(path: &Path, why: &str) -> EngineError {
    EngineError::Invalid(InvalidInput::new("client_config", format!("{} {why}; nothing was written", path.display())))
}

/// The end of `path`'s chain of symlinks (`path` itself when it is not a link). The end may not
/// exist (a dangling link).
pub(crate) fn real_path(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(target) if target.is_absolute() => p = target,
                Ok(target) => p = p.parent().unwrap_or(Path::new(".")).join(target),
                Err(_) => break,
            },
            _ => break,
        }
    }
    p
}

/// Refuses to write through a dangling link into a directory that does not exist (set-up
/// creates the client's own config dir, not the directories a link names).
pub(crate) fn check_writable(path: &Path, read: &ConfigText) -> Result<(), EngineError> {
    if read.text.is_none() && read.real != path && !read.real.parent().is_some_and(Path::is_dir) {
        return Err(invalid(path, &format!("is a link to {}, whose directory does not exist", read.real.display())));
    }
    Ok(())
}

/// Reads the config at `path`: regular files only, at most [`MAX_CONFIG_BYTES`], UTF-8 text.
pub(crate) fn read_config(path: &Path) -> Result<ConfigText, EngineError> {
    let real = real_path(path);
    let bytes = read_bytes(&real, path)?;
    let mode = bytes.as_ref().and_then(|_| mode_of(&real));
    let text = match bytes {
        Some(b) => Some(String::from_utf8(b).map_err(|_| invalid(path, "is not UTF-8 text"))?),
        None => None,
    };
    if let Some(t) = &text {
        check_text(path, t)?;
    }
    Ok(ConfigText { text, real, mode })
}

/// Refuses a control character other than tab, line feed and carriage return (NUL, ESC, DEL,
/// C1): no client's config holds one, the clients' parsers disagree on them (a NUL in a
/// comment), and a file holding one is not text to rewrite. Says where, never what is around it.
fn check_text(path: &Path, text: &str) -> Result<(), EngineError> {
    let Some((at, c)) = text.char_indices().find(|&(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) else {
        return Ok(());
    };
    let (line, column) = line_column(text, at);
    Err(invalid(
        path,
        &format!(
            "holds a control character (U+{:04X}) at line {line}, column {column}, which a config file never does; remove it and retry",
            u32::from(c)
        ),
    ))
}

/// Refuses to write through a link whose target lies outside HOME and outside the config's own
/// directory (a link planted to make set-up write, say, `/etc/…` or another user's file), naming
/// both. A link into HOME — a dotfile manager's — is followed; the preview names its target.
pub(crate) fn check_link(path: &Path, real: &Path, home: &Path) -> Result<(), EngineError> {
    if real == path {
        return Ok(());
    }
    // The target may not exist yet (a dangling link): judge the directory it would be written in.
    let Some(real_dir) = real.parent().map(resolved) else { return Ok(()) };
    let own_dir = path.parent().map(resolved);
    // A `..` left (under a directory that does not exist) could climb out of where it starts.
    let climbs = real_dir.components().any(|c| c == std::path::Component::ParentDir);
    if !climbs && (real_dir.starts_with(resolved(home)) || own_dir.is_some_and(|d| real_dir.starts_with(d))) {
        return Ok(());
    }
    Err(EngineError::Precondition(format!(
        "{} is a link to {} (in {}), outside your home directory and the client's config directory; client set-up writes only inside them — point the link there or edit the file by hand; nothing was written",
        path.display(),
        real.display(),
        real_dir.display()
    )))
}

/// `p` with every link and `..` resolved, as far as it exists (the rest joined as written).
fn resolved(p: &Path) -> PathBuf {
    let mut rest = vec![];
    let mut at = p;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// The bytes of the regular file `real` (`None` when absent); `shown` names it in errors.
pub(crate) fn read_bytes(real: &Path, shown: &Path) -> Result<Option<Vec<u8>>, EngineError> {
    let meta = match std::fs::symlink_metadata(real) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EngineError::Internal(format!("cannot read {}: {e}", shown.display()))),
    };
    check_regular(&meta, shown)?;
    let file =
        open_nonblocking(real).map_err(|e| EngineError::Internal(format!("cannot read {}: {e}", shown.display())))?;
    // The file may have been swapped since the check: judge the one that is open.
    let meta = file.metadata().map_err(|e| EngineError::Internal(format!("cannot read {}: {e}", shown.display())))?;
    check_regular(&meta, shown)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0).min(64 * 1024));
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| EngineError::Internal(format!("cannot read {}: {e}", shown.display())))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large(shown));
    }
    Ok(Some(bytes))
}

fn too_large(path: &Path) -> EngineError {
    invalid(path, &format!("is larger than {} KiB, more than a client's config holds", MAX_CONFIG_BYTES / 1024))
}

fn check_regular(meta: &std::fs::Metadata, shown: &Path) -> Result<(), EngineError> {
    if !meta.is_file() {
        return Err(invalid(
            shown,
            "is not a regular file (a FIFO, a device or a directory); client set-up edits only regular files",
        ));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_large(shown));
    }
    Ok(())
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// The unix permission bits of `path`, if it exists.
pub(crate) fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_oversized_files_are_refused_without_reading_them() -> Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        for special in [Path::new("/dev/zero"), dir.path()] {
            let e = read_config(special).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("not a regular file"), "{}: {e}", special.display());
        }
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; MAX_CONFIG_BYTES as usize + 1])?;
        let e = read_config(&big).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("larger than 1024 KiB"), "{e}");
        Ok(())
    }

    /// Issue 39: a file with an escape (or NUL, DEL, C1) was parsed and rewritten.
    #[test]
    fn a_control_character_is_refused_by_where_it_is_never_by_what_is_around_it() -> Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\n  \"k\": \"sk-canary\u{1b}[2J\"\n}\n")?;
        let e = read_config(&path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("(U+001B) at line 2, column 18"), "says which character and where: {e}");
        assert!(e.contains(&path.display().to_string()) && !e.contains("canary"), "names the file, not its text: {e}");
        std::fs::write(&path, "{\r\n\t\"k\": 1\r\n}\r\n")?;
        assert!(read_config(&path).is_ok(), "tabs and CRLF line endings are text");
        Ok(())
    }

    /// Issue 39: a link out of HOME was written through without naming where it led.
    #[test]
    fn a_link_out_of_home_is_refused_and_one_inside_it_is_followed() -> Result<(), std::io::Error> {
        let (home, elsewhere) = (tempfile::tempdir()?, tempfile::tempdir()?);
        let path = home.path().join(".claude/settings.json");
        let inside = home.path().join("dotfiles/claude.json");
        let outside = elsewhere.path().join("claude.json");
        assert!(check_link(&path, &path, home.path()).is_ok(), "not a link");
        assert!(check_link(&path, &inside, home.path()).is_ok(), "a dotfile manager's link into HOME");
        let e = check_link(&path, &outside, home.path()).err();
        let shown = e.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(matches!(e, Some(EngineError::Precondition(_))), "refused as a precondition: {shown}");
        assert!(shown.contains(&outside.display().to_string()), "the real target is named: {shown}");
        Ok(())
    }

    #[test]
    fn a_dangling_link_reads_as_absent_and_resolves_to_its_target() -> Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink("dotfiles-settings.json", &link)?;
        let read = read_config(&link).map_err(std::io::Error::other)?;
        assert!(read.text.is_none(), "a dangling link is a file yet to be written");
        assert_eq!(read.real, dir.path().join("dotfiles-settings.json"), "writes go to the link's target");
        Ok(())
    }
}
