//! Codex CLI: `config.toml` (in `$CODEX_HOME`, else `~/.codex/`), edited with `toml_edit` so
//! comments and layout survive. Set-up writes `model_provider = "switchyard"` and the
//! `[model_providers.switchyard]` table (`base_url`, `wire_api = "responses"` and the relay token
//! as `experimental_bearer_token`, which Codex sends as `Authorization: Bearer` — so Codex needs
//! no environment variable), and `model` only when the file has none.

use toml_edit::{value, DocumentMut, Item, Table};

use super::{PlainKey, Plan, Pointed, Target};
use crate::error::EngineError;

pub const PROVIDER: &str = "switchyard";

fn document(text: &str) -> Result<DocumentMut, EngineError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| {
            let before = &text.as_bytes()[..s.start.min(text.len())];
            let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&c| c != b'\n').count() + 1;
            (line, column)
        });
        // The message only (toml_edit's Display quotes the offending line, which may hold a key).
        let what = e.message().lines().next().unwrap_or("invalid TOML").to_string();
        super::invalid_file_text("codex", line, column, &what)
    })
}

/// Codex keeps its OpenAI key in `auth.json`, not here: only a bearer token written into
/// another provider table counts as a plain key in this file.
pub fn plain_keys(text: &str) -> Result<Vec<PlainKey>, EngineError> {
    let doc = document(text)?;
    let mut out = vec![];
    if let Some(providers) = doc.get("model_providers").and_then(Item::as_table_like) {
        for (name, table) in providers.iter() {
            if name == PROVIDER {
                continue;
            }
            if let Some(v) = table.get("experimental_bearer_token").and_then(Item::as_str) {
                if !v.is_empty() && !super::is_relay_token(v) {
                    out.push(PlainKey {
                        name: format!("model_providers.{name}.experimental_bearer_token"),
                        value: v.into(),
                    });
                }
            }
        }
    }
    Ok(out)
}

pub fn plan(before: &str, target: &Target) -> Result<Plan, EngineError> {
    let mut doc = document(before)?;
    let keys = plain_keys(before)?;
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
        return Err(super::invalid_file_text("codex", 1, 1, "model_providers is not a table"));
    };
    if providers.get(PROVIDER).and_then(Item::as_table_like).is_none() {
        providers.insert(PROVIDER, Item::Table(Table::new()));
    }
    let Some(table) = providers.get_mut(PROVIDER).and_then(Item::as_table_like_mut) else {
        return Err(super::invalid_file_text("codex", 1, 1, "model_providers.switchyard is not a table"));
    };
    table.insert("name", value("Switchyard"));
    table.insert("base_url", value(target.base_url.as_str()));
    table.insert("wire_api", value("responses"));
    table.insert("experimental_bearer_token", value(target.token.as_str()));
    Ok(Plan { after: doc.to_string(), plain_keys: keys, notes: vec![] })
}

pub fn pointed(text: &str) -> Result<Option<Pointed>, EngineError> {
    let doc = document(text)?;
    if doc.get("model_provider").and_then(Item::as_str) != Some(PROVIDER) {
        return Ok(None);
    }
    let table = doc.get("model_providers").and_then(Item::as_table_like).and_then(|t| t.get(PROVIDER));
    let Some(url) = table.and_then(|t| t.get("base_url")).and_then(Item::as_str) else { return Ok(None) };
    let token = table.and_then(|t| t.get("experimental_bearer_token")).and_then(Item::as_str).map(str::to_string);
    Ok(super::relay_url_parts(url).map(|(port, slug)| Pointed { port, slug, token }))
}
