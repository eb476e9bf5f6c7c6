//! Minimal edits of JSON and JSONC text: a parser that keeps byte spans (comments and trailing
//! commas allowed when `jsonc`), and edits that replace, insert or remove one object member
//! while every other byte of the file — key order, layout, comments — stays as it was.

/// A parsed value with its byte span in the text.
#[derive(Debug, Clone)]
pub enum Node {
    Object { start: usize, end: usize, members: Vec<Member> },
    Array { start: usize, end: usize },
    Scalar { start: usize, end: usize },
}

/// One `"key": value` of an object; `start` is the key's opening quote.
#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    pub start: usize,
    pub value: Node,
}

impl Node {
    pub fn span(&self) -> (usize, usize) {
        match self {
            Node::Object { start, end, .. } | Node::Array { start, end } | Node::Scalar { start, end } => {
                (*start, *end)
            }
        }
    }

    pub fn member(&self, key: &str) -> Option<&Member> {
        match self {
            Node::Object { members, .. } => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    /// The decoded string when this is a JSON string.
    pub fn as_str<'a>(&self, text: &'a str) -> Option<String> {
        let (s, e) = self.span();
        let raw: &'a str = &text[s..e];
        if raw.starts_with('"') {
            serde_json::from_str::<String>(raw).ok()
        } else {
            None
        }
    }
}

/// Where a parse failed: 1-based line and column (never the text itself, which may hold a key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub what: &'static str,
}

/// Parses `text` as one JSON value (JSONC when `jsonc`: `//` and `/* */` comments, trailing commas).
pub fn parse(text: &str, jsonc: bool) -> Result<Node, ParseError> {
    let mut p = Parser { b: text.as_bytes(), i: 0, jsonc, text };
    p.skip_ws()?;
    let node = p.value(0)?;
    p.skip_ws()?;
    if p.i != p.b.len() {
        return Err(p.err("unexpected text after the value"));
    }
    Ok(node)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    jsonc: bool,
    text: &'a str,
}

impl Parser<'_> {
    fn err(&self, what: &'static str) -> ParseError {
        let before = &self.text.as_bytes()[..self.i.min(self.b.len())];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&c| c != b'\n').count() + 1;
        ParseError { line, column, what }
    }

    fn skip_ws(&mut self) -> Result<(), ParseError> {
        loop {
            match self.b.get(self.i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.jsonc && self.b.get(self.i + 1) == Some(&b'/') => {
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.jsonc && self.b.get(self.i + 1) == Some(&b'*') => {
                    let Some(end) = self.text[self.i + 2..].find("*/") else {
                        return Err(self.err("unterminated comment"));
                    };
                    self.i += 2 + end + 2;
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        if depth > 128 {
            return Err(self.err("nested too deeply"));
        }
        match self.b.get(self.i) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let start = self.i;
                self.string()?;
                Ok(Node::Scalar { start, end: self.i })
            }
            Some(_) => {
                let start = self.i;
                while self.i < self.b.len() && !b",}] \t\r\n/".contains(&self.b[self.i]) {
                    self.i += 1;
                }
                let raw = &self.text[start..self.i];
                if raw.is_empty() || serde_json::from_str::<serde_json::Value>(raw).is_err() {
                    self.i = start;
                    return Err(self.err("expected a value"));
                }
                Ok(Node::Scalar { start, end: self.i })
            }
            None => Err(self.err("unexpected end of file")),
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.i;
        self.i += 1;
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_str::<String>(&self.text[start..self.i]).map_err(|_| {
                        self.i = start;
                        self.err("invalid string")
                    });
                }
                b'\n' => return Err(self.err("line break inside a string")),
                _ => self.i += 1,
            }
        }
        Err(self.err("unterminated string"))
    }

    fn object(&mut self, depth: usize) -> Result<Node, ParseError> {
        let start = self.i;
        self.i += 1;
        let mut members = Vec::new();
        let mut comma = false;
        loop {
            self.skip_ws()?;
            match self.b.get(self.i) {
                Some(b'}') => {
                    if comma && !self.jsonc {
                        return Err(self.err("trailing comma"));
                    }
                    self.i += 1;
                    return Ok(Node::Object { start, end: self.i, members });
                }
                Some(b'"') => {}
                _ => return Err(self.err("expected a key or '}'")),
            }
            let key_start = self.i;
            let key = self.string()?;
            self.skip_ws()?;
            if self.b.get(self.i) != Some(&b':') {
                return Err(self.err("expected ':'"));
            }
            self.i += 1;
            self.skip_ws()?;
            let value = self.value(depth + 1)?;
            members.push(Member { key, start: key_start, value });
            self.skip_ws()?;
            match self.b.get(self.i) {
                Some(b',') => {
                    self.i += 1;
                    comma = true;
                }
                Some(b'}') => comma = false,
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Node, ParseError> {
        let start = self.i;
        self.i += 1;
        let mut first = true;
        loop {
            self.skip_ws()?;
            if self.b.get(self.i) == Some(&b']') {
                self.i += 1;
                return Ok(Node::Array { start, end: self.i });
            }
            if !first {
                return Err(self.err("expected ',' or ']'"));
            }
            loop {
                self.value(depth + 1)?;
                self.skip_ws()?;
                match self.b.get(self.i) {
                    Some(b',') => {
                        self.i += 1;
                        self.skip_ws()?;
                        if self.b.get(self.i) == Some(&b']') {
                            if !self.jsonc {
                                return Err(self.err("trailing comma"));
                            }
                            break;
                        }
                    }
                    Some(b']') => break,
                    _ => return Err(self.err("expected ',' or ']'")),
                }
            }
            first = false;
        }
    }
}

/// The indentation of the line `pos` is on.
fn indent_at(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    &rest[..rest.len() - rest.trim_start_matches([' ', '\t']).len()]
}

/// One indentation step guessed from the file (two spaces when it cannot tell).
pub fn indent_unit(text: &str) -> String {
    for line in text.lines() {
        let n = line.len() - line.trim_start_matches([' ', '\t']).len();
        if n > 0 && !line.trim().is_empty() {
            return line[..n].to_string();
        }
    }
    "  ".to_string()
}

/// Sets `key` in the object `obj` to the JSON text `value` (already serialized, may span lines
/// at `obj`'s inner indentation): replaces the value span when the key exists, else inserts a
/// member after the last one (or into the empty object).
pub fn set_member(text: &str, obj: &Node, key: &str, value: &str) -> String {
    let Node::Object { start, end, members } = obj else { return text.to_string() };
    if let Some(m) = members.iter().find(|m| m.key == key) {
        let (s, e) = m.value.span();
        return format!("{}{}{}", &text[..s], value, &text[e..]);
    }
    let unit = indent_unit(text);
    let key_json = serde_json::to_string(key).unwrap_or_default();
    match members.last() {
        Some(last) => {
            let indent = indent_at(text, last.start).to_string();
            let (_, e) = last.value.span();
            // Keep a comma that already follows the last member (JSONC trailing comma).
            let after = &text[e..*end - 1];
            let trailing = after.trim_start().starts_with(',');
            let insert = if trailing {
                let comma = e + after.find(',').unwrap_or(0) + 1;
                return format!("{}\n{indent}{key_json}: {value},{}", &text[..comma], &text[comma..]);
            } else {
                format!(",\n{indent}{key_json}: {value}")
            };
            format!("{}{}{}", &text[..e], insert, &text[e..])
        }
        None => {
            let outer = indent_at(text, *start).to_string();
            let inner = format!("{outer}{unit}");
            let inside = &text[start + 1..end - 1];
            if inside.trim().is_empty() {
                format!("{}{{\n{inner}{key_json}: {value}\n{outer}}}{}", &text[..*start], &text[*end..])
            } else {
                // Only comments inside: put the member first.
                format!("{}\n{inner}{key_json}: {value},{}", &text[..start + 1], &text[start + 1..])
            }
        }
    }
}

/// Removes `key` from the object `obj`, with its comma and its line when it had one to itself.
pub fn remove_member(text: &str, obj: &Node, key: &str) -> String {
    let Node::Object { members, .. } = obj else { return text.to_string() };
    let Some(pos) = members.iter().position(|m| m.key == key) else { return text.to_string() };
    let m = &members[pos];
    let (_, value_end) = m.value.span();
    let (mut s, mut e) = (m.start, value_end);
    // The comma after it, if any; else the comma before it.
    let rest = &text[e..];
    let ws = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    if rest[ws..].starts_with(',') {
        e += ws + 1;
    } else if pos > 0 {
        let (_, prev_end) = members[pos - 1].value.span();
        if let Some(c) = text[prev_end..s].find(',') {
            s = prev_end + c;
            return format!("{}{}", &text[..s], &text[e..]);
        }
    }
    // Take the whole line when the member had it alone.
    let line_start = text[..s].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[e..].find('\n').map_or(text.len(), |i| e + i);
    if text[line_start..s].trim().is_empty() && text[e..line_end].trim().is_empty() {
        s = line_start;
        e = (line_end + 1).min(text.len());
    }
    format!("{}{}", &text[..s], &text[e..])
}

/// A JSON object literal of string members, laid out at `indent` (the member lines get one more unit).
pub fn object_text(pairs: &[(&str, String)], indent: &str, unit: &str) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        let sep = if i + 1 == pairs.len() { "" } else { "," };
        out.push_str(&format!("\n{indent}{unit}{}: {v}{sep}", serde_json::to_string(k).unwrap_or_default()));
    }
    out.push_str(&format!("\n{indent}}}"));
    out
}

/// The inner indentation of members of `obj` (for building values nested in it).
pub fn member_indent(text: &str, obj: &Node) -> String {
    match obj {
        Node::Object { start, members, .. } => match members.first() {
            Some(m) => indent_at(text, m.start).to_string(),
            None => format!("{}{}", indent_at(text, *start), indent_unit(text)),
        },
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type R = Result<(), Box<dyn std::error::Error>>;

    fn env_of(root: &Node) -> Result<&Node, &'static str> {
        root.member("env").map(|m| &m.value).ok_or("no env")
    }

    #[test]
    fn set_and_remove_keep_every_other_byte() -> R {
        let text = "{\n  // keep me\n  \"a\": 1,\n  \"env\": {\n    \"X\": \"1\"\n  }\n}\n";
        let root = parse(text, true).map_err(|e| e.what)?;
        let out = set_member(text, env_of(&root)?, "Y", "\"2\"");
        assert_eq!(out, "{\n  // keep me\n  \"a\": 1,\n  \"env\": {\n    \"X\": \"1\",\n    \"Y\": \"2\"\n  }\n}\n");
        let root = parse(&out, true).map_err(|e| e.what)?;
        let back = remove_member(&out, env_of(&root)?, "Y");
        assert_eq!(back, text, "removing what was added gives the original bytes back");
        let root = parse(text, true).map_err(|e| e.what)?;
        let added = set_member(text, &root, "b", "true");
        assert!(added.contains("\"b\": true\n}"), "a new top-level member goes last: {added}");
        Ok(())
    }

    #[test]
    fn strict_json_refuses_comments_and_trailing_commas_with_a_position() {
        assert!(parse("{\"a\": 1,}", false).is_err(), "a trailing comma is not JSON");
        assert!(parse("{\"a\": 1,}", true).is_ok(), "but it is JSONC");
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}", false).err().map(|e| (e.line, e.column));
        assert_eq!(e, Some((3, 3)), "the error points at the second key");
        assert!(parse("{} // c", false).is_err(), "comments are not JSON");
    }

    #[test]
    fn an_empty_object_gets_its_first_member() -> R {
        let text = "{}";
        let root = parse(text, false).map_err(|e| e.what)?;
        assert_eq!(set_member(text, &root, "k", "\"v\""), "{\n  \"k\": \"v\"\n}");
        Ok(())
    }
}
