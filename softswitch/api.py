"""Python API: start a softswitch in this process or as a subprocess, as a context manager.

    with SoftSwitch("prog.p4", interfaces={1: "veth1", 2: "veth2"}, cpu_port=255) as sw:
        ... connect a P4Runtime client to sw.grpc_addr ...

Readiness is a poll (the gRPC port answers a Capabilities request, or the subprocess writes its
ready file when it runs inside a network namespace), never a fixed sleep.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess as sp
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Self

from softswitch.switch import Switch, SwitchConfig

REPO_ROOT = Path(__file__).resolve().parent.parent


def stop_process(proc: sp.Popen, timeout: float = 10.0) -> int:
    """SIGTERM, then SIGKILL if ``proc`` has not exited after ``timeout`` s; its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except sp.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    return proc.returncode


class SoftSwitchError(Exception):
    """The switch failed to start or stop; the message carries its exit code and log tail."""


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host`` (for tests and tools)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def grpc_ready(addr: str, timeout: float = 1.0) -> bool:
    """True when a P4Runtime server at ``addr`` answers Capabilities."""
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    with grpc.insecure_channel(addr) as ch:
        try:
            p4runtime_pb2_grpc.P4RuntimeStub(ch).Capabilities(p4runtime_pb2.CapabilitiesRequest(),
                                                               timeout=timeout)
            return True
        except grpc.RpcError:
            return False


class SoftSwitch:
    """A softswitch for the duration of a ``with`` block (or between ``start()`` and ``stop()``)."""

    def __init__(self, program: str | os.PathLike | None = None, *,
                 interfaces: Mapping[int, str] | Iterable[str] = (),
                 grpc_addr: str | None = None, device_id: int = 1, cpu_port: int | None = None,
                 defines: Iterable[str] = (), include_dirs: Iterable[str] = (),
                 queue_depth: int | None = None, queue_rate: int | None = None,
                 runtime_addr: str | None = None, extra_args: Iterable[str] = (),
                 subprocess: bool = False, netns: str | None = None, log_file: str | None = None,
                 log_console: bool = False, start_timeout: float = 60.0) -> None:
        if netns and not subprocess:
            raise ValueError("netns= needs subprocess=True")
        if netns and grpc_addr is None:
            grpc_addr = "127.0.0.1:9559"  # inside the namespace: nothing else listens there
        self.grpc_addr = grpc_addr or f"127.0.0.1:{free_tcp_port()}"
        self.program = str(program) if program is not None else None
        items = interfaces.items() if isinstance(interfaces, Mapping) else \
            (tuple(s.split("@", 1)) for s in interfaces)
        self.interfaces = [(int(n), str(name)) for n, name in items]
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.defines = list(defines)
        self.include_dirs = list(include_dirs)
        self.queue_depth = queue_depth
        self.queue_rate = queue_rate
        self.runtime_addr = runtime_addr
        self.extra_args = list(extra_args)
        self.subprocess = subprocess
        self.netns = netns
        self.log_file = log_file
        self.log_console = log_console
        self.start_timeout = start_timeout
        self.switch: Switch | None = None
        self.process: sp.Popen | None = None
        self.returncode: int | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    # ------------------------------------------------------------ command line
    def argv(self) -> list[str]:
        """The simple_switch_grpc-style arguments this switch is started with."""
        args = ["--device-id", str(self.device_id)]
        for n, name in self.interfaces:
            args += ["-i", f"{n}@{name}"]
        for d in self.defines:
            args += ["-D", d]
        for d in self.include_dirs:
            args += ["-I", d]
        if self.queue_depth is not None:
            args += ["--queue-depth", str(self.queue_depth)]
        if self.queue_rate is not None:
            args += ["--queue-rate", str(self.queue_rate)]
        if self.runtime_addr:
            args += ["--runtime-addr", self.runtime_addr]
        if self.log_console:
            args.append("--log-console")
        args += self.extra_args
        args += [self.program] if self.program else ["--no-p4"]
        args += ["--", "--grpc-server-addr", self.grpc_addr]
        if self.cpu_port is not None:
            args += ["--cpu-port", str(self.cpu_port)]
        return args

    # ------------------------------------------------------------ lifecycle
    def start(self) -> SoftSwitch:
        """Start the switch and return once its gRPC server answers."""
        if self.subprocess:
            self._start_subprocess()
        else:
            from softswitch.cli import parse_args

            cfg: SwitchConfig = parse_args(self.argv())[0]
            self.switch = Switch(cfg)
            self.switch.start()
            self._wait_ready(None)
        return self

    def _start_subprocess(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="softswitch-")
        ready = Path(self._tmp.name) / "ready"
        log_path = self.log_file or str(Path(self._tmp.name) / "switch.log")
        self.log_file = log_path
        cmd = [sys.executable, "-m", "softswitch", "--ready-file", str(ready), *self.argv()]
        if self.netns:
            ip = shutil.which("ip") or "/sbin/ip"
            cmd = [ip, "netns", "exec", self.netns, *cmd]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        with open(log_path, "ab") as out:
            self.process = sp.Popen(cmd, stdout=out, stderr=sp.STDOUT, env=env, start_new_session=True)
        self._wait_ready(ready)

    def _wait_ready(self, ready_file: Path | None) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                self.returncode = self.process.returncode
                raise SoftSwitchError(f"softswitch exited with code {self.returncode} while starting\n"
                                      + self.log_tail())
            if ready_file is not None and not ready_file.exists():
                time.sleep(0.02)
                continue
            if self.netns or grpc_ready(self.grpc_addr, timeout=0.5):
                return
            time.sleep(0.02)
        self.stop()
        raise SoftSwitchError(f"softswitch did not answer on {self.grpc_addr} within "
                              f"{self.start_timeout:.0f} s\n" + self.log_tail())

    def stop(self, timeout: float = 10.0) -> int:
        """Stop the switch (SIGTERM for a subprocess, then SIGKILL after ``timeout``); its exit code."""
        if self.switch is not None:
            self.switch.stop()
            self.switch = None
            self.returncode = 0
        if self.process is not None:
            proc, self.process = self.process, None
            self.returncode = stop_process(proc, timeout)
        return self.returncode if self.returncode is not None else 0

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the subprocess's log (empty in-process)."""
        if not self.log_file or not os.path.exists(self.log_file):
            return ""
        with open(self.log_file, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        code = self.stop()
        tmp, self._tmp = self._tmp, None
        failed = self.subprocess and code not in (0, -signal.SIGTERM) and exc[0] is None
        tail = self.log_tail() if failed else ""
        if tmp is not None:
            tmp.cleanup()
        if failed:
            raise SoftSwitchError(f"softswitch exited with code {code}\n{tail}")
