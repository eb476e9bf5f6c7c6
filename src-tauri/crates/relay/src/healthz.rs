//! `GET /healthz`: `{"ok":true}` for anyone; with the relay token, also each connection's
//! routing mode and state (never secrets). With a challenge (`x-switchyard-challenge`) it also
//! answers `"proof"`: HMAC-SHA256 keyed with the relay token over the challenge and the port the
//! request came in on. That lets `switchyard exec` tell this data dir's relay from any other
//! process on the port without sending it the token ([`is_own_relay`]): only a relay holding the
//! token can answer, and one on another port (a process relaying the challenge to it) answers
//! for the wrong port. The proof says nothing of the token (HMAC is a pseudo-random function).
//!
//! `GET /readyz` (for a load balancer; no token): 200 `{"ready":true}` only when the store
//! answers, every migration this build knows is applied and, with the sealed vault, the
//! stored secrets are sealed under this process's master key (`Engine::ready`); else 503
//! `{"ready":false}` — with `"reason"` only for the install's own token from loopback (the
//! reason names master-key ids and the store's state: the log has it too, never a secret). `/healthz` stays "the
//! process is alive".

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use hmac::{Hmac, Mac};
use http::{HeaderMap, Method, StatusCode};
use serde_json::json;
use sha2::Sha256;
use switchyard_vault::Secret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::body::client_body::{json as json_answer, Response};
use crate::conn::Peer;
use crate::state::RelayState;

/// The request header carrying a challenge.
pub const CHALLENGE_HEADER: &str = "x-switchyard-challenge";

/// What the proof is computed over besides the port and the challenge (a proof for anything
/// else keyed with the token can never pass for it).
const PROOF_LABEL: &[u8] = b"switchyard healthz proof v1";

/// How long [`is_own_relay`] waits for an answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Largest answer [`is_own_relay`] reads.
const PROBE_MAX_BYTES: u64 = 64 * 1024;

pub async fn healthz(state: &RelayState, method: &Method, headers: &HeaderMap, peer: Peer) -> Response {
    if let Err(refused) = crate::guard::before_auth(method, headers, peer.tls) {
        return refused.response();
    }
    let proof = challenge_of(headers).and_then(|c| state.with_token(|token| proof(token, peer.local_port, c)));
    if !state.is_authorized(headers, peer.loopback) {
        let body = match proof {
            Some(p) => json!({"ok": true, "proof": p}),
            None => json!({"ok": true}),
        };
        return json_answer(StatusCode::OK, &body);
    }
    let connections = match state.router.engine().connection_list().await {
        Ok(list) => list
            .into_iter()
            .map(|c| json!({"slug": c.slug, "protocol": c.protocol, "mode": c.routing_mode, "state": c.routing_state}))
            .collect::<Vec<_>>(),
        Err(_) => vec![],
    };
    let mut body = json!({"ok": true, "connections": connections});
    if let Some(p) = proof {
        body["proof"] = p.into();
    }
    json_answer(StatusCode::OK, &body)
}

/// `GET /readyz`: whether this relay can serve (see the module's words).
pub async fn readyz(state: &RelayState, method: &Method, headers: &HeaderMap, peer: Peer) -> Response {
    if let Err(refused) = crate::guard::before_auth(method, headers, peer.tls) {
        return refused.response();
    }
    match state.router.engine().ready().await {
        Ok(()) => json_answer(StatusCode::OK, &json!({"ready": true})),
        Err(e) => {
            tracing::warn!(code = e.code().as_str(), reason = %e, "relay not ready");
            // The reason (key ids, the store's state) is the operator's: anyone else — a load
            // balancer, a stranger — learns only that it is not ready.
            let body = if state.is_operator(headers, peer.loopback) {
                json!({"ready": false, "reason": e.to_string()})
            } else {
                json!({"ready": false})
            };
            json_answer(StatusCode::SERVICE_UNAVAILABLE, &body)
        }
    }
}

/// A challenge: 16 to 128 ASCII letters and digits (anything else is not answered).
fn challenge_of(headers: &HeaderMap) -> Option<&str> {
    let c = headers.get(CHALLENGE_HEADER)?.to_str().ok()?;
    ((16..=128).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(c)
}

/// The MAC over the label, the port and the challenge (`None` never happens in practice: HMAC
/// takes a key of any length).
fn mac(token: &Secret, port: u16, challenge: &str) -> Option<Hmac<Sha256>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(token.expose().as_bytes()).ok()?;
    mac.update(PROOF_LABEL);
    mac.update(&port.to_be_bytes());
    mac.update(challenge.as_bytes());
    Some(mac)
}

/// The proof a relay holding `token` and listening on `port` gives for `challenge`, in hex.
pub fn proof(token: &Secret, port: u16, challenge: &str) -> Option<String> {
    Some(hex::encode(mac(token, port, challenge)?.finalize().into_bytes()))
}

/// Whether the process listening on 127.0.0.1:`port` is a relay holding `token` (this data
/// dir's): it must answer a fresh challenge with the proof for `port`. The token itself is
/// never sent; a silent, slow or foreign listener is not ours.
pub async fn is_own_relay(port: u16, token: &Secret) -> bool {
    let mut nonce = [0u8; 32];
    if getrandom::fill(&mut nonce).is_err() {
        return false;
    }
    let challenge = hex::encode(nonce);
    let probe = async {
        let mut s = tokio::net::TcpStream::connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await.ok()?;
        let req = format!(
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{CHALLENGE_HEADER}: {challenge}\r\nConnection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        s.take(PROBE_MAX_BYTES).read_to_end(&mut buf).await.ok()?;
        let text = String::from_utf8_lossy(&buf);
        let (head, body) = text.split_once("\r\n\r\n")?;
        if !head.starts_with("HTTP/1.1 200") {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
        hex::decode(v.get("proof")?.as_str()?).ok()
    };
    let Some(answer) = tokio::time::timeout(PROBE_TIMEOUT, probe).await.ok().flatten() else {
        return false;
    };
    mac(token, port, &challenge).is_some_and(|m| m.verify_slice(&answer).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_binds_the_token_the_port_and_the_challenge() {
        let (token, other) = (Secret::new("sy_one"), Secret::new("sy_two"));
        let c = "0123456789abcdef0123456789abcdef";
        let proof = |t: &Secret, port, c: &str| proof(t, port, c).unwrap_or_default();
        let p = proof(&token, 4141, c);
        assert_eq!(p.len(), 64, "hex of 32 bytes");
        assert_eq!(p, proof(&token, 4141, c), "deterministic");
        assert_ne!(p, proof(&other, 4141, c), "another token gives another proof");
        assert_ne!(p, proof(&token, 4142, c), "another port gives another proof");
        assert_ne!(p, proof(&token, 4141, "0123456789abcdef0123456789abcdee"), "another challenge too");
        assert!(!p.contains("sy_one"), "the proof does not carry the token");
    }

    #[test]
    fn only_plain_challenges_are_answered() {
        let mut h = HeaderMap::new();
        assert_eq!(challenge_of(&h), None, "no challenge");
        for (value, ok) in [("0123456789abcdef", true), ("short", false), ("0123456789abcdef-", false)] {
            h.insert(CHALLENGE_HEADER, value.parse().unwrap_or_else(|_| unreachable!()));
            assert_eq!(challenge_of(&h).is_some(), ok, "{value}");
        }
        h.insert(CHALLENGE_HEADER, "a".repeat(129).parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(challenge_of(&h), None, "over 128 characters");
    }
}
