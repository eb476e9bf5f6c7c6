//! `relay-bench --hop --bin-dir target/release [--baseline NAME=PATH]… [--seconds N] [--rounds N]`
//! (issue 40): the relay against the cheapest proxy there is, on one machine in one run. Two
//! nginx processes (one worker each, no master) are the static upstream (a fixed chat completion,
//! a model list for `verify`) and the hop (`proxy_pass` to it with upstream keep-alive); every
//! `switchyard` binary given (this tree's and each `--baseline`) serves `leg` (legacy, one key)
//! and `bal` (balanced over 4 keys) on that upstream.
//!
//! The bare hyper proxy (`bare.rs`: no routing, no ledger, no parsing) runs beside them: the
//! floor of any relay built on hyper here.
//!
//! - Closed loop, one-line body, 32 connections: `wrk` (one thread, a Lua counter makes every
//!   request a new turn) when it is installed, else this binary's own reqwest load; targets
//!   interleaved, `--rounds` rounds; each target's req/s per round, its median, and the median as
//!   a share of the hop's. The load generator, nginx and the proxy share the 2 cores, as in the
//!   issue's oha runs. Then the ratios that matter by round (each relay ÷ the hop, balanced ÷
//!   legacy, this tree ÷ each baseline) with a 90 % bootstrap interval of their median
//!   (`rounds.rs`): one run cannot claim a difference inside it.
//! - Fixed rate (open loop) over 32 connections: one-line at 500 req/s and 200 KB at 200 req/s;
//!   the added p50 of each proxy over the same round's direct p50, and the relay's added latency
//!   as a multiple of the hop's (the medians', and by round with its interval).
//!
//! - `--one-body`: every request of a cell (closed loop and fixed rate) sends the same body, so
//!   every request is the same turn (what the issue's oha runs sent); without it every request is
//!   a new turn, the harder case for balanced routing (a new turn and conversation binding, and
//!   an SWRR step, per request).
//! - `--pin`: the proxies (the nginx hop, the bare proxy, every relay, each with all its threads)
//!   on CPU 1, this binary with its load generator and the static upstream on CPU 0 (`taskset`).
//!   Each proxy then has a core of its own, as the hop has, and the scheduler no longer moves it
//!   between cores or sets it against the load: in two A/A runs (one binary served twice) a
//!   target's rounds spread ±5 % instead of ±12 %, and the same binary's ratio to itself came out
//!   at 0.97–0.98 (legacy) and 0.99–1.02 (balanced), intervals ±1.5–6 %. What it measures is each
//!   proxy's cost on one core (the relay's ledger threads included), not a shared machine: compare
//!   runs of one mode only.
//!
//! Run inside `scripts/with-keychain` (the relay reads its keys from the keychain).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tokio::process::{Child, Command};

use super::{bodies, median_cell, proc_cpu_ns, rounds, run_cell, set_up, spawn_announcing, Cell, Shape, Target};

/// The upstream's answer to every model call: a chat completion with usage, as a provider's.
const COMPLETION: &str = r#"{"id":"chatcmpl-hop","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#;
const MODELS: &str = r#"{"object":"list","data":[{"id":"m1","object":"model","created":1,"owned_by":"bench"}]}"#;

pub struct HopArgs {
    pub bin_dir: PathBuf,
    pub seconds: f64,
    pub rounds: usize,
    pub baselines: Vec<(String, PathBuf)>,
    /// Only the closed-loop table (`--closed-only`).
    pub closed_only: bool,
    /// Proxies on CPU 1, the load and the upstream on CPU 0 (`--pin`).
    pub pin: bool,
    /// Every cell, closed loop and fixed rate, sends one body over and over (`--one-body`: one
    /// turn, as the issue's oha runs sent), not a new turn per request.
    pub one_body: bool,
}

/// The CPU the proxies run on under `--pin`; the load generator and the upstream take CPU 0.
const PROXY_CPU: &str = "1";

/// `program`, started on the proxies' CPU under `--pin` (`taskset` execs it: the pid is the
/// program's, for the CPU read from `/proc`).
fn proxy_command(program: &Path, pin: bool) -> Command {
    if !pin {
        return Command::new(program);
    }
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", PROXY_CPU]).arg(program);
    cmd
}

/// Moves this process, every thread of it, to CPU 0: what it starts afterwards (the upstream
/// nginx, each `wrk`) starts there too.
fn pin_self() -> Result<()> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        bail!("--pin needs two CPUs (this machine has {cpus})");
    }
    let status = std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", "0", &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .context("taskset (util-linux) for --pin")?;
    if !status.success() {
        bail!("taskset could not pin the bench to CPU 0: {status}");
    }
    Ok(())
}

/// One nginx process in its own prefix dir, killed on drop.
struct Nginx {
    child: Child,
    port: u16,
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn nginx(dir: &Path, name: &str, server: &str, pin: bool) -> Result<Nginx> {
    let prefix = dir.join(name);
    for sub in ["body", "proxy", "fastcgi", "uwsgi", "scgi"] {
        std::fs::create_dir_all(prefix.join(sub))?;
    }
    let port = free_port()?;
    let p = prefix.display();
    let conf = format!(
        "worker_processes 1;\nmaster_process off;\ndaemon off;\npid {p}/nginx.pid;\nerror_log {p}/error.log error;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {p}/body; proxy_temp_path {p}/proxy;\n\
         fastcgi_temp_path {p}/fastcgi; uwsgi_temp_path {p}/uwsgi; scgi_temp_path {p}/scgi;\n\
         client_max_body_size 4m; client_body_buffer_size 4m; keepalive_requests 10000000; keepalive_timeout 300s;\n\
         {server}\n  server {{ listen 127.0.0.1:{port}; {locations} }}\n}}\n",
        locations = if name == "upstream" {
            format!(
                "location = /v1/models {{ default_type application/json; return 200 '{MODELS}'; }}\n\
                 location / {{ default_type application/json; return 200 '{COMPLETION}'; }}"
            )
        } else {
            "location / { proxy_pass http://hop_upstream; proxy_http_version 1.1; proxy_set_header Connection \"\"; }"
                .to_string()
        }
    );
    let conf_path = prefix.join("nginx.conf");
    std::fs::write(&conf_path, conf)?;
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().find(|p| Path::new(p).exists()).unwrap_or("nginx");
    let child = proxy_command(Path::new(nginx), pin)
        .arg("-p")
        .arg(&prefix)
        .arg("-e")
        .arg(prefix.join("error.log"))
        .arg("-c")
        .arg(&conf_path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("starting nginx (apt-get install nginx-light)")?;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return Ok(Nginx { child, port });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("nginx ({name}) did not listen on {port}: {}", std::fs::read_to_string(prefix.join("error.log"))?)
}

pub async fn run(a: HopArgs) -> Result<()> {
    let work = std::env::temp_dir().join(format!("switchyard-hop-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    if a.pin {
        pin_self()?;
    }
    let upstream = nginx(&work, "upstream", "", false).await?;
    let hop_upstream = format!("upstream hop_upstream {{ server 127.0.0.1:{}; keepalive 256; }}", upstream.port);
    let hop = nginx(&work, "hop", &hop_upstream, a.pin).await?;
    let base = format!("http://127.0.0.1:{}", upstream.port);
    let mut targets = vec![
        Target {
            name: "direct (nginx static)",
            url: format!("{base}/v1/chat/completions"),
            auth: "k".into(),
            pid: None,
        },
        Target {
            name: "nginx hop",
            url: format!("http://127.0.0.1:{}/v1/chat/completions", hop.port),
            auth: "k".into(),
            pid: hop.child.id(),
        },
    ];
    // The floor of any hyper-based relay on this machine: the bare pass-through proxy (`bare.rs`).
    let mut bare_cmd = proxy_command(&std::env::current_exe()?, a.pin);
    bare_cmd.args(["--bare-proxy", &base, "k"]).stderr(Stdio::null());
    let (bare, bare_url) = spawn_announcing(&mut bare_cmd).await?;
    targets.push(Target {
        name: "bare hyper proxy (floor)",
        url: format!("{bare_url}/v1/chat/completions"),
        auth: "client-key".into(),
        pid: bare.id(),
    });
    let mut relays = vec![bare];
    let mut binaries = vec![("main".to_string(), a.bin_dir.join("switchyard"))];
    binaries.extend(a.baselines.iter().cloned());
    for (i, (name, bin)) in binaries.iter().enumerate() {
        let data = work.join(format!("data-{i}"));
        let token = set_up(bin, &data, &base).await.with_context(|| format!("setting up {name}"))?;
        let mut cmd = proxy_command(bin, a.pin);
        cmd.env("SWITCHYARD_DATA_DIR", &data)
            .args(["relay", "serve", "--listen", "127.0.0.1:0"])
            .stderr(std::fs::File::create(work.join(format!("relay-{i}.log")))?);
        let (child, url) = spawn_announcing(&mut cmd).await?;
        for (kind, slug) in [("legacy", "leg"), ("balanced x4", "bal")] {
            let label: &'static str = Box::leak(format!("{name} relay {kind}").into_boxed_str());
            targets.push(Target {
                name: label,
                url: format!("{url}/c/{slug}/v1/chat/completions"),
                auth: token.clone(),
                pid: child.id(),
            });
        }
        relays.push(child);
    }
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).tcp_nodelay(true).build()?;
    let one_line = bodies::Body::new(0, false).one_turn_if(a.one_body);
    // Every target answers before anything is measured (a 401 would count as nothing).
    for t in &targets {
        let resp = client
            .post(&t.url)
            .bearer_auth(&t.auth)
            .header("content-type", "application/json")
            .body(one_line.for_request(0, 0))
            .send()
            .await?;
        if !resp.status().is_success() {
            bail!("{} answered {}: {}", t.name, resp.status(), resp.text().await.unwrap_or_default());
        }
    }

    let wrk = which("wrk");
    println!(
        "Closed loop, one-line body ({}), 32 connections, {} s per cell, {} interleaved rounds, load: {}{}\n",
        if a.one_body { "one body throughout: one turn" } else { "a new turn per request" },
        a.seconds,
        a.rounds,
        if wrk.is_some() { "wrk -t1 -c32" } else { "reqwest (wrk not installed)" },
        if a.pin { "; pinned: proxies on CPU 1, the load and the upstream on CPU 0" } else { "" }
    );
    let mut closed: Vec<Vec<(f64, f64)>> = vec![Vec::new(); targets.len()];
    for round in 0..a.rounds {
        eprintln!("closed-loop round {} of {}", round + 1, a.rounds);
        for (ti, t) in targets.iter().enumerate() {
            let cpu_before = proc_cpu_ns(t.pid.unwrap_or(0));
            let (rps, n) = match &wrk {
                Some(wrk) => wrk_cell(wrk, &work, t, a.seconds, a.one_body).await?,
                None => {
                    let shape = Shape { stream: false, conc: 32, seconds: a.seconds, rate: None };
                    let c = run_cell(&client, t, &one_line, shape).await?;
                    (c.rps, c.rps * a.seconds)
                }
            };
            let cpu = proc_cpu_ns(t.pid.unwrap_or(0)).saturating_sub(cpu_before);
            let cpu_us = if t.pid.is_some() && n > 0.0 { cpu as f64 / 1000.0 / n } else { 0.0 };
            closed[ti].push((rps, cpu_us));
        }
    }
    // A target's req/s, round by round.
    let rps = |ti: usize| closed[ti].iter().map(|c| c.0).collect::<Vec<f64>>();
    let hop_rps = rounds::median(rps(1));
    println!("| target | req/s per round | median req/s | share of the nginx hop | proxy CPU µs/req (median) |");
    println!("|---|---|---|---|---|");
    for (ti, t) in targets.iter().enumerate() {
        let each: Vec<String> = rps(ti).iter().map(|r| format!("{r:.0}")).collect();
        let med = rounds::median(rps(ti));
        let cpu = rounds::median(closed[ti].iter().map(|c| c.1).collect());
        println!(
            "| {} | {} | {med:.0} | {:.0} % | {} |",
            t.name,
            each.join(" / "),
            100.0 * med / hop_rps,
            if t.pid.is_some() { format!("{cpu:.1}") } else { "-".into() }
        );
    }

    // Ratios by round (a round's cells ran minutes apart at most, on the same machine state).
    let per_round = |a: Vec<f64>, b: Vec<f64>| a.iter().zip(&b).map(|(x, y)| x / y).collect::<Vec<f64>>();
    println!("\nBy round (the median of the per-round ratios, with a 90 % bootstrap interval of that median):\n");
    println!("| ratio of req/s | by round |");
    println!("|---|---|");
    for (i, (name, _)) in binaries.iter().enumerate() {
        let (leg, bal) = (3 + 2 * i, 4 + 2 * i);
        println!("| {name} legacy ÷ nginx hop | {} |", rounds::summary(&per_round(rps(leg), rps(1))));
        println!("| {name} balanced ÷ {name} legacy | {} |", rounds::summary(&per_round(rps(bal), rps(leg))));
        if i > 0 {
            println!("| main legacy ÷ {name} legacy | {} |", rounds::summary(&per_round(rps(3), rps(leg))));
            println!("| main balanced ÷ {name} balanced | {} |", rounds::summary(&per_round(rps(4), rps(bal))));
        }
    }

    let paced: &[(&str, usize, f64)] =
        if a.closed_only { &[] } else { &[("one-line", 0usize, 500.0), ("200 KB", 200 * 1024, 200.0)] };
    for &(name, size, rate) in paced {
        let body = bodies::Body::new(size, false).one_turn_if(a.one_body);
        let mut per: Vec<Vec<Cell>> = vec![Vec::new(); targets.len()];
        for round in 0..a.rounds {
            eprintln!("paced {name} round {} of {}", round + 1, a.rounds);
            for (ti, t) in targets.iter().enumerate() {
                let shape = Shape { stream: false, conc: 32, seconds: a.seconds, rate: Some(rate) };
                per[ti].push(run_cell(&client, t, &body, shape).await?);
            }
        }
        // Added p50 of target `ti` over the same round's direct p50: round by round, and their median.
        let added_each = |ti: usize| per[ti].iter().zip(&per[0]).map(|(c, d)| c.p50 - d.p50).collect::<Vec<f64>>();
        let added = |ti: usize| rounds::median(added_each(ti));
        let hop_added = added(1);
        println!(
            "\nFixed rate {rate} req/s over 32 connections, body {name} ({} bytes), medians of {} rounds:\n",
            body.len(),
            a.rounds
        );
        println!("| target | p50 µs | p99 µs | added p50 µs per round | added p50 µs (median) | × the hop's added p50 | proxy CPU µs/req |");
        println!("|---|---|---|---|---|---|---|");
        for (ti, t) in targets.iter().enumerate() {
            let m = median_cell(&per[ti]);
            let each: Vec<String> = added_each(ti).iter().map(|x| format!("{x:.0}")).collect();
            let (add, times) = if ti == 0 {
                ("-".to_string(), "-".to_string())
            } else {
                (format!("{:.0}", added(ti)), format!("{:.2}", added(ti) / hop_added))
            };
            println!(
                "| {} | {:.0} | {:.0} | {} | {add} | {times} | {} |",
                t.name,
                m.p50,
                m.p99,
                if ti == 0 { "-".to_string() } else { each.join(" / ") },
                if t.pid.is_some() { format!("{:.1}", m.relay_cpu_us) } else { "-".into() }
            );
        }
        // A round's added p50 over the hop's in the same round (rounds where the hop added
        // nothing measurable are left out).
        println!("\n| × the hop's added p50, by round | by round |");
        println!("|---|---|");
        for (ti, t) in targets.iter().enumerate().skip(2) {
            let ratios: Vec<f64> =
                added_each(ti).iter().zip(&added_each(1)).filter(|(_, h)| **h > 1.0).map(|(c, h)| c / h).collect();
            println!("| {} | {} |", t.name, rounds::summary(&ratios));
        }
    }
    for mut r in relays {
        let _ = r.start_kill();
        let _ = r.wait().await;
    }
    drop((upstream, hop));
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

/// One closed-loop wrk cell: req/s and the number of requests; fails on any non-2xx answer or
/// socket error (a refused request would look fast).
async fn wrk_cell(wrk: &Path, work: &Path, t: &Target, seconds: f64, one_body: bool) -> Result<(f64, f64)> {
    let script = work.join("wrk.lua");
    // A new turn per request (the counter in the last user message), or one turn throughout.
    let turn = if one_body { "" } else { "n = n + 1\n  " };
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.headers[\"Authorization\"] = \"Bearer {}\"\nlocal n = 0\n\
             request = function()\n  {turn}return wrk.format(nil, nil, nil, \
             '{{\"model\":\"m1\",\"stream\":false,\"messages\":[{{\"role\":\"user\",\"content\":\"w1 n' .. n .. '\"}}]}}')\nend\n",
            t.auth
        ),
    )?;
    // Warm-up, then the measured window.
    for (secs, measured) in [(1u64, false), (seconds.round().max(1.0) as u64, true)] {
        let out = Command::new(wrk)
            .args(["-t1", "-c32", &format!("-d{secs}s"), "-s"])
            .arg(&script)
            .arg(&t.url)
            .output()
            .await?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if !out.status.success() || text.contains("Non-2xx") || text.contains("Socket errors") {
            bail!("wrk against {} failed or saw refusals:\n{text}{}", t.name, String::from_utf8_lossy(&out.stderr));
        }
        if measured {
            let rps = text
                .lines()
                .find_map(|l| l.trim_start().strip_prefix("Requests/sec:"))
                .and_then(|v| v.trim().parse().ok())
                .context("no Requests/sec in wrk's output")?;
            // "N requests in Xs, Y read"
            let n = text
                .lines()
                .find(|l| l.contains(" requests in "))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .context("no request count in wrk's output")?;
            return Ok((rps, n));
        }
    }
    unreachable!("the measured window returns")
}
