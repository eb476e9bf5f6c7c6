//! opencode: `opencode.jsonc` or `opencode.json` in `$XDG_CONFIG_HOME/opencode/` (else
//! `~/.config/opencode/`), read as JSONC (comments and trailing commas allowed, kept as they
//! are). Set-up writes one custom provider, `provider.switchyard` (an AI SDK package, `baseURL`
//! at the relay, `apiKey` = the relay token, the connection's models), and `model` only when the
//! file has none. A literal `apiKey` in the `openai`/`anthropic` provider is a plain key.

use serde_json::json;

use super::json_edit::{self, Node};
use super::{invalid_file, PlainKey, Plan, Pointed, Target};
use crate::error::EngineError;

pub const PROVIDER: &str = "switchyard";

fn root(text: &str) -> Result<Node, EngineError> {
    let node = json_edit::parse(text, true).map_err(|e| invalid_file("opencode", &e))?;
    match node {
        Node::Object { .. } => Ok(node),
        _ => Err(invalid_file("opencode", &json_edit::ParseError { line: 1, column: 1, what: "not a JSON object" })),
    }
}

fn object<'a>(parent: &'a Node, key: &str) -> Option<&'a Node> {
    parent.member(key).map(|m| &m.value).filter(|n| matches!(n, Node::Object { .. }))
}

/// The built-in provider whose key a connection of `protocol` replaces.
fn builtin(protocol: &str) -> &'static str {
    if protocol == "anthropic" {
        "anthropic"
    } else {
        "openai"
    }
}

pub fn plain_keys(text: &str, protocol: &str) -> Result<Vec<PlainKey>, EngineError> {
    if text.trim().is_empty() {
        return Ok(vec![]);
    }
    let root = root(text)?;
    let name = builtin(protocol);
    let key = object(&root, "provider")
        .and_then(|p| object(p, name))
        .and_then(|p| object(p, "options"))
        .and_then(|o| o.member("apiKey"))
        .and_then(|m| m.value.as_str(text));
    Ok(match key {
        // `{env:NAME}` and `{file:PATH}` are references, not keys.
        Some(v) if !v.is_empty() && !v.starts_with('{') && !super::is_relay_token(&v) => {
            vec![PlainKey { name: format!("provider.{name}.options.apiKey"), value: v }]
        }
        _ => vec![],
    })
}

fn provider_value(target: &Target, indent: &str) -> String {
    let npm = if target.protocol == "anthropic" { "@ai-sdk/anthropic" } else { "@ai-sdk/openai-compatible" };
    let models: serde_json::Map<String, serde_json::Value> =
        target.models.iter().map(|m| (m.clone(), json!({}))).collect();
    let v = json!({
        "npm": npm,
        "name": format!("Switchyard ({})", target.slug),
        "options": { "baseURL": target.base_url, "apiKey": target.token },
        "models": models,
    });
    let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
    pretty.replace('\n', &format!("\n{indent}"))
}

pub fn plan(before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError> {
    let mut text = if before.trim().is_empty() {
        "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n".to_string()
    } else {
        before.to_string()
    };
    let keys = plain_keys(&text, &target.protocol)?;
    let r = root(&text)?;
    let unit = json_edit::indent_unit(&text);
    match object(&r, "provider") {
        Some(p) => {
            let indent = json_edit::member_indent(&text, p);
            text = json_edit::set_member(&text, p, PROVIDER, &provider_value(target, &indent));
        }
        None => {
            let indent = json_edit::member_indent(&text, &r);
            let inner = format!("{indent}{unit}");
            let value = format!("{{\n{inner}\"{PROVIDER}\": {}\n{indent}}}", provider_value(target, &inner));
            text = json_edit::set_member(&text, &r, "provider", &value);
        }
    }
    let r = root(&text)?;
    if r.member("model").is_none() {
        if let Some(model) = &target.model {
            let v = serde_json::to_string(&format!("{PROVIDER}/{model}")).unwrap_or_default();
            text = json_edit::set_member(&text, &r, "model", &v);
        }
    }
    if move_key && !keys.is_empty() {
        let r = root(&text)?;
        if let Some(options) =
            object(&r, "provider").and_then(|p| object(p, builtin(&target.protocol))).and_then(|p| object(p, "options"))
        {
            let options = options.clone();
            text = json_edit::remove_member(&text, &options, "apiKey");
        }
    }
    let notes = if !move_key && !keys.is_empty() {
        vec![format!(
            "{} still holds a provider key in plain text; --move-key LABEL moves it into the keychain",
            keys[0].name
        )]
    } else {
        vec![]
    };
    Ok(Plan { after: text, plain_keys: keys, notes })
}

pub fn pointed(text: &str) -> Result<Option<Pointed>, EngineError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let root = root(text)?;
    let options = object(&root, "provider").and_then(|p| object(p, PROVIDER)).and_then(|p| object(p, "options"));
    let Some(url) = options.and_then(|o| o.member("baseURL")).and_then(|m| m.value.as_str(text)) else {
        return Ok(None);
    };
    let token = options.and_then(|o| o.member("apiKey")).and_then(|m| m.value.as_str(text));
    Ok(super::relay_url_parts(&url).map(|(port, slug)| Pointed { port, slug, token }))
}
