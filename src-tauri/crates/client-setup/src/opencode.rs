//! opencode: `opencode.jsonc` or `opencode.json` in `$XDG_CONFIG_HOME/opencode/` (else
//! `~/.config/opencode/`), read as JSONC (comments and trailing commas allowed, kept as they
//! are). Set-up writes one custom provider, `provider.switchyard` (an AI SDK package, `baseURL`
//! at the relay, `apiKey` = the relay token, the connection's models), and `model` only when the
//! file has none. A literal `apiKey` in the `openai`/`anthropic` provider is a plain key.

use jsonc_parser::cst::CstInputValue;
use switchyard_engine::EngineError;

use crate::client::Client;
use crate::config_file::{
    is_relay_token, relay_url_parts, still_plain_note, ConfigFile, Literal, PlainKey, Plan, Pointed, Target,
};
use crate::json_doc::{self, Dialect, JsonDoc};

pub const PROVIDER: &str = "switchyard";

const EMPTY: &str = "{\n  \"$schema\": \"https://opencode.ai/config.json\"\n}\n";

pub(crate) struct OpencodeConfig;

fn parse(text: &str) -> Result<JsonDoc<'_>, EngineError> {
    JsonDoc::parse(text, Client::Opencode, Dialect::Jsonc)
}

/// The built-in provider whose key a connection of `protocol` replaces.
fn builtin(protocol: &str) -> &'static str {
    if protocol == "anthropic" {
        "anthropic"
    } else {
        "openai"
    }
}

fn provider_value(target: &Target) -> CstInputValue {
    let npm = if target.protocol == "anthropic" { "@ai-sdk/anthropic" } else { "@ai-sdk/openai-compatible" };
    let models = target.models.iter().map(|m| (m.clone(), CstInputValue::Object(vec![]))).collect();
    CstInputValue::Object(vec![
        ("npm".into(), npm.into()),
        ("name".into(), format!("Switchyard ({})", target.slug).into()),
        ("options".into(), json_doc::strings(&[("baseURL", &target.base_url), ("apiKey", &target.token)])),
        ("models".into(), CstInputValue::Object(models)),
    ])
}

impl ConfigFile for OpencodeConfig {
    fn plain_keys(&self, text: &str, protocol: &str) -> Result<Vec<PlainKey>, EngineError> {
        if json_doc::is_blank(text) {
            return Ok(vec![]);
        }
        let doc = parse(text)?;
        let name = builtin(protocol);
        let Some(options) = doc.object_at(&["provider", name, "options"])? else { return Ok(vec![]) };
        Ok(match doc.string(options, "apiKey")? {
            // `{env:NAME}` and `{file:PATH}` are references, not keys.
            Some((value, _)) if !value.is_empty() && !value.starts_with('{') && !is_relay_token(&value) => {
                vec![PlainKey { name: format!("provider.{name}.options.apiKey"), value }]
            }
            _ => vec![],
        })
    }

    fn plan(&self, before: &str, target: &Target, move_key: bool) -> Result<Plan, EngineError> {
        let text = if json_doc::is_blank(before) {
            format!("{}{EMPTY}", json_doc::bom_of(before))
        } else {
            before.to_string()
        };
        let keys = self.plain_keys(&text, &target.protocol)?;
        let doc = parse(&text)?;
        // Refuses duplicates of what set-up writes or looks at.
        doc.member(doc.root(), "model")?;
        if let Some(provider) = doc.object_at(&["provider"])? {
            doc.member(provider, PROVIDER)?;
        }
        let has_model = doc.member(doc.root(), "model")?.is_some();
        let after = json_doc::edit(&text, Client::Opencode, Dialect::Jsonc, |root| {
            match root.object_value("provider") {
                Some(p) => json_doc::set(&p, PROVIDER, provider_value(target)),
                None => {
                    root.append("provider", CstInputValue::Object(vec![(PROVIDER.into(), provider_value(target))]));
                }
            }
            if !has_model {
                if let Some(model) = &target.model {
                    root.append("model", format!("{PROVIDER}/{model}").into());
                }
            }
            if move_key && !keys.is_empty() {
                let options = root
                    .object_value("provider")
                    .and_then(|p| p.object_value(builtin(&target.protocol)))
                    .and_then(|p| p.object_value("options"));
                if let Some(options) = options {
                    json_doc::remove(&options, "apiKey");
                }
            }
            Ok(())
        })?;
        let notes = match keys.first() {
            Some(k) if !move_key => vec![still_plain_note(&k.name)],
            _ => vec![],
        };
        Ok(Plan { after, plain_keys: keys, notes })
    }

    fn pointed(&self, text: &str) -> Result<Option<Pointed>, EngineError> {
        if json_doc::is_blank(text) {
            return Ok(None);
        }
        let doc = parse(text)?;
        let Some(options) = doc.object_at(&["provider", PROVIDER, "options"])? else { return Ok(None) };
        let Some((url, _)) = doc.string(options, "baseURL")? else { return Ok(None) };
        let token = doc.string(options, "apiKey")?.map(|(t, _)| t);
        Ok(relay_url_parts(&url).map(|(port, slug)| Pointed { port, slug, token }))
    }

    fn literals(&self, text: &str) -> Result<Vec<Literal>, EngineError> {
        json_doc::literals(text, Client::Opencode, Dialect::Jsonc)
    }
}
