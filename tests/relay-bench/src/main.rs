//! `relay-bench --bin-dir target/release [--seconds 3]`: starts the mock provider and a
//! `switchyard relay serve` process, then in one run measures the mock direct, through the
//! relay in legacy mode and in balanced mode over 4 profiles, non-streaming and streaming,
//! at concurrency 1, 32 and 256, and prints one table with the relay's overhead against the
//! direct baseline of the same run and the relay's peak RSS. Run it inside
//! `scripts/with-keychain` (the relay reads its keys from the real keychain).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const KEYS: [&str; 4] = ["bench-key-1", "bench-key-2", "bench-key-3", "bench-key-4"];

mod bare;
mod bodies;
mod hop;
mod rounds;

struct Target {
    name: &'static str,
    url: String,
    auth: String,
    /// The process between the load and the mock (its CPU is measured); `None` for direct.
    pid: Option<u32>,
}

#[derive(Default, Clone)]
struct Cell {
    rps: f64,
    p50: f64,
    p99: f64,
    ttfb_p50: f64,
    /// Relay CPU time (user + system) per request, µs; 0 for the direct baseline.
    relay_cpu_us: f64,
    /// Peak RSS of the proxy process while this cell ran (sampled at 256 streams only), KiB.
    rss_kib: u64,
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, upstream, key] = args.as_slice() {
        if flag == "--bare-proxy" || flag == "--bare-buffering-proxy" {
            return bare::run(upstream, key, flag == "--bare-buffering-proxy");
        }
    }
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(bench(args))
}

async fn bench(args: Vec<String>) -> Result<()> {
    let mut args = args.into_iter();
    let mut bin_dir = PathBuf::from("target/release");
    let mut seconds = 3.0f64;
    let mut quick = false;
    let mut paced_only = false;
    let mut only_conc: Option<usize> = None;
    let mut rounds = 3usize;
    let mut baselines: Vec<(String, PathBuf)> = Vec::new();
    let mut only_body: Option<String> = None;
    let mut hop = false;
    let mut closed_only = false;
    let mut one_body = false;
    let mut pin = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bin-dir" => bin_dir = PathBuf::from(args.next().context("--bin-dir DIR")?),
            "--seconds" => seconds = args.next().context("--seconds N")?.parse()?,
            // Only concurrency 32 (for profiling iterations).
            "--quick" => quick = true,
            // Only the paced table (for profiling the relay at a steady moderate load).
            "--paced-only" => paced_only = true,
            // Only this concurrency in the closed-loop table.
            "--conc" => only_conc = Some(args.next().context("--conc N")?.parse::<usize>()?),
            // Rounds of the paced table (each target once per round, medians reported).
            "--rounds" => rounds = args.next().context("--rounds N")?.parse::<usize>()?.max(1),
            // A second `switchyard` binary (e.g. built from the commit before a change), served on
            // its own data dir beside the current one: before/after rows in one run.
            // Repeatable; `NAME=PATH` names its rows (default `baseline`).
            "--baseline" => {
                let arg = args.next().context("--baseline [NAME=]PATH")?;
                let (name, path) = arg.split_once('=').unwrap_or(("baseline", arg.as_str()));
                baselines.push((name.to_string(), PathBuf::from(path)));
            }
            // Only this body size in the paced tables (`one-line`, `9 KB`, `200 KB`, `1 MB`).
            "--body" => only_body = Some(args.next().context("--body NAME")?),
            // The relay against an nginx hop over an nginx static upstream (`hop.rs`).
            "--hop" => hop = true,
            "--closed-only" => closed_only = true,
            // `--hop` only: each proxy on a core of its own (`hop.rs`).
            "--pin" => pin = true,
            // `--hop` only: every request of a cell sends one body (one turn), as the oha runs did.
            "--one-body" => one_body = true,
            other => bail!("unknown argument {other}"),
        }
    }
    if pin && !hop {
        bail!("--pin is for --hop (the other tables share the cores as a user's machine does)");
    }
    if one_body && !hop {
        bail!("--one-body is for --hop");
    }
    if hop {
        return hop::run(hop::HopArgs { bin_dir, seconds, rounds, baselines, closed_only, pin, one_body }).await;
    }
    let work = std::env::temp_dir().join(format!("switchyard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let script = work.join("script.json");
    let keys: serde_json::Map<String, serde_json::Value> =
        KEYS.iter().map(|k| (k.to_string(), json!({"models": ["m1"]}))).collect();
    std::fs::write(&script, json!({"keys": keys}).to_string())?;

    let (mut mock, mock_url) = spawn_announcing(
        Command::new(bin_dir.join("mock-provider"))
            .args(["--no-record", "--script"])
            .arg(&script)
            .stderr(Stdio::null()),
    )
    .await?;
    let sy = bin_dir.join("switchyard");
    let data = work.join("data");
    let token = set_up(&sy, &data, &mock_url).await?;
    let mut relay_cmd = Command::new(&sy);
    let relay_log = work.join("relay.log");
    relay_cmd
        .env("SWITCHYARD_DATA_DIR", &data)
        .args(["relay", "serve", "--listen", "127.0.0.1:0"])
        .stderr(std::fs::File::create(&relay_log)?);
    let (mut relay, relay_url) = spawn_announcing(&mut relay_cmd).await?;
    let relay_pid = relay.id().context("relay pid")?;
    let mut baseline_relays = Vec::new();
    for (i, (name, bin)) in baselines.iter().enumerate() {
        // Its own data dir, set up by its own CLI: an older binary cannot open a database that
        // newer migrations have touched.
        let base_data = work.join(format!("baseline-data-{i}"));
        let base_token = set_up(bin, &base_data, &mock_url).await?;
        let mut cmd = Command::new(bin);
        cmd.env("SWITCHYARD_DATA_DIR", &base_data)
            .args(["relay", "serve", "--listen", "127.0.0.1:0"])
            .stderr(std::fs::File::create(work.join(format!("baseline-relay-{i}.log")))?);
        baseline_relays.push((name.clone(), spawn_announcing(&mut cmd).await?, base_token));
    }
    let mut bare_cmd = Command::new(std::env::current_exe()?);
    bare_cmd.args(["--bare-proxy", &mock_url, KEYS[0]]).stderr(Stdio::null());
    let (mut bare, bare_url) = spawn_announcing(&mut bare_cmd).await?;
    let bare_pid = bare.id().context("bare proxy pid")?;
    let mut buffering_cmd = Command::new(std::env::current_exe()?);
    buffering_cmd.args(["--bare-buffering-proxy", &mock_url, KEYS[0]]).stderr(Stdio::null());
    let (mut buffering, buffering_url) = spawn_announcing(&mut buffering_cmd).await?;
    eprintln!("relay pid {relay_pid}, bare proxy pid {bare_pid}, mock pid {}", mock.id().unwrap_or(0));

    let mut targets = vec![
        Target { name: "direct", url: format!("{mock_url}/v1/chat/completions"), auth: KEYS[0].to_string(), pid: None },
        Target {
            name: "bare hyper proxy (floor)",
            url: format!("{bare_url}/v1/chat/completions"),
            auth: "client-key".to_string(),
            pid: Some(bare_pid),
        },
        Target {
            name: "bare buffering proxy (floor when the body is kept)",
            url: format!("{buffering_url}/v1/chat/completions"),
            auth: "client-key".to_string(),
            pid: buffering.id(),
        },
        Target {
            name: "relay legacy",
            url: format!("{relay_url}/c/leg/v1/chat/completions"),
            auth: token.clone(),
            pid: Some(relay_pid),
        },
        Target {
            name: "relay balanced x4",
            url: format!("{relay_url}/c/bal/v1/chat/completions"),
            auth: token.clone(),
            pid: Some(relay_pid),
        },
    ];
    for (base, (child, url), base_token) in &baseline_relays {
        for (kind, slug) in [("legacy", "leg"), ("balanced x4", "bal")] {
            let url = format!("{url}/c/{slug}/v1/chat/completions");
            let name: &'static str = Box::leak(format!("{base} relay {kind}").into_boxed_str());
            targets.push(Target { name, url, auth: base_token.clone(), pid: child.id() });
        }
    }
    let one_line = [bodies::Body::new(0, false), bodies::Body::new(0, true)];
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).tcp_nodelay(true).build()?;
    let mut rows = Vec::new();
    for stream in [false, true] {
        let concurrencies: Vec<usize> = match (paced_only, quick, only_conc) {
            (true, _, _) => vec![],
            (false, _, Some(n)) => vec![n],
            (false, true, None) => vec![32],
            (false, false, None) => vec![1, 32, 256],
        };
        for conc in concurrencies {
            let mut direct = Cell::default();
            for t in &targets {
                let cell =
                    run_cell(&client, t, &one_line[usize::from(stream)], Shape { stream, conc, seconds, rate: None })
                        .await?;
                if t.name == "direct" {
                    direct = cell.clone();
                }
                rows.push((t.name, stream, conc, cell, direct.clone()));
            }
        }
    }
    // Paced over 32 connections: the added latency of the hop itself, without the CPU
    // saturation of the closed-loop rows (load generator, mock and relay share 2 cores), for
    // bodies from one line to 1 MB (`bodies.rs`; one-line also streaming). This machine's
    // run-to-run noise is as large as the targets, so the paced cells run in rounds (every
    // target once per round, interleaved) and the tables show per-target medians.
    let mut shapes: Vec<(&str, bool, f64, bodies::Body)> = Vec::new();
    for (name, size, rate) in bodies::SIZES {
        if only_body.as_deref().is_some_and(|b| b != name) {
            continue;
        }
        shapes.push((name, false, rate, bodies::Body::new(size, false)));
        if size == 0 {
            shapes.push((name, true, rate, bodies::Body::new(size, true)));
        }
    }
    // per_round[shape][target]: that cell's result in every round.
    let mut per_round: Vec<Vec<Vec<Cell>>> = vec![vec![Vec::new(); targets.len()]; shapes.len()];
    for round in 0..rounds {
        eprintln!("paced round {} of {rounds}", round + 1);
        for (si, (_, stream, rate, body)) in shapes.iter().enumerate() {
            for (ti, t) in targets.iter().enumerate() {
                let shape = Shape { stream: *stream, conc: 32, seconds, rate: Some(*rate) };
                per_round[si][ti].push(run_cell(&client, t, body, shape).await?);
            }
        }
    }
    let peak = proc_kib(relay_pid, "VmHWM:").unwrap_or(0);
    println!("Closed loop, one-line body (each connection sends as fast as answers come back):\n");
    print_table(&rows);
    for (si, (name, stream, rate, body)) in shapes.iter().enumerate() {
        let direct_rounds = &per_round[si][0];
        let floor_rounds = &per_round[si][1];
        let direct = median_cell(direct_rounds);
        let mut paced = Vec::new();
        let mut added_by_round = Vec::new();
        for (ti, t) in targets.iter().enumerate() {
            let cells = &per_round[si][ti];
            paced.push((t.name, *stream, 32, median_cell(cells), direct.clone()));
            if ti > 0 {
                let added = |base: &[Cell]| -> Vec<String> {
                    cells.iter().zip(base).map(|(c, d)| format!("{:.0}", c.p50 - d.p50)).collect()
                };
                let over_floor = match ti {
                    0 | 1 => String::new(),
                    2 => format!("; over the floor: {}", added(floor_rounds).join(", ")),
                    _ => format!(
                        "; over the floor: {}; over the buffering floor: {}",
                        added(floor_rounds).join(", "),
                        added(&per_round[si][2]).join(", ")
                    ),
                };
                let cpu: Vec<String> = cells.iter().map(|c| format!("{:.0}", c.relay_cpu_us)).collect();
                added_by_round.push(format!(
                    "- {}: {}{over_floor}; CPU µs/req: {}",
                    t.name,
                    added(direct_rounds).join(", "),
                    cpu.join(", ")
                ));
            }
        }
        println!(
            "\nPaced at {rate} req/s over 32 connections, body {name} ({} bytes), {} (median of {rounds} interleaved rounds):\n",
            body.len(),
            if *stream { "streaming" } else { "JSON answer" }
        );
        print_table(&paced);
        println!("\nadded p50 µs and proxy CPU µs/req in each round (added vs the same round's direct; relay rows also vs the floor):");
        for line in &added_by_round {
            println!("{line}");
        }
    }
    print_memory(&rows, peak);
    let _ = relay.start_kill();
    let _ = relay.wait().await;
    let log = std::fs::read_to_string(&relay_log).unwrap_or_default();
    let dropped = log.matches("queue full").count();
    println!("attempt records the relay dropped because its ledger queue was full: {dropped}");
    let _ = bare.start_kill();
    let _ = bare.wait().await;
    let _ = buffering.start_kill();
    let _ = buffering.wait().await;
    let _ = mock.start_kill();
    let _ = relay.wait().await;
    let _ = mock.wait().await;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

async fn spawn_announcing(cmd: &mut Command) -> Result<(Child, String)> {
    let mut child = cmd.stdout(Stdio::piped()).kill_on_drop(true).spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next_line().await?.context("no announcement")?;
    let url = first.split("listening on ").nth(1).context("no URL in the first line")?.to_string();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

/// How one cell loads its target.
#[derive(Debug, Clone, Copy)]
struct Shape {
    stream: bool,
    conc: usize,
    seconds: f64,
    /// Requests per second over all connections; `None` = closed loop.
    rate: Option<f64>,
}

async fn run_cell(client: &reqwest::Client, t: &Target, body: &bodies::Body, shape: Shape) -> Result<Cell> {
    let Shape { stream, conc, seconds, rate } = shape;
    eprintln!(
        "cell: {} stream={stream} conc={conc} rate={rate:?} (proxy RSS before: {} KiB)",
        t.name,
        proc_kib(t.pid.unwrap_or(0), "VmRSS:").unwrap_or(0)
    );
    // Warm-up, then the measured window.
    let _ = load(client, t, body, conc, 0.5, rate).await?;
    let pid = t.pid.unwrap_or(0);
    let sample = stream && conc == 256 && t.pid.is_some();
    let sampler = sample.then(|| {
        tokio::spawn(async move {
            let mut max = 0u64;
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                max = max.max(proc_kib(pid, "VmRSS:").unwrap_or(0));
            }
            max
        })
    });
    let cpu_before = proc_cpu_ns(pid);
    let (lat, ttfb, elapsed) = load(client, t, body, conc, seconds, rate).await?;
    let cpu_ns = proc_cpu_ns(pid).saturating_sub(cpu_before);
    let relay_cpu_us = if t.pid.is_none() || lat.is_empty() { 0.0 } else { cpu_ns as f64 / 1000.0 / lat.len() as f64 };
    let rss_kib = match sampler {
        Some(s) => s.await.unwrap_or(0),
        None => 0,
    };
    Ok(Cell {
        rps: lat.len() as f64 / elapsed,
        p50: pct(&lat, 0.50),
        p99: pct(&lat, 0.99),
        ttfb_p50: pct(&ttfb, 0.50),
        relay_cpu_us,
        rss_kib,
    })
}

/// Runs `conc` workers for `seconds`; returns per-request latencies and TTFBs (µs).
async fn load(
    client: &reqwest::Client,
    t: &Target,
    body: &bodies::Body,
    conc: usize,
    seconds: f64,
    rate: Option<f64>,
) -> Result<(Vec<u64>, Vec<u64>, f64)> {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let shared = Arc::new((client.clone(), t.url.clone(), t.auth.clone(), body.clone()));
    let mut tasks = Vec::with_capacity(conc);
    for w in 0..conc {
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            let (client, url, auth, template) = &*shared;
            let mut lat = Vec::new();
            let mut ttfb = Vec::new();
            let mut n = 0u64;
            // Paced (open loop): each worker sends at `rate / conc` per second, staggered.
            let interval = rate.map(|r| Duration::from_secs_f64(conc as f64 / r));
            let mut next = Instant::now() + interval.map_or(Duration::ZERO, |i| i.mul_f64(w as f64 / conc as f64));
            while Instant::now() < deadline {
                if let Some(i) = interval {
                    tokio::time::sleep_until(next.into()).await;
                    next += i;
                }
                n += 1;
                let body = template.for_request(w, n);
                let t0 = Instant::now();
                let req = client.post(url).bearer_auth(auth).header("content-type", "application/json").body(body);
                let Ok(resp) = req.send().await else { continue };
                if !resp.status().is_success() {
                    continue;
                }
                let mut first = None;
                let mut s = resp.bytes_stream();
                while let Some(chunk) = s.next().await {
                    if chunk.is_err() {
                        break;
                    }
                    first.get_or_insert_with(|| t0.elapsed());
                }
                lat.push(t0.elapsed().as_micros() as u64);
                ttfb.push(first.unwrap_or_else(|| t0.elapsed()).as_micros() as u64);
            }
            (lat, ttfb)
        }));
    }
    let (mut lat, mut ttfb) = (Vec::new(), Vec::new());
    for t in tasks {
        let (l, f) = t.await?;
        lat.extend(l);
        ttfb.extend(f);
    }
    let elapsed = start.elapsed().as_secs_f64();
    lat.sort_unstable();
    ttfb.sort_unstable();
    Ok((lat, ttfb, elapsed))
}

/// Field-wise median over rounds.
fn median_cell(cells: &[Cell]) -> Cell {
    let med = |f: fn(&Cell) -> f64| rounds::median(cells.iter().map(f).collect());
    Cell {
        rps: med(|c| c.rps),
        p50: med(|c| c.p50),
        p99: med(|c| c.p99),
        ttfb_p50: med(|c| c.ttfb_p50),
        relay_cpu_us: med(|c| c.relay_cpu_us),
        rss_kib: cells.iter().map(|c| c.rss_kib).max().unwrap_or(0),
    }
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)] as f64
}

/// CPU time of a process in ns: the sum over its threads of the scheduler's run time
/// (`/proc/PID/task/*/schedstat`, ns resolution; utime + stime in 10 ms clock ticks would
/// quantise a 2 s cell's per-request figure by ±5 %). Falls back to the ticks.
fn proc_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    let mut ns = 0u64;
    let mut read_any = false;
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        if let Some(run) = stat.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) {
            ns += run;
            read_any = true;
        }
    }
    if read_any {
        ns
    } else {
        proc_cpu_ticks(pid) * 10_000_000
    }
}

/// utime + stime of a process, in clock ticks.
fn proc_cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

fn proc_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
}

fn print_table(rows: &[(&str, bool, usize, Cell, Cell)]) {
    println!("| target | stream | conc | req/s | p50 µs | p99 µs | req/s vs direct | added p50 µs | added p99 µs | TTFB p50 µs | added TTFB µs | proxy CPU µs/req |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, stream, conc, c, d) in rows {
        let vs = if d.rps > 0.0 { format!("{:.0} %", 100.0 * c.rps / d.rps) } else { "-".into() };
        let (ap50, ap99, attfb) = if *name == "direct" {
            ("-".to_string(), "-".to_string(), "-".to_string())
        } else {
            (
                format!("{:.0}", c.p50 - d.p50),
                format!("{:.0}", c.p99 - d.p99),
                format!("{:.0}", c.ttfb_p50 - d.ttfb_p50),
            )
        };
        let ttfb = if *stream { format!("{:.0}", c.ttfb_p50) } else { "-".into() };
        let attfb = if *stream { attfb } else { "-".into() };
        println!(
            "| {name} | {} | {conc} | {:.0} | {:.0} | {:.0} | {vs} | {ap50} | {ap99} | {ttfb} | {attfb} | {} |",
            if *stream { "yes" } else { "no" },
            c.rps,
            c.p50,
            c.p99,
            if *name == "direct" { "-".to_string() } else { format!("{:.0}", c.relay_cpu_us) }
        );
    }
}

/// The relay's peak RSS and, per proxy, its RSS sampled while 256 streams flowed.
fn print_memory(rows: &[(&str, bool, usize, Cell, Cell)], peak_kib: u64) {
    let relay_256 = rows.iter().filter(|r| r.0.starts_with("relay")).map(|r| r.3.rss_kib).max().unwrap_or(0);
    println!();
    println!("relay peak RSS (VmHWM) over the whole run: {:.1} MB", peak_kib as f64 / 1024.0);
    println!("relay RSS while 256 concurrent streams flow: {:.1} MB", relay_256 as f64 / 1024.0);
    for (name, _, _, c, _) in rows.iter().filter(|r| r.3.rss_kib > 0) {
        println!("- {name}: {:.1} MB at 256 streams", c.rss_kib as f64 / 1024.0);
    }
}

/// Sets up a data dir through `sy`'s CLI: `leg` (legacy, one key) and `bal` (4 keys, verified,
/// balanced) on the mock; returns the relay token.
async fn set_up(sy: &std::path::Path, data: &std::path::Path, mock_url: &str) -> Result<String> {
    let cli = |args: Vec<String>, secret: Option<&str>| {
        let sy = sy.to_path_buf();
        let data = data.to_path_buf();
        let secret = secret.map(str::to_string);
        async move {
            let mut cmd = Command::new(sy);
            cmd.env("SWITCHYARD_DATA_DIR", &data)
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn()?;
            if let (Some(s), Some(mut stdin)) = (secret, child.stdin.take()) {
                tokio::io::AsyncWriteExt::write_all(&mut stdin, s.as_bytes()).await?;
            }
            let out = child.wait_with_output().await?;
            if !out.status.success() {
                bail!("switchyard {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            }
            Ok::<String, anyhow::Error>(String::from_utf8_lossy(&out.stdout).trim().to_string())
        }
    };
    let base = format!("{mock_url}/v1");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // "leg" stays legacy; "bal" gets 3 more keys and balanced routing below.
    for slug in ["leg", "bal"] {
        let add =
            ["connection", "add", slug, "--protocol", "openai", "--base-url", &base, "--model", "m1", "--secret-stdin"];
        cli(s(&add), Some(KEYS[0])).await?;
    }
    for (i, k) in KEYS.iter().enumerate().skip(1) {
        cli(s(&["profile", "add", "bal", "--label", &format!("k{i}"), "--secret-stdin"]), Some(k)).await?;
    }
    cli(s(&["verify", "bal"]), None).await?;
    cli(s(&["routing", "activate", "bal", "balanced"]), None).await?;
    cli(s(&["relay", "token"]), None).await
}
