//! The OpenAI Responses API: `POST /v1/responses`, as a `response` object or as typed SSE
//! events (`response.created` … `response.output_text.delta` … `response.completed`), or a
//! `function_call` item when the script calls a tool; with a scripted `reasoning`, a
//! `reasoning` item with `encrypted_content` when the request's `include` asks for it.
//! Keys and errors are the OpenAI dialect's (`openai.rs`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};

use crate::account::wants_encrypted_reasoning;
use crate::fault::Fault;
use crate::openai::{bearer_key, error_response};
use crate::playbook::Call;
use crate::reply::Reply;
use crate::server::{Intake, Shared};
use crate::sse::{frame, Ending, Frame};
use crate::wire::{Dialect, Outlet};

/// `POST /v1/responses`.
pub(crate) async fn create_response(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = bearer_key(&headers);
    let hit = shared.intake(method, &uri, headers, body, key);
    answer(&shared, hit).await.unwrap_or_else(|fault| error_response(&fault))
}

async fn answer(shared: &Shared, hit: Intake) -> Result<Response, Fault> {
    shared.playbook.authenticate(hit.key.as_deref())?;
    let request = hit.model_request()?;
    let plan = shared.playbook.play(hit.key.as_deref(), Call::Model(&request.model))?;
    plan.wait().await;
    if let Some(account) = &plan.account {
        shared.accounts.check_responses(hit.json.as_ref(), account)?;
    }
    let out = Outlet::new(plan.wire, Dialect::Responses, hit.accept_encoding.as_deref())
        .quota(plan.quota)
        .subscription(plan.subscription.clone());
    let reply = Reply::answer(&request.model, &plan, hit.json.as_ref(), Dialect::Responses, hit.body.len());
    let reasoning = plan.reasoning && wants_encrypted_reasoning(hit.json.as_ref());
    if let Some(account) = &plan.account {
        shared.accounts.issue(format!("resp_mock_{}", reply.serial), account);
        if reasoning {
            shared.accounts.issue(encrypted_content(&reply), account);
        }
    }
    let response = |status: &str| response(&reply, status, reasoning);
    if !request.stream {
        if plan.stream_error.is_some() {
            return Err(Fault::Overloaded);
        }
        return Ok(out.json(&response("completed"), plan.dies_after.is_some()));
    }
    let item_id = item_id(&reply);
    let at = |output: Value| {
        let mut v = json!({"item_id": item_id, "output_index": 0});
        if reply.call.is_none() {
            v["content_index"] = json!(0);
        }
        if let (Value::Object(v), Value::Object(o)) = (&mut v, output) {
            v.extend(o);
        }
        v
    };
    let mut events = vec![
        ("response.created", json!({"response": response("in_progress")}), false),
        ("response.in_progress", json!({"response": response("in_progress")}), false),
        ("response.output_item.added", json!({"output_index": 0, "item": item(&reply, "in_progress")}), false),
    ];
    if reply.call.is_none() {
        events.push(("response.content_part.added", at(json!({"part": text_part("")})), false));
    }
    let delta_name =
        if reply.call.is_some() { "response.function_call_arguments.delta" } else { "response.output_text.delta" };
    for delta in reply.streamed_chunks(plan.dies_after.or(plan.stream_error)) {
        events.push((delta_name, at(json!({"delta": delta})), true));
    }
    let text = reply.text();
    let ending = if plan.dies_after.is_some() {
        Ending::Dies
    } else if plan.stream_error.is_some() {
        events.push((
            "error",
            json!({
                "code": "server_error",
                "message": "An error occurred while processing your request. You can retry your request, or \
                            contact us through our help center at help.openai.com if the error persists.",
            }),
            false,
        ));
        Ending::Complete
    } else {
        match reply.call {
            None => events.extend([
                ("response.output_text.done", at(json!({"text": text})), false),
                ("response.content_part.done", at(json!({"part": text_part(&text)})), false),
            ]),
            Some(_) => events.push(("response.function_call_arguments.done", at(json!({"arguments": text})), false)),
        }
        events.push((
            "response.output_item.done",
            json!({"output_index": 0, "item": item(&reply, "completed")}),
            false,
        ));
        if reasoning {
            events.extend([
                ("response.output_item.added", json!({"output_index": 1, "item": reasoning_item(&reply)}), false),
                ("response.output_item.done", json!({"output_index": 1, "item": reasoning_item(&reply)}), false),
            ]);
        }
        events.push(("response.completed", json!({"response": response("completed")}), false));
        Ending::Complete
    };
    let frames = events
        .into_iter()
        .enumerate()
        .map(|(n, (name, mut data, content))| {
            data["type"] = json!(name);
            data["sequence_number"] = json!(n);
            Frame { content, ..frame(Some(name), &data.to_string()) }
        })
        .collect();
    Ok(out.stream(frames, ending))
}

fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

/// The output item's id: `msg_mock_N` for a message, `fc_mock_N` for a function call.
fn item_id(reply: &Reply) -> String {
    match reply.call {
        None => format!("msg_mock_{}", reply.serial),
        Some(_) => format!("fc_mock_{}", reply.serial),
    }
}

/// The answer's one output item: the message, or the function call (its arguments only
/// once completed).
fn item(reply: &Reply, status: &str) -> Value {
    let completed = status == "completed";
    match &reply.call {
        None => json!({
            "type": "message",
            "id": item_id(reply),
            "status": status,
            "role": "assistant",
            "content": if completed { json!([text_part(&reply.text())]) } else { json!([]) },
        }),
        Some(call) => json!({
            "type": "function_call",
            "id": item_id(reply),
            "call_id": format!("call_mock_{}", reply.serial),
            "name": call.name,
            "arguments": if completed { reply.text() } else { String::new() },
            "status": status,
        }),
    }
}

/// The account-bound encrypted reasoning of an answer (`enc_mock_N`).
fn encrypted_content(reply: &Reply) -> String {
    format!("enc_mock_{}", reply.serial)
}

/// The answer's reasoning item (after its message: output index 1), with the encrypted
/// content only the issuing account can read.
fn reasoning_item(reply: &Reply) -> Value {
    json!({
        "type": "reasoning",
        "id": format!("rs_mock_{}", reply.serial),
        "summary": [],
        "encrypted_content": encrypted_content(reply),
    })
}

/// The `response` object; `usage` and output only once completed (with the reasoning
/// item when `reasoning`).
fn response(reply: &Reply, status: &str, reasoning: bool) -> Value {
    let completed = status == "completed";
    let usage = completed.then(|| {
        json!({
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        })
    });
    let output = match (completed, reasoning) {
        (false, _) => json!([]),
        (true, false) => json!([item(reply, status)]),
        (true, true) => json!([item(reply, status), reasoning_item(reply)]),
    };
    json!({
        "id": format!("resp_mock_{}", reply.serial),
        "object": "response",
        "created_at": reply.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": reply.model,
        "output": output,
        "usage": usage,
    })
}
