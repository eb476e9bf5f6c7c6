//! Subscription accounts over real HTTP: a key with `subscription` reports its usage windows on
//! every successful model call (Anthropic's unified headers; Codex's primary/secondary, the
//! weekly one first when scripted), streamed or not; a spent window, a Claude-Code-only token
//! and an extra-usage request are refused in each dialect's recorded shape; listing still
//! succeeds for such keys (verification lists models).

use crate::common::*;
use switchyard_mock_provider::{Behaviour, KeyScript, LimitWindow, ResetAt, Subscription, UsageWindow};

fn windows() -> Subscription {
    Subscription {
        five_hour: Some(UsageWindow { used: 0.42, reset: ResetAt::At(1_900_000_000) }),
        seven_day: Some(UsageWindow { used: 0.85, reset: ResetAt::At(1_900_300_000) }),
        seven_day_opus: Some(UsageWindow { used: 1.0, reset: ResetAt::At(1_900_200_000) }),
        ..Subscription::default()
    }
}

#[tokio::test]
async fn successes_carry_the_windows_in_each_dialects_headers() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-sub", KeyScript::new([Api::MODEL]).subscription(windows()))]).await?;
    for stream in [false, true] {
        let resp = Api::Anthropic.post(&mock, "sk-sub", &Api::Anthropic.request(stream), &[]).await?;
        let h = resp.headers().clone();
        let _ = read_body(resp).await;
        let got: Vec<Option<&str>> = [
            "anthropic-ratelimit-unified-5h-utilization",
            "anthropic-ratelimit-unified-5h-reset",
            "anthropic-ratelimit-unified-5h-status",
            "anthropic-ratelimit-unified-7d-status",
            "anthropic-ratelimit-unified-7d_opus-status",
            "anthropic-ratelimit-unified-status",
            "anthropic-ratelimit-unified-reset",
            "anthropic-ratelimit-unified-representative-claim",
        ]
        .iter()
        .map(|n| header(&h, n))
        .collect();
        assert_eq!(
            got,
            [
                Some("0.42"),
                Some("1900000000"),
                Some("allowed"),
                Some("allowed_warning"),
                Some("rejected"),
                Some("rejected"),
                Some("1900200000"),
                Some("seven_day_opus")
            ],
            "stream={stream}: each window with its status; overall the worst, the most used window binds"
        );
    }
    for api in [Api::Chat, Api::Responses] {
        let resp = api.post(&mock, "sk-sub", &api.request(false), &[]).await?;
        let h = resp.headers().clone();
        assert_eq!(header(&h, "x-codex-primary-window-minutes"), Some("300"), "{api:?}: the 5-hour window first");
        assert_eq!(header(&h, "x-codex-primary-used-percent"), Some("42"), "{api:?}: in percent");
        assert_eq!(header(&h, "x-codex-secondary-window-minutes"), Some("10080"), "{api:?}: then the weekly one");
        assert_eq!(header(&h, "x-codex-secondary-reset-at"), Some("1900300000"), "{api:?}: an absolute reset");
        assert_eq!(header(&h, "x-codex-primary-reset-after-seconds"), None, "{api:?}: and no countdown beside it");
        assert!(h.keys().all(|k| !k.as_str().contains("opus")), "{api:?}: model windows are Anthropic's only");
    }
    let swapped = Subscription { codex_weekly_first: true, ..windows() };
    mock.set_key("sk-swap", KeyScript::new([Api::MODEL]).subscription(swapped));
    let resp = Api::Chat.post(&mock, "sk-swap", &Api::Chat.request(true), &[]).await?;
    assert_eq!(header(resp.headers(), "x-codex-primary-window-minutes"), Some("10080"), "the weekly window first");
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_spent_window_is_refused_in_each_dialects_shape() -> anyhow::Result<()> {
    let at = jiff::Timestamp::now().as_second() + 3_600;
    let opus = Behaviour::usage_limit_until(LimitWindow::SevenDayOpus, at);
    let mock = mock_with(vec![
        ("sk-5h", KeyScript::new([Api::MODEL]).behaviour(Behaviour::usage_limit(LimitWindow::FiveHour, 600))),
        ("sk-opus", KeyScript::new([Api::MODEL]).behaviour(opus)),
    ])
    .await?;
    let (status, h, body) =
        answer(Api::Anthropic.post(&mock, "sk-opus", &Api::Anthropic.request(false), &[]).await?).await?;
    assert_eq!(status, 429, "a spent window is a 429");
    assert_eq!(body["error"]["type"], "rate_limit_error", "typed as a rate limit");
    let at_text = at.to_string();
    assert_eq!(header(&h, "anthropic-ratelimit-unified-7d_opus-status"), Some("rejected"), "the window refuses");
    assert_eq!(header(&h, "anthropic-ratelimit-unified-7d_opus-reset"), Some(at_text.as_str()), "until its reset");
    assert_eq!(header(&h, "anthropic-ratelimit-unified-representative-claim"), Some("seven_day_opus"), "named");
    let retry: u64 = header(&h, "retry-after").unwrap_or_default().parse()?;
    assert!((3_590..=3_600).contains(&retry), "Retry-After counts down to the reset: {retry}");

    let (status, h, body) = answer(Api::Chat.post(&mock, "sk-5h", &Api::Chat.request(false), &[]).await?).await?;
    assert_eq!(status, 429, "Codex: 429");
    assert_eq!(body["error"]["type"], "usage_limit_reached", "Codex's type");
    assert_eq!(body["error"]["resets_in_seconds"], 600, "the countdown");
    let resets_at = body["error"]["resets_at"].as_i64().unwrap_or_default();
    assert!((resets_at - jiff::Timestamp::now().as_second() - 600).abs() <= 2, "and the time it ends");
    assert_eq!(header(&h, "x-codex-primary-used-percent"), Some("100"), "the 5-hour window is spent");
    let (status, _, body) =
        answer(Api::Responses.post(&mock, "sk-5h", &Api::Responses.request(false), &[]).await?).await?;
    assert_eq!((status, body["error"]["type"].as_str()), (429, Some("usage_limit_reached")), "Responses alike");

    let listing = client().get(format!("{}/v1/models", mock.base_url())).header("x-api-key", "sk-opus");
    let listing = listing.header("anthropic-version", ANTHROPIC_VERSION).send().await?;
    assert_eq!(listing.status().as_u16(), 200, "the account still lists its models");
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn refusals_every_account_would_give_keep_their_recorded_words() -> anyhow::Result<()> {
    let mock = mock_with(vec![
        ("sk-cc", KeyScript::new([Api::MODEL]).behaviour(Behaviour::ClientNotAllowed)),
        ("sk-xu", KeyScript::new([Api::MODEL]).behaviour(Behaviour::ExtraUsageRequired)),
    ])
    .await?;
    let (status, _, body) =
        answer(Api::Anthropic.post(&mock, "sk-cc", &Api::Anthropic.request(false), &[]).await?).await?;
    assert_eq!((status, body["error"]["type"].as_str()), (400, Some("invalid_request_error")), "a 400");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("only authorized for use with Claude Code"), "the recorded words: {message}");
    let (status, _, body) =
        answer(Api::Anthropic.post(&mock, "sk-xu", &Api::Anthropic.request(false), &[]).await?).await?;
    assert_eq!((status, body["error"]["type"].as_str()), (429, Some("rate_limit_error")), "typed as a rate limit");
    assert_eq!(body["error"]["message"], "Extra usage is required for long context requests.", "the recorded words");
    mock.shutdown().await?;
    Ok(())
}
