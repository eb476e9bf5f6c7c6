//! Read access to response headers, so classification needs no HTTP crate: implemented for
//! slices of name/value pairs; other header maps wrap themselves in a local newtype.

/// What every copy of one header says (a header may be repeated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreed<'a> {
    /// Not sent.
    Absent,
    /// Sent once, or repeated with the same (trimmed) text.
    One(&'a str),
    /// Repeated with different texts: the provider contradicted itself.
    Conflicting,
}

/// Case-insensitive header lookup.
pub trait HeaderSource {
    /// The first value of header `name` (ASCII case-insensitive), if any.
    fn header(&self, name: &str) -> Option<&str>;

    /// Every copy of header `name`, compared. The default sees only the first copy.
    fn header_agreed(&self, name: &str) -> Agreed<'_> {
        self.header(name).map_or(Agreed::Absent, Agreed::One)
    }

    /// Whether some header name starts with one of `prefixes` (lower case), so a reader can
    /// skip answers without any of its headers cheaply. The default cannot tell: `true`.
    fn has_prefix(&self, _prefixes: &[&str]) -> bool {
        true
    }
}

/// Folds copies of one header into what they agree on; an unreadable copy (`None`) is a
/// contradiction.
fn agree<'a>(values: impl Iterator<Item = Option<&'a str>>) -> Agreed<'a> {
    let mut seen = Agreed::Absent;
    for v in values {
        let Some(v) = v.map(str::trim) else { return Agreed::Conflicting };
        seen = match seen {
            Agreed::Absent => Agreed::One(v),
            Agreed::One(first) if first == v => Agreed::One(first),
            _ => return Agreed::Conflicting,
        };
    }
    seen
}

fn starts_with_any(name: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| name.len() >= p.len() && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderSource for [(K, V)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter().find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name)).map(|(_, v)| v.as_ref().trim())
    }

    fn header_agreed(&self, name: &str) -> Agreed<'_> {
        agree(self.iter().filter(|(k, _)| k.as_ref().eq_ignore_ascii_case(name)).map(|(_, v)| Some(v.as_ref())))
    }

    fn has_prefix(&self, prefixes: &[&str]) -> bool {
        self.iter().any(|(k, _)| starts_with_any(k.as_ref(), prefixes))
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderSource for Vec<(K, V)> {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }

    fn header_agreed(&self, name: &str) -> Agreed<'_> {
        self.as_slice().header_agreed(name)
    }

    fn has_prefix(&self, prefixes: &[&str]) -> bool {
        self.as_slice().has_prefix(prefixes)
    }
}

/// Response headers as HTTP clients hold them (reqwest, axum: the `http` crate's map).
impl HeaderSource for reqwest::header::HeaderMap {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
    }

    /// A copy that is not visible ASCII counts as a contradiction: it cannot be read.
    fn header_agreed(&self, name: &str) -> Agreed<'_> {
        agree(self.get_all(name).iter().map(|v| v.to_str().ok()))
    }

    fn has_prefix(&self, prefixes: &[&str]) -> bool {
        self.keys().any(|k| starts_with_any(k.as_str(), prefixes))
    }
}

/// No headers at all (e.g. an error event inside a stream).
impl HeaderSource for () {
    fn header(&self, _name: &str) -> Option<&str> {
        None
    }

    fn has_prefix(&self, _prefixes: &[&str]) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_ignores_case_and_surrounding_space() {
        let h = [("Retry-After", " 20 "), ("retry-after", "99")];
        assert_eq!(h.header("retry-after"), Some("20"), "first match, trimmed, any case");
        assert_eq!(h.header("x-missing"), None, "absent headers are None");
    }

    #[test]
    fn repeated_headers_agree_or_conflict() {
        let same = [("X-A", "5"), ("x-a", " 5")];
        assert_eq!(same.header_agreed("x-a"), Agreed::One("5"), "equal copies agree");
        let differ = [("x-a", "5"), ("x-a", "6")];
        assert_eq!(differ.header_agreed("x-a"), Agreed::Conflicting, "different copies contradict");
        assert_eq!(differ.header_agreed("x-b"), Agreed::Absent, "a missing header is absent");
        let mut map = reqwest::header::HeaderMap::new();
        map.append("x-a", reqwest::header::HeaderValue::from_static("5"));
        map.append("x-a", reqwest::header::HeaderValue::from_static("7"));
        assert_eq!(map.header_agreed("x-a"), Agreed::Conflicting, "the http map sees every copy");
        assert!(map.has_prefix(&["x-"]), "prefix found");
        assert!(!map.has_prefix(&["anthropic-"]), "prefix not found");
    }
}
