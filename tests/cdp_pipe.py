"""A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe` (stdlib only).

Chromium reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4, so
driving a real headless browser needs neither websockets nor playwright.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
]


CHROMIUM_SKIP = "Chromium is not installed (apt-get install -y chromium; bash .ci/run installs it)"


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


class Browser:
    def __init__(self, executable: str, wait: float = 30.0):
        self.wait = wait
        self.profile = tempfile.mkdtemp(prefix="omk-chromium-")
        cmd_r, self._cmd_w = os.pipe()  # we write commands, chromium reads fd 3
        self._evt_r, evt_w = os.pipe()  # chromium writes fd 4, we read

        def child_fds() -> None:
            # Move both ends out of the way first so neither clobbers the other, then put them
            # on 3 and 4 (inheritable). close_fds=False because Popen would close fds 3 and 4
            # after this hook runs; every other descriptor of ours is close-on-exec anyway.
            r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
            w = fcntl.fcntl(evt_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            close_fds=False,
            preexec_fn=child_fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(evt_w)
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self.events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buf = b""
        with os.fdopen(self._evt_r, "rb", buffering=0) as f:
            while chunk := f.read(65536):
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    msg = json.loads(raw)
                    if "id" in msg and msg["id"] in self._replies:
                        self._replies[msg["id"]].put(msg)
                    else:
                        self.events.put(msg)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            mid = self._next_id
            self._replies[mid] = queue.Queue()
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        reply = self._replies[mid].get(timeout=self.wait)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, method: str, seen: list[dict[str, Any]]) -> dict[str, Any]:
        """Wait for `method`, appending every event read on the way to `seen`."""
        while True:
            evt = self.events.get(timeout=self.wait)
            seen.append(evt)
            if evt.get("method") == method:
                return evt

    def drain(self, seen: list[dict[str, Any]]) -> None:
        while True:
            try:
                seen.append(self.events.get_nowait())
            except queue.Empty:
                return

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab: navigate, evaluate JavaScript, collect console errors and exceptions."""

    def __init__(self, browser: Browser):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        )

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.b.send(method, params, self.session)

    def goto(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        self.b.wait_event("Page.loadEventFired", self.events)

    def js(self, expression: str) -> Any:
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in res:
            raise AssertionError(f"page script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP violations among them)."""
        self.b.drain(self.events)
        found = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                found.append(f"exception: {p['exceptionDetails'].get('text')} {p['exceptionDetails'].get('exception', {}).get('description', '')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                found.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p.get('args', [])]}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                found.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return found

    def screenshot(self, path: Path) -> None:
        import base64

        self.js("window.scrollTo(0, 0)")
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
