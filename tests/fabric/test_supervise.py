"""Issue 14 finding 8: the switch supervisor restarts a crashed switch, keeps the reason in the
log, and never undoes an intentional stop.  Real processes: the "switch" here is a small Python
program that listens on a TCP port (the readiness signal) and writes to stderr; no root needed.
The same on a real softswitch fabric is in tests/fabric/test_supervise_root.py."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mrc_fabric import supervise

CHILD = """
import os, socket, sys, signal
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
print(f"switch {os.getpid()} up; about to misbehave", file=sys.stderr, flush=True)
if sys.argv[2] == "exit-now":
    sys.exit(3)
signal.pause()
"""
EARLY = "import sys; print('bad flag', file=sys.stderr); sys.exit(2)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def wait_for(pred, timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:  # deadline-bounded poll of another process's state
        if pred():
            return True
        time.sleep(0.02)
    return pred()


class Run:
    def __init__(self, tmp_path: Path, child_args: list[str], restart: bool = True, code: str = CHILD,
                 after_restart: list[str] | None = None, port: int = 0) -> None:
        self.log = tmp_path / "sw.log"
        self.status_file = Path(supervise.status_path(str(self.log)))
        self.port = port or free_port()
        argv = supervise.wrap([sys.executable, "-c", code, str(self.port), *child_args],
                              status_file=str(self.status_file), grpc_port=self.port, restart=restart,
                              after_restart=after_restart)
        with open(self.log, "ab") as f:
            self.proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)

    def st(self) -> dict:
        return status(self.status_file)

    def text(self) -> str:
        return self.log.read_text()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        pid = self.st().get("child_pid")
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture()
def runs():
    out: list[Run] = []
    yield out
    for r in out:
        r.close()


def test_crash_is_logged_and_restarted_but_stop_is_final(tmp_path, runs):
    r = Run(tmp_path, ["pause"])
    runs.append(r)
    assert wait_for(lambda: r.st().get("ready") and "up; about" in r.text())
    first = r.st()["child_pid"]
    os.kill(first, signal.SIGKILL)  # the crash
    assert wait_for(lambda: r.st().get("restarts") == 1 and r.st().get("ready") and r.st()["child_pid"] != first)
    assert wait_for(lambda: _connects(r.port))
    text = r.text()
    assert f"switch (pid {first}) ended by itself: killed by signal SIGKILL (9)" in text
    assert "restarting in 0.5 s (restart 1)" in text
    assert r.st()["last_exit"] == "killed by signal SIGKILL (9)"
    second = r.st()["child_pid"]
    # an intentional stop (what `fault switch-stop` and `down` send): the switch ends, no restart
    r.proc.send_signal(signal.SIGTERM)
    assert r.proc.wait(10) == 0
    assert r.st()["state"] == "stopped" and r.st()["restarts"] == 1
    assert not Path(f"/proc/{second}").exists() or "Z" in Path(f"/proc/{second}/stat").read_text().split()[2]


def test_after_restart_command_runs_once_the_restarted_switch_answers(tmp_path, runs):
    """What re-shapes a restarted bmv2 switch (its queues live in the process): the command runs after
    each restart, once the new process answers, and never after the first start."""
    marks, port = tmp_path / "marks", free_port()
    code = ("import sys, socket; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1); "
            "open(sys.argv[2], 'a').write('shaped\\n'); print('hook ran')")
    hook = [sys.executable, "-c", code, str(port), str(marks)]
    r = Run(tmp_path, ["pause"], after_restart=hook, port=port)
    runs.append(r)
    assert wait_for(lambda: r.st().get("ready"))
    time.sleep(0.5)
    assert not marks.exists()  # the first start is shaped by whoever brought the fabric up
    for n in (1, 2):
        first = r.st()["child_pid"]
        os.kill(first, signal.SIGKILL)
        assert wait_for(lambda: r.st().get("restarts") == n and r.st().get("ready"), 15)  # noqa: B023
        assert wait_for(lambda: marks.exists() and marks.read_text().count("shaped") == n)  # noqa: B023
    assert wait_for(lambda: "after-restart command done" in r.text())
    assert "hook ran" in r.text() and "restarted switch answers: running" in r.text()


def test_after_restart_must_be_a_json_list(tmp_path):
    out = subprocess.run([sys.executable, supervise.__file__, "--status", str(tmp_path / "s.json"),
                          "--after-restart", '{"a": 1}', "--", "true"], capture_output=True, text=True, timeout=30,
                         check=False)
    assert out.returncode == 2 and "--after-restart wants a JSON list of strings" in out.stderr


def test_no_restart_keeps_the_reason(tmp_path, runs):
    r = Run(tmp_path, ["pause"], restart=False)
    runs.append(r)
    assert wait_for(lambda: r.st().get("ready"))
    os.kill(r.st()["child_pid"], signal.SIGSEGV)
    assert r.proc.wait(10) == 1
    assert r.st()["state"] == "crashed" and r.st()["last_exit"] == "killed by signal SIGSEGV (11)"
    assert "not restarting (--no-restart)" in r.text()


def test_exit_code_after_ready_is_a_crash(tmp_path, runs):
    r = Run(tmp_path, ["exit-now"], restart=False)
    runs.append(r)
    r.proc.wait(10)
    # exit-now may end before the supervisor saw the port answer: either way the reason is kept
    assert r.st()["last_exit"] == "exit code 3" and "exit code 3" in r.text()


def test_switch_that_never_came_up_is_not_restarted(tmp_path, runs):
    r = Run(tmp_path, [], code=EARLY)
    runs.append(r)
    assert r.proc.wait(10) == 2  # mrc-fabric up sees this exit at once and shows the log tail
    assert r.st()["state"] == "failed" and r.st()["restarts"] == 0
    text = r.text()
    assert "bad flag" in text and "never answered on its gRPC port: not restarting" in text


def _connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def test_python_m_runs_the_module_without_a_runpy_warning():
    """docs/fabric.md names the module ``mrc_fabric.supervise``; ``python -m`` on it printed runpy's
    RuntimeWarning (the package's __init__ had loaded it already, through .fabric) before the help."""
    r = subprocess.run([sys.executable, "-m", "mrc_fabric.supervise", "--help"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 0 and r.stdout.startswith("usage: supervise"), r
    assert r.stderr == "", r.stderr
