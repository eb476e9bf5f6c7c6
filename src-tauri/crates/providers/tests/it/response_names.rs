//! Which answers are read for a response id (`Dialect::names_responses`): the relay looks for a
//! `resp_…` id in a whole JSON answer only where the dialect says one may be there.

use switchyard_core::Protocol;
use switchyard_providers::dialect;

#[test]
fn only_the_responses_api_names_responses() {
    let openai = dialect::of(Protocol::Openai);
    for rest in ["v1/responses", "responses", "v1/responses/resp_1", "backend-api/codex/responses"] {
        assert!(openai.names_responses(rest), "{rest}: a Responses answer carries the id later calls continue from");
    }
    for rest in ["v1/chat/completions", "v1/models", "v1/embeddings"] {
        assert!(!openai.names_responses(rest), "{rest}: no answer here names a response");
    }
    for protocol in [Protocol::Anthropic, Protocol::Gemini] {
        assert!(!dialect::of(protocol).names_responses("v1/responses"), "{protocol:?} has no Responses API");
    }
    let body = br#"{"object":"response","id":"resp_1"}"#;
    assert_eq!(openai.response_id_from_body(body).as_deref(), Some("resp_1"), "and where it may, it is read");
}
