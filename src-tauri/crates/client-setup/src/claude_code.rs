//! Claude Code: `settings.json` (in `$CLAUDE_CONFIG_DIR`, else `~/.claude/`), strict JSON. Set-up
//! writes `env.ANTHROPIC_BASE_URL` and `env.ANTHROPIC_AUTH_TOKEN` (the relay token); a provider
//! key found in `env.ANTHROPIC_API_KEY` / `env.ANTHROPIC_AUTH_TOKEN` is reported, and removed
//! when it is moved into the keychain.

use switchyard_engine::EngineError;

use crate::client::Client;
use crate::config_file::{
    is_relay_token, relay_url_parts, still_plain_note, ConfigFile, Literal, PlainKey, Plan, Pointed, Target,
};
use crate::json_doc::{self, Dialect, JsonDoc};

const BASE_URL: &str = "ANTHROPIC_BASE_URL";
const AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";
const API_KEY: &str = "ANTHROPIC_API_KEY";

pub(crate) struct ClaudeSettings;

fn parse(text: &str) -> Result<JsonDoc<'_>, EngineError> {
    JsonDoc::parse(text, Client::ClaudeCode, Dialect::Json)
}

/// `env` must be an object when present (set-up writes into it).
fn env_is_object(doc: &JsonDoc<'_>) -> Result<bool, EngineError> {
    match doc.member(doc.root(), "env")? {
        None => Ok(false),
        Some(p) if matches!(p.value, jsonc_parser::ast::Value::Object(_)) => Ok(true),
        Some(_) => Err(crate::config_file::invalid_file(Client::ClaudeCode, 1, 1, "\"env\" is not an object")),
    }
}

impl ConfigFile for ClaudeSettings {
    /// `env.ANTHROPIC_API_KEY`, and `env.ANTHROPIC_AUTH_TOKEN` unless it is a relay token.
    fn plain_keys(&self, text: &str, _protocol: &str) -> Result<Vec<PlainKey>, EngineError> {
        if json_doc::is_blank(text) {
            return Ok(vec![]);
        }
        let doc = parse(text)?;
        env_is_object(&doc)?;
        let Some(env) = doc.object_at(&["env"])? else { return Ok(vec![]) };
        let mut out = vec![];
        for name in [API_KEY, AUTH_TOKEN] {
            if let Some((value, _)) = doc.string(env, name)? {
                if !value.is_empty() && !is_relay_token(&value) {
                    out.push(PlainKey { name: format!("env.{name}"), value });
                }
            }
        }
        Ok(out)
    }

    fn plan(&self, before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError> {
        let text =
            if json_doc::is_blank(before) { format!("{}{{}}\n", json_doc::bom_of(before)) } else { before.to_string() };
        let keys = self.plain_keys(&text, &target.protocol)?;
        let doc = parse(&text)?;
        env_is_object(&doc)?;
        if let Some(env) = doc.object_at(&["env"])? {
            // A duplicate of what set-up writes is refused like one of what it reads.
            for name in [BASE_URL, AUTH_TOKEN] {
                doc.member(env, name)?;
            }
        }
        let api_key_plain = keys.iter().any(|k| k.name == format!("env.{API_KEY}"));
        let after = json_doc::edit(&text, Client::ClaudeCode, Dialect::Json, |root| {
            match root.object_value("env") {
                Some(env) => {
                    json_doc::set(&env, BASE_URL, target.base_url.as_str().into());
                    json_doc::set(&env, AUTH_TOKEN, target.token.as_str().into());
                    if move_key && api_key_plain {
                        json_doc::remove(&env, API_KEY);
                    }
                }
                None => {
                    let env = json_doc::strings(&[(BASE_URL, &target.base_url), (AUTH_TOKEN, &target.token)]);
                    root.append("env", env);
                }
            }
            Ok(())
        })?;
        let mut notes = vec![];
        if !move_key && api_key_plain {
            notes.push(still_plain_note(&format!("env.{API_KEY}")));
        }
        if !move_key && keys.iter().any(|k| k.name.ends_with(AUTH_TOKEN)) {
            notes.push(
                "env.ANTHROPIC_AUTH_TOKEN held a provider key; set-up replaces it with the relay token (the kept original has it; --move-key LABEL keeps it as a profile)".into(),
            );
        }
        Ok(Plan { after, plain_keys: keys, notes })
    }

    fn pointed(&self, text: &str) -> Result<Option<Pointed>, EngineError> {
        if json_doc::is_blank(text) {
            return Ok(None);
        }
        let doc = parse(text)?;
        env_is_object(&doc)?;
        let Some(env) = doc.object_at(&["env"])? else { return Ok(None) };
        let Some((url, _)) = doc.string(env, BASE_URL)? else { return Ok(None) };
        let token = doc.string(env, AUTH_TOKEN)?.map(|(t, _)| t);
        Ok(relay_url_parts(&url).map(|(port, slug)| Pointed { port, slug, token }))
    }

    fn literals(&self, text: &str) -> Result<Vec<Literal>, EngineError> {
        json_doc::literals(text, Client::ClaudeCode, Dialect::Json)
    }
}
