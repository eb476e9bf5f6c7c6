#!/usr/bin/env python3
"""Real-window smoke test: the built desktop app under Xvfb, driven by tauri-driver and
WebKitWebDriver over plain WebDriver HTTP (driver.py), shows the connections the CLI created
in the same data dir with their profiles and gates, runs "Verify all" through the real IPC, and
never shows a secret.

usage: smoke.py APP_BINARY CLI_BINARY   (run inside scripts/with-keychain)
Set SWITCHYARD_SCREENSHOTS=DIR to save screenshots there.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Window, wait_for  # noqa: E402

CANARY = "sk-canary-desktop-5e1f0c9a77"


def cli(binary: str, data_dir: str, *args: str, secret: str | None = None) -> None:
    subprocess.run([binary, "--data-dir", data_dir, *args], input=(secret or "").encode(), check=True,
                   stdout=subprocess.DEVNULL)


def main() -> int:
    app, cli_bin = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    data_dir = tempfile.mkdtemp(prefix="switchyard-desktop-")
    cli(cli_bin, data_dir, "connection", "add", "smoke-openai", "--protocol", "openai", "--base-url",
        "https://api.example.com/v1", "--model", "gpt-a", "--secret-stdin", secret=CANARY + "-1")
    cli(cli_bin, data_dir, "profile", "add", "smoke-openai", "--label", "backup-key", "--weight", "3",
        "--secret-stdin", secret=CANARY + "-2")
    shots = os.environ.get("SWITCHYARD_SCREENSHOTS")
    w = Window(app, {"SWITCHYARD_DATA_DIR": data_dir, "SWITCHYARD_RELAY_PORT": "0"})
    try:
        with w:
            started = w.open()
            w.one("[data-testid=connection]", timeout=30)
            print(f"smoke: first connection card after {time.time() - started:.2f}s", file=sys.stderr)
            text = w.text("[data-testid=connection]")
            assert "smoke-openai" in text, f"the window shows the connection the CLI created: {text!r}"
            assert "backup-key" in text and "primary" in text, f"the window lists both profiles: {text!r}"
            assert "legacy" in text, f"the routing mode badge is shown: {text!r}"
            assert "canary" not in w.source(), "a secret reached the window"
            if shots:
                w.screenshot(os.path.join(shots, "connections.png"))

            # The connection page: both profiles in the table, then the routing gates.
            w.click('button[aria-label="Open smoke-openai"]')
            wait_for(lambda: len(w.find("[data-testid=profile]")) == 2, 10, "the two profile rows")
            labels = [w.attr(f"[data-testid=profile]:nth-of-type({i})", "data-label") for i in (1, 2)]
            assert labels == ["primary", "backup-key"], f"profiles in priority order: {labels!r}"
            w.click("#tab-routing")
            assert w.attr("[data-testid=gates]", "data-ok") == "false", "nothing verified: gates fail"

            # Verify all through the real IPC: progress events reach the window and each profile
            # gets an inline result (the example endpoint is unreachable: "not verified").
            w.click("#tab-profiles")
            w.click("[data-testid=verify-all]")

            def results():
                texts = w.texts("[data-testid=verify-line]")
                return len(texts) == 2 and all("verif" in t and "…" not in t for t in texts) and texts

            texts = wait_for(results, 40, "both verification results")
            assert all("not verified" in t for t in texts), f"unreachable endpoint reported per profile: {texts!r}"
            assert "canary" not in w.source(), "a secret reached the window"
            print("smoke: desktop window shows CLI-created connections, their profiles and gates: ok", file=sys.stderr)
            return 0
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
