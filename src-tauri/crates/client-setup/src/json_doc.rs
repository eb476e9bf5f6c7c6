//! JSON and JSONC files on `jsonc-parser`: its AST (with byte spans) for reading, its CST for
//! editing, so every byte set-up does not change — comments, layout, key order — stays.
//!
//! A leading UTF-8 byte order mark is accepted and kept; spans count it. A member named twice
//! on a path set-up follows is refused ([`JsonDoc::member`]): the client's parser would use one
//! copy and set-up would read or edit the other.

use std::ops::Range;

use jsonc_parser::ast::{self, ObjectPropName, Value};
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use jsonc_parser::{parse_to_ast, CollectOptions, ParseOptions};
use switchyard_engine::EngineError;

use crate::client::Client;
use crate::config_file::{invalid_file, line_column, split_bom, Literal};

/// Which JSON a client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Strict JSON (Claude Code's settings.json).
    Json,
    /// JSON with `//` and `/* */` comments and trailing commas (opencode).
    Jsonc,
}

fn options(dialect: Dialect) -> ParseOptions {
    let jsonc = dialect == Dialect::Jsonc;
    ParseOptions {
        allow_comments: jsonc,
        allow_trailing_commas: jsonc,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The byte order mark `text` starts with, if any (kept when a blank file is filled).
pub(crate) fn bom_of(text: &str) -> &str {
    &text[..split_bom(text).0]
}

/// Whether `text` holds no JSON at all (empty, blanks, a byte order mark): set-up starts afresh.
pub(crate) fn is_blank(text: &str) -> bool {
    split_bom(text).1.trim().is_empty()
}

/// A parsed file: the AST of its root object, with spans relative to the whole text.
pub(crate) struct JsonDoc<'t> {
    text: &'t str,
    bom: usize,
    client: Client,
    root: ast::Object<'t>,
}

impl<'t> JsonDoc<'t> {
    /// Parses `text`, which must hold one JSON object.
    pub fn parse(text: &'t str, client: Client, dialect: Dialect) -> Result<Self, EngineError> {
        let (bom, body) = split_bom(text);
        let parsed = parse_to_ast(body, &CollectOptions::default(), &options(dialect))
            .map_err(|e| invalid_file(client, e.line_display(), e.column_display(), &e.kind().to_string()))?;
        if let Some((at, what)) = lexical_fault(body, dialect) {
            let (line, column) = line_column(body, at);
            return Err(invalid_file(client, line, column, what));
        }
        match parsed.value {
            Some(Value::Object(root)) => Ok(JsonDoc { text, bom, client, root }),
            _ => Err(invalid_file(client, 1, 1, "not a JSON object")),
        }
    }

    pub fn root(&self) -> &ast::Object<'t> {
        &self.root
    }

    /// The member `name` of `obj`; refused (code `invalid`, line and column of the second copy)
    /// when `obj` has it twice.
    pub fn member<'d>(
        &self,
        obj: &'d ast::Object<'t>,
        name: &str,
    ) -> Result<Option<&'d ast::ObjectProp<'t>>, EngineError> {
        let mut found = obj.properties.iter().filter(|p| prop_name(p) == name);
        let first = found.next();
        if let Some(second) = found.next() {
            let (line, column) = line_column(&self.text[self.bom..], second.range.start);
            return Err(invalid_file(
                self.client,
                line,
                column,
                &format!("\"{name}\" appears twice; the client would read one and set-up the other — keep one"),
            ));
        }
        Ok(first)
    }

    /// The object at `name` in `obj` (`None` when absent or not an object).
    pub fn object<'d>(&self, obj: &'d ast::Object<'t>, name: &str) -> Result<Option<&'d ast::Object<'t>>, EngineError> {
        Ok(self.member(obj, name)?.and_then(|p| match &p.value {
            Value::Object(o) => Some(o),
            _ => None,
        }))
    }

    /// The object at `path` from the root (`None` when a step is absent or not an object).
    pub fn object_at<'d>(&'d self, path: &[&str]) -> Result<Option<&'d ast::Object<'t>>, EngineError> {
        let mut obj = &self.root;
        for name in path {
            match self.object(obj, name)? {
                Some(o) => obj = o,
                None => return Ok(None),
            }
        }
        Ok(Some(obj))
    }

    /// The string member `name` of `obj`: its decoded value and the span of its literal.
    pub fn string(&self, obj: &ast::Object<'t>, name: &str) -> Result<Option<(String, Range<usize>)>, EngineError> {
        Ok(self.member(obj, name)?.and_then(|p| match &p.value {
            Value::StringLit(s) => Some((s.value.to_string(), self.span(s.range))),
            _ => None,
        }))
    }

    fn span(&self, r: jsonc_parser::common::Range) -> Range<usize> {
        r.start + self.bom..r.end + self.bom
    }
}

/// Where a lexer over text `jsonc-parser` accepted is.
#[derive(Clone, Copy)]
enum Lex {
    Between,
    /// A `/` between tokens (JSONC): a comment starts.
    Slash,
    Str,
    /// Right after a `\` in a string.
    Escape,
    LineComment,
    BlockComment,
    /// A `*` in a block comment.
    BlockStar,
}

const RAW_CONTROL: &str =
    "a raw control character (a tab or a line break) inside a string; JSON writes it as an escape such as \\n";
const NOT_JSON_SPACE: &str = "a character between values that JSON does not allow (a no-break or Unicode space?)";

/// What `jsonc-parser` lets through and the clients' own parsers refuse (set-up would otherwise
/// rewrite a file its client cannot read): a raw control character inside a string (JSON wants
/// `\t`, `\n`), and in strict JSON anything between tokens that is not ASCII (a no-break space,
/// U+2028). The byte offset of the first one in `body`, with what it is.
fn lexical_fault(body: &str, dialect: Dialect) -> Option<(usize, &'static str)> {
    let mut state = Lex::Between;
    for (at, c) in body.char_indices() {
        state = match (state, c) {
            (Lex::Str, '"') | (Lex::LineComment, '\n') | (Lex::BlockStar, '/') => Lex::Between,
            (Lex::Str, '\\') => Lex::Escape,
            (Lex::Str | Lex::Escape, c) if c < ' ' => return Some((at, RAW_CONTROL)),
            (Lex::Str | Lex::Escape, _) => Lex::Str,
            (Lex::LineComment, _) => Lex::LineComment,
            (Lex::BlockComment | Lex::BlockStar, '*') => Lex::BlockStar,
            (Lex::BlockComment | Lex::BlockStar, _) => Lex::BlockComment,
            (Lex::Slash, '/') => Lex::LineComment,
            (Lex::Slash, '*') => Lex::BlockComment,
            // Between tokens (or after a lone `/`, which the parser has refused already).
            (_, '"') => Lex::Str,
            (_, '/') if dialect == Dialect::Jsonc => Lex::Slash,
            (_, ' ' | '\t' | '\n' | '\r') => Lex::Between,
            (_, c) if dialect == Dialect::Json && !c.is_ascii_graphic() => return Some((at, NOT_JSON_SPACE)),
            _ => Lex::Between,
        };
    }
    None
}

fn prop_name<'a>(p: &'a ast::ObjectProp<'_>) -> &'a str {
    match &p.name {
        ObjectPropName::String(lit) => lit.value.as_ref(),
        ObjectPropName::Word(lit) => lit.value,
    }
}

/// Every string literal in `text` (member names and values), for masking.
pub(crate) fn literals(text: &str, client: Client, dialect: Dialect) -> Result<Vec<Literal>, EngineError> {
    if is_blank(text) {
        return Ok(vec![]);
    }
    let doc = JsonDoc::parse(text, client, dialect)?;
    let mut out = vec![];
    walk_object(&doc, &doc.root, &mut out);
    Ok(out)
}

fn walk_object(doc: &JsonDoc<'_>, obj: &ast::Object<'_>, out: &mut Vec<Literal>) {
    for p in &obj.properties {
        if let ObjectPropName::String(s) = &p.name {
            out.push(Literal { span: doc.span(s.range), value: s.value.to_string() });
        }
        walk_value(doc, &p.value, out);
    }
}

fn walk_value(doc: &JsonDoc<'_>, v: &Value<'_>, out: &mut Vec<Literal>) {
    match v {
        Value::StringLit(s) => out.push(Literal { span: doc.span(s.range), value: s.value.to_string() }),
        Value::Object(o) => walk_object(doc, o, out),
        Value::Array(a) => a.elements.iter().for_each(|e| walk_value(doc, e, out)),
        _ => {}
    }
}

/// Edits `text` through its CST: `f` gets the root object; every byte it does not touch stays,
/// the byte order mark included.
pub(crate) fn edit(
    text: &str,
    client: Client,
    dialect: Dialect,
    f: impl FnOnce(&CstObject) -> Result<(), EngineError>,
) -> Result<String, EngineError> {
    let (bom, body) = split_bom(text);
    let root = CstRootNode::parse(body, &options(dialect))
        .map_err(|e| invalid_file(client, e.line_display(), e.column_display(), &e.kind().to_string()))?;
    let obj = root.object_value().ok_or_else(|| invalid_file(client, 1, 1, "not a JSON object"))?;
    f(&obj)?;
    Ok(format!("{}{root}", &text[..bom]))
}

/// Sets member `name` of `obj` to `value` (appended when absent); a member that already holds
/// an equal value is left as written.
pub(crate) fn set(obj: &CstObject, name: &str, value: CstInputValue) {
    match obj.get(name) {
        Some(prop) => {
            let same = prop.value().and_then(|v| v.to_serde_value()) == Some(to_serde(&value));
            if !same {
                prop.set_value(value);
            }
        }
        None => {
            obj.append(name, value);
        }
    }
}

/// Removes member `name` of `obj`, with its comma and line.
pub(crate) fn remove(obj: &CstObject, name: &str) {
    if let Some(prop) = obj.get(name) {
        prop.remove();
    }
}

/// An object literal of string members.
pub(crate) fn strings(pairs: &[(&str, &str)]) -> CstInputValue {
    CstInputValue::Object(pairs.iter().map(|(k, v)| (k.to_string(), CstInputValue::String(v.to_string()))).collect())
}

fn to_serde(v: &CstInputValue) -> serde_json::Value {
    match v {
        CstInputValue::Null => serde_json::Value::Null,
        CstInputValue::Bool(b) => serde_json::Value::Bool(*b),
        CstInputValue::Number(n) => serde_json::from_str(n).unwrap_or(serde_json::Value::Null),
        CstInputValue::String(s) => serde_json::Value::String(s.clone()),
        CstInputValue::Array(a) => serde_json::Value::Array(a.iter().map(to_serde).collect()),
        CstInputValue::Object(o) => {
            serde_json::Value::Object(o.iter().map(|(k, v)| (k.clone(), to_serde(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type R = Result<(), Box<dyn std::error::Error>>;

    fn env_url(text: &str) -> Result<Option<(String, Range<usize>)>, EngineError> {
        let doc = JsonDoc::parse(text, Client::ClaudeCode, Dialect::Json)?;
        match doc.object_at(&["env"])? {
            Some(env) => doc.string(env, "ANTHROPIC_BASE_URL"),
            None => Ok(None),
        }
    }

    #[test]
    fn set_and_remove_keep_every_other_byte() -> R {
        let text = "{\n  // keep me\n  \"a\": 1,\n  \"env\": {\n    \"X\": \"1\"\n  }\n}\n";
        let out = edit(text, Client::Opencode, Dialect::Jsonc, |root| {
            if let Some(env) = root.object_value("env") {
                set(&env, "Y", "2".into());
            }
            Ok(())
        })?;
        assert_eq!(out, "{\n  // keep me\n  \"a\": 1,\n  \"env\": {\n    \"X\": \"1\",\n    \"Y\": \"2\"\n  }\n}\n");
        let back = edit(&out, Client::Opencode, Dialect::Jsonc, |root| {
            if let Some(env) = root.object_value("env") {
                remove(&env, "Y");
            }
            Ok(())
        })?;
        assert_eq!(back, text, "removing what was added gives the original bytes back");
        Ok(())
    }

    #[test]
    fn strict_json_refuses_comments_trailing_commas_and_missing_commas_with_a_position() {
        let strict = |t: &str| JsonDoc::parse(t, Client::ClaudeCode, Dialect::Json).map(|_| ());
        assert!(strict("{\"a\": 1,}").is_err(), "a trailing comma is not JSON");
        assert!(JsonDoc::parse("{\"a\": 1,}", Client::Opencode, Dialect::Jsonc).is_ok(), "but it is JSONC");
        assert!(strict("{} // c").is_err(), "comments are not JSON");
        let e = strict("{\n  \"a\": 1\n  \"b\": 2\n}").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 2, column 9"), "the error points where the comma is missing: {e}");
        assert!(strict("[1]").is_err(), "the root must be an object");
    }

    /// Issue 39: jsonc-parser reads a raw tab or line break inside a string, and a no-break space
    /// between values; Claude Code's JSON.parse (and opencode's parser, for strings) do not.
    #[test]
    fn raw_control_characters_in_strings_and_unicode_space_between_values_are_refused() {
        let strict = |t: &str| {
            JsonDoc::parse(t, Client::ClaudeCode, Dialect::Json).err().map(|e| e.to_string()).unwrap_or_default()
        };
        let e = strict("{\n  \"a\": \"x\ty\"\n}");
        assert!(e.contains("line 2, column 10") && e.contains("raw control character"), "a raw tab: {e}");
        let e = strict("{\"a\": 1,\u{a0}\"b\": 2}");
        assert!(e.contains("line 1, column 9") && e.contains("does not allow"), "a no-break space: {e}");
        assert!(!strict("{\"b\": 2}\u{2028}").is_empty(), "a line separator after the object");
        let inside = "{\"a\": \"\\u0000 \u{e9}\u{a0} \\\\\", \"\u{e9}\": 1}";
        assert_eq!(strict(inside), "", "escapes and non-ASCII inside strings are JSON");
        let jsonc = |t: &str| JsonDoc::parse(t, Client::Opencode, Dialect::Jsonc).map(|_| ());
        let commented = "{\n  // a \"quote\", \u{e9} and \t in a comment\n  \"a\": \"/* x */ \\\"\" /* \"b\t\" */\n}";
        assert!(jsonc(commented).is_ok(), "quotes and tabs in comments, comment marks in strings");
        assert!(jsonc("{\"a\": \"x\ny\"}").is_err(), "a raw line break in a JSONC string");
    }

    #[test]
    fn a_byte_order_mark_is_accepted_kept_and_counted_in_spans() -> R {
        let text = "\u{feff}{\"env\": {\"ANTHROPIC_BASE_URL\": \"http://x\"}}";
        let (value, span) = env_url(text)?.ok_or("the URL is read")?;
        assert_eq!((value.as_str(), &text[span]), ("http://x", "\"http://x\""), "the span counts the mark");
        let out = edit(text, Client::ClaudeCode, Dialect::Json, |root| {
            set(root, "k", true.into());
            Ok(())
        })?;
        assert!(out.starts_with('\u{feff}') && out.contains("\"k\": true"), "the mark stays: {out:?}");
        Ok(())
    }

    #[test]
    fn a_member_twice_on_a_path_set_up_reads_is_refused_at_the_second_copy() {
        let text = "{\n  \"env\": {\n    \"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:1/c/a\",\n    \"ANTHROPIC_BASE_URL\": \"https://elsewhere\"\n  }\n}";
        let e = env_url(text).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 4, column 5") && e.contains("appears twice"), "names the second copy: {e}");
        let elsewhere = "{\"other\": 1, \"other\": 2, \"env\": {}}";
        assert!(env_url(elsewhere).is_ok(), "a duplicate off the path set-up follows is the user's business");
    }

    #[test]
    fn escaped_strings_are_decoded_with_the_span_of_what_is_written() -> R {
        let text = "{\"env\": {\"ANTHROPIC_BASE_URL\": \"\\u0068ttp://x\"}}";
        let (value, span) = env_url(text)?.ok_or("read")?;
        assert_eq!((value.as_str(), &text[span]), ("http://x", "\"\\u0068ttp://x\""));
        Ok(())
    }
}
