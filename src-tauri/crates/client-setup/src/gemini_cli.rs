//! Gemini CLI: `.env` in `~/.gemini/` (`$GEMINI_CLI_HOME/.gemini/` when set), which Gemini CLI
//! loads when the variables are not already in its environment. Set-up writes
//! `GOOGLE_GEMINI_BASE_URL` (the relay's `/c/SLUG`, no version: Gemini CLI adds `v1beta/`) and
//! `GEMINI_API_KEY` (the relay token, which Gemini CLI sends as `x-goog-api-key`). A provider key
//! found in `GEMINI_API_KEY` or `GOOGLE_API_KEY` is reported, and removed when it is moved into
//! the keychain (a `GOOGLE_API_KEY` left there would win over ours in Google's SDK). Gemini CLI
//! still asks once, interactively, how to sign in unless its settings select API-key auth
//! (docs/clients.md: headless runs need that choice). A file with a line Gemini CLI's dotenv
//! reads otherwise than set-up (`NAME: value`, an unclosed quote, text after a closing quote, a
//! `#` in a bare value) is refused, naming the line and column.

use switchyard_engine::EngineError;

use crate::client::Client;
use crate::config_file::{
    invalid_file, is_relay_token, line_column, relay_url_parts, still_plain_note, ConfigFile, Literal, PlainKey, Plan,
    Pointed, Target,
};
use crate::env_doc;

const BASE_URL: &str = "GOOGLE_GEMINI_BASE_URL";
const API_KEY: &str = "GEMINI_API_KEY";
const GOOGLE_API_KEY: &str = "GOOGLE_API_KEY";

pub(crate) struct GeminiEnv;

/// Refuses a file with a line Gemini CLI's dotenv reads otherwise than set-up would
/// ([`env_doc::unreadable`]): where, never what (the line may hold a key).
fn readable(text: &str) -> Result<(), EngineError> {
    match env_doc::unreadable(text) {
        Some((at, why)) => {
            let (line, column) = line_column(text, at);
            Err(invalid_file(Client::GeminiCli, line, column, why))
        }
        None => Ok(()),
    }
}

impl ConfigFile for GeminiEnv {
    /// `GEMINI_API_KEY` unless it is a relay token, and `GOOGLE_API_KEY`.
    fn plain_keys(&self, text: &str, _protocol: &str) -> Result<Vec<PlainKey>, EngineError> {
        readable(text)?;
        let mut out = vec![];
        for name in [API_KEY, GOOGLE_API_KEY] {
            if let Some(value) = env_doc::get(text, name).filter(|v| !v.is_empty() && !is_relay_token(v)) {
                out.push(PlainKey { name: name.to_string(), value });
            }
        }
        Ok(out)
    }

    fn plan(&self, before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError> {
        let keys = self.plain_keys(before, &target.protocol)?;
        let mut after = env_doc::set(before, BASE_URL, &target.base_url);
        after = env_doc::set(&after, API_KEY, &target.token);
        let google_plain = keys.iter().any(|k| k.name == GOOGLE_API_KEY);
        if move_key && google_plain {
            after = env_doc::remove(&after, GOOGLE_API_KEY);
        }
        let mut notes = vec![];
        if !move_key && google_plain {
            notes.push(still_plain_note(GOOGLE_API_KEY));
        }
        if !move_key && keys.iter().any(|k| k.name == API_KEY) {
            notes.push(
                "GEMINI_API_KEY held a provider key; set-up replaces it with the relay token (the kept original has it; --move-key LABEL keeps it as a profile)".into(),
            );
        }
        Ok(Plan { after, plain_keys: keys, notes })
    }

    fn pointed(&self, text: &str) -> Result<Option<Pointed>, EngineError> {
        readable(text)?;
        let Some(url) = env_doc::get(text, BASE_URL) else { return Ok(None) };
        let token = env_doc::get(text, API_KEY);
        Ok(relay_url_parts(&url).map(|(port, slug)| Pointed { port, slug, token }))
    }

    fn literals(&self, text: &str) -> Result<Vec<Literal>, EngineError> {
        readable(text)?;
        Ok(env_doc::literals(text))
    }
}
