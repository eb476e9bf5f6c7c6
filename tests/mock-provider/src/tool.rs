//! The scripted tool call: whether a request is due it (it offers the tool, and its last turn
//! holds no tool result yet), and its input cut into the argument pieces that are streamed.

use serde_json::Value;

use crate::script::ToolCall;
use crate::wire::Dialect;

/// At most this many characters per streamed argument piece.
const PIECE_CHARS: usize = 8;

/// Whether `request` (a model call's JSON body) should be answered with `call`.
pub(crate) fn due(call: &ToolCall, request: Option<&Value>, dialect: Dialect) -> bool {
    request.is_some_and(|request| offered(call, request, dialect) && !answered(request, dialect))
}

/// Whether the request's `tools` list names the tool (Anthropic `tools[].name`, chat
/// `tools[].function.name`, Responses `tools[].name` of function tools).
fn offered(call: &ToolCall, request: &Value, dialect: Dialect) -> bool {
    let tools = request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    tools.iter().any(|tool| {
        let name = match dialect {
            Dialect::Anthropic => tool.get("name"),
            Dialect::Chat => tool.pointer("/function/name"),
            Dialect::Responses => {
                let function = tool.get("type").and_then(Value::as_str).unwrap_or("function") == "function";
                tool.get("name").filter(|_| function)
            }
        };
        name.and_then(Value::as_str) == Some(call.name.as_str())
    })
}

/// Whether the conversation's last turn holds a tool result: Anthropic, a `tool_result`
/// block in the last user message; chat, a last message of role `tool`; Responses, a
/// `function_call_output` item after the last user message.
fn answered(request: &Value, dialect: Dialect) -> bool {
    let list = |field: &str| request.get(field).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let role = |item: &Value, role: &str| item.get("role").and_then(Value::as_str) == Some(role);
    let typed = |item: &Value, kind: &str| item.get("type").and_then(Value::as_str) == Some(kind);
    match dialect {
        Dialect::Anthropic => list("messages")
            .iter()
            .rev()
            .find(|m| role(m, "user"))
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .is_some_and(|blocks| blocks.iter().any(|b| typed(b, "tool_result"))),
        Dialect::Chat => list("messages").last().is_some_and(|m| role(m, "tool")),
        Dialect::Responses => {
            let input = list("input");
            let turn = input.iter().rposition(|item| role(item, "user")).map_or(0, |i| i + 1);
            input[turn..].iter().any(|item| typed(item, "function_call_output"))
        }
    }
}

/// The call's input as JSON text, cut into pieces of at most [`PIECE_CHARS`] characters.
pub(crate) fn argument_pieces(call: &ToolCall) -> Vec<String> {
    let text = call.input.to_string();
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(PIECE_CHARS).map(|piece| piece.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn bash() -> ToolCall {
        ToolCall { name: "Bash".to_owned(), input: json!({"command": "echo hi"}) }
    }

    #[test]
    fn due_when_offered_and_not_yet_answered() {
        let anthropic = json!({"tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "go"}]});
        assert!(due(&bash(), Some(&anthropic), Dialect::Anthropic), "offered, no result yet");
        let answered = json!({"tools": [{"name": "Bash"}], "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_mock_1"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_mock_1"}]},
        ]});
        assert!(!due(&bash(), Some(&answered), Dialect::Anthropic), "the result is there");
        let other = json!({"tools": [{"name": "Read"}], "messages": []});
        assert!(!due(&bash(), Some(&other), Dialect::Anthropic), "the tool is not offered");
        assert!(!due(&bash(), None, Dialect::Anthropic), "no JSON body");

        let chat = json!({"tools": [{"type": "function", "function": {"name": "Bash"}}], "messages": [
            {"role": "user", "content": "go"}]});
        assert!(due(&bash(), Some(&chat), Dialect::Chat), "chat names tools under function");
        let chat_done = json!({"tools": [{"type": "function", "function": {"name": "Bash"}}], "messages": [
            {"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "call_mock_1", "content": "hi"}]});
        assert!(!due(&bash(), Some(&chat_done), Dialect::Chat), "a last tool message answers");

        let responses = json!({"tools": [{"type": "function", "name": "Bash"}], "input": "go"});
        assert!(due(&bash(), Some(&responses), Dialect::Responses), "a string input holds no result");
        let responses_done = json!({"tools": [{"type": "function", "name": "Bash"}], "input": [
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "call_mock_1", "name": "Bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_mock_1", "output": "hi"}]});
        assert!(!due(&bash(), Some(&responses_done), Dialect::Responses), "an output after the user message");
        let next_turn = json!({"tools": [{"type": "function", "name": "Bash"}], "input": [
            {"type": "function_call_output", "call_id": "call_mock_1", "output": "hi"},
            {"role": "user", "content": "again"}]});
        assert!(due(&bash(), Some(&next_turn), Dialect::Responses), "a new user turn calls again");
        let custom = json!({"tools": [{"type": "custom", "name": "Bash"}], "input": "go"});
        assert!(!due(&bash(), Some(&custom), Dialect::Responses), "only function tools count");
    }

    #[test]
    fn argument_pieces_join_to_the_input() {
        let pieces = argument_pieces(&bash());
        assert!(pieces.len() > 1, "the arguments stream in several pieces: {pieces:?}");
        assert_eq!(pieces.concat(), r#"{"command":"echo hi"}"#, "joined they are the input JSON");
    }
}
