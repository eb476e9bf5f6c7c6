//! Checks a request passes before anything of it is used: a loopback `Host` (a page on
//! another site that resolves its name to 127.0.0.1 — DNS rebinding — sends its own name),
//! no `TRACE`/`CONNECT`, a path without dot-segments (raw or percent-encoded, also behind an
//! encoded slash such as `..%2f`: they would reach the provider's request target), and a
//! declared length under the cap.

use http::{header, HeaderMap, Method, StatusCode};

use crate::body::client_body::Response;
use crate::reply::{neutral_error, with_reason};

/// Refuses what no client of the relay sends, before the token is even looked at. `tls`: the
/// connection is TLS (a relay listening beyond loopback), where any `Host` is taken: the loopback
/// `Host` check stops DNS rebinding of a plain loopback relay, which a browser cannot do to a
/// TLS one (the certificate does not name the rebinding domain).
pub fn before_auth(method: &Method, headers: &HeaderMap, tls: bool) -> Result<(), Refusal> {
    if !tls && !is_loopback_host(headers) {
        return Err(refuse(StatusCode::FORBIDDEN, "host_not_loopback", "the relay answers only to a loopback Host"));
    }
    if method == Method::TRACE || method == Method::CONNECT {
        return Err(refuse(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "method not allowed by the relay"));
    }
    Ok(())
}

/// `Host` is `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
pub fn is_loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    // What local clients send, without parsing it as an address (issue 40): the rules below
    // say the same of these.
    if let Some(rest) = host.strip_prefix("127.0.0.1").or_else(|| host.strip_prefix("localhost")) {
        if rest.is_empty() || rest.strip_prefix(':').is_some_and(|port| port.parse::<u16>().is_ok()) {
            return true;
        }
    }
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, port)| if port.parse::<u16>().is_ok() { h } else { host }),
    };
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost")
        || name == "::1"
        || name.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a proxy in front of the relay says it forwarded the request (`Forwarded`,
/// `X-Forwarded-For`, `X-Real-IP`): the peer is then the proxy on loopback, not the caller, so
/// the install's own token — good from loopback only — is not taken from it. A proxy that sets
/// none of these is one the docs warn about (design §15, the nginx example sets
/// `X-Forwarded-For`).
pub fn is_proxied(headers: &HeaderMap) -> bool {
    [http::header::FORWARDED, crate::header_names::X_FORWARDED_FOR, crate::header_names::X_REAL_IP]
        .iter()
        .any(|name| headers.contains_key(name))
}

/// The slug and the raw path after `/c/{slug}/`, refused when a segment of the rest is `.`
/// or `..` in any spelling. Segments are split at `/` and also at the separators a server
/// behind the relay may decode or accept — `%2f`, `%5c` (either case) and `\` — so
/// `..%2fsecret` is the dot-segment it would become there.
pub fn relay_path(path: &str) -> Result<(&str, &str), Refusal> {
    let mut parts = path.splitn(4, '/');
    let slug = parts.nth(2).unwrap_or("");
    let rest = parts.next().unwrap_or("");
    if segments(rest).any(is_dot_segment) {
        return Err(refuse(StatusCode::BAD_REQUEST, "bad_path", "dot-segments are not allowed in relay paths"));
    }
    Ok((slug, rest))
}

/// The segments of `rest`, split at `/`, `\` and their percent-encodings (`%2f`, `%5c`, either
/// case), in one pass over the bytes: four nested `str::split`s by pattern built a substring
/// searcher per segment and per pattern, 4k instructions of every request (callgrind).
fn segments(rest: &str) -> impl Iterator<Item = &str> {
    let mut tail = Some(rest);
    std::iter::from_fn(move || {
        let s = tail?;
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let separator = match b[i] {
                b'/' | b'\\' => 1,
                b'%' if matches!(b.get(i + 1..i + 3), Some([b'2', b'f' | b'F'] | [b'5', b'c' | b'C'])) => 3,
                _ => 0,
            };
            if separator > 0 {
                // Every separator is ASCII: both cuts are on character boundaries.
                tail = s.get(i + separator..);
                return s.get(..i);
            }
            i += 1;
        }
        tail = None;
        Some(s)
    })
}

/// `.` or `..`, each dot written as itself or as `%2e` in either case.
fn is_dot_segment(segment: &str) -> bool {
    let mut dots = 0;
    let mut rest = segment.as_bytes();
    while !rest.is_empty() {
        match rest {
            [b'.', tail @ ..] => rest = tail,
            [b'%', b'2', b'e' | b'E', tail @ ..] => rest = tail,
            _ => return false,
        }
        dots += 1;
    }
    dots == 1 || dots == 2
}

/// The `content-length` a client declared, if any.
pub fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok())
}

pub fn too_large() -> Response {
    refuse(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "the request body is over the relay's limit").response()
}

/// A refused request: its status, `x-switchyard-reason` and message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    status: StatusCode,
    reason: &'static str,
    message: &'static str,
}

impl Refusal {
    pub fn response(self) -> Response {
        with_reason(neutral_error(self.status, "invalid_request_error", self.message), self.reason)
    }
}

fn refuse(status: StatusCode, reason: &'static str, message: &'static str) -> Refusal {
    Refusal { status, reason, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(h: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        if let Ok(v) = h.parse() {
            m.insert("host", v);
        }
        m
    }

    #[test]
    fn only_loopback_hosts_pass() {
        for ok in [
            "127.0.0.1:4141",
            "127.0.0.1",
            "localhost:4141",
            "localhost",
            "LOCALHOST:80",
            "[::1]:4141",
            "127.0.0.2",
            "localhost.",
        ] {
            assert!(is_loopback_host(&host(ok)), "{ok} is loopback");
        }
        for bad in [
            "evil.example:4141",
            "127.0.0.1.evil.example",
            "127.0.0.1:",
            "127.0.0.1:99999",
            "127.0.0.1:80x",
            "localhost:x",
            "localhostx",
            "0.0.0.0",
            "[::2]",
            "localhost.evil",
            "",
        ] {
            assert!(!is_loopback_host(&host(bad)), "{bad} is refused");
        }
        assert!(!is_loopback_host(&HeaderMap::new()), "no Host is refused");
    }

    /// The segments as four nested splits by pattern (what `segments` did before it scanned).
    fn nested_splits(rest: &str) -> Vec<&str> {
        rest.split(['/', '\\'])
            .flat_map(|s| s.split("%2f"))
            .flat_map(|s| s.split("%2F"))
            .flat_map(|s| s.split("%5c"))
            .flat_map(|s| s.split("%5C"))
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn segments_are_the_nested_splits(rest in "[/\\\\%25fFcC.eéx]{0,24}") {
            proptest::prop_assert_eq!(segments(&rest).collect::<Vec<_>>(), nested_splits(&rest), "{:?}", rest);
        }
    }

    #[test]
    fn dot_segments_are_refused_in_every_spelling() {
        assert_eq!(relay_path("/c/s/v1/messages").ok(), Some(("s", "v1/messages")), "the slug and the rest after it");
        for bad in ["/c/s/../admin", "/c/s/v1/%2e%2e/x", "/c/s/v1/%2E%2e", "/c/s/./v1", "/c/s/v1/.%2E/y", "/c/s/v1/%2e"]
        {
            assert!(relay_path(bad).is_err(), "{bad} is refused");
        }
        for fine in ["/c/s/v1/..x/y", "/c/s/v1/.../y", "/c/s/v1/%2e%2e%2e", "/c/s/v1/%2f", "/c/s/v1/%2", "/c/s/v1//x"] {
            assert!(relay_path(fine).is_ok(), "{fine}: not a dot-segment");
        }
        for bad in
            ["/c/s/v1/%2e%2e%2fx", "/c/s/v1/..%2Fx", "/c/s/v1/x%2f..", "/c/s/v1/.%5cx", "/c/s/v1/..\\x", "/c/s/%2E%2E"]
        {
            assert!(relay_path(bad).is_err(), "{bad}: a dot-segment behind an encoded or other slash is refused");
        }
        for fine in ["/c/s/v1/a%2fb", "/c/s/v1/..x%2fy", "/c/s/v1/%2f%2f", "/c/s/v1/%5", "/c/s/v1/%2fmodels"] {
            assert!(relay_path(fine).is_ok(), "{fine}: encoded slashes alone are no dot-segment");
        }
    }
}
