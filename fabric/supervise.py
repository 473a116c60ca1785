"""Switch supervisor: runs one switch process, restarts it when it crashes, records why it ended.

``mrc-fabric`` starts every switch through this small parent (``wrap`` builds its command line)::

    python fabric/supervise.py --status LOG.status.json --grpc-port N [--no-restart] -- SWITCH ARGV...

It tells an intentional stop from a crash by who ended the switch: ``mrc-fabric fault switch-stop``,
a scenario's spine loss and ``mrc-fabric down`` all signal the *supervisor* (SIGTERM, the recorded
PID is the supervisor's), which passes the signal on and exits without a restart.  A switch that
ends on its own (exit code or signal) is a crash: the supervisor appends the reason to the switch's
log (the same file that holds the switch's stdout and stderr), then restarts it after a back-off
(0.5 s doubling to 30 s, reset after 60 s of uptime; at most ``MAX_RESTARTS``).  A switch that dies
before its gRPC port ever answered is not restarted (a bad command line would only loop): the
supervisor exits with the switch's code, so ``mrc-fabric up`` fails at once with the log tail.
The state (restarts, last exit reason, child PID) is kept in a small JSON file that
``mrc-fabric status`` shows.  ``--after-restart`` names a command (a JSON list) run each time a
restarted switch answers on its gRPC port: the fabric passes ``mrc-fabric reshape <switch>`` for a
target that keeps its link properties in process state (bmv2's queues), so a restart does not leave
the switch unshaped; its output goes to the switch's log.

It is a stand-alone script (standard library only) so that it starts fast and imports nothing
heavy; ``wrap`` and ``read_status`` are what the fabric uses.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

BACKOFF_INITIAL_S = 0.5
BACKOFF_MAX_S = 30.0
STABLE_S = 60.0  # a switch up this long gets the initial back-off again after its next crash
MAX_RESTARTS = 1000
STOP_GRACE_S = 3.5  # SIGTERM -> SIGKILL for the switch (mrc-fabric kills the supervisor after 5 s)


def wrap(argv: list[str], *, status_file: str, grpc_port: int = 0, restart: bool = True,
         after_restart: list[str] | None = None) -> list[str]:
    """The supervisor's command line around a switch's ``argv``."""
    out = [sys.executable, str(Path(__file__).resolve()), "--status", status_file]
    if grpc_port:
        out += ["--grpc-port", str(grpc_port)]
    if not restart:
        out.append("--no-restart")
    if after_restart:
        out += ["--after-restart", json.dumps(after_restart)]
    return out + ["--", *argv]


def status_path(log: str) -> str:
    """Where the supervisor of the switch logging to ``log`` keeps its state."""
    return f"{log}.status.json"


def read_status(log: str) -> dict:
    """The supervisor's last state for the switch logging to ``log`` ({} if none)."""
    try:
        data = json.loads(Path(status_path(log)).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def exit_reason(returncode: int) -> str:
    """``exit code N`` or ``killed by signal NAME (N)`` for a Popen return code."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        return f"killed by signal {name} ({-returncode})"
    return f"exit code {returncode}"


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _die_with_parent() -> None:
    """In the child: SIGKILL it if the supervisor itself is killed (no orphaned switch)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Supervisor:
    """Run ``argv``; restart after crashes until told to stop (see the module docstring)."""

    def __init__(self, argv: list[str], status_file: str, grpc_port: int = 0, restart: bool = True,
                 after_restart: list[str] | None = None) -> None:
        self.argv, self.status_file, self.grpc_port, self.restart = argv, status_file, grpc_port, restart
        self.after_restart = after_restart or []
        self.stop = threading.Event()
        self.child: subprocess.Popen | None = None
        self.hook: subprocess.Popen | None = None  # the --after-restart command, while it runs
        self.restarts = 0
        self.last_exit = ""
        self.crashes: list[dict] = []

    def log(self, msg: str) -> None:
        print(f"[mrc-fabric supervisor {time.strftime('%Y-%m-%d %H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    def save(self, state: str, ready: bool = False) -> None:
        doc = {"state": state, "ready": ready, "supervisor_pid": os.getpid(),
               "child_pid": self.child.pid if self.child else 0,
               "restarts": self.restarts, "last_exit": self.last_exit, "restart": self.restart,
               "crashes": self.crashes[-10:]}
        tmp = f"{self.status_file}.tmp"
        try:
            Path(tmp).write_text(json.dumps(doc))
            os.replace(tmp, self.status_file)
        except OSError as e:
            self.log(f"cannot write {self.status_file}: {e}")

    def on_signal(self, signum: int, frame: object) -> None:
        self.stop.set()
        child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    def _wait(self, child: subprocess.Popen) -> tuple[int, bool, float]:
        """Wait for the child to end; (return code, whether its gRPC port ever answered, uptime)."""
        t0 = time.monotonic()
        ready = not self.grpc_port
        while True:  # bounded by the child's life
            if not ready and _port_open(self.grpc_port):
                ready = True
                self.save("running", ready=True)
                if self.restarts and self.after_restart:
                    self._start_hook()
            self._reap_hook()
            try:
                rc = child.wait(timeout=0.2 if ready else 0.05)
                return rc, ready, time.monotonic() - t0
            except subprocess.TimeoutExpired:
                pass
            if self.stop.is_set():
                try:
                    return child.wait(timeout=STOP_GRACE_S), ready, time.monotonic() - t0
                except subprocess.TimeoutExpired:
                    child.kill()
                    return child.wait(), ready, time.monotonic() - t0

    def _start_hook(self) -> None:
        self._end_hook()
        self.log(f"restarted switch answers: running {' '.join(self.after_restart)}")
        try:
            self.hook = subprocess.Popen(self.after_restart, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                                         stderr=sys.stderr, preexec_fn=_die_with_parent)  # noqa: PLW1509
        except OSError as e:
            self.log(f"cannot run the after-restart command: {e}")

    def _reap_hook(self) -> None:
        if self.hook is not None and self.hook.poll() is not None:
            rc, self.hook = self.hook.returncode, None
            self.log("after-restart command done" if rc == 0 else f"after-restart command failed: {exit_reason(rc)}")

    def _end_hook(self) -> None:
        hook, self.hook = self.hook, None
        if hook is not None and hook.poll() is None:
            hook.kill()
            hook.wait()

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self._end_hook()

    def _run(self) -> int:
        backoff = BACKOFF_INITIAL_S
        for _ in range(MAX_RESTARTS + 1):
            try:
                # the supervisor has no other thread: preexec_fn is safe here
                self.child = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                              preexec_fn=_die_with_parent)  # noqa: PLW1509
            except OSError as e:
                self.last_exit = f"cannot start: {e}"
                self.log(f"switch {self.last_exit}")
                self.save("failed")
                return 127
            self.save("running")
            if self.stop.is_set():  # a stop raced the start
                self.child.send_signal(signal.SIGTERM)
            rc, ready, up_s = self._wait(self.child)
            if self.stop.is_set():
                self.last_exit = f"stopped on request ({exit_reason(rc)})"
                self.save("stopped")
                return 0
            self.last_exit = exit_reason(rc)
            self.crashes.append({"at": round(time.time(), 3), "reason": self.last_exit, "uptime_s": round(up_s, 3)})
            self.log(f"switch (pid {self.child.pid}) ended by itself: {self.last_exit} after {up_s:.1f} s")
            if not ready:
                self.log("it never answered on its gRPC port: not restarting")
                self.save("failed")
                return rc if rc > 0 else 1
            if not self.restart:
                self.log("not restarting (--no-restart)")
                self.save("crashed")
                return rc if rc > 0 else 1
            if up_s >= STABLE_S:
                backoff = BACKOFF_INITIAL_S
            self.log(f"restarting in {backoff:g} s (restart {self.restarts + 1})")
            self.save("restarting")
            if self.stop.wait(backoff):
                self.save("stopped")
                return 0
            self.restarts += 1
            backoff = min(backoff * 2, BACKOFF_MAX_S)
        self.log(f"gave up after {MAX_RESTARTS} restarts")
        self.save("failed")
        return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="supervise", description=__doc__.split("\n\n")[0])
    ap.add_argument("--status", required=True, help="JSON state file")
    ap.add_argument("--grpc-port", type=int, default=0, help="the switch's gRPC port (readiness)")
    ap.add_argument("--no-restart", action="store_true", help="record a crash but do not restart")
    ap.add_argument("--after-restart", type=json.loads, default=None,
                    help="JSON list: a command run each time a restarted switch answers on its gRPC port")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- the switch command line")
    a = ap.parse_args(argv)
    cmd = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
    if not cmd:
        ap.error("give the switch command line after --")
    if a.after_restart is not None and not (isinstance(a.after_restart, list) and a.after_restart
                                            and all(isinstance(x, str) for x in a.after_restart)):
        ap.error("--after-restart wants a JSON list of strings")
    sup = Supervisor(cmd, a.status, a.grpc_port, not a.no_restart, a.after_restart)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, sup.on_signal)
    return sup.run()


if __name__ == "__main__":
    sys.exit(main())
