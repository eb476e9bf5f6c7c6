//! Portable configuration, format v1 (docs/design.md, invariant 14): the document types, parsing
//! with errors that name the JSON path (`connections[1].profiles[0].weight: …`), and
//! rendering. Pure: reading files and writing rows belong to the CLI and the engine.
//! The JSON Schema of the format is `docs/switchyard.config.v1.schema.json`.

mod check;
mod format;
mod scan;

pub use check::MAX_REF_LEN;
pub use format::{
    ConnectionEntry, Document, FallbackEntry, HeaderEntry, PoolEntry, PoolMemberEntry, ProfileEntry, FORMAT, VERSION,
};
pub use scan::{is_key_shaped, is_secret_field};

use serde_json::Value;

use crate::validate::InvalidInput;

/// Largest document accepted: 1 MiB.
pub const MAX_BYTES: usize = 1024 * 1024;

/// Parses and checks a document. Order: size, JSON syntax, `format`/`version`, the secret
/// scan, the typed shape (unknown fields refused), then the rules of the format. The first
/// problem found is returned, with its path; the document text is never echoed.
pub fn parse(text: &str) -> Result<Document, InvalidInput> {
    if text.len() > MAX_BYTES {
        return Err(InvalidInput::new(
            "document",
            format!("is larger than 1 MiB ({} bytes); shared configurations are small", text.len()),
        ));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        InvalidInput::new(
            "document",
            format!("malformed JSON at line {} column {} ({})", e.line(), e.column(), syntax_kind(&e)),
        )
    })?;
    check_header(&value)?;
    scan::scan(&value)?;
    let mut doc: Document = serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { "document".into() } else { path };
        InvalidInput::new(path, without_values(&e.inner().to_string()))
    })?;
    check::check(&mut doc)?;
    Ok(doc)
}

/// Pretty JSON text of a document, ending with a newline.
pub fn render(doc: &Document) -> Result<String, InvalidInput> {
    serde_json::to_string_pretty(doc)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| InvalidInput::new("document", format!("cannot be written: {e}")))
}

/// `format` and `version` come first, so a newer file says "unsupported version" rather
/// than complaining about fields this version does not know.
fn check_header(value: &Value) -> Result<(), InvalidInput> {
    let Some(obj) = value.as_object() else {
        return Err(InvalidInput::new("document", "must be a JSON object with \"format\": \"switchyard.config\""));
    };
    match obj.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        Some(Value::String(_)) => {
            return Err(InvalidInput::new("format", format!("unknown format (expected \"{FORMAT}\")")))
        }
        Some(_) => return Err(InvalidInput::new("format", format!("must be the string \"{FORMAT}\""))),
        None => {
            return Err(InvalidInput::new(
                "format",
                format!("is missing (expected \"{FORMAT}\"); this is not a Switchyard configuration"),
            ))
        }
    }
    match obj.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => Ok(()),
        Some(Value::Number(n)) => Err(InvalidInput::new(
            "version",
            format!("unsupported version {n} (this Switchyard reads version {VERSION})"),
        )),
        Some(_) => Err(InvalidInput::new("version", format!("must be the number {VERSION}"))),
        None => Err(InvalidInput::new("version", format!("is missing (expected {VERSION})"))),
    }
}

/// A serde message without the value it quotes: `invalid type: string "…", expected i64`
/// becomes `invalid type: a string, expected i64`, `unknown variant `…`, expected …` loses
/// the variant. Field names (`unknown field`, `missing field`) are kept: the path has them.
fn without_values(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some(at) = rest.rfind(", expected ") {
                let (unexpected, expected) = rest.split_at(at);
                let kind = if unexpected.starts_with("string ") || unexpected.starts_with("character ") {
                    "a string"
                } else {
                    unexpected
                };
                return format!("{prefix}{kind}{expected}");
            }
            return format!("{prefix}not accepted here");
        }
    }
    if message.starts_with("unknown variant ") {
        return match message.rfind(", expected ") {
            Some(at) => format!("unknown value{}", &message[at..]),
            None => "unknown value".to_string(),
        };
    }
    message.to_string()
}

fn syntax_kind(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Eof => "unexpected end of file",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Data => "unexpected value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_lose_the_values_they_quote() {
        let cases = [
            ("invalid type: string \"sk-canary\", expected i64", "invalid type: a string, expected i64"),
            ("invalid value: string \"x, expected y\", expected a bool", "invalid value: a string, expected a bool"),
            (
                "unknown variant `canary`, expected `openai` or `anthropic`",
                "unknown value, expected `openai` or `anthropic`",
            ),
            ("invalid type: integer `5`, expected a string", "invalid type: integer `5`, expected a string"),
            ("missing field `slug`", "missing field `slug`"),
        ];
        for (raw, want) in cases {
            assert_eq!(without_values(raw), want, "serde's quote of the input is dropped, the rest kept");
        }
    }
}
