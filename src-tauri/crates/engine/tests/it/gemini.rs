//! A Gemini connection in the engine (issue 30): `verify` lists the key's models through
//! Gemini's paged `GET /v1beta/models` (following `nextPageToken`, keeping only the models that
//! support `generateContent`), the deep check is a 1-token `generateContent` per model, the key
//! only ever in `x-goog-api-key`; and a Gemini connection exports and imports like the others.

use crate::common::{open, secret, TestResult};
use serde_json::Value;
use switchyard_engine::{Conflict, NewConnection};
use switchyard_mock_provider::{KeyScript, MockProvider};

/// 1005 generation models and one embedding model: 1006 listed, over two pages of 1000.
fn many_models() -> Vec<String> {
    let mut models: Vec<String> = (0..1005).map(|i| format!("gemini-m-{i:04}")).collect();
    models.push("text-embedding-004".into());
    models
}

fn gemini(slug: &str, base: &str, models: &[&str]) -> NewConnection {
    NewConnection {
        slug: slug.into(),
        protocol: "gemini".into(),
        base_url: base.into(),
        models: models.iter().map(|m| m.to_string()).collect(),
        ..Default::default()
    }
}

#[tokio::test]
async fn verify_follows_the_listing_s_pages_and_keeps_only_generate_content_models() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("g-canary-verify", KeyScript::new(many_models()));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let wanted = ["gemini-m-0000", "gemini-m-1004", "text-embedding-004", "gemini-m-9999"];
    engine.connection_add(gemini("gem", &mock.base_url(), &wanted), Some(secret("g-canary-verify"))).await?;

    let report = engine.verify("gem", None, false, &|_| {}).await?;
    let primary = report.results.iter().find(|r| r.label == "primary").ok_or("primary missing")?;
    assert_eq!(primary.outcome.as_str(), "verified", "a key that lists its models is verified: {}", primary.detail);
    let supported: Vec<&str> = primary.models.iter().filter(|m| m.supported).map(|m| m.model.as_str()).collect();
    assert_eq!(
        supported,
        ["gemini-m-0000", "gemini-m-1004"],
        "the first page's model and the second page's (past 1000) are listed; the embedding model is not a \
         generateContent model; an unknown one is not listed"
    );
    let listings: Vec<_> = mock.requests().into_iter().filter(|r| r.path == "/v1beta/models").collect();
    assert_eq!(listings.len(), 2, "1006 models at 1000 a page: two pages");
    assert!(
        listings[1].query.as_deref().is_some_and(|q| q.contains("pageToken=")),
        "the second page is asked with the first page's nextPageToken: {:?}",
        listings[1].query
    );
    assert!(
        listings.iter().all(|r| r.header("x-goog-api-key") == Some("g-canary-verify")),
        "the key goes in the x-goog-api-key header"
    );
    assert!(mock.keys_seen_in_urls().is_empty(), "never in the URL");

    mock.reset_counts();
    let deep = engine.verify("gem", None, true, &|_| {}).await?;
    let probed = deep.results.iter().find(|r| r.label == "primary").ok_or("primary missing")?;
    let first = probed.models.iter().find(|m| m.model == "gemini-m-0000").ok_or("m-0000 missing")?;
    assert_eq!((first.source.as_str(), first.supported), ("probed", true), "a served 1-token call proves the model");
    let calls: Vec<_> = mock.requests().into_iter().filter(|r| r.path.ends_with(":generateContent")).collect();
    assert!(
        calls.iter().any(|r| r.path == "/v1beta/models/gemini-m-0000:generateContent"),
        "the deep check calls generateContent for the model in the path"
    );
    for call in &calls {
        let max = call.json().and_then(|b| b["generationConfig"]["maxOutputTokens"].as_u64());
        assert_eq!(max, Some(1), "{}: a 1-token check", call.path);
    }
    assert!(!engine.routing_status("gem").await?.gates.models.is_empty(), "the models have gates");
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_gemini_connection_exports_and_imports_with_its_protocol_models_and_mapping() -> TestResult {
    let source_dir = tempfile::tempdir()?;
    let source = open(source_dir.path()).await?;
    let mut new = gemini("gem", "https://generativelanguage.googleapis.com", &["gemini-2.5-flash", "gemini-2.5-pro"]);
    new.mappings = vec!["fast=gemini-2.5-flash".into()];
    source.connection_add(new, Some(secret("g-canary-export"))).await?;
    let exported = source.export(None).await?;
    assert!(!exported.contains("g-canary-export"), "no key in the export");
    let doc: Value = serde_json::from_str(&exported)?;
    let conn = &doc["connections"][0];
    assert_eq!(conn["protocol"], "gemini", "the protocol is exported");
    assert_eq!(conn["base_url"], "https://generativelanguage.googleapis.com", "and the base");

    let target_dir = tempfile::tempdir()?;
    let target = open(target_dir.path()).await?;
    target.import(&exported, false, Conflict::Rename).await?;
    let shown = target.connection_show("gem").await?;
    assert_eq!(shown.connection.protocol, "gemini", "imported as a gemini connection");
    let again: Value = serde_json::from_str(&target.export(None).await?)?;
    for field in ["protocol", "base_url", "models", "mapping", "routing"] {
        assert_eq!(again["connections"][0][field], conn[field], "{field} survives export → import → export");
    }
    Ok(())
}
