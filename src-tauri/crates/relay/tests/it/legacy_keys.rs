//! Legacy forwarding reads no body before it forwards (issue 18.1): only the model, by the
//! skim's lazy read; the ledger still gets the turn, conversation and session keys a routed
//! request would, computed by the ledger's task after the answer.

use crate::common::{relay, user, Key, TestResult};
use serde_json::{json, Value};
use switchyard_core::body_skim::BodySkim;
use switchyard_core::turn::ClientIds;
use switchyard_core::Protocol;
use switchyard_mock_provider::KeyScript;

fn one_key() -> Vec<Key<'static>> {
    vec![Key { label: "a", secret: "sk-legacy-keys", weight: 1, script: KeyScript::new(["m1"]) }]
}

fn system() -> Value {
    json!({"role": "system", "content": "You are a coding agent."})
}

/// The keys routing computes for this body with these headers, straight from core.
fn expected(body: &Value, headers: &[(&str, &str)]) -> (String, String, Option<String>) {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let from_headers = ClientIds::read_headers(|name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v));
    let skim = BodySkim::read(Protocol::Openai, &bytes).unwrap_or_else(|_| BodySkim::empty(Protocol::Openai));
    let ids = skim.client_ids(from_headers);
    let (turn, _) = skim.turn_key("c", &ids);
    let (conversation, _) = skim.conversation_key("c", &ids);
    (turn, conversation.as_str().to_string(), ids.session_key("c"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_rows_carry_the_keys_routing_would_compute() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "t1", "type": "function",
        "function": {"name": "read", "arguments": "{}"}}]});
    let result = json!({"role": "tool", "tool_call_id": "t1", "content": "fn main() {}\n"});
    let bodies = [
        json!({"model": "m1", "messages": [system(), user("fix the build")]}),
        json!({"model": "m1", "messages": [system(), user("fix the build"), call, result]}),
        json!({"model": "m1", "messages": [system(), user("fix the build"), call, result,
            {"role": "assistant", "content": "done"}, user("now the tests")]}),
    ];
    let headers = [("x-session-id", "session-42")];
    for body in &bodies {
        let resp = r
            .http
            .post(format!("{}{}", r.base(), r.path()))
            .bearer_auth(&r.token)
            .header(headers[0].0, headers[0].1)
            .json(body)
            .send()
            .await?;
        assert_eq!(resp.status(), 200, "legacy forwards every call");
    }
    let r = r.stop().await?;
    let mut rows = r.engine.attempts("c", 10).await?;
    rows.reverse();
    assert_eq!(rows.len(), 3, "one row per call");
    for (row, body) in rows.iter().zip(&bodies) {
        let (turn, conversation, session) = expected(body, &headers);
        assert_eq!(row.turn, turn, "the ledger's turn is the one routing computes, not a placeholder");
        assert_eq!(row.conversation.as_deref(), Some(conversation.as_str()), "and its conversation");
        assert_eq!(row.session, session, "and the client's session, hashed");
        assert_eq!(row.model.as_deref(), Some("m1"), "the model is read before forwarding");
    }
    assert_eq!(rows[0].turn, rows[1].turn, "a tool loop keeps its turn");
    assert_ne!(rows[1].turn, rows[2].turn, "a new human message starts a new one");
    assert_eq!(rows[0].conversation, rows[2].conversation, "all in one conversation");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_body_without_a_model_still_gets_its_keys() -> TestResult {
    let r = relay("openai", &["m1"], one_key(), None).await?;
    let body = json!({"messages": [system(), user("no model named")]});
    let resp = r.http.post(format!("{}{}", r.base(), r.path())).bearer_auth(&r.token).json(&body).send().await?;
    assert!(resp.status().as_u16() < 500, "the request is forwarded, not failed by the relay: {}", resp.status());
    let r = r.stop().await?;
    let rows = r.engine.attempts("c", 10).await?;
    let (turn, conversation, _) = expected(&body, &[]);
    assert_eq!(rows.first().map(|a| a.turn.as_str()), Some(turn.as_str()), "the keys come from the body's own read");
    assert_eq!(
        rows.first().and_then(|a| a.conversation.as_deref()),
        Some(conversation.as_str()),
        "and its conversation"
    );
    Ok(())
}
