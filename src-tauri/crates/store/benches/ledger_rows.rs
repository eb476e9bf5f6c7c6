//! Criterion bench: what the attempt ledger spends per row in SQLite — `insert_batch` of a
//! full batch (256 rows, what the writer sends under load) and of a short one (40 rows, a
//! 100 ms linger at 400 req/s), rows shaped like a relay's (ids, keys, usage).
//!
//! Timed in process CPU time (every thread, kernel included), not wall time: the statements
//! run on sqlx's worker thread and write the WAL through the kernel, and what the relay pays
//! for a row on a busy machine is that CPU, not the hand-offs' wake-up latency.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rustix::time::{clock_gettime, ClockId};
use switchyard_store::attempts::{insert_batch, AttemptRow};
use switchyard_store::Store;

fn row(i: i64) -> AttemptRow {
    AttemptRow {
        at_ms: 1_764_000_000_000 + i,
        connection_id: "c_4f9d3b2a1c8e4e7f9a0b1c2d3e4f5a6b".into(),
        turn: format!("x:{:016x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        attempt: 1,
        profile_id: "p_0a1b2c3d4e5f60718293a4b5c6d7e8f9".into(),
        reason: "legacy_primary".into(),
        model: Some("gpt-model-01".into()),
        status: Some(200),
        ttfb_ms: Some(3),
        duration_ms: Some(5),
        input_tokens: Some(1_200 + i % 7),
        output_tokens: Some(40),
        session: Some(format!("s:{:016x}", i / 10)),
        conversation: Some(format!("x:{:016x}", i / 10)),
        cache_read_tokens: Some(1_024),
        ..Default::default()
    }
}

fn cpu_now() -> Duration {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn bench_rows(c: &mut Criterion) {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let store = runtime.block_on(Store::open(&dir.path().join("bench.db"))).unwrap_or_else(|e| panic!("store: {e}"));
    let mut group = c.benchmark_group("ledger_insert_cpu");
    // Times only grow, as the relay's do (the `(connection_id, at_ms)` index sees appends).
    let mut next = 0i64;
    for batch in [256usize, 40] {
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_function(BenchmarkId::new("insert_batch", batch), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let rows: Vec<AttemptRow> = (next..next + batch as i64).map(row).collect();
                    next += batch as i64;
                    let start = cpu_now();
                    runtime.block_on(async {
                        let mut conn = store.acquire().await.unwrap_or_else(|e| panic!("acquire: {e}"));
                        insert_batch(&mut conn, black_box(rows)).await.unwrap_or_else(|e| panic!("insert: {e}"));
                    });
                    spent += cpu_now() - start;
                }
                spent
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_rows);
criterion_main!(benches);
