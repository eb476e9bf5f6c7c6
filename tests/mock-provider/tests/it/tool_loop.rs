//! The scripted tool loop over real HTTP, for all three APIs: a request offering the tool is
//! answered with a call of it (streamed and as JSON), the request carrying its result with
//! the text reply, and a request not offering it with text right away.

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{KeyScript, MockProvider};

const DONE: &str = "Done: hi";

/// The tool each API's test offers and the input the script gives it.
fn tool(api: Api) -> (&'static str, Value) {
    match api {
        Api::Anthropic => ("Bash", json!({"command": "echo hi", "description": "Say hi"})),
        Api::Chat => ("Bash", json!({"command": "echo hi"})),
        Api::Responses => ("exec_command", json!({"cmd": "echo hi"})),
    }
}

/// Each API's test key.
fn key(api: Api) -> &'static str {
    match api {
        Api::Anthropic => "sk-anthropic",
        Api::Chat => "sk-chat",
        Api::Responses => "sk-responses",
    }
}

async fn mock() -> anyhow::Result<MockProvider> {
    let keys = Api::ALL
        .into_iter()
        .map(|api| {
            let (name, input) = tool(api);
            (key(api), KeyScript::new([Api::MODEL]).reply(DONE).tool(name, input))
        })
        .collect();
    mock_with(keys).await
}

/// The first turn: the user's task, with the tool (and another one) offered.
fn first_turn(api: Api, stream: bool) -> Value {
    let (name, _) = tool(api);
    let mut body = api.request(stream);
    body["tools"] = match api {
        Api::Anthropic => json!([
            {"name": "Read", "input_schema": {"type": "object"}},
            {"name": name, "description": "Run a command", "input_schema": {"type": "object"}},
        ]),
        Api::Chat => json!([{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}]),
        Api::Responses => json!([
            {"type": "web_search"},
            {"type": "function", "name": name, "parameters": {"type": "object"}},
        ]),
    };
    if api == Api::Responses {
        body["input"] = json!([{"type": "message", "role": "user", "content": "say hi"}]);
    }
    body
}

/// The second turn: the first plus the mock's call (`id`) and its result.
fn second_turn(api: Api, id: &str, arguments: &Value) -> Value {
    let (name, _) = tool(api);
    let mut body = first_turn(api, true);
    let push = |list: &mut Value, item: Value| {
        if let Some(list) = list.as_array_mut() {
            list.push(item);
        }
    };
    match api {
        Api::Anthropic => {
            let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": arguments}]});
            push(&mut body["messages"], call);
            let result = json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": "hi"},
                {"type": "text", "text": "go on"},
            ]});
            push(&mut body["messages"], result);
        }
        Api::Chat => {
            let call = json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]});
            push(&mut body["messages"], call);
            push(&mut body["messages"], json!({"role": "tool", "tool_call_id": id, "content": "hi"}));
        }
        Api::Responses => {
            let call =
                json!({"type": "function_call", "call_id": id, "name": name, "arguments": arguments.to_string()});
            push(&mut body["input"], call);
            push(&mut body["input"], json!({"type": "function_call_output", "call_id": id, "output": "hi"}));
        }
    }
    body
}

/// Parses streamed or whole arguments text as JSON.
fn parsed(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or(Value::Null)
}

/// A streamed tool call: checks the dialect's event shapes and returns the call's id.
fn check_streamed_call(api: Api, sse: &Sse) -> String {
    let (name, input) = tool(api);
    assert!(sse.broke.is_none(), "{api:?}: the tool call stream ends cleanly");
    let joined = |pointer: &str| -> String {
        sse.events.iter().filter_map(|e| e.json().pointer(pointer).and_then(Value::as_str).map(str::to_owned)).collect()
    };
    match api {
        Api::Anthropic => {
            let names = sse.names();
            let deltas = names.iter().filter(|n| **n == "content_block_delta").count();
            assert!(deltas > 1, "Anthropic: the input streams in several deltas: {names:?}");
            let mut want = vec!["message_start", "content_block_start"];
            want.extend(std::iter::repeat_n("content_block_delta", deltas));
            want.extend(["content_block_stop", "message_delta", "message_stop"]);
            assert_eq!(names, want, "Anthropic: the tool_use event order");
            let block = &sse.events[1].json()["content_block"];
            let id = block["id"].as_str().unwrap_or_default().to_owned();
            assert!(id.starts_with("toolu_mock_"), "Anthropic: a toolu_mock_ id: {block}");
            assert_eq!(*block, json!({"type": "tool_use", "id": id, "name": name, "input": {}}), "content_block_start");
            assert!(
                sse.events[2..2 + deltas].iter().all(|e| e.json()["delta"]["type"] == "input_json_delta"),
                "Anthropic: the deltas are input_json_delta"
            );
            assert_eq!(parsed(&joined("/delta/partial_json")), input, "Anthropic: the partial JSON joins to the input");
            let delta = sse.events[deltas + 3].json();
            assert_eq!(delta["delta"]["stop_reason"], "tool_use", "Anthropic: the turn stops for the tool");
            assert_eq!(delta["usage"]["output_tokens"].as_u64(), Some(deltas as u64), "Anthropic: with usage");
            id
        }
        Api::Chat => {
            let first = sse.events[0].json();
            let call = &first["choices"][0]["delta"]["tool_calls"][0];
            let id = call["id"].as_str().unwrap_or_default().to_owned();
            assert!(id.starts_with("call_mock_"), "chat: a call_mock_ id: {first}");
            assert_eq!(
                (call["type"].as_str(), call["function"]["name"].as_str(), call["index"].as_u64()),
                (Some("function"), Some(name), Some(0)),
                "chat: the first chunk names the function: {first}"
            );
            assert_eq!(first["choices"][0]["delta"]["role"], "assistant", "chat: and carries the role");
            let arguments = joined("/choices/0/delta/tool_calls/0/function/arguments");
            assert_eq!(parsed(&arguments), input, "chat: the arguments pieces join to the input");
            let finish: Vec<Value> = sse
                .events
                .iter()
                .map(|e| e.json()["choices"][0]["finish_reason"].clone())
                .filter(|f| !f.is_null())
                .collect();
            assert_eq!(finish, [json!("tool_calls")], "chat: the turn finishes for the tool calls");
            assert!(
                sse.events.iter().any(|e| e.json()["usage"]["completion_tokens"].as_u64() > Some(0)),
                "chat: usage"
            );
            assert_eq!(sse.events.last().map(|e| e.data.as_str()), Some("[DONE]"), "chat: [DONE] ends it");
            id
        }
        Api::Responses => {
            let names = sse.names();
            let deltas = names.iter().filter(|n| **n == "response.function_call_arguments.delta").count();
            assert!(deltas > 1, "Responses: the arguments stream in several deltas: {names:?}");
            let mut want = vec!["response.created", "response.in_progress", "response.output_item.added"];
            want.extend(std::iter::repeat_n("response.function_call_arguments.delta", deltas));
            want.extend(["response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
            assert_eq!(names, want, "Responses: the function_call event order");
            let item = &sse.events[2].json()["item"];
            let id = item["call_id"].as_str().unwrap_or_default().to_owned();
            let item_id = item["id"].as_str().unwrap_or_default().to_owned();
            assert!(id.starts_with("call_mock_") && item_id.starts_with("fc_mock_"), "Responses: mock ids: {item}");
            assert_eq!(
                *item,
                json!({"type": "function_call", "id": item_id, "call_id": id, "name": name, "arguments": "", "status": "in_progress"}),
                "Responses: output_item.added"
            );
            assert_eq!(parsed(&joined("/delta")), input, "Responses: the deltas join to the input");
            let done = sse.events[3 + deltas].json();
            assert_eq!(parsed(done["arguments"].as_str().unwrap_or_default()), input, "Responses: arguments.done");
            let completed = sse.events[5 + deltas].json();
            let output = &completed["response"]["output"];
            assert_eq!(output.as_array().map(Vec::len), Some(1), "Responses: one output item: {completed}");
            assert_eq!(
                (output[0]["type"].as_str(), output[0]["status"].as_str(), output[0]["call_id"].as_str()),
                (Some("function_call"), Some("completed"), Some(id.as_str())),
                "Responses: response.completed holds the function_call"
            );
            assert_eq!(parsed(output[0]["arguments"].as_str().unwrap_or_default()), input, "with its arguments");
            assert!(completed["response"]["usage"]["output_tokens"].as_u64() > Some(0), "Responses: with usage");
            for (n, event) in sse.events.iter().enumerate() {
                assert_eq!(event.json()["sequence_number"].as_u64(), Some(n as u64), "Responses: numbered events");
            }
            id
        }
    }
}

/// The text of a streamed text answer.
fn streamed_text(api: Api, sse: &Sse) -> String {
    let pointer = match api {
        Api::Anthropic => "/delta/text",
        Api::Chat => "/choices/0/delta/content",
        Api::Responses => "/delta",
    };
    sse.events.iter().filter_map(|e| e.json().pointer(pointer).and_then(Value::as_str).map(str::to_owned)).collect()
}

#[tokio::test]
async fn a_streamed_tool_call_then_the_text_reply_after_its_result() -> anyhow::Result<()> {
    let mock = mock().await?;
    for api in Api::ALL {
        let (_, input) = tool(api);
        let sse = read_sse(api.post(&mock, key(api), &first_turn(api, true), &[]).await?).await;
        let id = check_streamed_call(api, &sse);
        let sse = read_sse(api.post(&mock, key(api), &second_turn(api, &id, &input), &[]).await?).await;
        assert!(sse.broke.is_none(), "{api:?}: the final answer ends cleanly");
        assert_eq!(streamed_text(api, &sse), DONE, "{api:?}: after the tool result, the text reply");
        let body = api.request(true);
        let sse = read_sse(api.post(&mock, key(api), &body, &[]).await?).await;
        assert_eq!(streamed_text(api, &sse), DONE, "{api:?}: a request not offering the tool gets text");
    }
    Ok(())
}

#[tokio::test]
async fn a_json_tool_call_then_the_text_reply_after_its_result() -> anyhow::Result<()> {
    let mock = mock().await?;
    for api in Api::ALL {
        let (name, input) = tool(api);
        let (status, _, body) = answer(api.post(&mock, key(api), &first_turn(api, false), &[]).await?).await?;
        assert_eq!(status, 200, "{api:?}: ok");
        let id = match api {
            Api::Anthropic => {
                let block = &body["content"][0];
                assert_eq!(
                    (block["type"].as_str(), block["name"].as_str(), &block["input"]),
                    (Some("tool_use"), Some(name), &input),
                    "Anthropic: one tool_use block: {body}"
                );
                assert_eq!(body["content"].as_array().map(Vec::len), Some(1), "Anthropic: only the block");
                assert_eq!(body["stop_reason"], "tool_use", "Anthropic: stop_reason tool_use");
                block["id"].as_str().unwrap_or_default().to_owned()
            }
            Api::Chat => {
                let choice = &body["choices"][0];
                let call = &choice["message"]["tool_calls"][0];
                assert_eq!(
                    (call["type"].as_str(), call["function"]["name"].as_str()),
                    (Some("function"), Some(name)),
                    "chat: a function tool call: {body}"
                );
                assert_eq!(
                    parsed(call["function"]["arguments"].as_str().unwrap_or_default()),
                    input,
                    "chat: arguments"
                );
                assert!(choice["message"]["content"].is_null(), "chat: no content beside the call");
                assert_eq!(choice["finish_reason"], "tool_calls", "chat: finish_reason tool_calls");
                call["id"].as_str().unwrap_or_default().to_owned()
            }
            Api::Responses => {
                let item = &body["output"][0];
                assert_eq!(
                    (item["type"].as_str(), item["name"].as_str(), item["status"].as_str()),
                    (Some("function_call"), Some(name), Some("completed")),
                    "Responses: a function_call item: {body}"
                );
                assert_eq!(parsed(item["arguments"].as_str().unwrap_or_default()), input, "Responses: arguments");
                item["call_id"].as_str().unwrap_or_default().to_owned()
            }
        };
        let mut again = second_turn(api, &id, &input);
        again["stream"] = json!(false);
        let (_, _, body) = answer(api.post(&mock, key(api), &again, &[]).await?).await?;
        let text = match api {
            Api::Anthropic => &body["content"][0]["text"],
            Api::Chat => &body["choices"][0]["message"]["content"],
            Api::Responses => &body["output"][0]["content"][0]["text"],
        };
        assert_eq!(text, DONE, "{api:?}: after the tool result, the text reply: {body}");
    }
    Ok(())
}
