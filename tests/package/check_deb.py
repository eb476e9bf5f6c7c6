#!/usr/bin/env python3
"""Checks the Linux .deb that scripts/package builds (issue 17): its control fields and file
list, then an install into a scratch root (dpkg-deb -x) from which `switchyard --version`
answers with the workspace version and the desktop app starts under Xvfb — its relay answers
/healthz on the port it was given — and quits cleanly on SIGTERM.

usage: check_deb.py DEB   (run inside scripts/with-keychain: the app opens the keychain)
"""
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
import urllib.request

WANT_FILES = [
    "usr/bin/switchyard-desktop",
    "usr/bin/switchyard",
    "usr/share/applications/Switchyard.desktop",
    "usr/share/icons/hicolor/128x128/apps/switchyard-desktop.png",
    "lib/systemd/system/switchyard-relay.service",
    "usr/share/switchyard/relay.env.example",
    "usr/share/switchyard/prometheus.yml",
    "usr/share/switchyard/grafana-dashboard.json",
    "usr/share/doc/switchyard/team-relay.md",
]


def log(msg: str) -> None:
    print(f"package: {msg}", file=sys.stderr)


def run(*cmd: str, **kw) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def workspace_version() -> str:
    meta = json.loads(run("cargo", "metadata", "--no-deps", "--format-version", "1"))
    return next(p["version"] for p in meta["packages"] if p["name"] == "switchyard-desktop")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_control(deb: str, version: str) -> None:
    fields = {k: run("dpkg-deb", "-f", deb, k).strip() for k in ("Package", "Version", "Architecture", "Depends")}
    assert fields["Package"] == "switchyard", f"package name: {fields}"
    assert fields["Version"] == version, f"the .deb carries the workspace version {version}: {fields}"
    assert "libwebkit2gtk-4.1-0" in fields["Depends"], f"WebKitGTK is a dependency: {fields}"
    listing = run("dpkg-deb", "-c", deb)
    paths = [line.split()[-1].removeprefix("./") for line in listing.splitlines() if line.strip()]
    missing = [f for f in WANT_FILES if f not in paths]
    assert not missing, f"the .deb lacks {missing}; it has:\n{listing}"
    modes = {line.split()[-1].removeprefix("./"): line.split()[0] for line in listing.splitlines() if line.strip()}
    for exe in WANT_FILES[:2]:
        assert modes[exe].startswith("-rwx"), f"{exe} is executable: {modes[exe]}"
    log(f"control and contents ok ({fields['Package']} {fields['Version']} {fields['Architecture']}, "
        f"{len(paths)} entries)")


def check_desktop_entry(root: str) -> None:
    entry = open(os.path.join(root, "usr/share/applications/Switchyard.desktop")).read()
    for line in ("Exec=switchyard-desktop", "Icon=switchyard-desktop", "Type=Application"):
        assert line in entry.splitlines(), f"the desktop entry has {line!r}:\n{entry}"
    if shutil.which("desktop-file-validate"):
        run("desktop-file-validate", os.path.join(root, "usr/share/applications/Switchyard.desktop"))


# Environment variables only a test build honours (the engine's `test-hooks` feature): a shipped
# binary that names one would let its environment move a data dir's store (issue 39).
TEST_HOOKS = (b"SWITCHYARD_TEST_PG",)


def check_no_test_hooks(root: str) -> None:
    for name in ("usr/bin/switchyard", "usr/bin/switchyard-desktop"):
        data = open(os.path.join(root, name), "rb").read()
        for hook in TEST_HOOKS:
            assert hook not in data, f"{name} holds the test hook {hook.decode()}: built with test-hooks"
    log(f"no test hook in the shipped binaries ({', '.join(h.decode() for h in TEST_HOOKS)})")


def check_cli(root: str, version: str) -> None:
    cli = os.path.join(root, "usr/bin/switchyard")
    out = run(cli, "--version").strip()
    assert out.endswith(version), f"`switchyard --version` from the installed path: {out!r}"
    log(f"installed CLI answers: {out}")
    with open(cli, "rb") as f:
        assert b'src="/console/assets/index-' in f.read(), "the packaged CLI embeds the web console (ui/dist-console)"
    log("the packaged CLI embeds the web console")
    check_no_test_hooks(root)


def check_desktop(root: str) -> None:
    app = os.path.join(root, "usr/bin/switchyard-desktop")
    missing = [line for line in run("ldd", app).splitlines() if "not found" in line]
    assert not missing, f"the installed app's libraries resolve: {missing}"
    work = tempfile.mkdtemp(prefix="switchyard-deb-")
    display = f":{random.randint(200, 900)}"
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1100x720x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    port = free_port()
    out = open(os.path.join(work, "app.log"), "w+")
    env = dict(os.environ, DISPLAY=display, WEBKIT_DISABLE_COMPOSITING_MODE="1",
               SWITCHYARD_DATA_DIR=os.path.join(work, "data"), SWITCHYARD_RELAY_PORT=str(port))
    app_proc = None
    try:
        time.sleep(0.5)
        started = time.time()
        app_proc = subprocess.Popen([app], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline, last = started + 30, None
        while time.time() < deadline:
            assert app_proc.poll() is None, f"the installed app exited with {app_proc.returncode}: {tail(out)}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError as e:
                last = e
            time.sleep(0.2)
        else:
            raise AssertionError(f"the installed app's relay never answered on {port} ({last}): {tail(out)}")
        log(f"installed desktop app started under Xvfb, relay up after {time.time() - started:.2f}s")
        time.sleep(1)
        assert app_proc.poll() is None, f"the app keeps running: {tail(out)}"
        app_proc.send_signal(signal.SIGTERM)
        code = app_proc.wait(timeout=20)
        assert code == 0, f"SIGTERM quits cleanly: exit {code}: {tail(out)}"
        log("installed desktop app quit on SIGTERM with exit 0")
    finally:
        for p in (app_proc, xvfb):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(work, ignore_errors=True)


def tail(f) -> str:
    f.flush()
    f.seek(0)
    return "\n".join(f.read().splitlines()[-20:])


def check_service(root: str) -> None:
    """The team relay's unit passes `systemd-analyze verify` (Debian's systemd) with not one
    warning, run on a copy whose ExecStart names the scratch root's binary (verify checks the
    command exists); its hardening and the sample env's settings are there."""
    unit_path = os.path.join(root, "lib/systemd/system/switchyard-relay.service")
    with open(unit_path) as f:
        unit = f.read()
    for want in ("LoadCredential=switchyard-master-key:", "StateDirectory=", "DynamicUser=yes", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "ExecReload=/bin/kill -HUP $MAINPID",
                 "EnvironmentFile=/etc/switchyard/relay.env"):
        assert want in unit, f"the unit has {want}"
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "switchyard-relay.service")
        with open(copy, "w") as f:
            f.write(unit.replace("/usr/bin/switchyard ", os.path.join(root, "usr/bin/switchyard") + " "))
        verify = subprocess.run(["systemd-analyze", "verify", copy], capture_output=True, text=True)
        said = (verify.stdout + verify.stderr).strip()
        assert verify.returncode == 0 and not said, f"systemd-analyze verify: rc {verify.returncode}: {said}"
    with open(os.path.join(root, "usr/share/switchyard/relay.env.example")) as f:
        env = f.read()
    for want in ("SWITCHYARD_STORE=", "SWITCHYARD_VAULT=sealed", "SWITCHYARD_RELAY_ARGS="):
        assert want in env, f"the sample relay.env sets {want}"
    assert "SWITCHYARD_MASTER_KEY_FILE=" not in env.replace("# ", ""), "the master key is a credential, not an env line"
    with open(os.path.join(root, "usr/share/switchyard/grafana-dashboard.json")) as f:
        json.load(f)
    log("service unit verified (systemd-analyze verify: no warning), sample env and dashboard there")


def main() -> int:
    deb = os.path.abspath(sys.argv[1])
    version = workspace_version()
    check_control(deb, version)
    root = tempfile.mkdtemp(prefix="switchyard-root-")
    try:
        run("dpkg-deb", "-x", deb, root)
        check_desktop_entry(root)
        check_service(root)
        check_cli(root, version)
        check_desktop(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    log("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
