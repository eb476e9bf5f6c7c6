#!/usr/bin/env python3
"""Real-window smoke test: the built desktop app under Xvfb, driven by tauri-driver and
WebKitWebDriver over plain WebDriver HTTP, shows the connections the CLI created in the same
data dir, opens one to see its profiles in priority order and its (failing) activation gates,
and never shows the secret.

usage: smoke.py APP_BINARY CLI_BINARY   (run inside scripts/with-keychain)
Set SWITCHYARD_SCREENSHOTS=DIR to save screenshots there (README uses docs/screenshots).
"""
import base64
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CANARY = "sk-canary-desktop-5e1f0c9a77"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wd(method: str, url: str, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{method} {url} -> {e.code}: {e.read()[:500]!r}") from None


def cli(binary: str, data_dir: str, *args: str, secret: str | None = None) -> None:
    subprocess.run([binary, "--data-dir", data_dir, *args], input=(secret or "").encode(), check=True,
                   stdout=subprocess.DEVNULL)


def wait_for(predicate, timeout: float, what: str):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            got = predicate()
            if got:
                return got
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last = e
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what} (last error: {last})")


def save_screenshot(session_url: str, display: str, path: str) -> None:
    """Grabs the X display with ImageMagick's `import` when it is installed: WebKitWebDriver
    under Xvfb tends to hang on its screenshot command and then time out the next commands
    too. Falls back to WebDriver's screenshot."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if shutil.which("import"):
        time.sleep(0.3)  # let the last click paint
        subprocess.run(["import", "-display", display, "-window", "root", path], check=True)
        return
    png = base64.b64decode(wd("GET", f"{session_url}/screenshot", timeout=30)["value"])
    with open(path, "wb") as f:
        f.write(png)


def main() -> int:
    app, cli_bin = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    data_dir = tempfile.mkdtemp(prefix="switchyard-desktop-")
    cli(cli_bin, data_dir, "connection", "add", "smoke-openai", "--protocol", "openai", "--base-url",
        "https://api.example.com/v1", "--model", "gpt-a", "--secret-stdin", secret=CANARY + "-1")
    cli(cli_bin, data_dir, "profile", "add", "smoke-openai", "--label", "backup-key", "--weight", "3",
        "--secret-stdin", secret=CANARY + "-2")

    display = f":{random.randint(200, 900)}"
    port, native_port = free_port(), free_port()
    env = dict(os.environ, DISPLAY=display, SWITCHYARD_DATA_DIR=data_dir, WEBKIT_DISABLE_COMPOSITING_MODE="1",
               SWITCHYARD_RELAY_PORT="0")
    procs = []
    try:
        procs.append(subprocess.Popen(["Xvfb", display, "-screen", "0", "1100x720x24", "-nolisten", "tcp"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        time.sleep(0.5)
        driver = shutil.which("tauri-driver") or os.path.expanduser("~/.cargo/bin/tauri-driver")
        procs.append(subprocess.Popen([driver, "--port", str(port), "--native-port", str(native_port)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: wd("GET", f"{base}/status", timeout=2), 15, "tauri-driver to listen")
        started = time.time()
        caps = {"capabilities": {"alwaysMatch": {"tauri:options": {"application": app}}}}
        session = wd("POST", f"{base}/session", caps, timeout=60)["value"]["sessionId"]
        s = f"{base}/session/{session}"

        def cards():
            found = wd("POST", f"{s}/elements", {"using": "css selector", "value": "[data-testid=connection]"})["value"]
            return found

        found = wait_for(cards, 30, "the connection card")
        print(f"smoke: first connection card after {time.time() - started:.2f}s", file=sys.stderr)
        element = next(iter(found[0].values()))
        text = wd("GET", f"{s}/element/{element}/text")["value"]
        assert "smoke-openai" in text, f"the window shows the connection the CLI created: {text!r}"
        assert "backup-key" in text and "primary" in text, f"the window lists both profiles: {text!r}"
        assert "legacy" in text, f"the routing mode badge is shown: {text!r}"
        source = wd("GET", f"{s}/source")["value"]
        assert "canary" not in source, "a secret reached the window"
        shots = os.environ.get("SWITCHYARD_SCREENSHOTS")
        if shots:
            save_screenshot(s, display, os.path.join(shots, "connections.png"))

        def find(css: str):
            found = wd("POST", f"{s}/elements", {"using": "css selector", "value": css})["value"]
            return [next(iter(f.values())) for f in found]

        def click(css: str):
            wd("POST", f"{s}/element/{wait_for(lambda: find(css), 10, css)[0]}/click", {})

        # The connection page: both profiles in the table, then the routing gates.
        click('button[aria-label="Open smoke-openai"]')
        rows = wait_for(lambda: len(find("[data-testid=profile]")) == 2 and find("[data-testid=profile]"), 10,
                        "the two profile rows")
        labels = [wd("GET", f"{s}/element/{r}/attribute/data-label")["value"] for r in rows]
        assert labels == ["primary", "backup-key"], f"profiles in priority order: {labels!r}"
        click("#tab-routing")
        gates = wait_for(lambda: find("[data-testid=gates]"), 10, "the gate checklist")
        assert wd("GET", f"{s}/element/{gates[0]}/attribute/data-ok")["value"] == "false", "nothing verified: gates fail"
        if shots:
            save_screenshot(s, display, os.path.join(shots, "routing.png"))

        # Verify all through the real IPC: progress events reach the window and each profile
        # gets an inline result (the example endpoint is unreachable: "not verified").
        click("#tab-profiles")
        click("[data-testid=verify-all]")

        def results():
            lines = find("[data-testid=verify-line]")
            texts = [wd("GET", f"{s}/element/{e}/text")["value"] for e in lines]
            return len(texts) == 2 and all("verif" in t and "…" not in t for t in texts) and texts

        texts = wait_for(results, 40, "both verification results")
        assert all("not verified" in t for t in texts), f"unreachable endpoint reported per profile: {texts!r}"
        if shots:
            save_screenshot(s, display, os.path.join(shots, "verify.png"))
        assert "canary" not in wd("GET", f"{s}/source")["value"], "a secret reached the window"
        wd("DELETE", s)
        print("smoke: desktop window shows CLI-created connections, their profiles and gates: ok", file=sys.stderr)
        return 0
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
