//! The id of an OpenAI Responses answer (`resp_…`), read from the JSON body (`id` of an
//! `object: "response"`) or from the stream's `response.created` / `response.in_progress` /
//! `response.completed` events (`response.id`). The router remembers which profile produced
//! it, so a later `previous_response_id` goes back to that account. Pure; ids longer than
//! [`MAX_RESPONSE_ID_LEN`] or empty are ignored.

use serde::Deserialize;

/// Longest id kept (OpenAI's are ~50 characters); anything longer is not an id we track.
pub const MAX_RESPONSE_ID_LEN: usize = 256;

#[derive(Deserialize)]
struct Body {
    #[serde(default)]
    object: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    response: Option<Body>,
}

fn usable(id: Option<String>) -> Option<String> {
    id.filter(|id| !id.is_empty() && id.len() <= MAX_RESPONSE_ID_LEN)
}

/// The response id of a whole (non-streamed) Responses answer.
pub fn response_id_from_body(body: &[u8]) -> Option<String> {
    // Cheap pre-check: a chat-completions answer (`"object":"chat.completion"`) is read for
    // this too, and a parse of it allocates its object and id for nothing. A Responses answer
    // spells `"response"`, unless a `\u` escape spells it another way.
    static RESPONSE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"response\""));
    if !crate::lenient::may_spell_with(body, &RESPONSE) {
        return None;
    }
    let body: Body = serde_json::from_slice(body).ok()?;
    if body.object.as_deref() != Some("response") {
        return None;
    }
    usable(body.id)
}

/// The response id carried by one stream event's `data`, if it is a response lifecycle event.
pub fn response_id_from_event(data: &str) -> Option<String> {
    // Cheap pre-check: most events are deltas and never carry the response object.
    if !data.contains("\"response.") {
        return None;
    }
    let event: Event = serde_json::from_str(data).ok()?;
    match event.kind.as_deref() {
        Some("response.created" | "response.in_progress" | "response.completed") => usable(event.response?.id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_bodies_and_lifecycle_events_only() {
        let body = br#"{"id":"resp_1","object":"response","status":"completed","output":[]}"#;
        assert_eq!(response_id_from_body(body).as_deref(), Some("resp_1"), "a response body's id");
        let chat = br#"{"id":"chatcmpl-1","object":"chat.completion"}"#;
        assert_eq!(response_id_from_body(chat), None, "chat completions have no response id");
        let spaced = br#"{"id":"resp_3", "object" : "response"}"#;
        assert_eq!(response_id_from_body(spaced).as_deref(), Some("resp_3"), "found past the pre-check");
        let escaped = br#"{"id":"resp_4","object":"respons\u0065"}"#;
        assert_eq!(response_id_from_body(escaped).as_deref(), Some("resp_4"), "an escaped object name too");
        let created = r#"{"type":"response.created","response":{"id":"resp_2","object":"response"}}"#;
        assert_eq!(response_id_from_event(created).as_deref(), Some("resp_2"), "response.created");
        let done = r#"{"type":"response.completed","response":{"id":"resp_2"}}"#;
        assert_eq!(response_id_from_event(done).as_deref(), Some("resp_2"), "response.completed");
        let item = r#"{"type":"response.output_item.added","item":{"id":"msg_1"}}"#;
        assert_eq!(response_id_from_event(item), None, "an item's id is not the response's");
        let long = format!(r#"{{"type":"response.created","response":{{"id":"{}"}}}}"#, "r".repeat(300));
        assert_eq!(response_id_from_event(&long), None, "oversized ids are not tracked");
        assert_eq!(response_id_from_event("not json \"response.created"), None, "garbage is ignored");
    }
}
