//! The relay token check: `Authorization: Bearer TOKEN`, `x-api-key: TOKEN`, `x-goog-api-key:
//! TOKEN` (Gemini clients; a `?key=TOKEN` query is moved there first by [`key_from_query`], and
//! never forwarded), or the relay's own
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
    headers
        .get(crate::header_names::X_API_KEY)
        .or_else(|| headers.get(crate::header_names::X_GOOG_API_KEY))
        .and_then(|v| v.to_str().ok())
        .map(Secret::new)
}

/// A query with every `key` pair taken out, and whether one of them became the request's
/// credential.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct QueryKey {
    /// The query left (`None` when empty).
    pub query: Option<String>,
    /// `x-goog-api-key` was set from `?key=`: valid only where the target's dialect takes a key
    /// in the URL (Gemini), which the handler asks once the name is resolved.
    pub credential: bool,
}

/// A Gemini client may send its key as `?key=…` (Google's SDKs and `curl` examples do): the
/// relay token there is moved into `x-goog-api-key` (unless a credential header is already
/// present) and every `key` pair is taken out of the query — on every route, a pool's too — so
/// no key ever reaches the upstream URL, a log line or a proxy's access log.
pub fn key_from_query(query: Option<&str>, headers: &mut HeaderMap) -> QueryKey {
    let Some(query) = query else { return QueryKey::default() };
    if !query.split('&').any(is_key_pair) {
        return QueryKey { query: Some(query.to_string()), credential: false };
    }
    let mut kept = Vec::new();
    let mut credential = false;
    for pair in query.split('&') {
        if !is_key_pair(pair) {
            kept.push(pair);
            continue;
        }
        let value = pair.split_once('=').map_or("", |(_, v)| v);
        let has_credential = headers.contains_key(http::header::AUTHORIZATION)
            || headers.contains_key(crate::header_names::X_API_KEY)
            || headers.contains_key(crate::header_names::X_GOOG_API_KEY);
        if !has_credential && !value.is_empty() {
            // A key is URL-safe text; one that is not (percent-encoded) is not a relay token.
            if let Ok(mut v) = http::HeaderValue::from_str(value) {
                v.set_sensitive(true);
                headers.insert(crate::header_names::X_GOOG_API_KEY, v);
                credential = true;
            }
        }
    }
    QueryKey { query: (!kept.is_empty()).then(|| kept.join("&")), credential }
}

fn is_key_pair(pair: &str) -> bool {
    pair == "key" || pair.starts_with("key=")
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
    fn a_gemini_client_s_key_header_or_query_carries_the_token() {
        let token = Secret::new("sy_right");
        let mut h = HeaderMap::new();
        h.insert("x-goog-api-key", "sy_right".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(token_place(&h, &token), Some(TokenPlace::Credential), "x-goog-api-key carries it");

        let mut h = HeaderMap::new();
        let left = key_from_query(Some("alt=sse&key=sy_right"), &mut h);
        assert_eq!(left.query.as_deref(), Some("alt=sse"), "the key is taken out of the query, the rest kept");
        assert!(left.credential, "it became the credential (the handler checks the dialect takes one)");
        assert_eq!(token_place(&h, &token), Some(TokenPlace::Credential), "and checked as the header");

        let mut h = HeaderMap::new();
        assert_eq!(key_from_query(Some("key=sy_right"), &mut h).query, None, "a query of only the key is gone");
        let mut h = HeaderMap::new();
        h.insert("x-goog-api-key", "sy_header".parse().unwrap_or_else(|_| unreachable!()));
        let left = key_from_query(Some("key=sy_right&pageSize=5"), &mut h);
        assert_eq!(left.query.as_deref(), Some("pageSize=5"));
        assert!(!left.credential, "a header already there is the credential");
        assert_eq!(
            h.get("x-goog-api-key").and_then(|v| v.to_str().ok()),
            Some("sy_header"),
            "a header already there wins; the query's key is still stripped"
        );
        let mut h = HeaderMap::new();
        assert_eq!(
            key_from_query(Some("monkey=1&keys=2"), &mut h).query.as_deref(),
            Some("monkey=1&keys=2"),
            "only `key`"
        );
        assert!(h.is_empty(), "nothing moved");
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
