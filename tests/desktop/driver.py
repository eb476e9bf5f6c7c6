"""Plain WebDriver over HTTP for the real desktop window: Xvfb on a private display,
tauri-driver (which starts WebKitWebDriver and the app), one session, small helpers to find,
click, type and read, screenshots of the X display, and a teardown that kills every process
tree it started. Shared by journey.py and measure.py."""
import http.client
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
import urllib.parse


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_connections: dict[str, http.client.HTTPConnection] = {}


def wd(method: str, url: str, body=None, timeout=30):
    """One WebDriver command over a kept-alive connection per server. Not urllib: it sends
    `Connection: close`, which tauri-driver forwards to WebKitWebDriver while reusing its own
    pooled connection to it (retry_canceled_requests(false)), and about one journey in four lost
    a command to that race ("Remote end closed connection without response", CI 2026-11-29)."""
    parts = urllib.parse.urlsplit(url)
    conn = _connections.get(parts.netloc) or http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    _connections[parts.netloc] = conn
    if conn.sock is not None:
        conn.sock.settimeout(timeout)
    conn.timeout = timeout
    data = None if body is None else json.dumps(body).encode()
    try:
        conn.request(method, parts.path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
    except OSError:  # includes http.client's RemoteDisconnected: the next command connects afresh
        conn.close()
        _connections.pop(parts.netloc, None)
        raise
    if resp.status >= 400:
        raise RuntimeError(f"{method} {url} -> {resp.status}: {raw[:500]!r}")
    return json.loads(raw or b"{}")


def wait_for(predicate, timeout: float, what: str, every: float = 0.2):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            got = predicate()
            if got:
                return got
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last = e
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what} (last error: {last})")


class Window:
    """The app under Xvfb + tauri-driver, with one WebDriver session."""

    def __init__(self, app: str, env: dict, size: str = "1100x720"):
        self.display = f":{random.randint(200, 900)}"
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, **env, DISPLAY=self.display, WEBKIT_DISABLE_COMPOSITING_MODE="1")
        self.procs.append(subprocess.Popen(["Xvfb", self.display, "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True))
        time.sleep(0.5)
        port, native_port = free_port(), free_port()
        driver = shutil.which("tauri-driver") or os.path.expanduser("~/.cargo/bin/tauri-driver")
        # tauri-driver, WebKitWebDriver and the app write here; log_tail() shows it when a step fails
        self.log = tempfile.NamedTemporaryFile(prefix="switchyard-window-", suffix=".log", delete=False)
        self.procs.append(subprocess.Popen([driver, "--port", str(port), "--native-port", str(native_port)],
                                           env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                           start_new_session=True))
        self.base = f"http://127.0.0.1:{port}"
        wait_for(lambda: wd("GET", f"{self.base}/status", timeout=2), 15, "tauri-driver to listen")
        self.app = app
        self.s = ""

    def open(self) -> float:
        """Starts the app in a new session; returns the time the request was sent."""
        started = time.time()
        caps = {"capabilities": {"alwaysMatch": {"tauri:options": {"application": self.app}}}}
        session = wd("POST", f"{self.base}/session", caps, timeout=60)["value"]["sessionId"]
        self.s = f"{self.base}/session/{session}"
        return started

    def close_session(self) -> None:
        if self.s:
            try:
                wd("DELETE", self.s, timeout=20)
            finally:
                self.s = ""

    def js(self, script: str, *args):
        return wd("POST", f"{self.s}/execute/sync", {"script": script, "args": list(args)})["value"]

    def find(self, css: str) -> list[str]:
        found = wd("POST", f"{self.s}/elements", {"using": "css selector", "value": css})["value"]
        return [next(iter(f.values())) for f in found]

    def xfind(self, xpath: str) -> list[str]:
        found = wd("POST", f"{self.s}/elements", {"using": "xpath", "value": xpath})["value"]
        return [next(iter(f.values())) for f in found]

    def one(self, css: str, timeout: float = 10) -> str:
        return wait_for(lambda: self.find(css), timeout, css)[0]

    def click(self, css: str, timeout: float = 10) -> None:
        wd("POST", f"{self.s}/element/{self.one(css, timeout)}/click", {})

    def click_until(self, target: str, ready: str, panel: str = "main", timeout: float = 20) -> None:
        """Clicks `target` (a tab, a button opening a page or a dialog) until `ready` shows in
        the page. A click that lands while the view is still re-rendering (a page just opened, a
        list just loaded) does nothing, so one click and a wait flaked under load: the Limits tab
        once in four CI runs in stop 53, on 2026-12-07 the Activity tab (0 attempts listed) and
        the replace-key dialog, each once. Clicked again every 3 s while `target` is there (once
        the page moved on it may be gone or covered: then only looked for); on time out the
        assertion quotes what `panel` showed (loading, an error banner)."""
        deadline = time.time() + timeout
        self.click(target, timeout=max(0.5, deadline - time.time()))
        while True:
            try:
                wait_for(lambda: self.find(ready), min(3.0, max(0.2, deadline - time.time())), ready)
                return
            except AssertionError:
                if time.time() >= deadline:
                    break
            again = self.find(target)
            if again:
                try:
                    wd("POST", f"{self.s}/element/{again[0]}/click", {})
                except RuntimeError:
                    pass  # covered by what the last click opened, or gone since: look again
        shown = " | ".join(self.texts(panel)) or "(no panel)"
        raise AssertionError(f"timed out waiting for {ready} after clicking {target}; {panel} showed: {shown!r}")

    def click_button(self, text: str, within: str = "", timeout: float = 10) -> None:
        """Clicks the first enabled button whose text is `text` (inside `within`, an XPath prefix)."""
        xp = f"{within}//button[normalize-space()='{text}' and not(@disabled)]"
        el = wait_for(lambda: self.xfind(xp), timeout, f"button {text!r}")[0]
        wd("POST", f"{self.s}/element/{el}/click", {})

    def type(self, css: str, text: str, clear: bool = True) -> None:
        el = self.one(css)
        if clear:
            wd("POST", f"{self.s}/element/{el}/clear", {})
        wd("POST", f"{self.s}/element/{el}/value", {"text": text})

    def text(self, css: str) -> str:
        return wd("GET", f"{self.s}/element/{self.one(css)}/text")["value"]

    def texts(self, css: str) -> list[str]:
        return [wd("GET", f"{self.s}/element/{e}/text")["value"] for e in self.find(css)]

    def attr(self, css: str, name: str):
        return wd("GET", f"{self.s}/element/{self.one(css)}/attribute/{name}")["value"]

    def source(self) -> str:
        return wd("GET", f"{self.s}/source")["value"]

    def screenshot(self, path: str) -> None:
        """Grabs the X display (WebKitWebDriver's own screenshot tends to hang under Xvfb)."""
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        time.sleep(0.4)  # let the last change paint
        subprocess.run(["import", "-display", self.display, "-window", "root", path], check=True)

    def log_tail(self, lines: int = 40) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def __enter__(self) -> "Window":
        return self

    def __exit__(self, kind, _exc, _tb) -> None:
        """Tears down; when the block failed, first prints the last lines the window's processes wrote."""
        if kind is not None:
            print(f"--- the window's log (tauri-driver, WebKitWebDriver, app), last lines:\n{self.log_tail()}",
                  file=sys.stderr)
        self.teardown()

    def teardown(self) -> None:
        try:
            self.close_session()
        except Exception:  # noqa: BLE001 - best effort before killing
            pass
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        conn = _connections.pop(urllib.parse.urlsplit(self.base).netloc, None)
        if conn:
            conn.close()
        self.log.close()
        os.unlink(self.log.name)


def start_mock_provider(binary: str, script: dict, workdir: str) -> tuple[subprocess.Popen, str]:
    """Starts `mock-provider --script`; returns the process and its base URL."""
    path = os.path.join(workdir, "mock-script.json")
    with open(path, "w") as f:
        json.dump(script, f)
    proc = subprocess.Popen([binary, "--script", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True, text=True)
    line = proc.stdout.readline().strip() if proc.stdout else ""
    prefix = "mock provider listening on "
    if not line.startswith(prefix):
        proc.kill()
        raise RuntimeError(f"mock provider did not start: {line!r}")
    return proc, line[len(prefix):]


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
