//! The OpenAI Responses API: `POST /v1/responses`, as a `response` object or as typed SSE
//! events (`response.created` … `response.output_text.delta` … `response.completed`).
//! Keys and errors are the OpenAI dialect's (`openai.rs`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};

use crate::fault::Fault;
use crate::openai::{bearer_key, error_response};
use crate::playbook::Call;
use crate::reply::Reply;
use crate::server::{Intake, Shared};
use crate::sse::{event_stream, frame, json_answer, Ending};

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
    let reply = Reply::new(&request.model, &plan.reply, hit.body.len());
    if !request.stream {
        return Ok(json_answer(&response(&reply, "completed"), plan.dies_after.is_some()));
    }
    let item_id = format!("msg_mock_{}", reply.serial);
    let at = |output: Value| {
        let mut v = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
        if let (Value::Object(v), Value::Object(o)) = (&mut v, output) {
            v.extend(o);
        }
        v
    };
    let mut events = vec![
        ("response.created", json!({"response": response(&reply, "in_progress")})),
        ("response.in_progress", json!({"response": response(&reply, "in_progress")})),
        ("response.output_item.added", json!({"output_index": 0, "item": message(&reply, "in_progress", "")})),
        ("response.content_part.added", at(json!({"part": text_part("")}))),
    ];
    for delta in reply.streamed_chunks(plan.dies_after) {
        events.push(("response.output_text.delta", at(json!({"delta": delta}))));
    }
    let ending = if plan.dies_after.is_some() {
        Ending::Dies
    } else {
        let text = reply.text();
        events.extend([
            ("response.output_text.done", at(json!({"text": text}))),
            ("response.content_part.done", at(json!({"part": text_part(&text)}))),
            ("response.output_item.done", json!({"output_index": 0, "item": message(&reply, "completed", &text)})),
            ("response.completed", json!({"response": response(&reply, "completed")})),
        ]);
        Ending::Complete
    };
    let frames = events
        .into_iter()
        .enumerate()
        .map(|(n, (name, mut data))| {
            data["type"] = json!(name);
            data["sequence_number"] = json!(n);
            frame(Some(name), &data.to_string())
        })
        .collect();
    Ok(event_stream(frames, ending))
}

fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

fn message(reply: &Reply, status: &str, text: &str) -> Value {
    let content = if status == "completed" { json!([text_part(text)]) } else { json!([]) };
    json!({
        "type": "message",
        "id": format!("msg_mock_{}", reply.serial),
        "status": status,
        "role": "assistant",
        "content": content,
    })
}

/// The `response` object; `usage` and output only once completed.
fn response(reply: &Reply, status: &str) -> Value {
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
    let output = if completed { json!([message(reply, status, &reply.text())]) } else { json!([]) };
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
