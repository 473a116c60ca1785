"""Drive Debian's headless Chromium over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages separated by NUL bytes on file descriptors 3 (to the browser) and 4 (from it)), so the
tests need no websocket package.  Only what the view tests use: open a page, evaluate JavaScript,
take a screenshot."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    """The browser exited, answered with an error, or did not answer in time."""


class Browser:
    """One headless Chromium process with one page (context manager; the process is always stopped)."""

    def __init__(self, width: int = 1500, height: int = 900) -> None:
        if CHROMIUM is None:
            raise BrowserError("chromium not on PATH")
        self._profile = tempfile.TemporaryDirectory(prefix="mrc-chromium-")
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()
        # The child sees the pipe ends as fds 3 and 4 (dup2 in preexec; dup2's copies are inheritable, and
        # close_fds=False keeps them: Popen would close them after preexec_fn otherwise).
        argv = [CHROMIUM, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                f"--user-data-dir={self._profile.name}", f"--window-size={width},{height}", "about:blank"]

        def fds() -> None:
            # Move both ends above 4 first (either may be 3 or 4 itself), then onto 3 and 4, inheritable.
            r, w = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, preexec_fn=fds,  # noqa: PLW1509 - only dup2 runs there
                                     close_fds=False, start_new_session=True)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.session = ""

    def __enter__(self) -> Self:
        try:
            targets = self.call("Target.getTargets", timeout=30.0)["targetInfos"]
            page = next(t["targetId"] for t in targets if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", {"targetId": page, "flatten": True})["sessionId"]
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the browser (by its PID) and remove its profile."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for fd in (self._to_w, self._from_r):
            try:
                os.close(fd)
            except OSError:
                pass
        # Chromium's helpers (zygote, crashpad) can outlive the browser and still write into the
        # profile: stop the whole process group this browser leads, then remove the profile (bounded).
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for _ in range(50):
            try:
                self._profile.cleanup()
                break
            except OSError:
                time.sleep(0.05)
        else:
            shutil.rmtree(self._profile.name, ignore_errors=True)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 15.0,
             page: bool = False) -> dict[str, Any]:
        """Send one command (to the page's session if ``page``) and wait for its answer."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if page:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise BrowserError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            left = end - time.monotonic()
            if left <= 0:
                raise BrowserError(f"{method}: no answer within {timeout:g} s")
            ready, _, _ = select.select([self._from_r], [], [], left)
            if ready:
                chunk = os.read(self._from_r, 1 << 20)
                if not chunk:
                    err = self.proc.stderr.read().decode(errors="replace")[-800:] if self.proc.stderr else ""
                    raise BrowserError(f"chromium exited ({self.proc.poll()}): {err}")
                self._buf += chunk

    def goto(self, url: str) -> None:
        """Open ``url`` in the page."""
        self.call("Page.enable", page=True)
        self.call("Page.navigate", {"url": url}, page=True)

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, page=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"javascript error: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_js(self, expression: str, timeout: float, poll_s: float = 0.05) -> tuple[Any, float]:
        """Poll a JavaScript expression until it is truthy (an exception counts as false); (value, seconds
        waited).  Bounded."""
        t0 = time.monotonic()
        while True:
            try:
                v = self.js(expression)
            except BrowserError as e:  # e.g. the page is still loading: the element is not there yet
                if "javascript error" not in str(e):
                    raise
                v = None
            if v:
                return v, time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise BrowserError(f"{expression!r} still false after {timeout:g} s")
            time.sleep(poll_s)  # polling interval of a deadline-bounded wait on the page

    def screenshot(self, path: Path) -> Path:
        """Save a PNG of the whole page."""
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, page=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path
