//! The relay token check: `Authorization: Bearer TOKEN` or `x-api-key: TOKEN`, compared in
//! constant time. Requests without it are refused before anything is forwarded — before the
//! body is even read. A bare token in `Authorization` without the `Bearer` scheme is refused
//! (every SDK and agent sends the scheme; accepting anything there would also accept values
//! meant for other schemes).

use http::HeaderMap;
use switchyard_vault::Secret;

/// The token a client presented, if any.
pub fn presented(headers: &HeaderMap) -> Option<Secret> {
    if let Some(v) = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        let v = v.trim();
        let (scheme, token) = v.split_once(' ')?;
        return scheme.eq_ignore_ascii_case("bearer").then(|| Secret::new(token.trim()));
    }
    headers.get(crate::header_names::X_API_KEY).and_then(|v| v.to_str().ok()).map(Secret::new)
}

/// Whether the request carries the relay token.
pub fn is_authorized(headers: &HeaderMap, token: &Secret) -> bool {
    presented(headers).is_some_and(|p| &p == token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_bearer_and_x_api_key_only_with_the_right_token() {
        let token = Secret::new("sy_right");
        let mut h = HeaderMap::new();
        assert!(!is_authorized(&h, &token), "no token is refused");
        h.insert("authorization", "Bearer sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert!(is_authorized(&h, &token), "bearer token accepted");
        let mut h = HeaderMap::new();
        h.insert("x-api-key", "sy_wrong".parse().unwrap_or_else(|_| unreachable!()));
        assert!(!is_authorized(&h, &token), "a wrong x-api-key is refused");
        let mut h = HeaderMap::new();
        h.insert("authorization", "sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert!(!is_authorized(&h, &token), "a bare token without the Bearer scheme is refused");
        h.insert("authorization", "BEARER sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert!(is_authorized(&h, &token), "the scheme is case-insensitive (RFC 9110)");
        h.insert("authorization", "Basic sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert!(!is_authorized(&h, &token), "another scheme is refused");
    }
}
