#!/usr/bin/env python3
"""Drives the real Claude Code, Codex and Gemini CLIs (pinned in tests/clients/package.json), headless,
through a real `switchyard relay serve` against the scripted mock provider: a real data dir,
the real keychain (run inside scripts/with-keychain), nothing off 127.0.0.1.

Cases, for both clients: a tool-using task on a legacy (one-key) connection; tasks on a
balanced connection of three keys (each task on one key, the tasks spread over keys); a 429
on the bound key before output, with the client's own retries off (the relay fails over); a
task where `switchyard client setup` on a fresh HOME is the only set-up (then status, restore);
a task run under `switchyard exec SLUG -- CLIENT` with no other set-up; a task run under
`switchyard exec SLUG --profile acct -- CLIENT` on an external login (the client's own credential,
a fake login in the profile's config directory, passed through the relay unchanged); Codex on an
owned login (`profile login --kind oauth`: a device-code sign-in against the mock's authorization
server, then every call renewed and sent to the ChatGPT backend with the login's bearer and
account), and for Claude Code the refusal of an owned login (there is none for Claude).
Every secret starts with a canary that must not appear in any output, log or data file; the
fake logins carry another canary that must appear nowhere but in the logins' own files.
Gemini CLI runs the first three cases (legacy, balanced, a 429 before output) on gemini
connections (the mock's Gemini endpoints call its `run_shell_command` tool), the exec case, and
two tasks on a pool of two Gemini connections (one member mapping the model into the path).

usage: drive.py TARGET_DIR   (holds debug/switchyard and debug/mock-provider)
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "node_modules", ".bin")
CLIENT_TIMEOUT = 120  # one client run
BUDGET = 540  # all of them (Claude Code, Codex, Gemini CLI): a hanging relay fails the step instead of blocking it
DEADLINE = time.monotonic() + BUDGET
CANARY = "sk-canary-clients"
TOOL_MARK = "sy-tool-ok"
CC_MODEL = "claude-test"
CX_MODEL = "gpt-test"
GE_MODEL = "gemini-2.5-flash"

# The official CLIs' own (fake) logins, written into the external profiles' config directories:
# the mock accepts them as keys; they must appear nowhere else.
LOGIN = "sy-login-canary"
LOGINS = {"cc-login": f"sk-ant-oat01-{LOGIN}-cc", "cx-login": f"{LOGIN}-cx-access"}

CC_TOOL = {"name": "Bash", "input": {"command": f"echo {TOOL_MARK}", "description": "Print a marker"}}
CX_TOOL = {"name": "exec_command", "input": {"cmd": f"echo {TOOL_MARK}"}}
GE_TOOL = {"name": "run_shell_command", "input": {"command": f"echo {TOOL_MARK}"}}


def key(slug, n):
    return f"{CANARY}-{slug}-{n}"


def reply(slug, n):
    return f"Reply from {slug} key {n}."


# The owned login (`cx-oauth`): the mock's authorization server issues tokens starting with the
# canary, each valid on its ChatGPT backend route. They live 200 s, inside the relay's 5-minute
# renewal lead: every call renews the login first, so a task exercises refresh-token rotation.
OAUTH = {"account_id": "acct-sy-oauth", "plan": "plus", "token_prefix": f"{CANARY}-oauth-", "expires_in_secs": 200}


def oauth_reply():
    return "Reply from the owned ChatGPT login."


# slug -> (protocol, model, per-key mock scripts from key 1 on, weights (None: a legacy one-key
# connection), the tool the mock calls). The wire shapes vary across cases: "whole" (the closing
# event in the same write as the first content) on the balanced keys; in the failover case key 1
# (weight 3, so SWRR picks it first) answers 429 once and key 2 (next pick: weight tie, lower
# priority) carries the task.
CONNECTIONS = {
    "cc-legacy": ("anthropic", CC_MODEL, [{"wire": {"chunking": "events", "crlf": True, "brotli": True}}], None,
                  CC_TOOL),
    "cc-balanced": ("anthropic", CC_MODEL, [{"wire": {"chunking": "whole"}}] * 3, [1, 1, 1], CC_TOOL),
    "cc-failover": (
        "anthropic",
        CC_MODEL,
        [
            {"behaviour": {"sequence": [{"rate_limited": {"retry_after_secs": 30}}, "ok"]}, "listing": "ok"},
            {"wire": {"chunking": {"seeded": 7}, "pings": True, "gzip": True}},
            {"wire": {"chunking": {"bytes": 5}, "crlf": True}},
        ],
        [3, 1, 1],
        CC_TOOL,
    ),
    # Set up by `switchyard client setup` alone (no tool: the task is a plain answer).
    "cc-setup": ("anthropic", CC_MODEL, [{}], None, None),
    "cx-setup": ("openai", CX_MODEL, [{}], None, None),
    # An API key primary plus an external login `acct` (added in Stack.up) run by exec --profile.
    "cc-login": ("anthropic", CC_MODEL, [{}], None, None),
    "cx-login": ("openai", CX_MODEL, [{}], None, None),
    # Two one-key connections pooled as `cc-pool` (weights 2:1) in Stack.up, for exec POOL.
    "cc-pool-a": ("anthropic", CC_MODEL, [{}], None, None),
    "cc-pool-b": ("anthropic", CC_MODEL, [{}], None, None),
    "cx-legacy": ("openai", CX_MODEL, [{"wire": {"chunking": {"bytes": 3}, "crlf": True, "pings": True}}], None,
                  CX_TOOL),
    "cx-balanced": ("openai", CX_MODEL, [{"wire": {"chunking": "whole"}}] * 3, [1, 1, 1], CX_TOOL),
    "cx-failover": (
        "openai",
        CX_MODEL,
        [
            {"behaviour": {"sequence": [{"rate_limited": {"retry_after_secs": 30}}, "ok"]}, "listing": "ok"},
            {"wire": {"chunking": {"seeded": 11}, "pings": True, "gzip": True}},
            {"wire": {"chunking": {"bytes": 5}, "crlf": True}},
        ],
        [3, 1, 1],
        CX_TOOL,
    ),
    "ge-setup": ("gemini", GE_MODEL, [{}], None, None),
    # A spent budget (issue 41): `limits set connection:SLUG --requests 0 --per day` in Stack.up.
    "cc-capped": ("anthropic", CC_MODEL, [{}], None, None),
    "cx-capped": ("openai", CX_MODEL, [{}], None, None),
    # Two one-key connections pooled as `ge-pool` in Stack.up: `ge-pool-a=GE_POOL_MODEL:2` (the
    # client's model mapped into the path: its mock key serves only that model) and `ge-pool-b:1`.
    "ge-pool-a": ("gemini", "gemini-2.5-pro", [{}], None, None),
    "ge-pool-b": ("gemini", GE_MODEL, [{}], None, None),
    "ge-legacy": ("gemini", GE_MODEL, [{"wire": {"chunking": "events", "crlf": True, "gzip": True}}], None, GE_TOOL),
    "ge-balanced": ("gemini", GE_MODEL, [{"wire": {"chunking": "whole"}}] * 3, [1, 1, 1], GE_TOOL),
    "ge-failover": (
        "gemini",
        GE_MODEL,
        [
            {"behaviour": {"sequence": [{"rate_limited": {"retry_after_secs": 30}}, "ok"]}, "listing": "ok"},
            {"wire": {"chunking": {"seeded": 13}, "gzip": True}},
            {"wire": {"chunking": {"bytes": 5}}},
        ],
        [3, 1, 1],
        GE_TOOL,
    ),
}


def script_file():
    keys = {}
    for slug, (_, model, scripts, _, tool) in CONNECTIONS.items():
        for n, extra in enumerate(scripts, 1):
            keys[key(slug, n)] = {"models": [model], "reply": reply(slug, n), "tool": tool, **extra}
    for slug, login in LOGINS.items():
        keys[login] = {"models": [CONNECTIONS[slug][1]], "reply": login_reply(slug)}
    oauth = dict(OAUTH, key={"models": [CX_MODEL], "reply": oauth_reply(), "tool": CX_TOOL})
    return {"keys": keys, "oauth": oauth}


def login_reply(slug):
    return f"Reply from the {slug} subscription."


def login_file(client):
    """(file name, contents) of a fake login the official CLI accepts offline: Claude Code's
    inference-only OAuth login (no refresh token, no user:profile scope: no call to Anthropic);
    Codex's ChatGPT login with an opaque access token, its account id and a fresh last_refresh
    (without it Codex sends no Authorization)."""
    if client == "claude":
        creds = {"claudeAiOauth": {"accessToken": LOGINS["cc-login"], "scopes": ["user:inference"],
                                   "subscriptionType": "max"}}
        return ".credentials.json", json.dumps(creds)
    def b64(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    auth = {"tokens": {"id_token": f"{b64({'alg': 'none'})}.{b64({})}.x", "access_token": LOGINS["cx-login"],
                       "refresh_token": f"{LOGIN}-cx-refresh", "account_id": "acct-sy-1"}, "last_refresh": now}
    return "auth.json", json.dumps(auth)


def start(cmd, log, env=None):
    """Starts a server whose first stdout line is `... listening on URL`; its stdout and stderr go
    to files (a trace log would fill a pipe nobody reads and stall the server)."""
    out, err = open(f"{log}.out", "w"), open(f"{log}.err", "w")
    p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
    out.close()
    err.close()
    deadline = time.monotonic() + 30
    while True:
        with open(f"{log}.out") as f:
            first = f.readline()
        if first.endswith("\n") or p.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if "listening on " not in first:
        p.kill()
        with open(f"{log}.err") as f:
            raise AssertionError(f"{cmd[0]} did not announce its address: {first!r}\n{f.read()[-4000:]}")
    return p, first.strip().split("listening on ", 1)[1]


class ProxyTrap:
    """The clients' HTTP(S)_PROXY: records the first line of every connection (`CONNECT host:443`)
    and closes it. Loopback is exempt (NO_PROXY), so anything recorded is traffic that would have
    left the machine: telemetry, update checks, plugin syncs."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.seen = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.seen.append(conn.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace"))
                except OSError:
                    self.seen.append("(nothing sent)")

    def close(self):
        self.sock.close()


class Run:
    """One client process: its command, exit code and output."""

    def __init__(self, name, cmd, env, cwd, timeout=CLIENT_TIMEOUT):
        self.name, self.cmd = name, cmd
        started = time.monotonic()
        self.timeout = max(1.0, min(timeout, DEADLINE - started))
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            self.stdout, self.stderr = p.communicate(timeout=self.timeout)
            self.timed_out = False
        except subprocess.TimeoutExpired as e:
            os.killpg(p.pid, signal.SIGKILL)
            try:
                self.stdout, self.stderr = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a grandchild in its own session holds the pipes
                p.kill()
                out = e.stdout or ""
                self.stdout = out if isinstance(out, str) else out.decode(errors="replace")
                self.stderr = "(stderr lost: the pipes stayed open)"
            self.timed_out = True
        self.rc = p.returncode
        self.secs = time.monotonic() - started

    def events(self):
        """The JSON lines of stdout (both clients are run with a JSON-lines output)."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        return out

    def describe(self):
        return (f"--- {self.name}: rc={self.rc} timed_out={self.timed_out} {self.secs:.1f}s\n"
                f"--- stdout:\n{self.stdout[-6000:]}\n--- stderr:\n{self.stderr[-6000:]}")


class Stack:
    """The mock provider, the data dir and the CLI, the relay, and the clients' sandboxes."""

    def __init__(self, target):
        self.sy = os.path.join(target, "debug", "switchyard")
        self.mock_bin = os.path.join(target, "debug", "mock-provider")
        self.work = tempfile.mkdtemp(prefix="switchyard-clients-")
        self.data = os.path.join(self.work, "data")
        self.env = dict(os.environ, SWITCHYARD_DATA_DIR=self.data, SWITCHYARD_LOG="trace", NO_COLOR="1")
        self.mock = self.relay = None
        self.trap = ProxyTrap()
        self.runs = []
        self.n = 0

    def cli(self, *args, secret=None):
        out = subprocess.run([self.sy, *args], input=secret, capture_output=True, text=True, env=self.env,
                             timeout=60)
        assert out.returncode == 0, f"switchyard {' '.join(args)} failed: {out.stderr}"
        assert CANARY not in out.stdout + out.stderr, f"a secret leaked into `switchyard {' '.join(args)}` output"
        return out.stdout

    def attempts(self, slug):
        return json.loads(self.cli("--json", "attempts", slug, "--limit", "500"))

    def key_numbers(self, slug):
        """profile id -> key number (the label `keyN`)."""
        return {p["id"]: int(p["label"][3:]) for p in json.loads(self.cli("--json", "profile", "list", slug))}

    def new_attempts(self, slug, before):
        """The attempts rows added since the ledger held `before` rows (newest first). The relay
        writes the ledger in batches after a stream ends: wait until the count holds still."""
        deadline = time.monotonic() + 5
        last = None
        while True:
            time.sleep(0.3)
            rows = self.attempts(slug)
            if (last is not None and len(rows) == len(last)) or time.monotonic() > deadline:
                return rows[: len(rows) - before]
            last = rows

    def up(self):
        script = os.path.join(self.work, "script.json")
        with open(script, "w") as f:
            json.dump(script_file(), f, indent=1)
        self.mock, mock_url = start([self.mock_bin, "--script", script], os.path.join(self.work, "mock"))
        self.mock_url = mock_url
        # External Codex logins are relayed to the ChatGPT backend: here, the mock's.
        self.env["SWITCHYARD_CODEX_BACKEND_URL"] = f"{mock_url}/backend-api/codex"
        for slug, (protocol, model, scripts, weights, _) in CONNECTIONS.items():
            base = f"{mock_url}/v1" if protocol == "openai" else mock_url
            self.cli("connection", "add", slug, "--protocol", protocol, "--base-url", base, "--model", model,
                     "--secret-stdin", secret=key(slug, 1))
            if weights is None:
                continue
            self.cli("profile", "edit", slug, "primary", "--label", "key1", "--weight", str(weights[0]))
            for n in range(2, len(scripts) + 1):
                self.cli("profile", "add", slug, "--label", f"key{n}", "--weight", str(weights[n - 1]),
                         "--secret-stdin", secret=key(slug, n))
            self.cli("verify", slug)
            self.cli("routing", "activate", slug, "balanced")
        self.logins = {}
        for slug, client in (("cc-login", "claude"), ("cx-login", "codex")):
            name = {"claude": "claude-code", "codex": "codex"}[client]
            view = json.loads(self.cli("--json", "profile", "add", slug, "--label", "acct", "--kind", "external",
                                       "--client", name))
            file, contents = login_file(client)
            with open(os.path.join(view["config_dir"], file), "w") as f:
                f.write(contents)
            self.logins[slug] = view["id"]
        for slug in ("cc-pool-a", "cc-pool-b"):
            self.cli("verify", slug)
        self.cli("pool", "add", "cc-pool", "--protocol", "anthropic", "--member", "cc-pool-a:2",
                 "--member", "cc-pool-b:1")
        self.cli("pool", "activate", "cc-pool", "balanced")
        # The owned login: the issuer and the ChatGPT backend are the mock's; a device-code sign-in.
        self.cli("settings", "oauth-issuer", mock_url)
        self.cli("settings", "codex-backend-url", f"{mock_url}/backend-api/codex")
        self.cli("connection", "add", "cx-oauth", "--protocol", "openai", "--base-url", f"{mock_url}/v1", "--model",
                 CX_MODEL)
        signed = json.loads(self.cli("--json", "profile", "login", "cx-oauth", "pro", "--kind", "oauth"))
        assert signed["login"]["account_id"] == OAUTH["account_id"], f"signed in: {signed}"
        self.oauth_profile = signed["id"]
        self.cli("verify", "cx-oauth")
        for slug in ("ge-pool-a", "ge-pool-b"):
            self.cli("verify", slug)
        self.cli("pool", "add", "ge-pool", "--protocol", "gemini", "--member", "ge-pool-a=gemini-2.5-pro:2",
                 "--member", "ge-pool-b:1")
        self.cli("pool", "activate", "ge-pool", "balanced")
        for slug in ("cc-capped", "cx-capped"):
            self.cli("limits", "set", f"connection:{slug}", "--requests", "0", "--per", "day")
        self.token = self.cli("relay", "token").strip()
        self.relay, self.relay_url = start([self.sy, "relay", "serve", "--listen", "127.0.0.1:0"],
                                           os.path.join(self.work, "relay"), env=self.env)

    def sandbox(self, name):
        """A fresh HOME (and work dir) for one client run: nothing from the machine leaks in."""
        self.n += 1
        home = os.path.join(self.work, "clients", f"{self.n:02d}-{name}")
        cwd = os.path.join(home, "project")
        os.makedirs(cwd)
        trap = self.trap.url
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "LANG": "C.UTF-8",
            "TMPDIR": os.path.join(home, "tmp"),
            "HTTP_PROXY": trap, "HTTPS_PROXY": trap, "ALL_PROXY": trap,
            "http_proxy": trap, "https_proxy": trap, "all_proxy": trap,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        }
        os.makedirs(env["TMPDIR"])
        return home, cwd, env

    def claude(self, slug, prompt, retries=False):
        """`retries`: the client's own retry defaults (else CLAUDE_CODE_MAX_RETRIES=0)."""
        home, cwd, env = self.sandbox(slug)
        env.update({
            "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
            "ANTHROPIC_BASE_URL": f"{self.relay_url}/c/{slug}",
            "ANTHROPIC_AUTH_TOKEN": self.token,
            "ANTHROPIC_MODEL": CC_MODEL,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": CC_MODEL,
            "ANTHROPIC_DEFAULT_SONNET_MODEL": CC_MODEL,
            "ANTHROPIC_DEFAULT_OPUS_MODEL": CC_MODEL,
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        })
        if retries:
            del env["CLAUDE_CODE_MAX_RETRIES"]
        cmd = [os.path.join(BIN, "claude"), "-p", prompt, "--output-format", "stream-json", "--verbose",
               "--allowedTools", "Bash"]
        return self.record(f"claude {slug}", cmd, env, cwd)

    def codex(self, slug, prompt, retries=False, timeout=CLIENT_TIMEOUT):
        """`retries`: the client's own retry defaults (else request and stream retries 0)."""
        home, cwd, env = self.sandbox(slug)
        no_retries = "" if retries else "request_max_retries = 0\nstream_max_retries = 0\n"
        codex_home = os.path.join(home, ".codex")
        os.makedirs(codex_home)
        with open(os.path.join(codex_home, "config.toml"), "w") as f:
            f.write(f'''model = "{CX_MODEL}"
model_provider = "switchyard"
check_for_update_on_startup = false

[model_providers.switchyard]
name = "switchyard"
base_url = "{self.relay_url}/c/{slug}/v1"
env_key = "SWITCHYARD_RELAY_TOKEN"
wire_api = "responses"
{no_retries}
[features]
# Otherwise every start syncs the curated plugins from github.com / chatgpt.com.
plugins = false

[analytics]
enabled = false
''')
        env.update({"CODEX_HOME": codex_home, "SWITCHYARD_RELAY_TOKEN": self.token})
        cmd = [os.path.join(BIN, "codex"), "exec", "--json", "--strict-config", "--skip-git-repo-check",
               "--sandbox", "danger-full-access", "--cd", cwd, prompt]
        return self.record(f"codex {slug}", cmd, env, cwd, timeout)

    def gemini(self, slug, prompt):
        home, cwd, env = self.sandbox(slug)
        gemini_dir = os.path.join(home, ".gemini")
        os.makedirs(gemini_dir)
        # API-key auth chosen (else it asks), no usage statistics or telemetry (off loopback).
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
        with open(os.path.join(gemini_dir, "settings.json"), "w") as f:
            json.dump(settings, f)
        env.update({"GOOGLE_GEMINI_BASE_URL": f"{self.relay_url}/c/{slug}", "GEMINI_API_KEY": self.token})
        cmd = [os.path.join(BIN, "gemini"), "-p", prompt, "-m", GE_MODEL, "--yolo", "--skip-trust",
               "--output-format", "stream-json"]
        return self.record(f"gemini {slug}", cmd, env, cwd)

    def record(self, name, cmd, env, cwd, timeout=CLIENT_TIMEOUT):
        """Runs a client; notes what it tried to reach off loopback meanwhile."""
        seen = len(self.trap.seen)
        run = Run(name, cmd, env, cwd, timeout)
        for stream in ("stdout", "stderr"):
            with open(os.path.join(env["HOME"], f"{stream}.txt"), "w") as f:
                f.write(getattr(run, stream))
        time.sleep(0.1)  # a connection opened just before the client exited
        run.off_loopback = self.trap.seen[seen:]
        self.runs.append(run)
        return run

    def down(self):
        """Stops the relay and the mock; returns their combined output."""
        for p in (self.relay, self.mock):
            if p is not None and p.poll() is None:
                p.terminate()
        logs = ""
        for name, p in (("relay", self.relay), ("mock", self.mock)):
            if p is None:
                continue
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            for stream in ("out", "err"):
                with open(os.path.join(self.work, f"{name}.{stream}"), errors="replace") as f:
                    logs += f"--- {name} std{stream} (rc={p.returncode}):\n{f.read()}\n"
        return logs


# ----------------------------------------------------------------------------- client results

def claude_result(run):
    """(final text, tool outputs) of a `claude -p --output-format stream-json` run."""
    events = run.events()
    results = [e for e in events if e.get("type") == "result"]
    assert results, f"claude printed no result event\n{run.describe()}"
    final = results[-1]
    assert not final.get("is_error"), f"claude ended in an error: {final.get('result')!r}\n{run.describe()}"
    tool_outputs = []
    for e in events:
        if e.get("type") != "user":
            continue
        for block in e.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
                tool_outputs.append(str(content))
    return final.get("result") or "", tool_outputs


def codex_result(run):
    """(final text, tool outputs) of a `codex exec --json` run."""
    events = run.events()
    items = [e.get("item", {}) for e in events if e.get("type") == "item.completed"]
    failed = [e for e in events if e.get("type") in ("turn.failed", "error")]
    assert not failed, f"codex reported a failure: {failed}\n{run.describe()}"
    assert any(e.get("type") == "turn.completed" for e in events), f"codex did not complete the turn\n{run.describe()}"
    texts = [i.get("text", "") for i in items if i.get("type") == "agent_message"]
    tools = [i.get("aggregated_output", "") for i in items
             if i.get("type") == "command_execution" and i.get("exit_code") == 0]
    return "\n".join(texts), tools


def gemini_result(run):
    """(final text, tool outputs) of a `gemini -p --output-format stream-json` run."""
    events = run.events()
    results = [e for e in events if e.get("type") == "result"]
    assert results, f"gemini printed no result event\n{run.describe()}"
    assert results[-1].get("status") == "success", f"gemini ended in an error: {results[-1]}\n{run.describe()}"
    text = "".join(e.get("content", "") for e in events if e.get("type") == "message" and e.get("role") == "assistant")
    tools = [str(e.get("output", "")) for e in events if e.get("type") == "tool_result" and e.get("status") == "success"]
    return text, tools


CLIENTS = {
    "claude": (Stack.claude, claude_result, "cc"),
    "codex": (Stack.codex, codex_result, "cx"),
    "gemini": (Stack.gemini, gemini_result, "ge"),
}


def task(stack, client, slug, prompt):
    """Runs one client task; asserts it exited 0 and returns (run, final text, tool outputs, new attempts)."""
    launch, result, _ = CLIENTS[client]
    before = len(stack.attempts(slug))
    run = launch(stack, slug, prompt)
    assert not run.timed_out, f"{run.name} did not finish within {run.timeout:.0f}s\n{run.describe()}"
    assert run.rc == 0, f"{run.name} exited {run.rc}\n{run.describe()}"
    assert not run.off_loopback, f"{run.name} tried to leave 127.0.0.1 (through HTTPS_PROXY): {run.off_loopback}"
    text, tools = result(run)
    return run, text, tools, stack.new_attempts(slug, before)


def rows(attempts):
    """The ledger rows, one compact line each, oldest first (for assertion messages)."""
    keys = ("turn", "attempt", "profile", "reason", "status", "failure_kind", "scope", "output_tokens")
    return "\n" + "\n".join("  " + " ".join(f"{k}={a.get(k)}" for k in keys) for a in reversed(attempts))


def assert_clean(client, what, attempts):
    """Every attempt delivered a complete answer: 200, no failure recorded, output counted."""
    bad = [a for a in attempts if a.get("status") != 200 or a.get("failure_kind") or not a.get("output_tokens")]
    assert not bad, f"{client}: {what}: every attempt is a complete 200 without a failure kind:{rows(attempts)}"


# ----------------------------------------------------------------------------------- the cases

def assert_done(client, what, run, text, tools, replies):
    """The task ran the shell tool (its output held the marker) and ended with one of `replies`."""
    assert any(TOOL_MARK in t for t in tools), \
        f"{client}: {what}: the shell tool ran and printed {TOOL_MARK}: {tools}\n{run.describe()}"
    assert any(r in text for r in replies), \
        f"{client}: {what}: the final output holds the mock's reply (one of {replies}): {text!r}\n{run.describe()}"


def case_legacy_tool(stack, client):
    """A legacy one-key connection: the mock asks for the shell tool, the client runs it and sends
    the result back (the mock answers with text only once a tool result is in the request); the
    client prints that text."""
    slug = f"{CLIENTS[client][2]}-legacy"
    run, text, tools, new = task(stack, client, slug, "Run the marker command, then say what the provider says.")
    assert_done(client, "legacy task", run, text, tools, [reply(slug, 1)])
    assert len(new) >= 2, f"{client}: the tool call and the follow-up are both in the ledger:{rows(new)}"
    assert {a["reason"] for a in new} == {"legacy_primary"}, f"{client}: legacy routing used the primary:{rows(new)}"
    assert_clean(client, "legacy task", new)


def case_balanced(stack, client):
    """Balanced over three keys (1:1:1): each task stays on one key; several tasks spread."""
    slug = f"{CLIENTS[client][2]}-balanced"
    numbers = stack.key_numbers(slug)
    by_task, everything = [], []
    for i in range(4):
        run, text, tools, new = task(stack, client, slug, f"Task {i}: run the marker command, then report.")
        assert_done(client, f"balanced task {i}", run, text, tools, [reply(slug, n) for n in (1, 2, 3)])
        assert len(new) >= 2, f"{client}: task {i} made the tool call and the follow-up through the relay:{rows(new)}"
        turns = {a.get("turn") for a in new}
        profiles = {a.get("profile") for a in new}
        assert len(turns) == 1, f"{client}: every call of task {i} is one turn:{rows(new)}"
        assert len(profiles) == 1, f"{client}: every call of task {i} is on one profile:{rows(new)}"
        everything += new
        n = numbers.get(profiles.pop())
        assert reply(slug, n) in text, f"{client}: task {i} was answered by its profile's key (key {n}): {text!r}"
        by_task.append((i, n))
    assert len({n for _, n in by_task}) >= 2, f"{client}: the tasks spread over at least two keys: {by_task}"
    assert_clean(client, "balanced tasks", everything)


def case_failover_429(stack, client):
    """The bound key (key 1: weight 3 of 3:1:1, so SWRR picks it first) answers 429 before any output;
    the client's own retries are off; the relay fails over and the task completes on another key."""
    slug = f"{CLIENTS[client][2]}-failover"
    numbers = stack.key_numbers(slug)
    run, text, tools, new = task(stack, client, slug, "Run the marker command, then report.")
    assert_done(client, "task after a 429", run, text, tools, [reply(slug, 2), reply(slug, 3)])
    first, *rest = list(reversed(new))
    assert (numbers.get(first["profile"]), first["status"], first["failure_kind"]) == (1, 429, "rate_limited"), \
        f"{client}: the first attempt is key 1's 429:{rows(new)}"
    assert rest and rest[0]["reason"] == "failover:rate_limited" and rest[0]["turn"] == first["turn"], \
        f"{client}: the same request failed over, reason failover:rate_limited:{rows(new)}"
    assert len({a["profile"] for a in rest}) == 1 and numbers.get(rest[0]["profile"]) in (2, 3), \
        f"{client}: the rest of the task stayed on the key it failed over to:{rows(new)}"
    assert {a["turn"] for a in rest} == {first["turn"]}, f"{client}: one turn throughout:{rows(new)}"
    assert_clean(client, "the calls after the failover", rest)
    assert reply(slug, numbers[rest[0]["profile"]]) in text, f"{client}: the reply is that key's: {text!r}"


# The files a user already has before `client setup` (unrelated settings and a comment that
# must survive, and the client's own offline switches); the set-up adds the rest.
CC_SETTINGS = '{\n  "model": "%s",\n  "theme": "dark",\n  "permissions": {"allow": []}\n}\n' % CC_MODEL
CX_CONFIG = """# my Codex settings (must survive the set-up)
check_for_update_on_startup = false

[features]
plugins = false  # otherwise every start syncs plugins from the internet

[analytics]
enabled = false
"""


def case_setup_only(stack, client):
    """`switchyard client setup CLIENT SLUG` on a fresh HOME is the only set-up: the client runs
    with no Switchyard or provider variables (only the offline-quietness ones), completes a task
    through the relay, `client status` sees it and `client restore` gives the original bytes back."""
    slug = f"{CLIENTS[client][2]}-setup"
    name = {"claude": "claude-code", "codex": "codex"}[client]
    home, cwd, env = stack.sandbox(f"{slug}-only")
    rel, original = (".claude/settings.json", CC_SETTINGS) if client == "claude" else (".codex/config.toml", CX_CONFIG)
    path = os.path.join(home, rel)
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write(original)
    port = stack.relay_url.rsplit(":", 1)[1]
    setup_env = {k: v for k, v in stack.env.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")}
    setup_env.update(HOME=home, SWITCHYARD_RELAY_PORT=port, SWITCHYARD_LOG="warn")

    def sy(*args):
        out = subprocess.run([stack.sy, *args], capture_output=True, text=True, env=setup_env, timeout=60)
        assert out.returncode == 0, f"switchyard {' '.join(args)} failed: {out.stderr}"
        assert stack.token not in out.stdout + out.stderr, f"`switchyard {' '.join(args)}` printed the relay token"
        assert CANARY not in out.stdout + out.stderr, f"a key leaked into `switchyard {' '.join(args)}`"
        return out.stdout

    shown = sy("client", "setup", name, slug)
    assert f"/c/{slug}" in shown and "<relay token>" in shown, f"{client}: setup shows the change as a diff:\n{shown}"
    with open(path) as f:
        written = f.read()
    kept = ['"theme": "dark"'] if client == "claude" else ["# my Codex settings (must survive the set-up)",
                                                            "plugins = false  # otherwise"]
    assert all(k in written for k in kept), f"{client}: unrelated settings and comments survive:\n{written}"
    if client == "claude":
        env.update({"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        cmd = [os.path.join(BIN, "claude"), "-p", "Say what the provider says.", "--output-format", "stream-json",
               "--verbose"]
    else:
        cmd = [os.path.join(BIN, "codex"), "exec", "--json", "--strict-config", "--skip-git-repo-check",
               "--sandbox", "danger-full-access", "--cd", cwd, "Say what the provider says."]
    assert not any(k.startswith(("ANTHROPIC_", "OPENAI_", "SWITCHYARD_", "CODEX_", "CLAUDE_CONFIG")) for k in env), \
        f"{client}: the client gets no Switchyard or provider variables: {sorted(env)}"
    before = len(stack.attempts(slug))
    run = stack.record(f"{client} {slug} (client setup only)", cmd, env, cwd)
    assert not run.timed_out and run.rc == 0, f"{client}: the task through the set-up file completed\n{run.describe()}"
    assert not run.off_loopback, f"{run.name} tried to leave 127.0.0.1: {run.off_loopback}"
    text, _ = CLIENTS[client][1](run)
    assert reply(slug, 1) in text, f"{client}: the answer came from the relay's connection {slug}: {text!r}"
    new = stack.new_attempts(slug, before)
    assert new and {a["reason"] for a in new} == {"legacy_primary"}, f"{client}: the calls went through the relay:{rows(new)}"
    assert_clean(client, "setup-only task", new)
    status = json.loads(sy("--json", "client", "status", name))
    assert status["pointed"] and status["slug"] == slug and status["token_current"], f"{client}: status: {status}"
    sy("client", "restore", name)
    with open(path) as f:
        assert f.read() == original, f"{client}: restore gives the original bytes back"


def case_exec(stack, client):
    """`switchyard exec SLUG -- CLIENT ...` is the only set-up: exec finds the running relay (its
    /healthz accepts this data dir's token), puts the relay URL and token into the client's
    environment (Codex: `-c` provider overrides, the token in SWITCHYARD_RELAY_TOKEN) and
    passes the client's exit code back."""
    slug = f"{CLIENTS[client][2]}-setup"
    home, cwd, env = stack.sandbox(f"{slug}-exec")
    if client == "codex":
        os.makedirs(os.path.join(home, ".codex"))
        with open(os.path.join(home, ".codex", "config.toml"), "w") as f:
            f.write(CX_CONFIG)
        cmd = [os.path.join(BIN, "codex"), "exec", "--json", "--strict-config", "--skip-git-repo-check",
               "--sandbox", "danger-full-access", "-m", CX_MODEL, "--cd", cwd, "Say what the provider says."]
    elif client == "gemini":
        # The user's own settings: API-key auth chosen (with GOOGLE_GEMINI_BASE_URL set and no
        # choice, Gemini CLI takes the "gateway" method and refuses it headless), quiet.
        os.makedirs(os.path.join(home, ".gemini"))
        with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}, f)
        cmd = [os.path.join(BIN, "gemini"), "-p", "Say what the provider says.", "-m", GE_MODEL, "--skip-trust",
               "--output-format", "stream-json"]
    else:
        env.update({"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        cmd = [os.path.join(BIN, "claude"), "-p", "Say what the provider says.", "--model", CC_MODEL,
               "--output-format", "stream-json", "--verbose"]
    # What exec itself needs: the data dir, the relay port, and the keychain's session bus.
    env.update(SWITCHYARD_DATA_DIR=stack.data, SWITCHYARD_RELAY_PORT=stack.relay_url.rsplit(":", 1)[1],
               SWITCHYARD_LOG="warn")
    if "DBUS_SESSION_BUS_ADDRESS" in os.environ:
        env["DBUS_SESSION_BUS_ADDRESS"] = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    before = len(stack.attempts(slug))
    run = stack.record(f"switchyard exec {slug} -- {client}", [os.path.abspath(stack.sy), "exec", slug, "--", *cmd], env,
                     cwd)
    assert not run.timed_out and run.rc == 0, f"{client} under exec completed\n{run.describe()}"
    assert not run.off_loopback, f"{run.name} tried to leave 127.0.0.1: {run.off_loopback}"
    assert stack.token not in run.stdout + run.stderr, f"{run.name}: the relay token is in no output"
    text, _ = CLIENTS[client][1](run)
    assert reply(slug, 1) in text, f"{client}: the answer came through the relay: {text!r}"
    new = stack.new_attempts(slug, before)
    assert new and {a["reason"] for a in new} == {"legacy_primary"}, f"{client}: the calls went through the relay:{rows(new)}"
    assert_clean(client, "exec task", new)


def case_exec_login(stack, client):
    """`switchyard exec SLUG --profile acct -- CLIENT ...` on an external login: the client runs with
    the login's config directory (its fake login there) and no API key (one in the parent's env is
    removed), sends its own credential with the relay token in x-switchyard-token, and the relay
    passes the credential through unchanged to that account only (the mock answers as that login's
    key), recording every call under it with reason `pinned` and the launch's tag."""
    slug = f"{CLIENTS[client][2]}-login"
    home, cwd, env = stack.sandbox(f"{slug}-exec")
    if client == "codex":
        cmd = [os.path.join(BIN, "codex"), "-c", f'chatgpt_base_url="{stack.mock_url}/backend-api/"',
               "-c", "features.apps=false", "-c", "features.plugins=false", "-c", "analytics.enabled=false",
               "-c", "check_for_update_on_startup=false", "exec", "--json", "--skip-git-repo-check",
               "--sandbox", "danger-full-access", "-m", CX_MODEL, "--cd", cwd, "Say what the provider says."]
        env["OPENAI_API_KEY"] = "sk-parent-env-key-not-for-the-child"
    else:
        env.update({"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "ANTHROPIC_API_KEY": "sk-ant-api03-parent-env-key-not-for-the-child"})
        cmd = [os.path.join(BIN, "claude"), "-p", "Say what the provider says.", "--model", CC_MODEL,
               "--output-format", "stream-json", "--verbose"]
    env.update(SWITCHYARD_DATA_DIR=stack.data, SWITCHYARD_RELAY_PORT=stack.relay_url.rsplit(":", 1)[1],
               SWITCHYARD_LOG="trace")
    if "DBUS_SESSION_BUS_ADDRESS" in os.environ:
        env["DBUS_SESSION_BUS_ADDRESS"] = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    before = len(stack.attempts(slug))
    run = stack.record(f"switchyard exec {slug} --profile acct -- {client}",
                       [os.path.abspath(stack.sy), "exec", slug, "--profile", "acct", "--", *cmd], env, cwd)
    assert not run.timed_out and run.rc == 0, f"{client} on its login under exec completed\n{run.describe()}"
    assert not run.off_loopback, f"{run.name} tried to leave 127.0.0.1: {run.off_loopback}"
    assert stack.token not in run.stdout + run.stderr, f"{run.name}: the relay token is in no output"
    assert LOGIN not in run.stdout + run.stderr, f"{run.name}: the login is in no output (trace logs included)"
    text, _ = CLIENTS[client][1](run)
    assert login_reply(slug) in text, f"{client}: the login's own account answered through the relay: {text!r}"
    new = stack.new_attempts(slug, before)
    profile = stack.logins[slug]
    assert new and all(a["profile"] == profile and a["reason"] == "pinned" for a in new), \
        f"{client}: every call went to the named login, reason pinned:{rows(new)}"
    assert len({json.dumps(a.get("tags")) for a in new}) == 1 and (new[0].get("tags") or {}).get("launch"), \
        f"{client}: the calls carry one launch tag:{rows(new)}"
    # Codex also asks GET /models, which the mock's ChatGPT backend does not serve (404, tolerated).
    calls = [a for a in new if a.get("status") != 404]
    assert calls, f"{client}: the model call is in the ledger:{rows(new)}"
    assert_clean(client, "login task", calls)


def case_oauth(stack, client):
    """Codex on an owned login: a tool-using task through a connection whose only profile is a
    ChatGPT login Switchyard signed in by device code; every call is renewed first (the tokens live
    inside the renewal lead) and goes to the ChatGPT backend with the login's bearer and account.
    The login's tokens (canary) appear in no output, log or file. Claude Code: no owned login is
    offered (Anthropic's subscription login is for its own client), so `--kind oauth` on an
    Anthropic connection is refused."""
    if client == "claude":
        out = subprocess.run([stack.sy, "profile", "add", "cc-setup", "--label", "owned", "--kind", "oauth"],
                             capture_output=True, text=True, env=stack.env, timeout=60)
        assert out.returncode == 2 and "OpenAI connections only" in out.stderr, \
            f"claude: no owned login for an Anthropic connection: rc={out.returncode} {out.stderr}"
        return
    slug = "cx-oauth"
    run, text, tools, new = task(stack, client, slug, "Run the marker command, then say what the provider says.")
    assert_done(client, "task on an owned login", run, text, tools, [oauth_reply()])
    assert len(new) >= 2, f"{client}: the tool call and the follow-up are both in the ledger:{rows(new)}"
    assert {a["profile"] for a in new} == {stack.oauth_profile}, f"{client}: every call on the login:{rows(new)}"
    assert_clean(client, "owned-login task", new)
    view = json.loads(stack.cli("--json", "profile", "list", slug))[0]
    login = view["login"]
    assert view["credential_health"]["state"] == "ok", f"{client}: the login is healthy: {view}"
    assert login["last_refresh"] == "succeeded" and login["generation"] == 1, \
        f"{client}: renewed (rotating its refresh token) without a new sign-in: {login}"
    assert view["credential_revision"] == 2, f"{client}: a refresh is not a rotation: {view}"


def case_exec_pool(stack, client):
    """`switchyard exec POOL -- claude ...` twice: each launch is pinned to one member of the 2:1
    pool (`/c/cc-pool@MEMBER`), chosen by SWRR per launch (a, then b), with no other set-up; the
    answers come from the members' own keys and the pool's ledger names pool and member."""
    seen = []
    for launch in (1, 2):
        home, cwd, env = stack.sandbox(f"cc-pool-exec-{launch}")
        env.update({"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        cmd = [os.path.join(BIN, "claude"), "-p", "Say what the provider says.", "--model", CC_MODEL,
               "--output-format", "stream-json", "--verbose"]
        env.update(SWITCHYARD_DATA_DIR=stack.data, SWITCHYARD_RELAY_PORT=stack.relay_url.rsplit(":", 1)[1],
                   SWITCHYARD_LOG="warn")
        if "DBUS_SESSION_BUS_ADDRESS" in os.environ:
            env["DBUS_SESSION_BUS_ADDRESS"] = os.environ["DBUS_SESSION_BUS_ADDRESS"]
        before = len(stack.attempts("cc-pool"))
        run = stack.record(f"switchyard exec cc-pool -- {client} ({launch})",
                           [os.path.abspath(stack.sy), "exec", "cc-pool", "--", *cmd], env, cwd)
        assert not run.timed_out and run.rc == 0, f"{client} under exec POOL completed\n{run.describe()}"
        assert not run.off_loopback, f"{run.name} tried to leave 127.0.0.1: {run.off_loopback}"
        assert stack.token not in run.stdout + run.stderr, f"{run.name}: the relay token is in no output"
        text, _ = CLIENTS[client][1](run)
        member = "cc-pool-a" if launch == 1 else "cc-pool-b"
        assert reply(member, 1) in text, f"launch {launch}: the member's own key answered: {text!r}"
        new = stack.new_attempts("cc-pool", before)
        assert new and all(a.get("pool") == "cc-pool" and a.get("member") == member for a in new), \
            f"launch {launch}: every call went to member {member} of the pool:{rows(new)}"
        assert_clean(client, f"exec pool launch {launch}", new)
        seen.append(member)
    assert seen == ["cc-pool-a", "cc-pool-b"], f"SWRR per launch over 2:1: {seen}"


case_exec_pool.clients = ("claude",)


def case_pool(stack, client):
    """Gemini CLI pointed at the pool `ge-pool` (2:1) twice: the first task goes to `ge-pool-a`,
    whose member maps the client's `gemini-2.5-flash` to `gemini-2.5-pro` in the path (its mock
    key knows only pro, so an unmapped path would be a 404), the second to `ge-pool-b` with the
    client's own model; the ledger names pool, member and the model sent."""
    served = []
    for n in (1, 2):
        _, text, _, new = task(stack, client, "ge-pool", f"Say what the provider says ({n}).")
        members = {a.get("member") for a in new}
        assert len(members) == 1 and all(a.get("pool") == "ge-pool" for a in new), \
            f"task {n}: its calls went to one member of the pool:{rows(new)} {members}"
        member = members.pop()
        slug, model = ("ge-pool-a", "gemini-2.5-pro") if member == "ge-pool-a=gemini-2.5-pro" else ("ge-pool-b", GE_MODEL)
        assert reply(slug, 1) in text, f"task {n}: {member}'s own key answered: {text!r}"
        assert {a.get("model") for a in new} == {model}, f"task {n}: {member} was sent {model}:{rows(new)}"
        assert_clean(client, f"pool task {n}", new)
        served.append(member)
    assert served == ["ge-pool-a=gemini-2.5-pro", "ge-pool-b"], f"SWRR over 2:1 on new conversations: {served}"


case_pool.clients = ("gemini",)

# What each client sends after a limit's first refusal (measured on this machine with the pinned
# versions; docs/clients.md): Claude Code, its own retries on, honours `x-should-retry: false` and
# stops at once; Codex with retries off (as every case here runs it) stops at once.
AFTER_REFUSAL_MAX = {"claude": 0, "codex": 0}
# Codex with its own retry defaults waits the refusal's `retry-after` (here: until the day ends)
# before its first reconnect: in this long it sends nothing more.
CODEX_WAIT_SECS = 20


def refusals(stack, slug, before, client, run, limit):
    """The rows a run left on a capped connection: every one a refusal naming the limit."""
    new = stack.new_attempts(slug, before)
    assert new, f"{client}: its request reached the relay\n{run.describe()}"
    assert all(a.get("limit") == limit and a.get("status") == 429 and a.get("attempt") == 0 for a in new), \
        f"{client}: every request was refused by the limit, none reached a key:{rows(new)}"
    return new


def case_spent_budget(stack, client):
    """A connection whose budget is spent (`--requests 0 --per day`): the client stops with the
    refusal and nothing reaches the provider; the requests it sent after the first refusal are
    counted (the relay's rows: each a refusal naming the limit)."""
    slug = f"{CLIENTS[client][2]}-capped"
    limit = f"connection-{slug}-requests-day"
    before = len(stack.attempts(slug))
    if client == "claude":
        run = stack.claude(slug, "Say hello.", retries=True)
        shown = limit
    else:
        run = stack.codex(slug, "Say hello.")
        shown = "429 Too Many Requests"
    assert not run.timed_out, f"{client}: stops on a spent budget\n{run.describe()}"
    assert run.rc != 0, f"{client}: exits with a failure on a spent budget\n{run.describe()}"
    assert not run.off_loopback, f"{client} tried to leave 127.0.0.1: {run.off_loopback}"
    new = refusals(stack, slug, before, client, run, limit)
    after = len(new) - 1
    print(f"clients: spent_budget[{client}]: {len(new)} request(s), {after} after the first refusal, "
          f"rc={run.rc}", file=sys.stderr)
    assert after <= AFTER_REFUSAL_MAX[client], \
        f"{client}: {after} requests after the first refusal (kept at most {AFTER_REFUSAL_MAX[client]}):{rows(new)}"
    assert shown in run.stdout + run.stderr, f"{client}: shows the refusal ({shown!r})\n{run.describe()}"
    if client == "codex":
        before = len(stack.attempts(slug))
        waiting = stack.codex(slug, "Say hello.", retries=True, timeout=CODEX_WAIT_SECS)
        assert waiting.timed_out, f"codex with its own retries waits the retry-after\n{waiting.describe()}"
        new = refusals(stack, slug, before, client, waiting, limit)
        print(f"clients: spent_budget[codex, own retries]: {len(new)} request(s) in {CODEX_WAIT_SECS} s "
              f"(it waits the retry-after before reconnecting)", file=sys.stderr)
        assert len(new) == 1, f"codex sent nothing more while it waited:{rows(new)}"
        assert "Reconnecting" in waiting.stdout, f"codex says it will reconnect\n{waiting.describe()}"


CASES = [case_legacy_tool, case_balanced, case_failover_429, case_setup_only, case_exec, case_exec_login, case_oauth,
         case_exec_pool, case_pool, case_spent_budget]
case_spent_budget.clients = ("claude", "codex")
# Gemini CLI: the routing cases, exec and a pool (its `client setup` is tested in the cli crate).
GEMINI_CASES = (case_legacy_tool, case_balanced, case_failover_429, case_exec, case_pool)


def check_canary(stack, logs):
    leaks = []
    for run in stack.runs:
        if CANARY in run.stdout + run.stderr:
            leaks.append(f"output of {run.name}")
    if CANARY in logs:
        leaks.append("relay or mock provider output")
    # The data dir (SQLite database, WAL, install id) and the clients' homes (sessions, logs).
    for top in (stack.data, os.path.join(stack.work, "clients")):
        for root, _, files in os.walk(top):
            for name in files:
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    if CANARY.encode() in f.read():
                        leaks.append(path)
    scanned = sum(len(files) for _, _, files in os.walk(stack.data))
    assert scanned > 0, f"the data dir {stack.data} holds files to scan"
    assert not leaks, f"a key secret leaked into: {leaks}"
    # The fake logins: only in the logins' own config directories (data/accounts/<profile id>/),
    # which are the official CLIs' and never read by Switchyard.
    login_leaks = [f"output of {run.name}" for run in stack.runs if LOGIN in run.stdout + run.stderr]
    if LOGIN in logs:
        login_leaks.append("relay or mock provider output")
    accounts = os.path.join(stack.data, "accounts") + os.sep
    for top in (stack.data, os.path.join(stack.work, "clients")):
        for root, _, files in os.walk(top):
            if (root + os.sep).startswith(accounts):
                continue
            for name in files:
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    if LOGIN.encode() in f.read():
                        login_leaks.append(path)
    attempts = "".join(stack.cli("--json", "attempts", slug, "--limit", "500") for slug in LOGINS)
    if LOGIN in attempts:
        login_leaks.append("attempts --json")
    if LOGIN in stack.cli("export"):
        login_leaks.append("the export")
    assert not login_leaks, f"a login leaked into: {login_leaks}"


def main() -> int:
    target = sys.argv[1]
    only = sys.argv[2:]  # optional: case names or client names to run
    for client in CLIENTS:
        exe = os.path.join(BIN, client)
        assert os.access(exe, os.X_OK), f"{exe} is missing: run `npm ci` in tests/clients"
    stack = Stack(target)
    failures, logs, passed = [], "", []
    try:
        stack.up()
        for case in CASES:
            for client in getattr(case, "clients", CLIENTS):
                name = f"{case.__name__[5:]}[{client}]"
                if only and not any(o in name for o in only):
                    continue
                if client == "gemini" and case not in GEMINI_CASES:
                    continue
                try:
                    case(stack, client)
                    passed.append(name)
                    print(f"clients: {name}: ok", file=sys.stderr)
                except AssertionError as e:
                    failures.append((name, str(e)))
                    print(f"clients: {name}: FAILED\n{e}", file=sys.stderr)
                except Exception:  # a harness error in one case: report it, go on with the others
                    failures.append((name, traceback.format_exc()))
                    print(f"clients: {name}: ERROR\n{traceback.format_exc()}", file=sys.stderr)
    except Exception:
        failures.append(("set-up", traceback.format_exc()))
        print(f"clients: set-up FAILED\n{traceback.format_exc()}", file=sys.stderr)
    finally:
        logs = stack.down()
        stack.trap.close()
    relay_rc = stack.relay.returncode if stack.relay else None
    try:
        check_canary(stack, logs)
        assert relay_rc in (None, 0), f"the relay shut down cleanly: rc={relay_rc}"
    except AssertionError as e:
        failures.append(("canary/shutdown", str(e)))
    if failures:
        print("\n".join(f"clients: FAILED {n}" for n, _ in failures), file=sys.stderr)
        noise = ("sqlx::query", "keyring:", "hyper_util::", "axum::serve", "h2::", "rustls::")
        lines = [line[:500] for line in logs.splitlines() if not any(n in line for n in noise)]
        print(f"=== relay and mock provider output, without sqlx/keyring/hyper lines (all of it: "
              f"{stack.work}/relay.err, mock.err)\n" + "\n".join(lines[-120:]), file=sys.stderr)
        print(f"=== work dir kept: {stack.work} (client homes under clients/)", file=sys.stderr)
        return 1
    if os.environ.get("CLIENTS_KEEP"):
        print(f"clients: work dir kept: {stack.work}", file=sys.stderr)
    else:
        shutil.rmtree(stack.work, ignore_errors=True)
    print(f"clients: Claude Code, Codex and Gemini CLI through the relay: {len(passed)} cases ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
