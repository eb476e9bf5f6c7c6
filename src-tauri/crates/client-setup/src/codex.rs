//! Codex CLI: `config.toml` (in `$CODEX_HOME`, else `~/.codex/`), edited with `toml_edit` so
//! comments and layout survive. Set-up writes `model_provider = "switchyard"` and the
//! `[model_providers.switchyard]` table (`base_url`, `wire_api = "responses"` and the relay token
//! as `experimental_bearer_token`, which Codex sends as `Authorization: Bearer` — so Codex needs
//! no environment variable), and `model` only when the file has none.
//!
//! Codex keeps its OpenAI key in `auth.json`, not here: a plain key in this file is a bearer
//! token written into another provider's table, or a key pasted as that provider's `env_key`
//! (which should name an environment variable). `--move-key` removes what was reported.

use switchyard_core::secret_shape::looks_like_key;
use toml_edit::{value, Item, Table, TableLike};

use switchyard_engine::EngineError;

use crate::client::Client;
use crate::config_file::{
    invalid_file, is_relay_token, relay_url_parts, still_plain_note, ConfigFile, Literal, PlainKey, Plan, Pointed,
    Target,
};
use crate::toml_doc;

pub const PROVIDER: &str = "switchyard";

/// The provider fields that can hold a key.
const BEARER: &str = "experimental_bearer_token";
const ENV_KEY: &str = "env_key";

pub(crate) struct CodexConfig;

/// Whether `field` of another provider holds a provider key written in plain text.
fn holds_key(field: &str, v: &str) -> bool {
    match field {
        BEARER => !v.is_empty() && !is_relay_token(v),
        // An environment variable's name is not a key; a key pasted in its place is.
        ENV_KEY => looks_like_key(v) && !v.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
        _ => false,
    }
}

/// `(provider id, table)` of every provider but Switchyard's.
fn other_providers(root: &Table) -> Vec<(&str, &dyn TableLike)> {
    let Some(providers) = root.get("model_providers").and_then(Item::as_table_like) else { return vec![] };
    providers.iter().filter(|(id, _)| *id != PROVIDER).filter_map(|(id, t)| Some((id, t.as_table_like()?))).collect()
}

impl ConfigFile for CodexConfig {
    fn plain_keys(&self, text: &str, _protocol: &str) -> Result<Vec<PlainKey>, EngineError> {
        let read = toml_doc::read(text)?;
        let mut out = vec![];
        for (id, table) in other_providers(read.doc.as_table()) {
            for field in [BEARER, ENV_KEY] {
                let Some(v) = table.get(field).and_then(Item::as_value) else { continue };
                if let Some(s) = v.as_str().filter(|s| holds_key(field, s)) {
                    out.push(PlainKey { name: format!("model_providers.{id}.{field}"), value: s.to_string() });
                }
            }
        }
        Ok(out)
    }

    fn plan(&self, before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError> {
        let keys = self.plain_keys(before, &target.protocol)?;
        let after = toml_doc::edit(before, |doc| {
            if doc.get("model").is_none() {
                if let Some(model) = &target.model {
                    doc["model"] = value(model.as_str());
                }
            }
            doc["model_provider"] = value(PROVIDER);
            if !doc.contains_key("model_providers") {
                let mut t = Table::new();
                t.set_implicit(true);
                doc["model_providers"] = Item::Table(t);
            }
            let Some(providers) = doc["model_providers"].as_table_like_mut() else {
                return Err(invalid_file(Client::Codex, 1, 1, "model_providers is not a table"));
            };
            if move_key {
                for (id, table) in providers.iter_mut() {
                    let Some(table) = table.as_table_like_mut().filter(|_| id.get() != PROVIDER) else { continue };
                    for field in [BEARER, ENV_KEY] {
                        if table.get(field).and_then(Item::as_str).is_some_and(|v| holds_key(field, v)) {
                            table.remove(field);
                        }
                    }
                }
            }
            if providers.get(PROVIDER).and_then(Item::as_table_like).is_none() {
                providers.insert(PROVIDER, Item::Table(Table::new()));
            }
            let Some(table) = providers.get_mut(PROVIDER).and_then(Item::as_table_like_mut) else {
                return Err(invalid_file(Client::Codex, 1, 1, "model_providers.switchyard is not a table"));
            };
            table.insert("name", value("Switchyard"));
            table.insert("base_url", value(target.base_url.as_str()));
            table.insert("wire_api", value("responses"));
            table.insert(BEARER, value(target.token.as_str()));
            Ok(())
        })?;
        let notes = if move_key { vec![] } else { keys.iter().map(|k| still_plain_note(&k.name)).collect() };
        Ok(Plan { after, plain_keys: keys, notes })
    }

    fn pointed(&self, text: &str) -> Result<Option<Pointed>, EngineError> {
        let read = toml_doc::read(text)?;
        let root = read.doc.as_table();
        if root.get("model_provider").and_then(Item::as_str) != Some(PROVIDER) {
            return Ok(None);
        }
        let table = root.get("model_providers").and_then(Item::as_table_like).and_then(|t| t.get(PROVIDER));
        let Some(url) = table.and_then(|t| t.get("base_url")).and_then(Item::as_str) else { return Ok(None) };
        let token = table.and_then(|t| t.get(BEARER)).and_then(Item::as_str).map(str::to_string);
        Ok(relay_url_parts(url).map(|(port, slug)| Pointed { port, slug, token }))
    }

    fn literals(&self, text: &str) -> Result<Vec<Literal>, EngineError> {
        toml_doc::literals(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_env_var_name_is_not_a_key_but_a_key_in_its_place_is() {
        assert!(!holds_key(ENV_KEY, "OPENAI_API_KEY"), "a variable name");
        assert!(!holds_key(ENV_KEY, "SK_TEAM_KEY"), "a variable name with a key-like prefix");
        assert!(holds_key(ENV_KEY, "sk-proj-abcdefghijklmnop0123456789"), "a key pasted as env_key");
        assert!(holds_key(BEARER, "anything-at-all"), "any bearer token but ours");
        assert!(!holds_key(BEARER, &format!("sy_{}", "a".repeat(64))), "the relay token is ours");
    }
}
