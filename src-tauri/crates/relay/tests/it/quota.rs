//! Quota readings through the relay (issue 15): the mock provider reports falling remaining
//! requests on every success, and the reading of the key that served follows it — per key, in
//! both dialects, streamed or not; legacy and error answers are read too, their bytes passed
//! on as they came; no secret reaches a reading.

use crate::common::{header, relay, user, Key, Relay, TestResult};
use switchyard_engine::QuotaWindowView;
use switchyard_mock_provider::{Behaviour, KeyScript};

/// The `requests` window of `profile` for model `m1`, written to the store first.
async fn requests_window(r: &Relay, profile: &str) -> Result<Option<QuotaWindowView>, Box<dyn std::error::Error>> {
    r.router.flush_quota().await;
    let view = r.engine.quota("c").await?;
    let p = view.profiles.iter().find(|p| p.id == profile).ok_or("every profile is listed")?;
    Ok(p.windows.iter().find(|w| w.name == "requests" && w.model.as_deref() == Some("m1")).cloned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_keys_reading_follows_its_falling_remaining_requests() -> TestResult {
    for protocol in ["anthropic", "openai"] {
        let keys = vec![
            Key { label: "a", secret: "sk-canary-quota-a", weight: 1, script: KeyScript::new(["m1"]).quota(50, 49) },
            Key { label: "b", secret: "sk-canary-quota-b", weight: 1, script: KeyScript::new(["m1"]).quota(20, 19) },
        ];
        let r = relay(protocol, &["m1"], keys, Some("balanced")).await?;
        let ids: Vec<String> = r.engine.profile_list("c").await?.into_iter().map(|p| p.id).collect();
        let mut left = [49_i32, 19];
        let limits = [50_i32, 20];
        for turn in 0..6 {
            let resp = r.chat("m1", vec![user(&format!("question {turn}"))], turn % 2 == 1).await?;
            assert_eq!(resp.status(), 200, "{protocol}: turn {turn} is served");
            let served = header(&resp, "x-switchyard-profile");
            let _ = resp.bytes().await?;
            let i = ids.iter().position(|id| *id == served).ok_or("the route header names a profile")?;
            let other = 1 - i;
            let w = requests_window(&r, &served).await?.ok_or("the serving key has a reading")?;
            assert_eq!(
                (w.limit, w.remaining),
                (Some(limits[i]), Some(left[i])),
                "{protocol}: turn {turn}: the serving key's reading is the mock's latest report"
            );
            assert!(!w.stale, "{protocol}: a fresh reading is not stale");
            assert!(w.resets_at.is_some(), "{protocol}: the reset is read in the dialect's format");
            left[i] -= 1;
            if let Some(o) = requests_window(&r, &ids[other]).await? {
                assert_eq!(o.remaining, Some(left[other] + 1), "{protocol}: the other key's reading is untouched");
            }
        }
        assert_eq!(left, [46, 16], "{protocol}: both keys served three turns each");
        let view = serde_json::to_string(&r.engine.quota("c").await?)?;
        assert!(!view.contains("canary"), "{protocol}: no secret in the quota view");
        let r = r.stop().await?;
        assert!(!r.data_dir_text().contains("sk-canary"), "{protocol}: no secret in the data dir");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_and_error_answers_are_read_and_pass_unchanged() -> TestResult {
    let script = KeyScript::new(["m1"])
        .behaviour(Behaviour::sequence([Behaviour::rate_limited(5), Behaviour::Ok]))
        .listing(Behaviour::Ok)
        .quota(10, 10);
    let keys = vec![Key { label: "only", secret: "sk-canary-quota-legacy", weight: 1, script }];
    let r = relay("anthropic", &["m1"], keys, None).await?;
    let id = r.engine.profile_list("c").await?.into_iter().map(|p| p.id).next().ok_or("one profile")?;

    let limited = r.chat("m1", vec![user("hello")], false).await?;
    assert_eq!(limited.status(), 429, "legacy passes the provider's 429 on");
    assert_eq!(header(&limited, "anthropic-ratelimit-requests-remaining"), "0", "its limit headers are passed as sent");
    assert_eq!(header(&limited, "x-switchyard-profile"), "", "legacy answers carry no route headers");
    let w = requests_window(&r, &id).await?.ok_or("a 429 is read too")?;
    assert_eq!((w.limit, w.remaining), (Some(50), Some(0)), "the error answer's exhausted limit is the reading");

    let ok = r.chat("m1", vec![user("hello again")], true).await?;
    assert_eq!(ok.status(), 200, "then the stream is served");
    assert_eq!(header(&ok, "anthropic-ratelimit-requests-remaining"), "10", "the success's headers pass as sent");
    let body = ok.text().await?;
    assert!(body.contains("message_stop"), "the legacy stream is complete: {body}");
    let w = requests_window(&r, &id).await?.ok_or("the success is read")?;
    assert_eq!((w.limit, w.remaining), (Some(10), Some(10)), "the streamed success's report replaced the 429's");
    r.stop().await?;
    Ok(())
}
