//! Codex's TOML on `toml_edit`: [`read`] keeps byte spans (for masking and moved keys), [`edit`]
//! changes a `DocumentMut` whose untouched parts print as they were written. TOML itself
//! forbids a key defined twice, so toml_edit refuses duplicates. A leading byte order mark is
//! accepted and kept.

use toml_edit::{Document, DocumentMut, Item, Value};

use switchyard_engine::EngineError;

use crate::client::Client;
use crate::config_file::{invalid_file, line_column, split_bom, Literal};

/// A parsed file with spans; add `bom` to a span to index the whole text.
pub(crate) struct TomlRead<'t> {
    pub bom: usize,
    pub doc: Document<&'t str>,
}

fn malformed(body: &str, e: &toml_edit::TomlError) -> EngineError {
    let (line, column) = e.span().map_or((1, 1), |s| line_column(body, s.start.min(body.len())));
    // The message only (toml_edit's Display quotes the offending line, which may hold a key).
    let what = e.message().lines().next().unwrap_or("invalid TOML").to_string();
    invalid_file(Client::Codex, line, column, &what)
}

pub(crate) fn read(text: &str) -> Result<TomlRead<'_>, EngineError> {
    let (bom, body) = split_bom(text);
    let doc = Document::parse(body).map_err(|e| malformed(body, &e))?;
    Ok(TomlRead { bom, doc })
}

/// Edits `text` with `f`; the byte order mark, if any, stays.
pub(crate) fn edit(
    text: &str,
    f: impl FnOnce(&mut DocumentMut) -> Result<(), EngineError>,
) -> Result<String, EngineError> {
    let (bom, body) = split_bom(text);
    let mut doc = body.parse::<DocumentMut>().map_err(|e| malformed(body, &e))?;
    f(&mut doc)?;
    Ok(format!("{}{doc}", &text[..bom]))
}

/// Every string value in `text` with the span of its literal, for masking.
pub(crate) fn literals(text: &str) -> Result<Vec<Literal>, EngineError> {
    let read = read(text)?;
    let mut out = vec![];
    walk_table(read.bom, read.doc.as_table(), &mut out);
    Ok(out)
}

fn walk_table(bom: usize, t: &dyn toml_edit::TableLike, out: &mut Vec<Literal>) {
    for (_, item) in t.iter() {
        match item {
            Item::Value(v) => walk_value(bom, v, out),
            Item::Table(t) => walk_table(bom, t, out),
            Item::ArrayOfTables(a) => a.iter().for_each(|t| walk_table(bom, t, out)),
            Item::None => {}
        }
    }
}

fn walk_value(bom: usize, v: &Value, out: &mut Vec<Literal>) {
    match v {
        Value::String(s) => {
            if let Some(span) = s.span() {
                out.push(Literal { span: span.start + bom..span.end + bom, value: s.value().clone() });
            }
        }
        Value::Array(a) => a.iter().for_each(|v| walk_value(bom, v, out)),
        Value::InlineTable(t) => walk_table(bom, t, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_spans_cover_the_written_literal_in_tables_arrays_and_inline_tables() -> Result<(), EngineError> {
        let text = "\u{feff}a = \"x\"\n[t]\nb = ['y', \"\\u0073k\"]\nc = { d = \"z\" }\n";
        let got: Vec<(String, &str)> = literals(text)?.into_iter().map(|l| (l.value, &text[l.span])).collect();
        let want = [("x", "\"x\""), ("y", "'y'"), ("sk", "\"\\u0073k\""), ("z", "\"z\"")];
        let want: Vec<(String, &str)> = want.iter().map(|(v, s)| (v.to_string(), *s)).collect();
        assert_eq!(got, want, "decoded values with the spans of what is written (after the byte order mark)");
        let out = edit(text, |doc| {
            doc["n"] = toml_edit::value(1);
            Ok(())
        })?;
        assert!(out.starts_with("\u{feff}a = \"x\"\n") && out.contains("n = 1"), "the mark stays: {out:?}");
        Ok(())
    }
}
