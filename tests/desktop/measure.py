#!/usr/bin/env python3
"""Speed of the desktop app in the real window (Xvfb + tauri-driver), printed as a table:

- cold start to first paint: process start (from /proc) to the frame after the first
  connection card entered the DOM (`window.__switchyardMarks.firstConnectionCard`, wall clock),
  over several fresh launches;
- idle RSS of the whole app: the app process and its WebKit children (WebKitWebProcess,
  WebKitNetworkProcess), summed from /proc: RSS (counts shared libraries once per process),
  PSS (shares them out) and USS (pages private to one process);
- UI responsiveness: the largest gap between requestAnimationFrame callbacks in the page
  while the Activity screen is shown and ~200 requests/s flow through the app's relay to the
  mock provider for ~10 s (with the idle gap for comparison).

usage: measure.py TARGET_PROFILE_DIR [--launches N] [--rate R] [--seconds S]
       (TARGET_PROFILE_DIR holds switchyard-desktop, switchyard, mock-provider; run inside
        scripts/with-keychain)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Window, free_port, start_mock_provider, stop, wait_for  # noqa: E402

KEY_A, KEY_B = "sk-measure-a-01", "sk-measure-b-02"
FRAME_MONITOR = """
const f = (window.__frames = { max: 0, over50: 0, over100: 0, n: 0, last: performance.now(), stop: false });
function tick(t) {
  const gap = t - f.last; f.last = t; f.n += 1;
  if (gap > f.max) f.max = gap;
  if (gap > 50) f.over50 += 1;
  if (gap > 100) f.over100 += 1;
  if (!f.stop) requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
"""


def proc_start_epoch(pid: int) -> float:
    with open("/proc/stat") as f:
        btime = next(int(line.split()[1]) for line in f if line.startswith("btime"))
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return btime + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                out.setdefault(ppid, []).append(int(d))
            except OSError:
                pass
    return out


def app_pid(app: str) -> int:
    real = os.path.realpath(app)
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.path.realpath(f"/proc/{d}/exe") == real:
                    pids.append(int(d))
            except OSError:
                pass
    if not pids:
        raise RuntimeError("the app process was not found")
    return max(pids, key=proc_start_epoch)


def tree_memory(root: int) -> list[tuple[str, int, int, int]]:
    """(name, RSS kB, PSS kB, USS kB) of `root` and every descendant."""
    kids, todo, out = children(), [root], []
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, []))
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/status") as f:
                rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
            with open(f"/proc/{pid}/smaps_rollup") as f:
                rollup = {line.split(":")[0]: int(line.split()[1]) for line in f if line.split()[-1] == "kB"}
            out.append((name, rss, rollup["Pss"], rollup["Private_Clean"] + rollup["Private_Dirty"]))
        except (OSError, StopIteration):
            pass
    return out


def cli(binary: str, data_dir: str, *args: str, secret: str | None = None) -> str:
    return subprocess.run([binary, "--data-dir", data_dir, *args], input=(secret or ""), text=True, check=True,
                          capture_output=True).stdout


def first_paint(w: Window, app: str) -> float:
    w.open()
    mark = wait_for(lambda: (m := w.js("return (window.__switchyardMarks || {}).firstConnectionCard || 0")) > 0 and m,
                    30, "the first connection card", every=0.05)
    return mark / 1000.0 - proc_start_epoch(app_pid(app))


def load(relay: str, token: str, rate: int, seconds: float) -> tuple[int, int, float]:
    """~`rate` chat completions per second for `seconds`; returns (ok, failed, elapsed)."""
    total, lock, counts = int(rate * seconds), threading.Lock(), [0, 0]
    start = time.time()

    def worker(offset: int, stride: int) -> None:
        for i in range(offset, total, stride):
            delay = start + i / rate - time.time()
            if delay > 0:
                time.sleep(delay)
            body = json.dumps({"model": "m1", "messages": [{"role": "user", "content": f"load {i}"}]}).encode()
            req = urllib.request.Request(f"{relay}/c/perf/v1/chat/completions", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {token}",
                                                  "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    resp.read()
                    ok = resp.status == 200
            except Exception:  # noqa: BLE001 - counted as a failure
                ok = False
            with lock:
                counts[0 if ok else 1] += 1

    threads = [threading.Thread(target=worker, args=(k, 16)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counts[0], counts[1], time.time() - start


def frames(w: Window, seconds: float) -> dict:
    w.js(FRAME_MONITOR)
    time.sleep(seconds)
    return w.js("window.__frames.stop = true; return window.__frames")


def webkit_floor(env: dict) -> list[tuple[str, int, int, int]] | None:
    """Idle memory of WebKitGTK itself: Debian's MiniBrowser (the same libwebkit2gtk-4.1, a
    UI process plus WebKitWebProcess and WebKitNetworkProcess, as the app) showing a one-line
    page on the same display for 5 s. No app code at all: the floor under the app's number."""
    found = [p for p in ("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                         "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser") if os.path.exists(p)]
    if not found:
        return None
    proc = subprocess.Popen([found[0], "data:text/html,<p>floor</p>"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(6)
        return tree_memory(proc.pid)
    finally:
        stop(proc)


def print_memory(title: str, memory: list[tuple[str, int, int, int]]) -> None:
    print(title)
    for name, rss, pss, uss in memory:
        print(f"  {name:<24} RSS {rss:>8}  PSS {pss:>8}  USS {uss:>8}")
    rss_total, pss_total, uss_total = (sum(m[i] for m in memory) for i in (1, 2, 3))
    print(f"  {'total':<24} RSS {rss_total:>8}  PSS {pss_total:>8}  USS {uss_total:>8}  = "
          f"{rss_total / 1024:.0f} MB RSS, {pss_total / 1024:.0f} MB PSS, {uss_total / 1024:.0f} MB USS")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=10)
    args = ap.parse_args()
    bins = os.path.abspath(args.bin_dir)
    app, cli_bin = os.path.join(bins, "switchyard-desktop"), os.path.join(bins, "switchyard")
    work = tempfile.mkdtemp(prefix="switchyard-measure-")
    data_dir = os.path.join(work, "data")
    script = {"keys": {KEY_A: {"models": ["m1"]}, KEY_B: {"models": ["m1"]}}}
    mock, mock_url = start_mock_provider(os.path.join(bins, "mock-provider"), script, work)
    cli(cli_bin, data_dir, "connection", "add", "perf", "--protocol", "openai", "--base-url", f"{mock_url}/v1",
        "--model", "m1", "--secret-stdin", secret=KEY_A)
    cli(cli_bin, data_dir, "profile", "add", "perf", "--label", "backup", "--weight", "3", "--secret-stdin",
        secret=KEY_B)
    cli(cli_bin, data_dir, "verify", "perf")
    cli(cli_bin, data_dir, "routing", "activate", "perf", "balanced")
    token = cli(cli_bin, data_dir, "relay", "token").strip()
    port = free_port()
    relay = f"http://127.0.0.1:{port}"
    w = Window(app, {"SWITCHYARD_DATA_DIR": data_dir, "SWITCHYARD_RELAY_PORT": str(port)})
    try:
        with w:
            paints = []
            for i in range(args.launches):
                paints.append(first_paint(w, app))
                if i < args.launches - 1:
                    w.close_session()
                    wait_for(lambda: subprocess.run(["pgrep", "-f", app], capture_output=True).returncode != 0, 15,
                             "the app to exit")
            time.sleep(5)
            memory = tree_memory(app_pid(app))
            w.click('button[aria-label="Open perf"]')
            w.click("#tab-activity")
            idle = frames(w, 3)
            w.js(FRAME_MONITOR)
            ok, failed, elapsed = load(relay, token, args.rate, args.seconds)
            busy = w.js("window.__frames.stop = true; return window.__frames")
            rows = len(w.find("[data-testid=attempt]"))
            floor = webkit_floor(w.env)

            print(f"binaries: {bins}")
            print(f"cold start to first paint (first connection card), {len(paints)} launches: "
                  f"median {statistics.median(paints) * 1000:.0f} ms, min {min(paints) * 1000:.0f} ms, "
                  f"max {max(paints) * 1000:.0f} ms  (target <= 1500 ms)")
            print_memory("idle memory of the app after 5 s (kB; target <= 150 MB RSS):", memory)
            if floor:
                print_memory("idle memory of WebKitGTK alone (MiniBrowser, one-line page, same display; kB):", floor)
            print(f"relay load: {ok} ok, {failed} failed in {elapsed:.1f} s = {ok / elapsed:.0f} req/s "
                  f"(asked {args.rate}/s for {args.seconds:.0f} s); Activity screen shows {rows} rows")
            print(f"frames idle on Activity: {idle['n']} in 3 s, max gap {idle['max']:.0f} ms")
            print(f"frames under load: {busy['n']} in {elapsed:.1f} s, max gap {busy['max']:.0f} ms, "
                  f">50 ms: {busy['over50']}, >100 ms: {busy['over100']}  (target: none > 100 ms)")
            return 0
    finally:
        stop(mock)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
