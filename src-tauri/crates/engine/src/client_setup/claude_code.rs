//! Claude Code: `settings.json` (in `$CLAUDE_CONFIG_DIR`, else `~/.claude/`), strict JSON. Set-up
//! writes `env.ANTHROPIC_BASE_URL` and `env.ANTHROPIC_AUTH_TOKEN` (the relay token); a provider
//! key found in `env.ANTHROPIC_API_KEY` / `env.ANTHROPIC_AUTH_TOKEN` is reported, and removed
//! when it is moved into the keychain.

use super::json_edit::{self, Node};
use super::{invalid_file, PlainKey, Plan, Pointed, Target};
use crate::error::EngineError;

const BASE_URL: &str = "ANTHROPIC_BASE_URL";
const AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";
const API_KEY: &str = "ANTHROPIC_API_KEY";

fn root(text: &str) -> Result<Node, EngineError> {
    let node = json_edit::parse(text, false).map_err(|e| invalid_file("claude-code", &e))?;
    match node {
        Node::Object { .. } => Ok(node),
        _ => Err(invalid_file("claude-code", &json_edit::ParseError { line: 1, column: 1, what: "not a JSON object" })),
    }
}

fn env_of(root: &Node) -> Result<Option<&Node>, EngineError> {
    match root.member("env").map(|m| &m.value) {
        None => Ok(None),
        Some(n @ Node::Object { .. }) => Ok(Some(n)),
        Some(_) => Err(invalid_file(
            "claude-code",
            &json_edit::ParseError { line: 1, column: 1, what: "\"env\" is not an object" },
        )),
    }
}

/// The provider keys in plain text: `env.ANTHROPIC_API_KEY`, and `env.ANTHROPIC_AUTH_TOKEN`
/// unless it is a relay token.
pub fn plain_keys(text: &str) -> Result<Vec<PlainKey>, EngineError> {
    if text.trim().is_empty() {
        return Ok(vec![]);
    }
    let root = root(text)?;
    let Some(env) = env_of(&root)? else { return Ok(vec![]) };
    let mut out = vec![];
    for name in [API_KEY, AUTH_TOKEN] {
        if let Some(v) = env.member(name).and_then(|m| m.value.as_str(text)) {
            if !v.is_empty() && !super::is_relay_token(&v) {
                out.push(PlainKey { name: format!("env.{name}"), value: v });
            }
        }
    }
    Ok(out)
}

pub fn plan(before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError> {
    let mut text = if before.trim().is_empty() { "{}\n".to_string() } else { before.to_string() };
    let keys = plain_keys(&text)?;
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let root_node = root(&text)?;
    if env_of(&root_node)?.is_none() {
        let indent = json_edit::member_indent(&text, &root_node);
        let unit = json_edit::indent_unit(&text);
        let value = json_edit::object_text(
            &[(BASE_URL, quoted(&target.base_url)), (AUTH_TOKEN, quoted(&target.token))],
            &indent,
            &unit,
        );
        text = json_edit::set_member(&text, &root_node, "env", &value);
    } else {
        for (name, value) in [(BASE_URL, &target.base_url), (AUTH_TOKEN, &target.token)] {
            let root_node = root(&text)?;
            let env = env_of(&root_node)?.cloned().unwrap_or(Node::Scalar { start: 0, end: 0 });
            text = json_edit::set_member(&text, &env, name, &quoted(value));
        }
    }
    if move_key && keys.iter().any(|k| k.name == format!("env.{API_KEY}")) {
        let root_node = root(&text)?;
        if let Some(env) = env_of(&root_node)?.cloned() {
            text = json_edit::remove_member(&text, &env, API_KEY);
        }
    }
    let mut notes = vec![];
    if !move_key && keys.iter().any(|k| k.name == format!("env.{API_KEY}")) {
        notes.push(format!(
            "env.{API_KEY} still holds a provider key in plain text; --move-key LABEL moves it into the keychain"
        ));
    }
    Ok(Plan { after: text, plain_keys: keys, notes })
}

pub fn pointed(text: &str) -> Result<Option<Pointed>, EngineError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let root = root(text)?;
    let Some(env) = env_of(&root)? else { return Ok(None) };
    let Some(url) = env.member(BASE_URL).and_then(|m| m.value.as_str(text)) else { return Ok(None) };
    let token = env.member(AUTH_TOKEN).and_then(|m| m.value.as_str(text));
    Ok(super::relay_url_parts(&url).map(|(port, slug)| Pointed { port, slug, token }))
}
