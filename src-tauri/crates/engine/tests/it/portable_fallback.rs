//! Fallback chains through export and import (issue 16.4, invariant 14): the file names hops by
//! export-local refs (never database ids); import stores the chain inactive, and a chain the
//! exporter had activated turns on by itself only once the receiver's hop has a key, enabled
//! and verified, so its gates hold. Real keychain, real HTTP to the mock provider.

use crate::common::{open, secret, TestResult};
use serde_json::Value;
use switchyard_engine::{Conflict, ConnectionEdit, NewConnection, ProfileEdit};
use switchyard_mock_provider::{KeyScript, MockProvider};

fn conn(slug: &str, base: &str) -> NewConnection {
    NewConnection {
        slug: slug.into(),
        protocol: "openai".into(),
        base_url: base.into(),
        models: vec!["m1".into()],
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_round_trips_by_refs_and_is_restored_only_when_its_gates_hold() -> TestResult {
    let mock = MockProvider::start().await?;
    for k in ["sk-pf-a", "sk-pf-b", "sk-pf-b2"] {
        mock.set_key(k, KeyScript::new(["m1"]));
    }
    let base = format!("{}/v1", mock.base_url());
    let from = tempfile::tempdir()?;
    let exporter = open(from.path()).await?;
    exporter.connection_add(conn("a", &base), Some(secret("sk-pf-a"))).await?;
    exporter.connection_add(conn("b", &base), Some(secret("sk-pf-b"))).await?;
    exporter.verify("b", None, false, &|_| {}).await?;
    exporter.fallback_set("a", &["b=m1".to_string()]).await?;
    exporter.fallback_activate("a").await?;

    let text = exporter.export(None).await?;
    let doc: Value = serde_json::from_str(&text)?;
    let a = &doc["connections"][0];
    assert_eq!(a["slug"], "a", "connections in slug order");
    assert_eq!(a["fallback"], serde_json::json!([{"connection": "c2", "model": "m1"}]), "hops by export-local ref");
    assert_eq!(a["fallback_active"], true, "the exporter had it activated");
    assert!(!text.contains("c_"), "no database id in the file");

    let to = tempfile::tempdir()?;
    let importer = open(to.path()).await?;
    importer.import(&text, false, Conflict::Rename).await?;
    let status = importer.fallback_status("a").await?;
    assert_eq!(status.chain.len(), 1, "the chain came along");
    assert_eq!((status.chain[0].slug.as_str(), status.chain[0].model.as_deref()), ("b", Some("m1")), "to b, m1");
    assert!(!status.active && !status.activated, "imported inactive");
    assert!(status.pending, "and pending: the file had it activated");
    assert!(!status.gates.ok, "b has no key here yet: the gates fail");

    // b gets a key, is enabled and verified: the gates hold and the chain turns on by itself.
    importer.profile_rotate("b", "primary", secret("sk-pf-b2")).await?;
    importer.profile_edit("b", "primary", ProfileEdit { enabled: Some(true), ..Default::default() }).await?;
    let still = importer.fallback_status("a").await?;
    assert!(!still.active, "a key alone proves nothing: still inactive");
    importer.verify("b", None, false, &|_| {}).await?;
    let restored = importer.fallback_status("a").await?;
    assert!(restored.active && restored.activated && !restored.pending, "restored once its gates hold: {restored:?}");
    Ok(())
}

#[tokio::test]
async fn a_file_whose_chain_names_no_connection_or_makes_a_cycle_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let doc = |fallback_a: &str, fallback_b: &str| {
        format!(
            r#"{{"format":"switchyard.config","version":1,"connections":[
            {{"ref":"c1","slug":"a","protocol":"openai","base_url":"https://a.test/v1","fallback":{fallback_a}}},
            {{"ref":"c2","slug":"b","protocol":"openai","base_url":"https://b.test/v1","fallback":{fallback_b}}}]}}"#
        )
    };
    let unknown = engine.import(&doc(r#"[{"connection":"c9"}]"#, "[]"), true, Conflict::Rename).await;
    let message = unknown.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("connections[0].fallback[0].connection"), "names the path: {message}");
    let cycle =
        engine.import(&doc(r#"[{"connection":"c2"}]"#, r#"[{"connection":"c1"}]"#), true, Conflict::Rename).await;
    let message = cycle.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("cycle"), "a cycle is refused: {message}");
    Ok(())
}

#[tokio::test]
async fn every_write_that_changes_a_chain_keeps_the_whole_graph_within_its_bounds() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    for slug in ["a", "b", "c", "d", "e", "f"] {
        engine.connection_add(conn(slug, &format!("https://{slug}.test/v1")), None).await?;
    }
    let hops = |list: &[&str]| list.iter().map(|h| h.to_string()).collect::<Vec<String>>();

    // Breadth: five direct hops are more than MAX_CHAIN_HOPS.
    let wide = engine.fallback_set("a", &hops(&["b", "c", "d", "e", "f"])).await;
    let message = wide.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("at most 4"), "a chain of five hops is refused, naming the bound: {message}");

    // Depth, built one hop at a time: each chain alone is one hop, but a -> b -> c -> d -> e -> f
    // would be five deep, so the write that makes it so is refused.
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")] {
        engine.fallback_set(from, &hops(&[to])).await?;
    }
    let deep = engine.fallback_set("e", &hops(&["f"])).await;
    let message = deep.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("'a'") && message.contains("a -> b -> c -> d -> e -> f"),
        "the write is refused and names the chain it would break: {message}"
    );
    assert!(engine.fallback_status("e").await?.chain.is_empty(), "nothing was stored for e");

    // A hop's protocol cannot be edited away from its chains' protocol.
    let edit = ConnectionEdit { protocol: Some("anthropic".into()), ..Default::default() };
    let moved = engine.connection_edit("e", edit).await;
    let message = moved.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("'d'") && message.contains("protocol"),
        "the edit is refused, naming d's chain: {message}"
    );
    assert_eq!(engine.connection_show("e").await?.connection.protocol, "openai", "e kept its protocol");

    // Whatever was accepted exports (no misleading "secret-looking text").
    let text = engine.export(None).await?;
    assert!(text.contains("\"fallback\""), "the chains are in the file");

    // Import: a file with a chain wider than the bound is refused as a whole.
    let mut doc: Value = serde_json::from_str(&text)?;
    doc["connections"][5]["fallback"] = serde_json::json!([
        {"connection": "c1"}, {"connection": "c2"}, {"connection": "c3"}, {"connection": "c4"}, {"connection": "c5"}
    ]);
    let other = tempfile::tempdir()?;
    let importer = open(other.path()).await?;
    let wide = importer.import(&doc.to_string(), false, Conflict::Rename).await;
    let message = wide.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("connections[5].fallback"), "refused with the path of the wide chain: {message}");
    assert!(importer.connection_list().await?.is_empty(), "and nothing was imported");
    Ok(())
}
