"""Team relay bench (issue 31): the relay on SQLite, on Postgres (one replica), and three Postgres
replicas behind nginx (round robin), in one run against one mock provider, with a balanced
connection of three keys (5:3:2) so every routed decision goes through the store's shared state.

Measures, per setup: p50/p90 of sequential requests of two kinds (a warm conversation's tool-loop
call, a new conversation) and the latency added over calling the mock directly (same request, same
run); closed-loop throughput of CLIENTS client loops for SECS seconds; and on Postgres the store
transactions per request of each kind (pg_stat_database xact_commit + xact_rollback over the run,
background ledger and quota writes included) and of a failover (first key 429 → second key) against
a new conversation under the same conditions (after 1.5 s idle, so both include the 1-s snapshot
reload). Every Switchyard statement outside an explicit transaction is its own transaction, so on
the request path transactions = round trips (the ledger's batch is one transaction of many rows).

With LIMITS=1 (issue 41) each setup is measured twice in the same run: without limits, then with
one USD limit and one request limit on every user (`limits set users --usd … --per day`,
`--requests … --per minute`, capacities never reached, and a price for the model) — admission
then takes both in one store transaction before the first attempt and the ledger's writer settles
them.

Run: scripts/with-postgres python3 tests/relay-bench/team_bench.py TARGET_DIR [debug|release]
(after cargo build -p switchyard-cli -p switchyard-mock-provider; nginx-light installed).
Prints a Markdown table. Not a test: numbers, no assertions beyond every answer being 200."""
import http.client, json, os, shutil, socket, statistics, subprocess, sys, tempfile, threading, time

T = sys.argv[1]
PROFILE = sys.argv[2] if len(sys.argv) > 2 else "debug"
SW, MOCK = f"{T}/{PROFILE}/switchyard", f"{T}/{PROFILE}/mock-provider"
N = int(os.environ.get("N", "300"))
LIMITS = os.environ.get("LIMITS") == "1"
CLIENTS, SECS = int(os.environ.get("CLIENTS", "4")), float(os.environ.get("SECS", "5"))
KEYS = [("five", "sk-bench-five", 5), ("three", "sk-bench-three", 3), ("two", "sk-bench-two", 2)]
HEADERS = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
procs = []


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def start(cmd, env=None, log=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log or subprocess.DEVNULL, env=env, text=True)
    procs.append(p)
    return p, p.stdout.readline().strip().rsplit("http://", 1)[1]


def opening(text):
    return {"model": "m1", "max_tokens": 8, "messages": [{"role": "user", "content": text}]}


def tool_call(text, step):
    msgs = [{"role": "user", "content": text}]
    for i in range(step):
        tid = f"toolu_{i:02}"
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "ls", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": f"f{i}"}]}]
    return {"model": "m1", "max_tokens": 8, "messages": msgs,
            "tools": [{"name": "ls", "description": "list", "input_schema": {"type": "object"}}]}


class Client:
    def __init__(self, addr, token, slug="c", direct=False):
        host, port = addr.split(":")
        self.c = http.client.HTTPConnection(host, int(port), timeout=30)
        self.path = "/v1/messages" if direct else f"/c/{slug}/v1/messages"
        self.h = dict(HEADERS, **{"x-api-key": token})

    def send(self, body):
        try:
            self.c.request("POST", self.path, json.dumps(body), self.h)
            r = self.c.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The relay closed the kept-alive connection while the bench waited: connect again.
            self.c.close()
            self.c.request("POST", self.path, json.dumps(body), self.h)
            r = self.c.getresponse()
        r.read()
        assert r.status == 200, r.status


def xacts(store):
    # A busy backend reports its counters at most once a second, an idle one after 10 s
    # (PGSTAT_IDLE_INTERVAL): wait until the relay's pooled connections have reported.
    time.sleep(11)
    out = subprocess.run(["psql", store, "-Atc", "select pg_stat_clear_snapshot(); select xact_commit + "
                          "xact_rollback from pg_stat_database where datname = current_database()"],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[-1]), time.monotonic()


class Counter:
    """Store transactions caused by requests: pg_stat_database's count over a window, less what
    the replicas do in the background at the rate measured over an idle window just before
    (relay-user refresh every 250 ms, quota passes, psql itself)."""
    def __init__(self, store):
        self.store = store
        (b0, t0), (b1, t1) = xacts(store), xacts(store)
        self.rate = (b1 - b0) / (t1 - t0)
        self.background = f"{self.rate:.1f} tx/s"

    def per_request(self, n, work):
        c0, t0 = xacts(self.store)
        work()
        c1, t1 = xacts(self.store)
        return (c1 - c0 - self.rate * (t1 - t0)) / n


def timed(client, bodies):
    lat = []
    for b in bodies:
        t = time.perf_counter(); client.send(b); lat.append((time.perf_counter() - t) * 1e6)
    lat.sort()
    return statistics.median(lat), lat[int(len(lat) * 0.9)]


def closed_loop(addr, token):
    done, stop = [0] * CLIENTS, time.perf_counter() + SECS
    def loop(i):
        c = Client(addr, token)
        n = 0
        while time.perf_counter() < stop:
            c.send(opening(f"loop {i} {n} {time.time_ns()}")); n += 1
        done[i] = n
    ts = [threading.Thread(target=loop, args=(i,)) for i in range(CLIENTS)]
    [t.start() for t in ts]; [t.join() for t in ts]
    return sum(done) / SECS


def setup(store, mock_addr, tag):
    d = tempfile.mkdtemp(prefix=f"sy-bench-{tag}-")
    key = d + ".key"; open(key, "w").write(bytes(range(32)).hex()); os.chmod(key, 0o600)
    env = dict(os.environ, SWITCHYARD_VAULT="sealed", SWITCHYARD_MASTER_KEY_FILE=key)
    env.pop("SWITCHYARD_TEST_PG", None)
    if store:
        env["SWITCHYARD_STORE"] = store
    def sw(*a, inp=None, data=d):
        r = subprocess.run([SW, "--data-dir", data, *a], input=inp, capture_output=True, text=True, env=env)
        assert r.returncode == 0, (a, r.stderr)
        return r.stdout
    base = f"http://{mock_addr}"
    (l0, s0, w0), rest = KEYS[0], KEYS[1:]
    sw("connection", "add", "c", "--protocol", "anthropic", "--base-url", base, "--model", "m1", "--secret-stdin", inp=s0)
    sw("profile", "edit", "c", "primary", "--label", l0, "--weight", str(w0))
    for label, secret, w in rest:
        sw("profile", "add", "c", "--label", label, "--weight", str(w), "--secret-stdin", inp=secret)
    sw("verify", "c"); sw("routing", "activate", "c", "balanced")
    # Failover: priority over a key that answers 429 (first) and a good one.
    sw("connection", "add", "f", "--protocol", "anthropic", "--base-url", base, "--model", "m1", "--secret-stdin",
       inp="sk-bench-limited")
    sw("profile", "add", "f", "--label", "good", "--secret-stdin", inp="sk-bench-five")
    sw("verify", "f"); sw("routing", "activate", "f", "priority")
    token = json.loads(sw("--json", "relay", "users", "add", "bench"))["token"]
    return d, env, sw, token


def limited(sw):
    """One USD limit and one request limit on every user (never reached), the model priced."""
    sw("prices", "set", "m1", "--input", "3", "--output", "15")
    sw("limits", "set", "users", "--usd", "100000", "--per", "day")
    sw("limits", "set", "users", "--requests", "100000000", "--per", "minute")
    time.sleep(1.2)  # every replica reads its limits within a second


def replica(d, env):
    log = open(os.path.join(d, f"relay-{len(procs)}.log"), "w")
    return start([SW, "--data-dir", d, "relay", "serve", "--listen", "127.0.0.1:0"], env, log)[1]


def nginx(upstreams):
    d = tempfile.mkdtemp(prefix="sy-bench-nginx-"); port = free_port()
    servers = "".join(f"server {u};\n" for u in upstreams)
    conf = f"""user root; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; client_body_temp_path {d}/cb; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f;
uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
upstream replicas {{ {servers} keepalive 16; }}
server {{ listen 127.0.0.1:{port}; location / {{ proxy_pass http://replicas; proxy_http_version 1.1;
proxy_set_header Connection ""; proxy_set_header Host 127.0.0.1; proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; proxy_buffering off; }} }} }}"""
    open(f"{d}/nginx.conf", "w").write(conf)
    p = subprocess.Popen(["nginx", "-p", d, "-c", f"{d}/nginx.conf", "-e", f"{d}/error.log", "-g", "daemon off;"])
    procs.append(p)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close(); break
        except OSError:
            time.sleep(0.05)
    return f"127.0.0.1:{port}"


def measure(label, addr, token, store, direct_p50):
    c = Client(addr, token)
    warm_text = f"warm {label} {time.time_ns()}"
    for i in range(30):
        c.send(opening(f"warm-up {label} {i} {time.time_ns()}"))
    c.send(tool_call(warm_text, 1))
    row = {"setup": label}
    warm = [tool_call(warm_text, 1 + i % 3) for i in range(N)]
    new = [opening(f"new {label} {i} {time.time_ns()}") for i in range(N)]
    if store:
        counter = Counter(store)
        row["background"] = counter.background
        row["tx_warm"] = counter.per_request(N, lambda: row.__setitem__("warm", timed(c, warm)))
        row["tx_new"] = counter.per_request(N, lambda: row.__setitem__("new", timed(c, new)))
    else:
        row["warm"], row["new"] = timed(c, warm), timed(c, new)
    row["added"] = row["new"][0] - direct_p50
    row["rps"] = closed_loop(addr, token)
    return row


def failover_transactions(addr, token, store, sw):
    """Store transactions of one request after 1.5 s idle (so each includes the 1-s snapshot
    reload): a balanced new conversation on `c`, and a request on `f` whose first key answers
    429 (its circuit reset before each, so the failover happens). Counted over 8 rounds each; the
    `health reset` CLI runs' own transactions are measured alone and taken off."""
    cn, cf = Client(addr, token, "c"), Client(addr, token, "f")
    rounds = 8
    counter = Counter(store)
    per_round = lambda action: counter.per_request(rounds, lambda: [action(i) for i in range(rounds)])
    reset = lambda: sw("health", "reset", "f", "primary")
    resets = per_round(lambda i: reset())
    def failover(i):
        reset(); time.sleep(1.5); cf.send(opening(f"idle failover {i} {time.time_ns()}"))
    def new(i):
        time.sleep(1.5); cn.send(opening(f"idle new {i} {time.time_ns()}"))
    return per_round(new), per_round(failover) - resets


def main():
    script = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    keys = {s: {"models": ["m1"]} for _, s, _ in KEYS}
    keys["sk-bench-limited"] = {"models": ["m1"], "behaviour": {"rate_limited": {"retry_after_secs": 60}},
                                "listing": "ok"}
    json.dump({"keys": keys}, script); script.close()
    _, mock = start([MOCK, "--script", script.name, "--no-record"])
    direct = Client(mock, "sk-bench-five", direct=True)
    for _ in range(30):
        direct.send(opening("direct warm-up"))
    direct_p50, direct_p90 = timed(direct, [opening(f"direct {i}") for i in range(N)])
    rows = []
    _, _, _, tok = setup_sqlite = setup(None, mock, "sqlite")
    sqlite_relay = replica(setup_sqlite[0], setup_sqlite[1])
    rows.append(measure("SQLite, 1 relay", sqlite_relay, tok, None, direct_p50))
    if LIMITS:
        limited(setup_sqlite[2])
        rows.append(measure("SQLite, 1 relay, limits", sqlite_relay, tok, None, direct_p50))
    server = os.environ["SWITCHYARD_TEST_PG"]; base = server.rsplit("/", 1)[0]
    subprocess.run(["psql", server, "-qc", "create database team_bench"], check=True)
    store = base + "/team_bench"
    d, env, sw, tok = setup(store, mock, "pg")
    one = replica(d, env)
    rows.append(measure("Postgres, 1 replica", one, tok, store, direct_p50))
    idle_new, idle_failover = failover_transactions(one, tok, store, sw)
    others = []
    for i in range(2):
        dd = tempfile.mkdtemp(prefix=f"sy-bench-pg{i}-")
        others.append(replica(dd, env))
    front = nginx([one] + others)
    rows.append(measure("Postgres, 3 replicas behind nginx", front, tok, store, direct_p50))
    if LIMITS:
        limited(sw)
        rows.append(measure("Postgres, 1 replica, limits", one, tok, store, direct_p50))
        rows.append(measure("Postgres, 3 replicas behind nginx, limits", front, tok, store, direct_p50))
    print(f"\nbinaries: {PROFILE}; {N} sequential requests per kind; closed loop {CLIENTS} clients x {SECS:.0f} s;"
          f" mock called directly: p50 {direct_p50:.0f} µs, p90 {direct_p90:.0f} µs\n")
    print("| setup | warm tool-loop call p50 / p90 µs | new conversation p50 / p90 µs | added p50 µs (new conv. − direct) "
          "| closed-loop req/s | store tx per warm call | store tx per new conversation |")
    print("|---|---|---|---|---|---|---|")
    base_rps = rows[0]["rps"]
    for r in rows:
        tx = lambda k: f"{r[k]:.2f}" if k in r else "—"
        print(f"| {r['setup']} | {r['warm'][0]:.0f} / {r['warm'][1]:.0f} | {r['new'][0]:.0f} / {r['new'][1]:.0f} | "
              f"{r['added']:.0f} ({r['added'] / rows[0]['added']:.2f}×) | {r['rps']:.0f} ({r['rps'] / base_rps:.2f}×) "
              f"| {tx('tx_warm')} | {tx('tx_new')} |")
    reasons = subprocess.run(["psql", store, "-Atc", "select a.reason, count(*) from attempts a join connections c on "
                              "c.id = a.connection_id where c.slug = 'f' group by a.reason order by a.reason"],
                             capture_output=True, text=True).stdout.split()
    print("\nbackground store transactions subtracted: " + ", ".join(f"{r['setup']}: {r['background']}" for r in rows if "background" in r))
    print(f"connection f's ledger reasons (the failover run): {' '.join(reasons)}")
    print(f"after 1.5 s idle (snapshot reload included), per request over 8: new conversation {idle_new:.2f} store "
          f"transactions, failover (429 then the second key) {idle_failover:.2f}")


try:
    main()
finally:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
