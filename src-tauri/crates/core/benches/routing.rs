//! Criterion bench: one eligibility evaluation plus one SWRR selection for a connection of
//! 2, 8 and 32 profiles serving 16 models (target ≤ 1 µs for 8 profiles).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use switchyard_core::connection::Protocol;
use switchyard_core::routing::{
    select_for_turn, CircuitBoard, Criteria, Eligibility, EvidenceView, Failure, FailureKind, ModelSet, ProfileView,
    Scope, Strategy, SwrrTable,
};
use switchyard_core::BasisFingerprint;

const NOW: i64 = 1_750_000_000_000;

fn profiles(n: usize, models: &[String], basis: &BasisFingerprint) -> Vec<ProfileView> {
    (0..n)
        .map(|i| ProfileView {
            id: format!("p_{i:032x}"),
            weight: 1 + (i as u32 % 4),
            priority: i as i64,
            enabled: true,
            credential_present: true,
            credential: Default::default(),
            credential_revision: 3,
            evidence: Some(EvidenceView {
                credential_revision: 3,
                basis: basis.clone(),
                verified_at_ms: NOW - 60_000,
                auth_invalid: false,
                models: models.iter().cloned().collect::<ModelSet>(),
            }),
        })
        .collect()
}

fn bench_select(c: &mut Criterion) {
    let basis = BasisFingerprint::compute(Protocol::Openai, "https://api.example.test/v1", &[]);
    let models: Vec<String> = (0..16).map(|i| format!("gpt-model-{i:02}")).collect();
    let mut group = c.benchmark_group("eligibility_and_swrr");
    for n in [2usize, 8, 32] {
        let ps = profiles(n, &models, &basis);
        // Some health on the board so circuit lookups do real work.
        let board = CircuitBoard::default();
        let forbidden = Failure::new(FailureKind::ModelForbidden, Scope::CredentialModel);
        let _ = board.record_failure(&ps[0].id, &models[3], &forbidden, NOW);
        let criteria = Criteria { basis: &basis, max_evidence_age_ms: 86_400_000, now_ms: NOW };
        let mut table = SwrrTable::default();
        let mut e = Eligibility::default();
        let mut round = 0usize;
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                let model = models[round % models.len()].as_str();
                round += 1;
                e.evaluate(&ps, model, &criteria, &board.view());
                let sel = table
                    .with_state("c_conn", model, |s| select_for_turn(Strategy::Balanced, None, &ps, e.eligible(), s));
                black_box(sel)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_select);
criterion_main!(benches);
