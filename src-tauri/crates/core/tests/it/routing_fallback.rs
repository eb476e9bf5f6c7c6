//! Fallback across connections, the pure rules (invariant 17): the decision table (each
//! reason a connection cannot serve × chain shapes), chain validation (cycles, length,
//! protocol), model-first eligibility and explicit hop models, and no fallback after output
//! whatever the order of events.

use proptest::prelude::*;
use switchyard_core::routing::fallback::{
    decide, hop_gate, next_hop, selection_kind, validate_chain, ChainError, ChainNode, Decision, FallbackKind, Hop,
    Moment, Stay, MAX_CHAIN_HOPS,
};
use switchyard_core::routing::{Criteria, EvidenceView, Exclusion, Failure, FailureKind, ProfileView, Scope};
use switchyard_core::{BasisFingerprint, Protocol};

fn hop(slug: &str) -> Hop {
    Hop { slug: slug.into(), model: None }
}

/// Chain shapes: none, inactive (stored, not in use), one hop, several hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    None,
    Inactive,
    One,
    Several,
}

fn active(shape: Shape) -> bool {
    matches!(shape, Shape::One | Shape::Several)
}

#[test]
fn decision_table_every_reason_times_every_chain_shape() {
    let shapes = [Shape::None, Shape::Inactive, Shape::One, Shape::Several];
    // Selection time: every exclusion reason (disabled, cooling, quota, model-forbidden,
    // half-open held by another request, …) falls back when, and only when, a chain is active.
    for shape in shapes {
        for e in Exclusion::ALL {
            let got = decide(Moment::Selection { why: FallbackKind::Excluded(e) }, active(shape), false);
            let want = if active(shape) {
                Decision::Fallback(FallbackKind::Excluded(e))
            } else {
                Decision::Stay(Stay::NoChain)
            };
            assert_eq!(got, want, "selection with every profile {e} under chain {shape:?}");
        }
        // After a failure: credential scopes fall back before output; nothing after output;
        // provider, request and ambiguous scopes never.
        for kind in FailureKind::ALL {
            for scope in Scope::ALL {
                for committed in [false, true] {
                    let moment = Moment::AfterFailure { failure: Failure::new(kind, scope), committed };
                    let got = decide(moment, active(shape), false);
                    let want = match (active(shape), committed, scope.allows_failover()) {
                        (false, _, _) => Decision::Stay(Stay::NoChain),
                        (true, true, _) => Decision::Stay(Stay::AfterOutput),
                        (true, false, false) => Decision::Stay(Stay::NotCredentialScoped),
                        (true, false, true) => Decision::Fallback(FallbackKind::Failure(kind)),
                    };
                    assert_eq!(got, want, "{kind}/{scope} committed={committed} under chain {shape:?}");
                }
            }
        }
        // A request continuing a response one account holds never leaves it.
        let pinned =
            decide(Moment::Selection { why: FallbackKind::Excluded(Exclusion::CircuitOpen) }, active(shape), true);
        let want = if active(shape) { Decision::Stay(Stay::Continuity) } else { Decision::Stay(Stay::NoChain) };
        assert_eq!(pinned, want, "continuity under chain {shape:?}");
    }
}

#[test]
fn a_cooling_circuit_counts_as_the_failure_that_opened_it() {
    let rate = [(Exclusion::CircuitOpen, Some(FailureKind::RateLimited)), (Exclusion::Disabled, None)];
    assert_eq!(selection_kind(&rate), Some(FallbackKind::Failure(FailureKind::RateLimited)), "fallback:rate_limited");
    let forbidden = [(Exclusion::ModelCircuitOpen, Some(FailureKind::ModelForbidden))];
    assert_eq!(selection_kind(&forbidden).map(|k| k.as_str()), Some("model_forbidden"), "a model-forbidden key");
    let disabled = [(Exclusion::Disabled, None)];
    assert_eq!(selection_kind(&disabled).map(|k| k.to_string()).as_deref(), Some("disabled"), "disabled keys");
    let probing = [(Exclusion::ProbeInFlight, None)];
    assert_eq!(selection_kind(&probing).map(|k| k.as_str()), Some("probe_in_flight"), "half-open held elsewhere");
    assert_eq!(selection_kind(&[]), None, "nothing excluded: nothing to fall back for");
}

fn nodes(list: &'static [(&'static str, Protocol, &'static [&'static str])]) -> impl Fn(&str) -> Option<ChainNode> {
    move |s| {
        list.iter()
            .find(|(slug, _, _)| *slug == s)
            .map(|(_, p, hops)| ChainNode { protocol: *p, hops: hops.iter().map(|h| h.to_string()).collect() })
    }
}

#[test]
fn cycles_repeats_self_references_and_long_chains_are_refused() {
    let o = Protocol::Openai;
    let graph = nodes(&[
        ("a", Protocol::Openai, &[]),
        ("b", Protocol::Openai, &["a"]),
        ("c", Protocol::Openai, &["d"]),
        ("d", Protocol::Openai, &["e"]),
        ("e", Protocol::Openai, &["f"]),
        ("f", Protocol::Openai, &["g"]),
        ("g", Protocol::Openai, &[]),
        ("x", Protocol::Anthropic, &[]),
        ("y", Protocol::Openai, &[]),
    ]);
    assert!(
        matches!(validate_chain("a", o, &[hop("b")], &graph), Err(ChainError::Cycle(ref p)) if p == &["a", "b", "a"]),
        "a -> b while b -> a is a cycle, named in order"
    );
    assert_eq!(validate_chain("a", o, &[hop("a")], &graph), Err(ChainError::SelfReference("a".into())), "self");
    assert_eq!(validate_chain("a", o, &[hop("y"), hop("y")], &graph), Err(ChainError::Repeated("y".into())), "twice");
    assert!(
        matches!(validate_chain("a", o, &[hop("x")], &graph), Err(ChainError::ProtocolMismatch { .. })),
        "protocol"
    );
    assert_eq!(validate_chain("a", o, &[hop("z")], &graph), Err(ChainError::UnknownConnection("z".into())), "unknown");
    assert_eq!(validate_chain("a", o, &[], &graph), Err(ChainError::Empty), "empty");
    assert!(
        matches!(validate_chain("a", o, &[hop("c")], &graph), Err(ChainError::TooLong { max: MAX_CHAIN_HOPS, .. })),
        "a -> c -> d -> e -> f -> g is 5 hops deep, over the bound of {MAX_CHAIN_HOPS}"
    );
    assert_eq!(validate_chain("a", o, &[hop("y"), hop("g")], &graph), Ok(()), "a plain chain passes");
    let five = [hop("y"), hop("g"), hop("f"), hop("e"), hop("d")];
    assert!(
        matches!(validate_chain("a", o, &five, &graph), Err(ChainError::TooMany { max: MAX_CHAIN_HOPS, count: 5, .. })),
        "five hops side by side are more than {MAX_CHAIN_HOPS}, however shallow"
    );
    assert_eq!(validate_chain("a", o, &five[..4], &graph), Ok(()), "four are allowed");
    let wide = nodes(&[("w", Protocol::Openai, &["b1", "b2", "b3", "b4", "b5"]), ("v", Protocol::Openai, &[])]);
    let lookup = |s: &str| wide(s).or_else(|| s.starts_with('b').then(|| ChainNode { protocol: o, hops: vec![] }));
    assert!(
        matches!(validate_chain("v", o, &[hop("w")], &lookup), Err(ChainError::TooMany { ref slug, .. }) if slug == "w"),
        "a hop whose own chain is too wide is refused too"
    );
    let err = validate_chain("a", o, &[hop("b")], &graph).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("a -> b -> a"), "the error names the cycle: {err}");
}

fn basis() -> BasisFingerprint {
    BasisFingerprint::compute(Protocol::Openai, "https://b.test/v1", &[])
}

fn profile(id: &str, models: &[&str]) -> ProfileView {
    ProfileView {
        id: id.into(),
        weight: 1,
        priority: 0,
        enabled: true,
        credential_present: true,
        credential: Default::default(),
        credential_revision: 1,
        evidence: Some(EvidenceView {
            credential_revision: 1,
            basis: basis(),
            verified_at_ms: 1_000,
            auth_invalid: false,
            models: models.iter().map(|m| m.to_string()).collect(),
        }),
    }
}

#[test]
fn model_first_hops_count_only_for_models_their_evidence_supports() {
    let hops = [hop("b"), hop("c")];
    // b's evidence supports m1 only, c's m1 and m2.
    let supports = |i: usize, m: &str| match i {
        0 => m == "m1",
        _ => m == "m1" || m == "m2",
    };
    let mut serves = |i: usize, m: &str| supports(i, m);
    assert_eq!(next_hop(&hops, 0, "m1", &mut serves), Some((0, "m1")), "m1: the first hop, model unchanged");
    assert_eq!(next_hop(&hops, 0, "m2", &mut serves), Some((1, "m2")), "m2: b does not serve it, c does");
    assert_eq!(next_hop(&hops, 0, "m3", &mut serves), None, "m3: no hop serves it, nothing is sent anywhere");
    assert_eq!(next_hop(&hops, 1, "m1", &mut serves), Some((1, "m1")), "from the second hop on");
}

#[test]
fn explicit_hop_models_replace_the_requested_one() {
    let hops = [Hop { slug: "b".into(), model: Some("big".into()) }, hop("c")];
    let mut seen = Vec::new();
    let mut serves = |i: usize, m: &str| {
        seen.push((i, m.to_string()));
        i == 0 && m == "big"
    };
    assert_eq!(next_hop(&hops, 0, "small", &mut serves), Some((0, "big")), "b is asked for its own model");
    assert_eq!(seen, vec![(0, "big".to_string())], "the requested name is never checked against b");
    assert_eq!(Hop::parse("b=big").ok(), Some(hops[0].clone()), "written OTHER=MODEL");
}

#[test]
fn hop_gates_name_what_is_missing() {
    let basis = basis();
    let criteria = Criteria { basis: &basis, max_evidence_age_ms: 10_000, now_ms: 2_000 };
    let source = vec!["m1".to_string(), "m2".to_string()];
    let hop_models = vec!["m1".to_string(), "m2".to_string()];
    let profiles = [profile("p1", &["m1"])];
    let (lines, failures) = hop_gate(&hop("b"), &source, &hop_models, &profiles, &criteria);
    assert_eq!(lines.len(), 2, "a model-first hop is judged for each of the connection's models it enables");
    assert_eq!(lines[0].eligible, vec!["p1".to_string()], "m1 has current evidence");
    assert_eq!(failures.len(), 1, "m2 does not: {failures:?}");
    assert!(
        failures[0].contains("hop b") && failures[0].contains("m2"),
        "the report names hop and model: {failures:?}"
    );
    let only_m1 = vec!["m1".to_string()];
    let (_, none) = hop_gate(&hop("b"), &source, &only_m1, &profiles, &criteria);
    assert!(none.is_empty(), "a model the hop does not enable is never asked of it: {none:?}");
    let explicit = Hop { slug: "b".into(), model: Some("m9".into()) };
    let (_, bad) = hop_gate(&explicit, &source, &hop_models, &profiles, &criteria);
    assert!(bad.iter().any(|f| f.contains("not enabled")), "an explicit model must be enabled on the hop: {bad:?}");
    let stale = Criteria { basis: &basis, max_evidence_age_ms: 10, now_ms: 2_000 };
    let (_, old) = hop_gate(&hop("b"), &source, &only_m1, &profiles, &stale);
    assert!(old.iter().any(|f| f.contains("stale_evidence")), "stale evidence fails the gate: {old:?}");
}

/// One event of a request, in any order: an attempt failing (kind, scope) or output reaching
/// the client.
#[derive(Debug, Clone, Copy)]
enum Event {
    Failed(FailureKind, Scope),
    Output,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (0..FailureKind::ALL.len(), 0..Scope::ALL.len())
            .prop_map(|(k, s)| Event::Failed(FailureKind::ALL[k], Scope::ALL[s])),
        Just(Event::Output),
    ]
}

proptest! {
    /// Whatever happens in whatever order, once output reached the client no decision falls
    /// back, and before it only credential-scoped failures do.
    #[test]
    fn no_fallback_after_output(events in proptest::collection::vec(event(), 1..24)) {
        let mut output = false;
        for e in events {
            match e {
                Event::Output => output = true,
                Event::Failed(kind, scope) => {
                    let d = decide(Moment::AfterFailure { failure: Failure::new(kind, scope), committed: output }, true, false);
                    if output {
                        prop_assert_eq!(d, Decision::Stay(Stay::AfterOutput), "after output");
                    } else {
                        prop_assert_eq!(matches!(d, Decision::Fallback(_)), scope.allows_failover(), "before output");
                    }
                }
            }
        }
    }
}
