"""Switch processes: command lines per target, start, readiness poll, stop by recorded PID."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .state import ProcRecord
from .targets import TARGETS, TargetError, get_target, target_available

# re-exported: mrc_fabric.cli, the tests and the runners take the target list and check from here
__all__ = ["TARGETS", "SwitchError", "is_running", "port_open", "start", "stop", "switch_argv",
           "target_available", "wait_ready"]

REPO_ROOT = Path(__file__).resolve().parent.parent


class SwitchError(RuntimeError):
    """A switch process failed to start or stop; the message carries its log tail."""


def switch_argv(target: str, device_id: int, ports: dict[int, str], grpc_port: int, *,
                runtime_port: int = 0, queue_depth: dict[int, int] | None = None,
                queue_rate: dict[int, int] | None = None, link_delay: dict[int, int] | None = None,
                log_file: str = "", link_rate: dict[int, int] | None = None,
                control_queue_depth: dict[int, int] | None = None) -> list[str]:
    """The command line of one fabric switch (the target plugin's; it starts empty, the controller
    pushes the pipeline)."""
    try:
        t = get_target(target)
    except TargetError as e:
        raise SwitchError(str(e)) from None
    return t.switch_argv(device_id, ports, grpc_port, runtime_port=runtime_port, queue_depth=queue_depth,
                         queue_rate=queue_rate, link_delay=link_delay, log_file=log_file, link_rate=link_rate,
                         control_queue_depth=control_queue_depth)


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.2) -> bool:
    """True if something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def proc_start_time(pid: int) -> int:
    """Start time of ``pid`` in clock ticks since boot (0 if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[19])


def is_running(rec: ProcRecord) -> bool:
    """True if the recorded process is still the one we started (pid not reused) and not a zombie."""
    if not rec.pid or proc_start_time(rec.pid) != rec.start_time:
        return False
    try:
        state = Path(f"/proc/{rec.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _log_tail(path: str, n: int = 20) -> str:
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-n:])


def start(rec: ProcRecord) -> subprocess.Popen:
    """Start the recorded command (stdout/stderr to ``rec.log``); fills pid and start time."""
    if port_open(rec.grpc_port):
        raise SwitchError(f"switch {rec.switch}: gRPC port {rec.grpc_port} is already in use by another "
                          "process (another fabric? choose other ports with --grpc-base-port)")
    # the runtime port too (bmv2's Thrift server, softswitch's --runtime-addr): bmv2 binds it after its
    # gRPC server is up, and a failed bind there ends the process after it looked ready
    if rec.runtime_port and port_open(rec.runtime_port):
        raise SwitchError(f"switch {rec.switch}: runtime port {rec.runtime_port} is already in use by another "
                          "process (it is the gRPC port + the runtime offset: choose other ports with --grpc-base-port)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    with _interrupts_deferred(), open(rec.log, "ab") as log:
        proc = subprocess.Popen(rec.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        rec.pid = proc.pid
        rec.start_time = proc_start_time(proc.pid)
    return proc


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM until the block is done, then deliver them to the handlers of before.

    A Ctrl-C that lands while ``Popen`` forks and execs (``_fork_exec``) raised KeyboardInterrupt after
    the child existed but before ``Popen`` returned its PID: nothing recorded the switch, so neither
    the bring-up's own teardown nor ``mrc-fabric down`` stopped it, and the next ``up`` found its gRPC
    port in use.  Only the main thread can set handlers; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in old:
        signal.signal(s, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        for s in dict.fromkeys(pending):  # each one once, in arrival order
            signal.raise_signal(s)


def wait_ready(recs: list[ProcRecord], procs: dict[str, subprocess.Popen], deadline_s: float) -> None:
    """Poll every switch's gRPC port until it answers; fail early if a process exits."""
    pending = {r.switch: r for r in recs}
    end = time.monotonic() + deadline_s
    while pending:
        for name, rec in list(pending.items()):
            p = procs.get(name)
            if p is not None and p.poll() is not None:
                raise SwitchError(f"switch {name} exited with code {p.returncode} before its gRPC port "
                                  f"{rec.grpc_port} answered; log {rec.log}:\n{_log_tail(rec.log)}")
            if port_open(rec.grpc_port):
                del pending[name]
        if not pending:
            return
        if time.monotonic() > end:
            raise SwitchError(f"switch(es) {', '.join(sorted(pending))} not answering on gRPC within "
                              f"{deadline_s:.0f} s; see logs {', '.join(r.log for r in pending.values())}")
        time.sleep(0.05)  # poll interval of a deadline-bounded readiness loop


def stop(rec: ProcRecord, proc: subprocess.Popen | None = None, grace_s: float = 5.0) -> bool:
    """SIGTERM then SIGKILL the recorded process (only if it is still ours); True if it was running."""
    if not is_running(rec):
        if proc is not None:
            proc.poll()
        return False
    os.kill(rec.pid, signal.SIGTERM)
    end = time.monotonic() + grace_s
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            break
        if not is_running(rec):
            break
        time.sleep(0.02)
    else:
        if is_running(rec):
            os.kill(rec.pid, signal.SIGKILL)
    if proc is not None:
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    else:  # not our child (a crashed run's leftover): wait until it is gone
        end = time.monotonic() + grace_s
        while is_running(rec) and time.monotonic() < end:
            time.sleep(0.02)
    return True
