//! The secret scan of a shared document, run on the raw JSON before anything is typed: a
//! field named like a credential (`api_key`, `token`, `secret`, …) or a value shaped like a
//! key (`sk-…`) anywhere is refused with its path. Errors never echo the value.

use serde_json::Value;

use crate::validate::InvalidInput;

/// Field names that carry credentials, compared lower-case with `-` read as `_`.
const SECRET_FIELDS: &[&str] = &[
    "api_key",
    "apikey",
    "key",
    "keys",
    "secret",
    "secrets",
    "token",
    "tokens",
    "password",
    "passwd",
    "auth",
    "authorization",
    "bearer",
    "credential",
    "credentials",
    "cookie",
    "locator",
    "locator_service",
    "locator_account",
];

/// Field-name endings that carry credentials (`x_api_key`, `access_token`, `client_secret`).
const SECRET_SUFFIXES: &[&str] = &["_key", "_token", "_secret", "_password"];

/// Value prefixes of API keys. `Bearer`/`Basic` are checked on header values only (a label
/// may well say "basic tier").
const KEY_PREFIXES: &[&str] = &["sk-", "sk_"];

/// True when a field called `name` would carry a credential.
pub fn is_secret_field(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase().replace('-', "_");
    SECRET_FIELDS.contains(&n.as_str()) || SECRET_SUFFIXES.iter().any(|s| n.ends_with(s))
}

/// True when a value has the shape of an API key.
pub fn is_key_shaped(value: &str) -> bool {
    let lower = value.trim().to_ascii_lowercase();
    KEY_PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// Walks the whole document; the first secret-looking field or value is an error.
pub fn scan(root: &Value) -> Result<(), InvalidInput> {
    walk(root, &mut String::new(), false)
}

/// `data_keys` is true inside objects whose keys are data (model mappings), not field names.
fn walk(v: &Value, path: &mut String, data_keys: bool) -> Result<(), InvalidInput> {
    match v {
        Value::String(s) if is_key_shaped(s) => Err(InvalidInput::new(
            shown(path),
            "looks like an API key (sk-…); shared configurations never carry secrets",
        )),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, false)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Object(map) => {
            for (key, item) in map {
                let len = path.len();
                push_key(path, key);
                if is_key_shaped(key) {
                    path.truncate(len);
                    return Err(InvalidInput::new(
                        shown(path),
                        "has a key that looks like an API key (sk-…); shared configurations never carry secrets",
                    ));
                }
                if !data_keys && is_secret_field(key) {
                    return Err(InvalidInput::new(
                        shown(path),
                        "is a credential field; shared configurations never carry secrets \
                         (add keys after import with `switchyard profile rotate`)",
                    ));
                }
                walk(item, path, key == "mapping" && !data_keys)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Appends `.key`, or `["key"]` when the key is not a plain identifier.
pub(crate) fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => path.push_str(key),
        (false, true) => {
            path.push('.');
            path.push_str(key);
        }
        (_, false) => {
            let quoted = serde_json::to_string(key).unwrap_or_default();
            path.push('[');
            path.push_str(&quoted);
            path.push(']');
        }
    }
}

/// The root is called `document` in messages.
pub(crate) fn shown(path: &str) -> String {
    if path.is_empty() {
        "document".to_string()
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_recognised_in_any_spelling() {
        for name in ["api_key", "API-Key", "token", "x-api-key", "client_secret", "key"] {
            assert!(is_secret_field(name), "'{name}' names a credential");
        }
        for name in ["label", "weight", "models", "base_url", "keyboard"] {
            assert!(!is_secret_field(name), "'{name}' is an ordinary field");
        }
    }

    #[test]
    fn mapping_keys_are_data_not_field_names() {
        let doc = serde_json::json!({"connections": [{"mapping": {"token": "m"}}]});
        assert_eq!(scan(&doc), Ok(()), "a model called 'token' is not a credential field");
        let doc = serde_json::json!({"connections": [{"mapping": {"fast": "sk-live-1"}}]});
        assert_eq!(
            scan(&doc).map_err(|e| e.field),
            Err("connections[0].mapping.fast".to_string()),
            "values inside a mapping are still scanned"
        );
    }

    #[test]
    fn errors_never_echo_the_value() {
        let doc = serde_json::json!({"connections": [{"slug": "sk-live-abcdef123456"}]});
        let err = scan(&doc).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("connections[0].slug:"), "the path is named: {err}");
        assert!(!err.contains("abcdef123456"), "the secret is not echoed: {err}");
    }
}
