//! The importer never panics: arbitrary JSON and arbitrary mutations of a valid document go
//! through `Engine::import` (dry run and real) on one data dir, bounded to 256 cases each.
//! A refused document must be an `invalid` error and must write nothing.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};
use switchyard_engine::{Conflict, Engine, ErrorCode};

fn valid() -> Value {
    json!({
        "format": "switchyard.config", "version": 1,
        "connections": [{
            "ref": "c1", "slug": "team", "protocol": "openai",
            "base_url": "https://team.example.com/v1",
            "headers": [{"name": "openai-organization", "value": "org"}],
            "models": ["gpt-a"], "mapping": {"fast": "gpt-a"}, "routing": "balanced",
            "profiles": [
                {"ref": "p1", "label": "alice", "weight": 2, "priority": 0, "primary": true},
                {"ref": "p2", "label": "bob", "weight": 5, "priority": 1, "primary": false}
            ]
        }]
    })
}

fn small_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-2i64..1003).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "\\PC{0,10}".prop_map(Value::String),
        prop_oneof![
            Just("c1"),
            Just("p1"),
            Just("team"),
            Just("sk-x"),
            Just("ftp://x"),
            Just("http://h.example"),
            Just("balanced"),
            Just("anthropic"),
            Just("authorization"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One mutation: at the `pick`-th node (pre-order), replace it, delete a member, add a
/// member, or duplicate an array element.
#[derive(Debug, Clone)]
struct Mutation {
    pick: usize,
    kind: u8,
    key: String,
    value: Value,
}

/// Values a real file could hold at many places, so a good share of mutants stay valid
/// and reach the writing half of the importer.
fn plausible() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1i64..1000).prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
        "[a-z][a-z0-9-]{0,10}".prop_map(Value::String),
        Just(json!("https://other.example/v1")),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    (
        any::<usize>(),
        0u8..4,
        prop_oneof!["[a-z_]{1,8}", Just("ref".to_string()), Just("api_key".to_string())],
        prop_oneof![3 => plausible(), 1 => small_json()],
    )
        .prop_map(|(pick, kind, key, value)| Mutation { pick, kind, key, value })
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// Applies `m` at node number `*left` in pre-order; returns true once applied.
fn apply(v: &mut Value, left: &mut usize, m: &Mutation) -> bool {
    if *left == 0 {
        match (m.kind, &mut *v) {
            (1, Value::Object(o)) => {
                let first = o.keys().next().cloned();
                if let Some(k) = first {
                    o.remove(&k);
                }
            }
            (2, Value::Object(o)) => {
                o.insert(m.key.clone(), m.value.clone());
            }
            (3, Value::Array(a)) if !a.is_empty() => a.push(a[0].clone()),
            _ => *v = m.value.clone(),
        }
        return true;
    }
    *left -= 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|c| apply(c, left, m)),
        Value::Object(o) => o.values_mut().any(|c| apply(c, left, m)),
        _ => false,
    }
}

fn check_import(rt: &tokio::runtime::Runtime, engine: &Engine, text: &str, dry_run: bool) -> Result<(), TestCaseError> {
    let before = rt.block_on(engine.connection_list()).map_err(|e| TestCaseError::fail(e.to_string()))?.len();
    let outcome = rt.block_on(engine.import(text, dry_run, Conflict::Rename));
    let after = rt.block_on(engine.connection_list()).map_err(|e| TestCaseError::fail(e.to_string()))?.len();
    match outcome {
        Ok(report) => {
            let written = if dry_run { 0 } else { report.connections.len() };
            prop_assert_eq!(after, before + written, "an import writes exactly its report");
        }
        Err(e) => {
            prop_assert_eq!(e.code(), ErrorCode::Invalid, "a bad document is invalid input: {}", e);
            prop_assert_eq!(after, before, "a refused document writes nothing");
        }
    }
    Ok(())
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: 256, failure_persistence: None, ..Config::default() })
}

#[test]
fn importer_never_panics_on_mutated_documents() -> Result<(), Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Runtime::new()?;
    let dir = tempfile::tempdir()?;
    let engine = rt.block_on(Engine::open(dir.path()))?;
    let strategy = (prop::collection::vec(mutation(), 0..3), any::<bool>());
    runner()
        .run(&strategy, |(mutations, dry_run)| {
            let mut doc = valid();
            for m in &mutations {
                let mut left = m.pick % count(&doc);
                apply(&mut doc, &mut left, m);
            }
            check_import(&rt, &engine, &doc.to_string(), dry_run)
        })
        .map_err(|e| e.to_string())?;
    rt.block_on(engine.close());
    Ok(())
}

#[test]
fn importer_never_panics_on_arbitrary_json() -> Result<(), Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Runtime::new()?;
    let dir = tempfile::tempdir()?;
    let engine = rt.block_on(Engine::open(dir.path()))?;
    runner()
        .run(&(small_json(), any::<bool>()), |(v, dry_run)| check_import(&rt, &engine, &v.to_string(), dry_run))
        .map_err(|e| e.to_string())?;
    rt.block_on(engine.close());
    Ok(())
}
