#!/usr/bin/env python3
"""Drives the relay with the official `openai`, `anthropic` and `google-genai` Python SDKs,
streaming and not, against the mock provider: a real `switchyard relay serve` process, a real data dir,
the real keychain (run inside scripts/with-keychain). The OpenAI SDK also runs on an owned
ChatGPT login (`profile login --kind oauth`, signed in by device code against the mock's
authorization server): the Responses API, whole and streamed, through the ChatGPT backend.

usage: relay_sdk.py TARGET_DIR   (holds debug/switchyard and debug/mock-provider)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import anthropic
import openai
from google import genai
from google.genai import errors as genai_errors

CANARY = "sk-canary-sdk"
KEYS = {
    f"{CANARY}-oa-1": {"models": ["gpt-test"], "reply": "Hello from one"},
    f"{CANARY}-oa-2": {"models": ["gpt-test"], "reply": "Hello from two"},
    f"{CANARY}-an-1": {"models": ["claude-test"], "reply": "Hi from one"},
    f"{CANARY}-an-2": {"models": ["claude-test"], "reply": "Hi from two"},
    f"{CANARY}-ge-1": {"models": ["gemini-test"], "reply": "Gemini one"},
    f"{CANARY}-ge-2": {"models": ["gemini-test"], "reply": "Gemini two"},
}
# The owned login's tokens start with the canary too: they must appear in no output or log.
OAUTH = {"key": {"models": ["gpt-test"], "reply": "Hello from the owned login"}, "account_id": "acct-sdk",
         "token_prefix": f"{CANARY}-oauth-"}


def start(cmd, log_path, env=None):
    """Starts `cmd`, its stderr (debug logs) into `log_path`: a pipe nobody reads until the end
    fills up and blocks every thread of the process that logs (seen: a keychain read stalled
    behind a log line until the client timed out)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(log_path, "w"), text=True, env=env)
    p.log_path = log_path
    first = p.stdout.readline().strip()
    if "listening on " not in first:
        p.kill()
        with open(log_path) as f:
            raise AssertionError(f"{cmd[0]} did not announce its address: {first!r} {f.read()}")
    return p, first.split("listening on ", 1)[1]


def main() -> int:
    target = sys.argv[1]
    sy = os.path.join(target, "debug", "switchyard")
    mock_bin = os.path.join(target, "debug", "mock-provider")
    work = tempfile.mkdtemp(prefix="switchyard-sdk-")
    script = os.path.join(work, "script.json")
    with open(script, "w") as f:
        json.dump({"keys": KEYS, "oauth": OAUTH}, f)
    env = dict(os.environ, SWITCHYARD_DATA_DIR=os.path.join(work, "data"), SWITCHYARD_LOG="debug")
    mock, mock_url = start([mock_bin, "--script", script], os.path.join(work, "mock.log"))
    relay = None
    try:
        def cli(*args, secret=None):
            out = subprocess.run([sy, *args], input=secret, capture_output=True, text=True, env=env)
            assert out.returncode == 0, f"switchyard {' '.join(args)} failed: {out.stderr}"
            assert "canary" not in out.stdout + out.stderr, "a secret leaked into CLI output"
            return out.stdout

        cli("connection", "add", "oa", "--protocol", "openai", "--base-url", f"{mock_url}/v1", "--model", "gpt-test",
            "--secret-stdin", secret=f"{CANARY}-oa-1")
        cli("profile", "add", "oa", "--label", "two", "--secret-stdin", secret=f"{CANARY}-oa-2")
        cli("connection", "add", "an", "--protocol", "anthropic", "--base-url", mock_url, "--model", "claude-test",
            "--secret-stdin", secret=f"{CANARY}-an-1")
        cli("profile", "add", "an", "--label", "two", "--secret-stdin", secret=f"{CANARY}-an-2")
        cli("connection", "add", "ge", "--protocol", "gemini", "--base-url", mock_url, "--model", "gemini-test",
            "--secret-stdin", secret=f"{CANARY}-ge-1")
        cli("profile", "add", "ge", "--label", "two", "--secret-stdin", secret=f"{CANARY}-ge-2")
        for slug in ("oa", "an", "ge"):
            cli("verify", slug)
            cli("routing", "activate", slug, "balanced")
        cli("settings", "oauth-issuer", mock_url)
        cli("settings", "codex-backend-url", f"{mock_url}/backend-api/codex")
        cli("connection", "add", "ox", "--protocol", "openai", "--base-url", f"{mock_url}/v1", "--model", "gpt-test")
        signed = json.loads(cli("--json", "profile", "login", "ox", "owned", "--kind", "oauth"))
        assert signed["login"]["account_id"] == "acct-sdk", f"signed in by device code: {signed}"
        token = cli("relay", "token").strip()
        relay, relay_url = start([sy, "relay", "serve", "--listen", "127.0.0.1:0"], os.path.join(work, "relay.log"), env=env)

        oa = openai.OpenAI(base_url=f"{relay_url}/c/oa/v1", api_key=token, max_retries=0)
        seen = set()
        for i in range(4):
            r = oa.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": f"q{i}"}])
            assert r.choices[0].message.content.startswith("Hello from"), r
            assert r.usage.completion_tokens > 0, "usage passes through"
            seen.add(r.choices[0].message.content)
        assert len(seen) == 2, f"balanced routing used both OpenAI keys: {seen}"
        chunks = oa.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "stream"}],
                                            stream=True, stream_options={"include_usage": True})
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text.startswith("Hello from"), f"streamed chat text: {text!r}"
        models = [m.id for m in oa.models.list()]
        assert models == ["gpt-test"], f"models with current evidence: {models}"

        an = anthropic.Anthropic(base_url=f"{relay_url}/c/an", api_key=token, max_retries=0)
        msg = an.messages.create(model="claude-test", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
        assert msg.content[0].text.startswith("Hi from"), msg
        with an.messages.stream(model="claude-test", max_tokens=16, messages=[{"role": "user", "content": "stream"}]) as s:
            streamed = "".join(s.text_stream)
            final = s.get_final_message()
        assert streamed.startswith("Hi from"), f"streamed messages text: {streamed!r}"
        assert final.usage.output_tokens > 0, "message_delta usage reaches the SDK"

        bad = anthropic.Anthropic(base_url=f"{relay_url}/c/an", api_key="wrong", max_retries=0)
        try:
            bad.messages.create(model="claude-test", max_tokens=4, messages=[{"role": "user", "content": "x"}])
            raise AssertionError("a wrong relay token must be refused")
        except anthropic.AuthenticationError:
            pass

        # google-genai joins its base URL's path and the API version (`join_url_path`), and sends
        # the key as x-goog-api-key: the relay's /c/SLUG base works as it is. Its default version
        # is `v1` (3.x), which the mock does not serve (Google serves both): ask for v1beta.
        gemini_http = {"base_url": f"{relay_url}/c/ge", "api_version": "v1beta"}
        ge = genai.Client(api_key=token, http_options=gemini_http)
        seen = set()
        for i in range(4):
            r = ge.models.generate_content(model="gemini-test", contents=f"q{i}")
            assert r.text.startswith("Gemini "), r
            assert r.usage_metadata.candidates_token_count > 0, "usageMetadata passes through"
            seen.add(r.text)
        assert len(seen) == 2, f"balanced routing used both Gemini keys: {seen}"
        streamed = "".join(c.text or "" for c in ge.models.generate_content_stream(model="gemini-test", contents="s"))
        assert streamed.startswith("Gemini "), f"streamed text (alt=sse): {streamed!r}"
        counted = ge.models.count_tokens(model="gemini-test", contents="count me")
        assert counted.total_tokens > 0, counted
        listed = [m.name for m in ge.models.list()]
        assert listed == ["models/gemini-test"], f"models with current evidence: {listed}"
        bad = genai.Client(api_key="wrong", http_options=gemini_http)
        try:
            bad.models.generate_content(model="gemini-test", contents="x")
            raise AssertionError("a wrong relay token must be refused")
        except genai_errors.ClientError as e:
            assert e.code == 401, e
        for _ in range(50):  # the relay writes its ledger in batches
            ge_attempts = json.loads(cli("--json", "attempts", "ge", "--limit", "100"))
            if any(a["model"] == "gemini-test" for a in ge_attempts):
                break
            time.sleep(0.1)
        assert any(a["model"] == "gemini-test" for a in ge_attempts), \
            f"the ledger has the model from the path: {[a.get('model') for a in ge_attempts]}"

        ox = openai.OpenAI(base_url=f"{relay_url}/c/ox/v1", api_key=token, max_retries=0)
        resp = ox.responses.create(model="gpt-test", input="hi")
        assert resp.output_text.startswith("Hello from the owned login"), f"the owned login answered: {resp}"
        with ox.responses.stream(model="gpt-test", input="stream") as stream:
            streamed = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        assert streamed.startswith("Hello from the owned login"), f"streamed responses text: {streamed!r}"
        for _ in range(30):  # the relay writes its ledger in batches after a stream ends
            owned = json.loads(cli("--json", "attempts", "ox", "--limit", "10"))
            if len(owned) >= 2:
                break
            time.sleep(0.1)
        assert len(owned) == 2 and all(a["status"] == 200 for a in owned), f"both calls on the login: {owned}"

        attempts = json.loads(cli("--json", "attempts", "oa", "--limit", "100"))
        assert len(attempts) >= 5, f"every OpenAI attempt is in the ledger: {len(attempts)}"
    finally:
        for p in (relay, mock):
            if p is not None:
                p.terminate()
        logs = ""
        for p in (relay, mock):
            if p is not None:
                out, _ = p.communicate(timeout=10)
                with open(p.log_path) as f:
                    logs += out + f.read()
    assert relay is None or relay.returncode == 0, f"the relay shut down cleanly: {relay.returncode}"
    assert "canary" not in logs, "a secret leaked into relay or provider logs"
    print("sdk: openai, anthropic and google-genai SDKs through the relay: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
