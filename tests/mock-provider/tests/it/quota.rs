//! Scripted limit headers over real HTTP: a key with `quota` reports its request limit on every
//! successful model call, with remaining falling by one per call, in each API's own headers,
//! streamed or not; a key without it sends none; error answers keep their own headers.

use crate::common::*;
use switchyard_mock_provider::{Behaviour, KeyScript};

/// The (limit, remaining, reset) headers of the API's dialect.
fn names(api: Api) -> [&'static str; 3] {
    match api {
        Api::Anthropic => [
            "anthropic-ratelimit-requests-limit",
            "anthropic-ratelimit-requests-remaining",
            "anthropic-ratelimit-requests-reset",
        ],
        Api::Chat | Api::Responses => {
            ["x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"]
        }
    }
}

#[tokio::test]
async fn remaining_requests_fall_by_one_per_successful_call_in_every_api() -> anyhow::Result<()> {
    for api in Api::ALL {
        let mock = mock_with(vec![("sk-q", KeyScript::new([Api::MODEL]).quota(50, 49))]).await?;
        let [limit, remaining, reset] = names(api);
        for (n, stream) in [false, true, false, true].into_iter().enumerate() {
            let resp = api.post(&mock, "sk-q", &api.request(stream), &[]).await?;
            assert_eq!(resp.status().as_u16(), 200, "{api:?}: call {n} succeeds");
            let h = resp.headers().clone();
            let _ = read_body(resp).await;
            assert_eq!(header(&h, limit), Some("50"), "{api:?}: call {n} reports the limit");
            let want = (49 - n).to_string();
            assert_eq!(header(&h, remaining), Some(want.as_str()), "{api:?}: call {n} has one request less left");
            let reset = header(&h, reset).unwrap_or_default();
            let readable = match api {
                Api::Anthropic => reset.parse::<jiff::Timestamp>().is_ok(),
                Api::Chat | Api::Responses => reset == "1m0s",
            };
            assert!(readable, "{api:?}: the reset is in the dialect's format: {reset:?}");
        }
        mock.shutdown().await?;
    }
    Ok(())
}

#[tokio::test]
async fn without_a_quota_script_successes_carry_no_limit_headers() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-plain", KeyScript::new([Api::MODEL]))]).await?;
    for api in Api::ALL {
        for stream in [false, true] {
            let resp = api.post(&mock, "sk-plain", &api.request(stream), &[]).await?;
            let has = resp
                .headers()
                .keys()
                .any(|k| k.as_str().starts_with("anthropic-ratelimit-") || k.as_str().starts_with("x-ratelimit-"));
            assert!(!has, "{api:?} stream={stream}: the default script sends no limit headers (today's bytes)");
        }
    }
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn errors_keep_their_own_headers_and_take_no_quota_step() -> anyhow::Result<()> {
    let script = KeyScript::new([Api::MODEL])
        .behaviour(Behaviour::sequence([Behaviour::rate_limited(7), Behaviour::Ok]))
        .quota(9, 9);
    let mock = mock_with(vec![("sk-q", script)]).await?;
    let api = Api::Anthropic;
    let [_, remaining, _] = names(api);
    let first = api.post(&mock, "sk-q", &api.request(false), &[]).await?;
    assert_eq!(first.status().as_u16(), 429, "the sequence starts with a 429");
    assert_eq!(header(first.headers(), remaining), Some("0"), "the 429 keeps its exhausted-limit headers");
    let second = api.post(&mock, "sk-q", &api.request(false), &[]).await?;
    assert_eq!(header(second.headers(), remaining), Some("9"), "the first success reports the starting value");
    mock.shutdown().await?;
    Ok(())
}
