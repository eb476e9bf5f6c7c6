//! Format v1 of shared configurations: a valid document parses and renders back to itself;
//! every kind of bad input is refused with the exact JSON path; arbitrary JSON never panics.

use proptest::prelude::*;
use serde_json::{json, Value};
use switchyard_core::portable::{parse, render, MAX_BYTES};

fn valid() -> Value {
    json!({
        "format": "switchyard.config",
        "version": 1,
        "connections": [
            {
                "ref": "c1", "slug": "main", "protocol": "openai",
                "base_url": "https://api.example.com/v1",
                "headers": [{"name": "openai-organization", "value": "org-1"}],
                "models": ["gpt-a", "gpt-b"],
                "mapping": {"fast": "gpt-a"},
                "routing": "balanced",
                "profiles": [
                    {"ref": "p1", "label": "primary", "weight": 1, "priority": 0, "primary": true},
                    {"ref": "p2", "label": "backup", "weight": 3, "priority": 1, "primary": false}
                ]
            },
            {
                "ref": "c2", "slug": "claude", "protocol": "anthropic",
                "base_url": "https://api.anthropic.example",
                "headers": [], "models": ["m1"], "mapping": {}, "routing": "legacy",
                "profiles": [
                    {"ref": "p3", "label": "only", "weight": 1, "priority": 0, "primary": true}
                ]
            }
        ]
    })
}

/// Applies `edit` to the valid document and returns the error as `path: message`.
fn error_of(edit: impl FnOnce(&mut Value)) -> String {
    let mut doc = valid();
    edit(&mut doc);
    match parse(&doc.to_string()) {
        Ok(_) => "accepted".to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_valid_document_parses_and_renders_back() -> Result<(), Box<dyn std::error::Error>> {
    let doc = parse(&valid().to_string())?;
    assert_eq!(doc.connections.len(), 2, "both connections are read");
    let again = parse(&render(&doc)?)?;
    assert_eq!(again, doc, "render then parse gives the same document");
    Ok(())
}

#[test]
fn a_gemini_connection_travels() -> Result<(), Box<dyn std::error::Error>> {
    let mut v = valid();
    v["connections"][1]["protocol"] = json!("gemini");
    v["connections"][1]["base_url"] = json!("https://generativelanguage.googleapis.com");
    v["connections"][1]["models"] = json!(["gemini-2.5-flash", "gemini-2.5-pro"]);
    let doc = parse(&v.to_string())?;
    let again = parse(&render(&doc)?)?;
    assert_eq!(again, doc, "a Gemini connection renders and parses back unchanged");
    let rendered: Value = serde_json::from_str(&render(&doc)?)?;
    assert_eq!(rendered["connections"][1]["protocol"], json!("gemini"), "the protocol word is kept");
    let err = error_of(|d| d["connections"][1]["headers"] = json!([{"name": "x-goog-api-key", "value": "k"}]));
    assert!(err.starts_with("connections[1].headers[0].name"), "Gemini's key header is a credential, refused: {err}");
    Ok(())
}

#[test]
fn kinds_travel_and_old_files_read_as_api_keys() -> Result<(), Box<dyn std::error::Error>> {
    use switchyard_core::states::{OfficialClient, ProfileKind};
    let old = parse(&valid().to_string())?;
    assert_eq!(old.connections[0].profiles[0].kind, ProfileKind::ApiKey, "a file without kind holds API keys");
    let mut v = valid();
    v["connections"][1]["profiles"][0]["kind"] = json!("token");
    v["connections"][1]["profiles"][0]["expires_at"] = json!("2030-01-01T00:00:00Z");
    v["connections"][0]["profiles"][1]["kind"] = json!("external");
    v["connections"][0]["profiles"][1]["client"] = json!("codex");
    let doc = parse(&v.to_string())?;
    let token = &doc.connections[1].profiles[0];
    assert_eq!(
        (token.kind, token.client, token.expires_at.as_deref()),
        (ProfileKind::Token, Some(OfficialClient::ClaudeCode), Some("2030-01-01T00:00:00Z")),
        "a token keeps its expiry and is Claude Code's unless the file says otherwise"
    );
    let external = &doc.connections[0].profiles[1];
    assert_eq!((external.kind, external.client), (ProfileKind::External, Some(OfficialClient::Codex)), "external");
    let text = render(&doc)?;
    assert!(text.contains("\"kind\": \"token\""), "the kind is written: {text}");
    assert!(text.contains("\"client\": \"claude-code\""), "the client is written with its dash");
    assert_eq!(parse(&text)?, doc, "and read back the same");
    Ok(())
}

#[test]
fn input_is_normalised_like_typed_in_input() -> Result<(), Box<dyn std::error::Error>> {
    let mut v = valid();
    v["connections"][0]["base_url"] = json!("https://api.example.com/v1/");
    v["connections"][0]["headers"][0]["name"] = json!("OpenAI-Organization");
    let doc = parse(&v.to_string())?;
    assert_eq!(
        doc.connections[0].base_url, "https://api.example.com/v1",
        "the trailing slash goes, as with `connection add`"
    );
    assert_eq!(
        doc.connections[0].headers[0].name, "openai-organization",
        "header names are lower-cased, as with `--header`"
    );
    Ok(())
}

#[test]
fn every_bad_input_names_its_path() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("unknown format", Box::new(|d| d["format"] = json!("other.config")), "format: unknown format"),
        (
            "missing format",
            Box::new(|d| {
                d.as_object_mut().map(|o| o.remove("format"));
            }),
            "format: is missing",
        ),
        ("unknown version", Box::new(|d| d["version"] = json!(2)), "version: unsupported version 2"),
        (
            "duplicate connection ref",
            Box::new(|d| d["connections"][1]["ref"] = json!("c1")),
            "connections[1].ref: duplicate ref (also at connections[0].ref)",
        ),
        (
            "profile ref equals a connection ref",
            Box::new(|d| d["connections"][1]["profiles"][0]["ref"] = json!("c1")),
            "connections[1].profiles[0].ref: duplicate ref (also at connections[0].ref)",
        ),
        (
            "duplicate slug",
            Box::new(|d| d["connections"][1]["slug"] = json!("main")),
            "connections[1].slug: duplicate slug (also at connections[0].slug)",
        ),
        ("bad slug", Box::new(|d| d["connections"][0]["slug"] = json!("Has Space")), "connections[0].slug: "),
        (
            "duplicate label",
            Box::new(|d| d["connections"][0]["profiles"][1]["label"] = json!("primary")),
            "connections[0].profiles[1].label: duplicate label (also at connections[0].profiles[0].label)",
        ),
        (
            "weight zero",
            Box::new(|d| d["connections"][1]["profiles"][0]["weight"] = json!(0)),
            "connections[1].profiles[0].weight: must be between 1 and 1000 (got 0)",
        ),
        (
            "weight too large",
            Box::new(|d| d["connections"][0]["profiles"][1]["weight"] = json!(1001)),
            "connections[0].profiles[1].weight: must be between 1 and 1000 (got 1001)",
        ),
        (
            "weight of the wrong type",
            Box::new(|d| d["connections"][0]["profiles"][1]["weight"] = json!("3")),
            "connections[0].profiles[1].weight: invalid type",
        ),
        (
            "negative priority",
            Box::new(|d| d["connections"][0]["profiles"][0]["priority"] = json!(-1)),
            "connections[0].profiles[0].priority: must be between",
        ),
        (
            "ftp url",
            Box::new(|d| d["connections"][1]["base_url"] = json!("ftp://files.example.com")),
            "connections[1].base_url: scheme must be http or https",
        ),
        (
            "url with credentials",
            Box::new(|d| d["connections"][0]["base_url"] = json!("https://u:p@h.example")),
            "connections[0].base_url: must not carry credentials",
        ),
        (
            "unknown protocol",
            Box::new(|d| d["connections"][0]["protocol"] = json!("vertex")),
            "connections[0].protocol: unknown value, expected",
        ),
        (
            "unknown routing mode",
            Box::new(|d| d["connections"][0]["routing"] = json!("random")),
            "connections[0].routing: unknown value, expected",
        ),
        (
            "api_key field",
            Box::new(|d| d["connections"][0]["api_key"] = json!("abc")),
            "connections[0].api_key: is a credential field",
        ),
        (
            "token field in a profile",
            Box::new(|d| d["connections"][0]["profiles"][0]["token"] = json!("abc")),
            "connections[0].profiles[0].token: is a credential field",
        ),
        ("secret field at the top", Box::new(|d| d["secret"] = json!("abc")), "secret: is a credential field"),
        (
            "key field",
            Box::new(|d| d["connections"][1]["profiles"][0]["key"] = json!("abc")),
            "connections[1].profiles[0].key: is a credential field",
        ),
        (
            "sk- value in a header",
            Box::new(|d| d["connections"][0]["headers"][0]["value"] = json!("sk-live-123")),
            "connections[0].headers[0].value: looks like an API key",
        ),
        (
            "sk- value as a label",
            Box::new(|d| d["connections"][0]["profiles"][1]["label"] = json!("sk-ant-9999")),
            "connections[0].profiles[1].label: looks like an API key",
        ),
        (
            "bearer header value",
            Box::new(|d| d["connections"][0]["headers"][0]["value"] = json!("Bearer abc")),
            "connections[0].headers[0].value: value of 'openai-organization' looks like a secret",
        ),
        (
            "authorization header",
            Box::new(|d| d["connections"][0]["headers"][0]["name"] = json!("Authorization")),
            "connections[0].headers[0].name: 'authorization' carries a credential",
        ),
        (
            "x-api-key header",
            Box::new(|d| d["connections"][0]["headers"][0]["name"] = json!("x-api-key")),
            "connections[0].headers[0].name: 'x-api-key' carries a credential",
        ),
        (
            "unknown field",
            Box::new(|d| d["connections"][0]["profiles"][0]["colour"] = json!("red")),
            "connections[0].profiles[0].colour: unknown field `colour`",
        ),
        (
            "unknown top-level field",
            Box::new(|d| d["install_id"] = json!("x")),
            "install_id: unknown field `install_id`",
        ),
        (
            "two primaries",
            Box::new(|d| d["connections"][0]["profiles"][1]["primary"] = json!(true)),
            "connections[0].profiles: exactly one profile must be primary (found 2)",
        ),
        (
            "no primary",
            Box::new(|d| d["connections"][1]["profiles"][0]["primary"] = json!(false)),
            "connections[1].profiles: exactly one profile must be primary (found 0)",
        ),
        (
            "duplicate model",
            Box::new(|d| d["connections"][0]["models"] = json!(["a", "a"])),
            "connections[0].models[1]: is listed twice (also at connections[0].models[0])",
        ),
        (
            "missing slug",
            Box::new(|d| {
                d["connections"][0].as_object_mut().map(|o| o.remove("slug"));
            }),
            "connections[0]: missing field `slug`",
        ),
        ("not an object", Box::new(|d| *d = json!([1, 2])), "document: must be a JSON object"),
        (
            "an oauth profile naming a client (an owned login serves any client)",
            Box::new(|d| {
                d["connections"][1]["profiles"][0]["kind"] = json!("oauth");
                d["connections"][1]["profiles"][0]["client"] = json!("codex");
            }),
            "connections[1].profiles[0].client: is not for an oauth profile",
        ),
        (
            "an unknown kind",
            Box::new(|d| d["connections"][1]["profiles"][0]["kind"] = json!("password")),
            "connections[1].profiles[0].kind: unknown value",
        ),
        (
            "an external profile without its client",
            Box::new(|d| d["connections"][1]["profiles"][0]["kind"] = json!("external")),
            "connections[1].profiles[0].client: is required for an external profile",
        ),
        (
            "an API key with a client",
            Box::new(|d| d["connections"][1]["profiles"][0]["client"] = json!("codex")),
            "connections[1].profiles[0].client: is for token and external profiles only",
        ),
        (
            "an API key with an expiry",
            Box::new(|d| d["connections"][1]["profiles"][0]["expires_at"] = json!("2030-01-01T00:00:00Z")),
            "connections[1].profiles[0].expires_at: is for token profiles only",
        ),
        (
            "a token with an expiry that is no time",
            Box::new(|d| {
                d["connections"][1]["profiles"][0]["kind"] = json!("token");
                d["connections"][1]["profiles"][0]["expires_at"] = json!("soon");
            }),
            "connections[1].profiles[0].expires_at: is not an RFC 3339 time",
        ),
    ];
    for (case, edit, want) in cases {
        let got = error_of(edit);
        assert!(got.starts_with(want), "{case}: the error must start with `{want}`, got `{got}`");
    }
}

#[test]
fn malformed_and_oversized_files_are_refused() {
    let err = parse("{\"format\": \"switchyard.config\",").err().map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.starts_with("document: malformed JSON at line 1")),
        "malformed JSON names the document and the position: {err:?}"
    );
    let mut big = valid();
    big["connections"][0]["models"] = json!(vec!["m".repeat(150); 8000]);
    let text = big.to_string();
    assert!(text.len() > MAX_BYTES, "the test document must exceed the limit");
    let err = parse(&text).err().map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.starts_with("document: is larger than 1 MiB")),
        "files over 1 MiB are refused before parsing: {err:?}"
    );
}

#[test]
fn errors_do_not_echo_secret_values() {
    let got = error_of(|d| d["connections"][0]["headers"][0]["value"] = json!("sk-proj-CANARY77"));
    assert!(!got.contains("CANARY77"), "the key is not repeated in the error: {got}");
    let got = error_of(|d| d["connections"][0]["api_key"] = json!("CANARY88"));
    assert!(!got.contains("CANARY88"), "the value of a credential field is not repeated: {got}");
}

#[test]
fn framing_and_credential_headers_are_refused_by_name() {
    for name in [
        "content-length",
        "transfer-encoding",
        "host",
        "connection",
        "expect",
        "te",
        "upgrade",
        "keep-alive",
        "trailer",
        "proxy-foo",
        "x-auth-token",
        "x-portkey-api-key",
        "x-my-secret",
        "X-Session-Token",
    ] {
        let got = error_of(|d| d["connections"][0]["headers"][0]["name"] = json!(name));
        let want = format!("connections[0].headers[0].name: '{}'", name.to_ascii_lowercase());
        assert!(got.starts_with(&want), "a file header '{name}' is refused by the same rule as --header: {got}");
    }
}

#[test]
fn import_errors_never_repeat_the_offending_text() {
    // Not `sk-` shaped, so the checks behind the secret scan are the ones answering.
    const CANARY: &str = "CanaryEcho123CanaryEcho123CanaryEcho123";
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("header value", Box::new(|d| d["connections"][0]["headers"][0]["value"] = json!(CANARY))),
        (
            "bearer header value",
            Box::new(|d| d["connections"][0]["headers"][0]["value"] = json!(format!("Bearer {CANARY}"))),
        ),
        ("header name", Box::new(|d| d["connections"][0]["headers"][0]["name"] = json!(CANARY))),
        ("label", Box::new(|d| d["connections"][0]["profiles"][0]["label"] = json!(CANARY))),
        ("slug", Box::new(|d| d["connections"][0]["slug"] = json!(CANARY))),
        ("protocol", Box::new(|d| d["connections"][0]["protocol"] = json!(CANARY))),
        ("routing", Box::new(|d| d["connections"][0]["routing"] = json!(CANARY))),
        ("weight", Box::new(|d| d["connections"][0]["profiles"][0]["weight"] = json!(CANARY))),
        ("base url", Box::new(|d| d["connections"][0]["base_url"] = json!(format!("https://u:{CANARY}@h.example")))),
        ("bad base url", Box::new(|d| d["connections"][0]["base_url"] = json!(format!("{CANARY} x")))),
        ("model", Box::new(|d| d["connections"][0]["models"] = json!([format!("{CANARY} x")]))),
        ("duplicate model", Box::new(|d| d["connections"][0]["models"] = json!([CANARY, CANARY]))),
        ("mapping source", Box::new(|d| d["connections"][0]["mapping"] = json!({ format!("{CANARY} x"): "m" }))),
        ("ref", Box::new(|d| d["connections"][0]["ref"] = json!(format!("{CANARY}!")))),
        ("sk- label", Box::new(|d| d["connections"][0]["profiles"][0]["label"] = json!("sk-canary-echo-123"))),
        ("sk- header value", Box::new(|d| d["connections"][0]["headers"][0]["value"] = json!("sk-canary-echo-123"))),
    ];
    for (case, edit) in cases {
        let got = error_of(edit);
        assert_ne!(got, "accepted", "{case}: the file is refused");
        assert!(!got.to_lowercase().contains("canary"), "{case}: the error names the path, not the text: {got}");
    }
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z0-9:/._-]{0,12}".prop_map(Value::String),
        prop_oneof![Just("switchyard.config"), Just("c1"), Just("p1"), Just("sk-x"), Just("https://h.example")]
            .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-z_]{1,8}",
                    Just("format".to_string()),
                    Just("version".to_string()),
                    Just("connections".to_string()),
                    Just("profiles".to_string()),
                    Just("ref".to_string()),
                    Just("weight".to_string()),
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics(v in arbitrary_json()) {
        let _ = parse(&v.to_string());
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse(&s);
    }
}

#[test]
fn the_json_schema_agrees_with_the_code() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../docs/switchyard.config.v1.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let props = &schema["properties"];
    assert_eq!(props["format"]["const"], json!(switchyard_core::portable::FORMAT), "format constant");
    assert_eq!(props["version"]["const"], json!(switchyard_core::portable::VERSION), "version constant");
    let conn = &schema["$defs"]["connection"]["properties"];
    assert_eq!(conn["protocol"]["enum"], json!(["openai", "anthropic", "gemini"]), "protocols");
    assert_eq!(conn["routing"]["enum"], json!(["legacy", "balanced", "priority"]), "routing modes");
    let profile = &schema["$defs"]["profile"]["properties"];
    assert_eq!(profile["kind"]["enum"], json!(["api_key", "token", "external"]), "creatable kinds");
    assert_eq!(profile["client"]["enum"], json!(["claude-code", "codex"]), "official clients");
    assert!(profile.get("expires_at").is_some(), "the schema describes expires_at");
    let weight = &schema["$defs"]["profile"]["properties"]["weight"];
    assert_eq!(
        (weight["minimum"].as_i64(), weight["maximum"].as_i64()),
        (Some(switchyard_core::validate::MIN_WEIGHT), Some(switchyard_core::validate::MAX_WEIGHT)),
        "weight bounds"
    );
    let doc = valid();
    for (key, _) in doc["connections"][0].as_object().into_iter().flatten() {
        assert!(conn.get(key).is_some(), "the schema describes connection field '{key}'");
    }
    for (key, _) in doc["connections"][0]["profiles"][0].as_object().into_iter().flatten() {
        assert!(
            schema["$defs"]["profile"]["properties"].get(key).is_some(),
            "the schema describes profile field '{key}'"
        );
    }
    Ok(())
}
