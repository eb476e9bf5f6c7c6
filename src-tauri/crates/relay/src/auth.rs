//! The relay token check: `Authorization: Bearer TOKEN`, `x-api-key: TOKEN`, or the relay's own
//! header `x-switchyard-token: TOKEN` (where an official CLI run by `switchyard exec` carries it,
//! its `Authorization` being its own login), compared in constant time. Requests without it are
//! refused before anything is forwarded — before the body is even read. A bare token in
//! `Authorization` without the `Bearer` scheme is refused (every SDK and agent sends the
//! scheme; accepting anything there would also accept values meant for other schemes). Like
//! every `x-switchyard-*` header, `x-switchyard-token` is never forwarded upstream.

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

/// Where a request carried the relay token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenPlace {
    /// `x-switchyard-token`: the client's `Authorization`, if any, is its own.
    Own,
    /// `Authorization: Bearer` or `x-api-key`: the client's credential headers are the relay's.
    Credential,
}

/// Where the request carries the relay token, if it does: `x-switchyard-token` first (a client
/// that sends it keeps its own credential in `Authorization`), then the credential headers.
pub fn token_place(headers: &HeaderMap, token: &Secret) -> Option<TokenPlace> {
    find(headers, |p| (p == token).then_some(())).map(|(place, ())| place)
}

/// The first presented token `accept` takes (the install's token or a user's), in the order
/// of [`token_place`], with where it was and what `accept` made of it.
pub fn find<T>(headers: &HeaderMap, mut accept: impl FnMut(&Secret) -> Option<T>) -> Option<(TokenPlace, T)> {
    let own = headers.get(crate::header_names::X_SWITCHYARD_TOKEN).and_then(|v| v.to_str().ok());
    if let Some(found) = own.and_then(|v| accept(&Secret::new(v.trim()))) {
        return Some((TokenPlace::Own, found));
    }
    presented(headers).and_then(|p| accept(&p)).map(|found| (TokenPlace::Credential, found))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_authorized(headers: &HeaderMap, token: &Secret) -> bool {
        token_place(headers, token).is_some()
    }

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

    #[test]
    fn the_own_header_carries_the_token_next_to_the_client_s_login() {
        let token = Secret::new("sy_right");
        let mut h = HeaderMap::new();
        h.insert("authorization", "Bearer sk-ant-oat01-login".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(token_place(&h, &token), None, "the client's own login is not the relay token");
        h.insert("x-switchyard-token", "sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(token_place(&h, &token), Some(TokenPlace::Own), "x-switchyard-token carries it");
        h.insert("x-switchyard-token", "sy_wrong".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(token_place(&h, &token), None, "a wrong token there is refused");
        h.insert("authorization", "Bearer sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(
            token_place(&h, &token),
            Some(TokenPlace::Credential),
            "the token in Authorization is found there (the client's credential headers are the relay's)"
        );
    }
}
