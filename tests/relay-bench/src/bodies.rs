//! Request bodies shaped like a coding agent's (issue 18): an OpenAI chat request with a long
//! system prompt, ~25 tool definitions and a conversation of tool loops — assistant tool calls
//! and tool results holding source code full of escapes — grown to a target size. Generated
//! deterministically (no randomness), once per size; each request appends its own last user
//! message, so every request is a new turn as in a real session.

/// Sizes the paced tables run: (name, approximate body bytes, paced rate in req/s).
pub const SIZES: [(&str, usize, f64); 4] =
    [("one-line", 0, 500.0), ("9 KB", 9 * 1024, 500.0), ("200 KB", 200 * 1024, 200.0), ("1 MB", 1024 * 1024, 50.0)];

/// A body template: `prefix` + the request's own last message + `SUFFIX`.
#[derive(Clone)]
pub struct Body {
    prefix: Vec<u8>,
    /// Every request the same body (`relay-bench --hop --one-body`): one turn throughout.
    one_turn: bool,
}

const SUFFIX: &[u8] = b"\"}]}";

impl Body {
    /// A template of about `size` bytes (`0`: the one-line chat request).
    pub fn new(size: usize, stream: bool) -> Self {
        let mut prefix = format!("{{\"model\":\"m1\",\"stream\":{stream},");
        if size > 0 {
            prefix.push_str("\"tools\":[");
            // Claude Code sends ~25 tools; a small body has room for a few.
            for i in 0..(size / 8192).clamp(1, 25) {
                if i > 0 {
                    prefix.push(',');
                }
                prefix.push_str(&tool(i));
            }
            prefix.push_str("],");
        }
        prefix.push_str("\"messages\":[");
        if size > 0 {
            prefix.push_str(&format!(
                "{{\"role\":\"system\",\"content\":{}}},",
                json_string(&system_prompt((size / 1024).clamp(3, 40)))
            ));
            let mut turn = 0;
            while prefix.len() + 200 < size {
                prefix.push_str(&exchange(turn));
                prefix.push(',');
                turn += 1;
            }
        }
        prefix.push_str("{\"role\":\"user\",\"content\":\"");
        Body { prefix: prefix.into_bytes(), one_turn: false }
    }

    /// This template with every request the same turn when `one_turn` (request 0 of worker 0).
    pub fn one_turn_if(self, one_turn: bool) -> Self {
        Body { one_turn, ..self }
    }

    /// The body of request `n` of worker `w`.
    pub fn for_request(&self, w: usize, n: u64) -> Vec<u8> {
        let (w, n) = if self.one_turn { (0, 0) } else { (w, n) };
        let tail = format!("w{w} n{n}");
        let mut body = Vec::with_capacity(self.prefix.len() + tail.len() + SUFFIX.len());
        body.extend_from_slice(&self.prefix);
        body.extend_from_slice(tail.as_bytes());
        body.extend_from_slice(SUFFIX);
        body
    }

    pub fn len(&self) -> usize {
        self.prefix.len() + SUFFIX.len() + 8
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn system_prompt(rules: usize) -> String {
    let mut s = String::from("You are an interactive CLI tool that helps users with software engineering tasks.\n");
    for i in 0..rules {
        s.push_str(&format!(
            "- Rule {i}: prefer editing existing files; run the tests after each change; never print secrets; \
             keep answers short and cite paths like src/lib.rs:{i}.\n"
        ));
    }
    s
}

fn tool(i: usize) -> String {
    format!(
        "{{\"type\":\"function\",\"function\":{{\"name\":\"tool_{i}\",\"description\":{},\"parameters\":{{\"type\":\"object\",\
         \"properties\":{{\"path\":{{\"type\":\"string\",\"description\":\"File path\"}},\"content\":{{\"type\":\"string\"}},\
         \"limit\":{{\"type\":\"integer\",\"minimum\":1}}}},\"required\":[\"path\"]}}}}}}",
        json_string(&format!("Tool {i}: reads, writes or searches files in the working tree; returns text. {}", "Usage notes. ".repeat(8)))
    )
}

/// One tool loop: the user asks, the assistant calls a tool, the tool answers with code.
fn exchange(turn: usize) -> String {
    let code: String =
        (0..30).map(|l| format!("    let value_{l} = compute(\"{turn}\", {l})?; // \"quoted\"\\path\ttab\n")).collect();
    let result = format!("fn generated_{turn}() -> Result<(), Error> {{\n{code}    Ok(())\n}}\n");
    format!(
        "{{\"role\":\"user\",\"content\":{}}},\
         {{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"id\":\"call_{turn}\",\"type\":\"function\",\
         \"function\":{{\"name\":\"tool_{}\",\"arguments\":{}}}}}]}},\
         {{\"role\":\"tool\",\"tool_call_id\":\"call_{turn}\",\"content\":{}}}",
        json_string(&format!("Please look at step {turn} and fix what fails.")),
        turn % 25,
        json_string(&format!("{{\"path\":\"src/step_{turn}.rs\"}}")),
        json_string(&result)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_valid_json_of_about_their_size() {
        for (name, size, _) in SIZES {
            let body = Body::new(size, true).for_request(3, 7);
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            assert_eq!(v["model"], "m1", "{name}: a chat request");
            let last = v["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
            assert_eq!(last["content"], "w3 n7", "{name}: ending in the request's own user message");
            assert!(body.len() >= size && body.len() < size + 4096 + 200, "{name}: {} bytes", body.len());
            let one = Body::new(size, false).one_turn_if(true);
            assert_eq!(one.for_request(3, 7), one.for_request(0, 1), "{name}: one turn, one body");
        }
    }
}
