//! Account-bound state, as providers enforce it: response ids, encrypted reasoning and
//! thinking signatures belong to the account (organization) that issued them, and another
//! account refuses a request that refers to them. Only keys whose script sets `account` or
//! `reasoning` issue or check anything; the rest answer as the mock always did.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use crate::fault::Fault;

/// What each account was issued: id (response id, encrypted content, signature) → account.
#[derive(Debug, Default)]
pub(crate) struct Accounts {
    issued: Mutex<HashMap<String, String>>,
}

impl Accounts {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.issued.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers that `account` issued `id`.
    pub fn issue(&self, id: String, account: &str) {
        self.lock().insert(id, account.to_owned());
    }

    fn issued_by(&self, id: &str, account: &str) -> bool {
        self.lock().get(id).is_some_and(|a| a == account)
    }

    /// A Responses request as `account` sees it: `previous_response_id` must be one of its
    /// responses (else 400 `previous_response_not_found`), every input `reasoning` item's
    /// `encrypted_content` one it issued (else 400 `invalid_encrypted_content`).
    pub fn check_responses(&self, request: Option<&Value>, account: &str) -> Result<(), Fault> {
        let Some(request) = request else { return Ok(()) };
        if let Some(id) = request.get("previous_response_id").and_then(Value::as_str) {
            if !self.issued_by(id, account) {
                return Err(Fault::ForeignState {
                    code: "previous_response_not_found",
                    param: "previous_response_id",
                    message: format!("Previous response with id '{id}' not found."),
                });
            }
        }
        let items = request.get("input").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for item in items.iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("reasoning")) {
            let Some(content) = item.get("encrypted_content").and_then(Value::as_str) else { continue };
            if !self.issued_by(content, account) {
                return Err(Fault::ForeignState {
                    code: "invalid_encrypted_content",
                    param: "input",
                    message: "The encrypted content for item could not be verified. Reason: Encrypted content \
                              organization_id did not match the target organization."
                        .to_owned(),
                });
            }
        }
        Ok(())
    }

    /// A Messages request as `account` sees it: every `thinking` block's `signature` in an
    /// assistant message must be one it issued (else 400 `invalid_request_error`).
    pub fn check_messages(&self, request: Option<&Value>, account: &str) -> Result<(), Fault> {
        let Some(messages) = request.and_then(|r| r.get("messages")).and_then(Value::as_array) else {
            return Ok(());
        };
        let blocks = messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten();
        for block in blocks {
            let Some(signature) = block.get("signature").and_then(Value::as_str) else { continue };
            if !self.issued_by(signature, account) {
                return Err(Fault::ForeignState {
                    code: "invalid_request_error",
                    param: "messages",
                    message: "messages.1.content.0: Invalid `signature` in `thinking` block".to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// Whether a Responses request asks for encrypted reasoning (`include` names it).
pub(crate) fn wants_encrypted_reasoning(request: Option<&Value>) -> bool {
    request
        .and_then(|r| r.get("include"))
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|v| v.as_str() == Some("reasoning.encrypted_content")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_is_readable_only_by_the_account_that_issued_it() {
        let accounts = Accounts::default();
        accounts.issue("resp_1".into(), "org-a");
        accounts.issue("enc_1".into(), "org-a");
        accounts.issue("sig_1".into(), "org-a");
        let chained = json!({"previous_response_id": "resp_1"});
        assert!(accounts.check_responses(Some(&chained), "org-a").is_ok(), "the issuing account reads its own");
        assert!(
            matches!(
                accounts.check_responses(Some(&chained), "org-b"),
                Err(Fault::ForeignState { code: "previous_response_not_found", .. })
            ),
            "another account does not know the response"
        );
        let reasoning = json!({"input": [{"type": "reasoning", "encrypted_content": "enc_1", "summary": []}]});
        assert!(accounts.check_responses(Some(&reasoning), "org-a").is_ok(), "own reasoning is readable");
        assert!(
            matches!(
                accounts.check_responses(Some(&reasoning), "org-b"),
                Err(Fault::ForeignState { code: "invalid_encrypted_content", .. })
            ),
            "another account cannot decrypt it"
        );
        let thinking = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "signature": "sig_1"}]}]});
        assert!(accounts.check_messages(Some(&thinking), "org-a").is_ok(), "own signature verifies");
        assert!(accounts.check_messages(Some(&thinking), "org-b").is_err(), "another account's does not");
        assert!(accounts.check_messages(Some(&json!({"messages": []})), "org-b").is_ok(), "nothing to check");
    }
}
