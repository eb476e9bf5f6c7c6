//! Read access to response headers, so classification needs no HTTP crate: implemented for
//! slices of name/value pairs; other header maps wrap themselves in a local newtype.

/// Case-insensitive header lookup.
pub trait HeaderSource {
    /// The first value of header `name` (ASCII case-insensitive), if any.
    fn header(&self, name: &str) -> Option<&str>;
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderSource for [(K, V)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter().find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name)).map(|(_, v)| v.as_ref().trim())
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderSource for Vec<(K, V)> {
    fn header(&self, name: &str) -> Option<&str> {
        self.as_slice().header(name)
    }
}

/// Response headers as HTTP clients hold them (reqwest, axum: the `http` crate's map).
impl HeaderSource for reqwest::header::HeaderMap {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
    }
}

/// No headers at all (e.g. an error event inside a stream).
impl HeaderSource for () {
    fn header(&self, _name: &str) -> Option<&str> {
        None
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
}
