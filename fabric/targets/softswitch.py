"""The softswitch target: this project's Python v1model switch (``python -m softswitch``)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from controller.p4contract import CPU_PORT, PRIORITY_TRIMMED
from controller.session import PipelineConfig, SessionError

from . import (
    DEFAULT_BUILD,
    DEFAULT_PROGRAM,
    REPO_ROOT,
    Target,
    TargetError,
    full_frames_bps,
)


def link_bps(rate_pps: int) -> int:
    """The bit rate of a link that passes ``rate_pps`` full frames a second (with their wire overhead)."""
    return int(full_frames_bps(rate_pps))


class Softswitch(Target):
    """Compiles P4 itself; shaping (delay, rate, depth) on its command line and over its runtime port."""

    name = "softswitch"
    has_link_delay = True
    can_write_registers = True
    reports_kernel_drops = True
    loads_source_at_start = True
    shapes_at_start = True
    shapes_need_pipeline = False
    device_config_name = "softswitch.json"
    can_truncate_clones = True
    shares_link_rate = True

    def missing(self) -> str | None:
        if shutil.which("softswitch") or (REPO_ROOT / "softswitch" / "__main__.py").exists():
            return None
        return "softswitch: neither the console script nor the source tree was found"

    @staticmethod
    def _exe() -> list[str]:
        exe = shutil.which("softswitch")
        return [exe] if exe else [sys.executable, "-m", "softswitch"]

    def switch_argv(self, device_id, ports, grpc_port, *, runtime_port=0, queue_depth=None, queue_rate=None,
                    link_delay=None, log_file="", program=None, cpu_port=CPU_PORT, link_rate=None,
                    control_queue_depth=None):
        argv = [*self._exe(), "--device-id", str(device_id)]
        for port, ifname in sorted(ports.items()):
            argv += ["-i", f"{port}@{ifname}"]
        if log_file:
            argv += ["--log-file", log_file, "-L", "info"]
        for port, n in sorted((queue_depth or {}).items()):
            argv += ["--queue-depth", f"{port}:{n}"]
        for port, n in sorted((control_queue_depth or {}).items()):
            argv += ["--queue-depth", f"{port}/{PRIORITY_TRIMMED}:{n}"]
        for port, n in sorted((queue_rate or {}).items()):
            argv += ["--queue-rate", f"{port}:{n}"]
        for port, n in sorted((link_rate or {}).items()):
            # one link shared by the port's queues, charged per byte: ACKs and trimmed headers cost
            # their own bytes, full data frames pass at n a second (docs/demo.md, "The link model")
            argv += ["--link-bps", f"{port}:{link_bps(n)}"]
        for port, n in sorted((link_delay or {}).items()):
            argv += ["--link-delay", f"{port}:{n}"]
        if runtime_port:
            argv += ["--runtime-addr", f"127.0.0.1:{runtime_port}"]
        argv += [str(program)] if program else ["--no-p4"]
        # (softswitch always has PRIORITY_QUEUES priority queues: no flag needed)
        argv += ["--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        # None: no CPU port (a program without packet I/O), as for bmv2
        return argv + ["--cpu-port", str(cpu_port)] if cpu_port is not None else argv

    def pipeline(self, program=None, build_dir: Path = DEFAULT_BUILD) -> PipelineConfig:
        """Compile ``program`` (default p4src/mrc_switch.p4) with softswitch's front end."""
        from softswitch.devconfig import make_device_config
        from softswitch.frontend.errors import P4Error
        from softswitch.frontend.load import load_program
        from softswitch.p4info import build_p4info

        program = program or DEFAULT_PROGRAM
        try:
            p4info = build_p4info(load_program(str(program)))
            return PipelineConfig(p4info, make_device_config(str(program)), f"softswitch:{program}")
        except P4Error as e:
            raise SessionError(f"cannot compile {program} for softswitch: {e}") from None

    def compile_argv(self, source: Path, out_dir: Path) -> list[str]:
        return [*self._exe(), "compile", str(source), "-o", str(out_dir)]

    def runtime_address(self, runtime_port: int) -> str:
        return f"127.0.0.1:{runtime_port}"

    def runtime_command(self, address: str, line: str) -> str:
        from softswitch.engine.control import ControlError, send_command

        cmd, *args = line.split()
        try:
            return str(send_command(address, cmd, args))
        except (ControlError, OSError, ValueError) as e:
            raise TargetError(f"softswitch runtime {address}: {line!r} failed: {e}") from None

    def shape(self, runtime_port, port, *, delay_us=None, rate_pps=None, queue_depth=None, link_rate_pps=None,
              control_queue_depth=None) -> None:
        from softswitch.engine.control import ControlError, send_command

        addr = f"127.0.0.1:{runtime_port}"
        todo = []
        if delay_us is not None:
            todo.append(("set_link_delay", [delay_us, port]))
        if rate_pps is not None:
            todo.append(("set_queue_rate", [rate_pps, port]))
        if queue_depth is not None:
            todo.append(("set_queue_depth", [queue_depth, port]))
        if link_rate_pps is not None:
            todo.append(("set_link_bps", [link_bps(link_rate_pps), port]))
        if control_queue_depth is not None:
            todo.append(("set_queue_depth", [control_queue_depth, port, PRIORITY_TRIMMED]))
        for cmd, args in todo:
            try:
                send_command(addr, cmd, args)
            except (ControlError, OSError, ValueError) as e:  # e.g. nothing listening: the switch is down
                raise TargetError(f"softswitch runtime {addr}: {cmd} {' '.join(map(str, args))} failed: "
                                  f"{e.strerror if isinstance(e, OSError) and e.strerror else e}") from None
