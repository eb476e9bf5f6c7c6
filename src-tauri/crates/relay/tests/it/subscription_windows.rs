//! Subscription windows through the relay (issue 28 items 3-4, invariant 23), with api_key
//! profiles against the mock on a manual clock (no sleeping): a key whose 5-hour window is
//! rejected cools until that window's reset — not Retry-After's guess — and balanced routing
//! sends the next turns to the other key without trying it; a model family's weekly window
//! cools only that model; the Claude-Code-only and extra-usage refusals never fail over (one
//! attempt, the client gets the refusal, the key stays in rotation); a Codex account's
//! `usage_limit_reached` cools it until the body's reset; the windows every answer carried show
//! in the quota view with their kind, age and run-out forecast.
//!
//! Resets are absolute (`usage_limit_until`, `ResetAt::At`) on the engine's manual clock:
//! the mock's own clock is the machine's, so its Retry-After (counted from the machine's time)
//! says 0 s here — a relay that cooled on Retry-After instead of the window's reset would try
//! the key again at once, and these tests would see it.

use std::collections::HashMap;

use crate::common::clock::JAN_2025;
use crate::common::{header, relay_stepped, user, Key, Relay, TestResult};
use switchyard_engine::{HealthView, QuotaWindowView};
use switchyard_mock_provider::{Behaviour, KeyScript, LimitWindow, ResetAt, Subscription, UsageWindow};

const H: i64 = 3_600_000;

/// Unix seconds `ms` after the manual clock's start.
fn at(ms: i64) -> i64 {
    (JAN_2025 + ms) / 1000
}

/// One turn's outcome: status, the label that served, the reason, the attempt count, the body.
struct Turn {
    status: u16,
    label: String,
    reason: String,
    attempts: String,
    body: String,
}

async fn labels(r: &Relay) -> Result<HashMap<String, String>, Box<dyn std::error::Error>> {
    Ok(r.engine.profile_list("c").await?.into_iter().map(|p| (p.id, p.label)).collect())
}

async fn turn(r: &Relay, model: &str, text: &str) -> Result<Turn, Box<dyn std::error::Error>> {
    let resp = r.chat(model, vec![user(text)], false).await?;
    let by_id = labels(r).await?;
    let id = header(&resp, "x-switchyard-profile");
    Ok(Turn {
        status: resp.status().as_u16(),
        label: by_id.get(&id).cloned().unwrap_or(id),
        reason: header(&resp, "x-switchyard-reason"),
        attempts: header(&resp, "x-switchyard-attempts"),
        body: resp.text().await?,
    })
}

/// The circuits `routing status` shows open (or half open) for `label`.
async fn health(r: &Relay, label: &str) -> Result<Vec<HealthView>, Box<dyn std::error::Error>> {
    let status = r.engine.routing_status("c").await?;
    let p = status.profiles.into_iter().find(|p| p.label == label).ok_or("the profile is listed")?;
    Ok(p.health.into_iter().filter(|h| h.state != switchyard_engine::CircuitState::Closed).collect())
}

fn key(label: &'static str, secret: &'static str, script: KeyScript) -> Key<'static> {
    Key { label, secret, weight: 1, script }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_5_hour_window_cools_its_key_until_the_reset_and_the_next_turns_go_elsewhere() -> TestResult {
    let reset = at(H);
    let spent = KeyScript::new(["m1"]).behaviour(Behaviour::usage_limit_until(LimitWindow::FiveHour, reset));
    let keys = vec![key("a", "sk-sub-5h-a", spent), key("b", "sk-sub-5h-b", KeyScript::new(["m1"]))];
    let (r, clock) = relay_stepped("anthropic", &["m1"], keys, Some("balanced")).await?;

    let mut turns = Vec::new();
    for i in 0..4 {
        turns.push(turn(&r, "m1", &format!("question {i}")).await?);
    }
    assert!(turns.iter().all(|t| t.status == 200 && t.label == "b"), "every turn is served, by b");
    let failovers: Vec<&str> = turns.iter().filter(|t| t.attempts == "2").map(|t| t.reason.as_str()).collect();
    assert_eq!(failovers, ["failover:quota_exhausted"], "the one turn SWRR gave a failed over, as a spent quota");
    assert_eq!(r.mock.hits("sk-sub-5h-a"), 1, "the next turns never tried a: it cools");
    let cooling = health(&r, "a").await?;
    let account: Vec<(Option<&str>, Option<&str>, Option<&str>)> =
        cooling.iter().map(|h| (h.model.as_deref(), h.kind.as_deref(), h.until.as_deref())).collect();
    assert_eq!(
        account,
        [(None, Some("quota_exhausted"), Some("2025-01-01T01:00:00.000Z"))],
        "the whole account cools until the 5-hour window's reset (its header), not Retry-After's 0 s"
    );

    clock.step(H - 1_000);
    let t = turn(&r, "m1", "a second before the reset").await?;
    assert_eq!((t.label.as_str(), r.mock.hits("sk-sub-5h-a")), ("b", 1), "a second before the reset a still cools");
    r.mock.set_key("sk-sub-5h-a", KeyScript::new(["m1"]));
    clock.step(2_000);
    let mut probed = Vec::new();
    for i in 0..2 {
        let t = turn(&r, "m1", &format!("after the reset {i}")).await?;
        probed.push((t.label, t.reason));
    }
    assert!(
        probed.contains(&("a".to_string(), "probe".to_string())),
        "past the reset a is probed and serves again: {probed:?}"
    );
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_scoped_rejection_cools_only_that_model() -> TestResult {
    let (opus, sonnet) = ("claude-opus-4", "claude-sonnet-4");
    let reset = at(72 * H);
    let a = KeyScript::new([opus, sonnet]).model(opus, Behaviour::usage_limit_until(LimitWindow::SevenDayOpus, reset));
    let keys = vec![key("a", "sk-sub-opus-a", a), key("b", "sk-sub-opus-b", KeyScript::new([opus, sonnet]))];
    let (r, _clock) = relay_stepped("anthropic", &[opus, sonnet], keys, Some("balanced")).await?;

    let mut opus_turns = Vec::new();
    for i in 0..3 {
        opus_turns.push(turn(&r, opus, &format!("opus {i}")).await?);
    }
    assert!(opus_turns.iter().all(|t| t.status == 200 && t.label == "b"), "Opus turns are served by b");
    assert_eq!(r.mock.hits("sk-sub-opus-a"), 1, "a was asked for Opus once, then cooled for it");
    let mut sonnet_by = Vec::new();
    for i in 0..2 {
        let t = turn(&r, sonnet, &format!("sonnet {i}")).await?;
        assert_eq!((t.status, t.attempts.as_str()), (200, "1"), "Sonnet turns are served at once");
        sonnet_by.push(t.label);
    }
    sonnet_by.sort();
    assert_eq!(sonnet_by, ["a", "b"], "a keeps serving Sonnet: balanced routing gives it its share");
    let circuits: Vec<(Option<String>, Option<String>)> =
        health(&r, "a").await?.into_iter().map(|h| (h.model, h.until)).collect();
    assert_eq!(
        circuits,
        [(Some(opus.to_string()), Some("2025-01-04T00:00:00.000Z".to_string()))],
        "one circuit, for Opus on a, until the Opus window's reset; none for the account"
    );
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_every_account_would_give_are_never_failed_over() -> TestResult {
    let refusing = KeyScript::new(["m1"]).behaviour(Behaviour::ClientNotAllowed);
    let keys = vec![key("a", "sk-sub-cc-a", refusing), key("b", "sk-sub-cc-b", KeyScript::new(["m1"]))];
    let (r, _clock) = relay_stepped("anthropic", &["m1"], keys, Some("balanced")).await?;

    for (round, words, status) in [
        (0, "only authorized for use with Claude Code", 400),
        (1, "only authorized for use with Claude Code", 400),
        (2, "Extra usage is required", 429),
    ] {
        if round == 2 {
            r.mock.set_key("sk-sub-cc-a", KeyScript::new(["m1"]).behaviour(Behaviour::ExtraUsageRequired));
        }
        let b_before = r.mock.hits("sk-sub-cc-b");
        let mut on_a = Vec::new();
        for i in 0..2 {
            let t = turn(&r, "m1", &format!("round {round} turn {i}")).await?;
            if t.label == "a" {
                on_a.push(t);
            } else {
                assert_eq!((t.status, t.attempts.as_str()), (200, "1"), "round {round}: b serves its own turn");
            }
        }
        assert_eq!(on_a.len(), 1, "round {round}: a keeps its share of turns — the refusal did not cool it");
        let t = &on_a[0];
        assert_eq!((t.status, t.attempts.as_str()), (status, "1"), "round {round}: one attempt, the refusal itself");
        assert!(t.body.contains(words), "round {round}: the client gets the provider's words: {}", t.body);
        assert_eq!(r.mock.hits("sk-sub-cc-b") - b_before, 1, "round {round}: b was not asked to take a's turn");
    }
    assert!(health(&r, "a").await?.is_empty(), "no circuit opened on a");
    let r = r.stop().await?;
    let refused: Vec<(Option<String>, Option<String>)> = r
        .engine
        .attempts("c", 100)
        .await?
        .into_iter()
        .filter(|row| row.status != Some(200))
        .map(|row| (row.failure_kind, row.scope))
        .collect();
    assert_eq!(refused.len(), 3, "three refusals recorded");
    assert!(
        refused.iter().all(|(k, s)| (k.as_deref(), s.as_deref()) == (Some("bad_request"), Some("request"))),
        "each recorded with request scope: {refused:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_usage_limit_cools_its_account_until_the_bodys_reset() -> TestResult {
    let reset = at(2 * H);
    let spent = KeyScript::new(["gpt-5"]).behaviour(Behaviour::usage_limit_until(LimitWindow::FiveHour, reset));
    let windows = Subscription {
        five_hour: Some(UsageWindow { used: 0.3, reset: ResetAt::At(at(4 * H)) }),
        seven_day: Some(UsageWindow { used: 0.6, reset: ResetAt::At(at(100 * H)) }),
        codex_weekly_first: true,
        ..Subscription::default()
    };
    let b = KeyScript::new(["gpt-5"]).subscription(windows);
    let keys = vec![key("a", "sk-sub-codex-a", spent), key("b", "sk-sub-codex-b", b)];
    let (r, _clock) = relay_stepped("openai", &["gpt-5"], keys, Some("balanced")).await?;
    for i in 0..3 {
        let t = turn(&r, "gpt-5", &format!("codex {i}")).await?;
        assert_eq!((t.status, t.label.as_str()), (200, "b"), "turn {i}: served by b");
    }
    assert_eq!(r.mock.hits("sk-sub-codex-a"), 1, "a was tried once, then cooled");
    let until: Vec<Option<String>> = health(&r, "a").await?.into_iter().map(|h| h.until).collect();
    assert_eq!(until, [Some("2025-01-01T02:00:00.000Z".to_string())], "until the body's resets_at");
    r.router.flush_quota().await;
    let view = r.engine.quota("c").await?;
    let b_windows: Vec<(String, String, Option<f64>)> = view
        .profiles
        .iter()
        .find(|p| p.label == "b")
        .map(|p| p.windows.iter().map(|w| (w.name.clone(), w.kind.clone(), w.utilization)).collect())
        .unwrap_or_default();
    assert_eq!(
        b_windows,
        [
            ("codex_5h".to_string(), "five_hour".to_string(), Some(0.3)),
            ("codex_7d".to_string(), "seven_day".to_string(), Some(0.6))
        ],
        "b's windows are known by length, though the weekly one came in the primary slot"
    );
    r.stop().await?;
    Ok(())
}

/// `profile`'s window `name` in the quota view.
fn window<'a>(view: &'a switchyard_engine::QuotaView, name: &str) -> Option<&'a QuotaWindowView> {
    view.profiles.iter().flat_map(|p| &p.windows).find(|w| w.name == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_show_in_the_quota_view_with_their_age_and_forecast() -> TestResult {
    let script = |five_used: f64| {
        KeyScript::new(["claude-sonnet-4"]).subscription(Subscription {
            five_hour: Some(UsageWindow { used: five_used, reset: ResetAt::At(at(4 * H)) }),
            seven_day: Some(UsageWindow { used: 0.3, reset: ResetAt::At(at(100 * H)) }),
            seven_day_sonnet: Some(UsageWindow { used: 0.2, reset: ResetAt::At(at(100 * H)) }),
            ..Subscription::default()
        })
    };
    let keys = vec![key("a", "sk-sub-view-a", script(0.25))];
    let (r, clock) = relay_stepped("anthropic", &["claude-sonnet-4"], keys, None).await?;
    r.mock.set_key("sk-sub-view-a", script(0.25));
    assert_eq!(turn(&r, "claude-sonnet-4", "first").await?.status, 200, "served (legacy)");
    clock.step(H);
    r.mock.set_key("sk-sub-view-a", script(0.5));
    assert_eq!(turn(&r, "claude-sonnet-4", "an hour later").await?.status, 200, "served again");
    clock.step(90_000);
    r.router.flush_quota().await;
    let view = r.engine.quota("c").await?;

    let five = window(&view, "unified_5h").ok_or("the 5-hour window is shown")?;
    assert_eq!(
        (five.kind.as_str(), five.utilization, five.status.as_deref(), five.age_secs),
        ("five_hour", Some(0.5), Some("allowed"), 90),
        "kind, latest utilization, status, and the reading's age on the engine's clock"
    );
    assert!(five.binding, "the most used window is the one the claim names");
    assert_eq!(
        five.exhausts_at.as_deref(),
        Some("2025-01-01T03:00:00.000Z"),
        "a quarter of the window in the last hour, half left: it runs out two hours after the latest reading"
    );
    assert_eq!(five.resets_at.as_deref(), Some("2025-01-01T04:00:00.000Z"), "before its reset");
    let sonnet = window(&view, "unified_7d_sonnet").ok_or("the Sonnet weekly window is shown")?;
    assert_eq!(
        (sonnet.kind.as_str(), sonnet.family.as_deref(), sonnet.model.as_deref()),
        ("seven_day_model", Some("sonnet"), None),
        "a model family's window, of the account (not of the model called)"
    );
    let week = window(&view, "unified_7d").ok_or("the weekly window")?;
    assert_eq!(
        (week.kind.as_str(), week.exhausts_at.as_deref()),
        ("seven_day", None),
        "unused in the hour: no run-out"
    );
    let overall = window(&view, "unified").ok_or("the overall status")?;
    assert_eq!((overall.kind.as_str(), overall.status.as_deref()), ("overall", Some("allowed")), "the overall status");
    let r = r.stop().await?;
    assert!(!r.data_dir_text().contains("sk-sub-view"), "no secret in the data dir");
    Ok(())
}
