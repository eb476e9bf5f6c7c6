//! Caller tags through the relay (issue 15.5): `x-switchyard-tag-NAME: value` headers are
//! stored with every attempt, summed by `usage --by tag`, and never reach the provider (the
//! mock records every header it got); a request over a limit is refused with 400
//! `invalid_tag` before anything is sent, and the refusal never repeats the value.

use crate::common::{header, relay, user, Key, Relay, TestResult};
use serde_json::json;
use switchyard_engine::UsageBy;
use switchyard_mock_provider::KeyScript;

const CANARY: &str = "sk-canary-tags-5e2a9c71d3b84f06";

/// A chat request with extra headers.
async fn post_with(r: &Relay, headers: &[(&str, &str)]) -> reqwest::Result<reqwest::Response> {
    let body = json!({"model": "m1", "max_tokens": 16, "messages": [user("hi")]});
    let mut req = r.http.post(format!("{}{}", r.base(), r.path())).json(&body);
    req = match r.protocol {
        "openai" => req.bearer_auth(&r.token),
        _ => req.header("x-api-key", &r.token).header("anthropic-version", "2023-06-01"),
    };
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    req.send().await
}

fn keys() -> Vec<Key<'static>> {
    vec![
        Key { label: "a", secret: "sk-canary-tags-key-a", weight: 1, script: KeyScript::new(["m1"]) },
        Key { label: "b", secret: "sk-canary-tags-key-b", weight: 1, script: KeyScript::new(["m1"]) },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_are_stored_and_summed_and_never_forwarded() -> TestResult {
    for (protocol, mode) in [("anthropic", Some("balanced")), ("openai", Some("priority")), ("openai", None)] {
        let r = relay(protocol, &["m1"], keys(), mode).await?;
        for i in 0..3 {
            let job = if i < 2 { "nightly" } else { "adhoc" };
            let resp = post_with(&r, &[("x-switchyard-tag-job", job), ("x-switchyard-tag-team", "infra")]).await?;
            assert_eq!(resp.status(), 200, "{protocol} {mode:?}: a tagged request is served");
            let _ = resp.bytes().await?;
        }
        let resp = post_with(&r, &[]).await?;
        assert_eq!(resp.status(), 200);
        let _ = resp.bytes().await?;

        let seen = r.mock.requests();
        assert_eq!(seen.len(), 4, "{protocol} {mode:?}: four requests reached the provider");
        for req in &seen {
            let leaked: Vec<&str> =
                req.headers.keys().map(|n| n.as_str()).filter(|n| n.starts_with("x-switchyard-")).collect();
            assert!(leaked.is_empty(), "{protocol} {mode:?}: the provider saw {leaked:?}");
        }
        let r = r.stop().await?;
        let usage = r.engine.usage("c", None, UsageBy::Tag).await?;
        let got: Vec<(&str, i64)> = usage.rows.iter().map(|g| (g.key.as_str(), g.requests)).collect();
        assert_eq!(
            got,
            vec![("(untagged)", 1), ("job=adhoc", 1), ("job=nightly", 2), ("team=infra", 3)],
            "{protocol} {mode:?}: every attempt carries its request's tags"
        );
        let listed = r.engine.attempts("c", 10).await?;
        let newest_tagged = listed.iter().find(|a| !a.tags.is_empty()).ok_or("tagged rows are listed")?;
        assert_eq!(newest_tagged.tags.get("job").map(String::as_str), Some("adhoc"));
        assert_eq!(newest_tagged.connection, "c", "rows name their connection");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_a_tag_limit_is_refused_before_anything_is_sent() -> TestResult {
    let r = relay("anthropic", &["m1"], keys(), Some("balanced")).await?;
    let names: Vec<String> = (0..9).map(|i| format!("x-switchyard-tag-t{i}")).collect();
    let nine: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
    let long_value = "v".repeat(129);
    let long_name = format!("x-switchyard-tag-{}", "n".repeat(33));
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("nine tags", nine),
        ("a 129-character value", vec![("x-switchyard-tag-job", long_value.as_str())]),
        ("a 33-character name", vec![(long_name.as_str(), "v")]),
        ("a value that looks like a key", vec![("x-switchyard-tag-job", CANARY)]),
    ];
    for (what, headers) in cases {
        let resp = post_with(&r, &headers).await?;
        assert_eq!(resp.status(), 400, "{what}: refused with 400");
        assert_eq!(header(&resp, "x-switchyard-reason"), "invalid_tag", "{what}: the reason names the cause");
        let body = resp.text().await?;
        assert!(body.contains("x-switchyard-tag"), "{what}: the message names the header: {body}");
        assert!(!body.contains("canary"), "{what}: the message never repeats the value: {body}");
    }
    assert!(r.mock.requests().is_empty(), "nothing was forwarded for a refused request");
    let eight: Vec<(&str, &str)> = names[..8].iter().map(|n| (n.as_str(), "v")).collect();
    let resp = post_with(&r, &eight).await?;
    assert_eq!(resp.status(), 200, "eight tags are within the limit");
    let _ = resp.bytes().await?;
    let r = r.stop().await?;
    assert_eq!(r.engine.attempts("c", 10).await?.len(), 1, "refused requests leave no attempt");
    assert!(!r.data_dir_text().contains("canary-tags-5e2a"), "a refused value is stored nowhere");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_like_values_that_evaded_the_shape_check_are_refused_and_stored_nowhere() -> TestResult {
    let r = relay("openai", &["m1"], keys(), None).await?;
    for value in [
        "0123456789abcdef0123456789abcd",
        "AKIAIOSFODNN7EXAMPLE",
        "sk live 5e2a9c71d3b8",
        "sk.proj.5e2a9c71d3b8",
        "xapp-1-A0123BCDE-4567890123",
    ] {
        let resp = post_with(&r, &[("x-switchyard-tag-job", value)]).await?;
        assert_eq!(resp.status(), 400, "{value}: refused with 400");
        assert_eq!(header(&resp, "x-switchyard-reason"), "invalid_tag", "{value}: as an invalid tag");
        assert!(!resp.text().await?.contains(value), "{value}: the refusal does not repeat it");
    }
    assert!(r.mock.requests().is_empty(), "nothing was forwarded for a refused request");
    let r = r.stop().await?;
    assert!(r.engine.attempts("c", 10).await?.is_empty(), "refused requests leave no attempt");
    let stored = r.data_dir_text();
    for needle in ["0123456789abcdef0123456789abcd", "AKIAIOSFODNN7EXAMPLE", "5e2a9c71d3b8", "xapp-1"] {
        assert!(!stored.contains(needle), "{needle} is stored nowhere in the data dir");
    }
    Ok(())
}
