//! What every client's config file answers ([`ConfigFile`]), and the values that pass between a
//! file and the set-up use cases: the [`Target`] to write, the [`Plan`] computed, the
//! [`PlainKey`]s found, where a file [`Pointed`], and the string [`Literal`]s masking needs.

use std::ops::Range;
use std::path::Path;

use switchyard_engine::{EngineError, InvalidInput};

use crate::client::Client;

/// One client's config file: how it is read back and what set-up changes in it. Every read goes
/// through the same lookups, which refuse a duplicated member on the path they follow.
pub(crate) trait ConfigFile: Sync {
    /// The provider keys in plain text, read by path, decoded. `protocol` is
    /// the connection's (opencode reads the key of the built-in provider it replaces).
    fn plain_keys(&self, text: &str, protocol: &str) -> Result<Vec<PlainKey>, EngineError>;

    /// The file after set-up; with `move_key`, without the keys [`plain_keys`](Self::plain_keys) reported.
    fn plan(&self, before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError>;

    /// The relay the file points at, if any.
    fn pointed(&self, text: &str) -> Result<Option<Pointed>, EngineError>;

    /// Every string literal of `text` (values and names) with its span, for masking.
    fn literals(&self, text: &str) -> Result<Vec<Literal>, EngineError>;
}

/// What set-up writes.
pub(crate) struct Target {
    pub slug: String,
    pub protocol: String,
    pub base_url: String,
    pub token: String,
    pub model: Option<String>,
    pub models: Vec<String>,
}

/// What a config file's plan computes.
pub(crate) struct Plan {
    pub after: String,
    pub plain_keys: Vec<PlainKey>,
    pub notes: Vec<String>,
}

/// A provider key in plain text: where (`name`, a dotted path) and its decoded value. Masking
/// and the kept original find its literals by span ([`ConfigFile::literals`]).
#[derive(Debug, Clone)]
pub(crate) struct PlainKey {
    pub name: String,
    pub value: String,
}

/// The relay a file points at.
pub(crate) struct Pointed {
    pub port: u16,
    pub slug: String,
    pub token: Option<String>,
}

/// A string literal: its byte span (quotes included) and its decoded value.
pub(crate) struct Literal {
    pub span: Range<usize>,
    pub value: String,
}

/// A malformed client file: where, never what (it may hold a key). Code `invalid`, nothing written.
pub(crate) fn invalid_file(client: Client, line: usize, column: usize, what: &str) -> EngineError {
    EngineError::Invalid(InvalidInput::new(
        "client_config",
        format!(
            "the {client} config file is malformed at line {line}, column {column} ({what}); fix it and retry — nothing was written"
        ),
    ))
}

/// `e` naming the file at `path` when it says a client file is malformed ([`invalid_file`] names
/// the client; the user has to find the file). Other errors, and one already naming it, pass.
pub(crate) fn in_file(e: EngineError, path: &Path) -> EngineError {
    match e {
        EngineError::Invalid(InvalidInput { field, message }) if field == "client_config" => {
            let shown = path.display().to_string();
            let message = if message.contains(&shown) { message } else { format!("{shown}: {message}") };
            EngineError::Invalid(InvalidInput::new(field, message))
        }
        other => other,
    }
}

/// `text` without its UTF-8 byte order mark, and the mark's length (0 or 3). Files are parsed
/// without it and written back with it.
pub(crate) fn split_bom(text: &str) -> (usize, &str) {
    match text.strip_prefix('\u{feff}') {
        Some(body) => (text.len() - body.len(), body),
        None => (0, text),
    }
}

/// 1-based line and column (in characters) of byte `at` in `text`.
pub(crate) fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A Switchyard relay token (`sy_` + 64 hex).
pub(crate) fn is_relay_token(v: &str) -> bool {
    v.len() == 67 && v.starts_with("sy_") && v[3..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// `(port, slug)` of a loopback relay URL `http://127.0.0.1:PORT/c/SLUG[/v1]`.
pub(crate) fn relay_url_parts(url: &str) -> Option<(u16, String)> {
    let rest = url.strip_prefix("http://")?;
    let (host_port, path) = rest.split_once('/')?;
    let (host, port) = host_port.rsplit_once(':')?;
    if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return None;
    }
    let port = port.parse().ok()?;
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix("/v1").unwrap_or(path);
    let slug = path.strip_prefix("c/")?;
    (!slug.is_empty() && !slug.contains('/')).then(|| (port, slug.to_string()))
}

/// The note for a provider key left in the file when set-up does not move it.
pub(crate) fn still_plain_note(name: &str) -> String {
    format!("{name} still holds a provider key in plain text; --move-key LABEL moves it into the keychain")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_urls_are_read_back_and_others_are_not() {
        assert_eq!(relay_url_parts("http://127.0.0.1:4141/c/cc"), Some((4141, "cc".into())));
        assert_eq!(relay_url_parts("http://localhost:4141/c/cx/v1/"), Some((4141, "cx".into())));
        assert_eq!(relay_url_parts("https://127.0.0.1:4141/c/cc"), None, "not the relay's scheme");
        assert_eq!(relay_url_parts("http://example.com:4141/c/cc"), None, "not loopback");
        assert_eq!(line_column("a\nbc\u{e9}d", 6), (2, 4), "columns count characters");
    }
}
