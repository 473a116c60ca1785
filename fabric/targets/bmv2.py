"""The bmv2 target: ``simple_switch_grpc`` (PI P4Runtime server) with p4c's outputs from ``build/``.

What it cannot do, as measured (/work design notes BMV2_FACTS, docs/targets.md): no link-delay model
(the fabric adds a netem qdisc on the switch's veth instead), no P4Runtime register writes, queue
rate/depth only over its Thrift CLI once it runs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from controller.p4contract import CPU_PORT, PRIORITY_TRIMMED
from controller.session import PipelineConfig, SessionError

from . import DEFAULT_BUILD, DEFAULT_PROGRAM, PRIORITY_QUEUES, Target, TargetError

P4C = "p4c-bm2-ss"


class Bmv2(Target):
    """simple_switch_grpc; pipeline = build/mrc_switch/{p4info.txtpb,bmv2.json} from p4c."""

    name = "bmv2"
    has_link_delay = False
    can_write_registers = False
    reports_kernel_drops = False
    loads_source_at_start = False
    shapes_at_start = False
    shapes_need_pipeline = True  # simple_switch_CLI reads the switch's JSON first: empty under --no-p4
    device_config_name = "bmv2.json"
    can_truncate_clones = False  # PI answered UNKNOWN, no details, to packet_length_bytes (BMV2_FACTS)
    shares_link_rate = False  # a link's rate: set_queue_rate on each priority queue but the top, in frames

    def missing(self) -> str | None:
        return None if shutil.which("simple_switch_grpc") else "bmv2: simple_switch_grpc is not on PATH"

    def switch_argv(self, device_id, ports, grpc_port, *, runtime_port=0, queue_depth=None, queue_rate=None,
                    link_delay=None, log_file="", program=None, cpu_port=CPU_PORT, link_rate=None,
                    control_queue_depth=None):
        argv = ["simple_switch_grpc", "--device-id", str(device_id)]
        for port, ifname in sorted(ports.items()):
            argv += ["-i", f"{port}@{ifname}"]
        if log_file:
            argv += ["--log-file", log_file, "-L", "info"]
        else:  # bmv2 logs nothing without a target: its warnings and errors (PI's, packet-in failures) to
            argv += ["--log-console", "-L", "warn"]  # stdout, which the fabric keeps in <switch>.log
        # Every switch of a fabric runs in the root namespace: each its own Thrift port (the default
        # 9090 would collide; simple_switch_CLI uses it for queue settings).  No --notifications-addr:
        # simple_switch_grpc captures notifications for P4Runtime and binds no nanomsg socket (given
        # one, it only logs a warning; targets/simple_switch_grpc/switch_runner.cpp).
        if runtime_port:
            argv += ["--thrift-port", str(runtime_port)]
        # bmv2 loads no P4 source: it starts empty and the controller pushes build/'s JSON; after
        # "--" the target's own options (priority queues are one: before "--" bmv2 exits on it)
        argv += ["--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        if cpu_port is not None:  # None: no CPU port (a program without packet I/O)
            argv += ["--cpu-port", str(cpu_port)]
        return argv + ["--priority-queues", str(PRIORITY_QUEUES)]

    def tools_missing(self) -> str | None:
        if shutil.which("simple_switch_CLI") is None:
            return "bmv2: simple_switch_CLI is not on PATH (queue rate and depth are set through it)"
        return None

    def build_missing(self, build_dir: Path = DEFAULT_BUILD) -> str | None:
        """None if a pipeline can be had: ``build_dir`` holds p4c's outputs, or p4c is here to make them."""
        if (build_dir / self.device_config_name).exists() or self.compiler_missing() is None:
            return None
        return f"bmv2: {build_dir / self.device_config_name} missing (run `make build` with p4c)"

    def pipeline(self, program=None, build_dir: Path = DEFAULT_BUILD) -> PipelineConfig:
        """p4c's outputs for ``program`` (default: ``p4src/mrc_switch.p4`` in ``build_dir``, as
        ``make build`` writes them; another program in ``build/<its stem>/``).  With p4c on PATH they
        are compiled first when missing or older than a ``.p4`` file beside the program (and under its
        folder), as ``make build`` would; without p4c the outputs there are used as they are."""
        src = Path(program).resolve() if program else DEFAULT_PROGRAM
        if src != DEFAULT_PROGRAM and build_dir == DEFAULT_BUILD:
            build_dir = DEFAULT_BUILD.parent / src.stem
        try:
            _ensure_built(self, src, build_dir)
        except OSError as e:  # build/ not writable, a full disk: said as the controller says errors
            raise SessionError(f"bmv2: cannot compile {src} into {build_dir}: {e}") from None
        if not (build_dir / self.device_config_name).exists():
            how = "run `make build` with p4c" if src == DEFAULT_PROGRAM else f"put {P4C} on PATH to compile {src}"
            raise SessionError(f"bmv2: {build_dir / self.device_config_name} missing ({how})")
        return PipelineConfig.from_files(build_dir / "p4info.txtpb", build_dir / self.device_config_name)

    def compile_argv(self, source: Path, out_dir: Path) -> list[str]:
        return [P4C, "--arch", "v1model", "-o", str(out_dir / self.device_config_name),
                "--p4runtime-files", str(out_dir / "p4info.txtpb"), str(source)]

    def runtime_address(self, runtime_port: int) -> str:
        return str(runtime_port)  # simple_switch_CLI --thrift-port

    def runtime_command(self, address: str, line: str) -> str:
        return cli(int(address), [line])

    def shape(self, runtime_port, port, *, delay_us=None, rate_pps=None, queue_depth=None, link_rate_pps=None,
              control_queue_depth=None) -> None:
        cli(runtime_port, self._shape_commands(port, delay_us, rate_pps, queue_depth, link_rate_pps,
                                               control_queue_depth))

    def shape_ports(self, runtime_port: int, ports: dict[int, dict]) -> None:
        # one simple_switch_CLI run for every port (each run first downloads the switch's JSON)
        cmds = [c for port, kw in sorted(ports.items()) for c in self._shape_commands(port, **kw)]
        cli(runtime_port, cmds)

    @staticmethod
    def _shape_commands(port, delay_us=None, rate_pps=None, queue_depth=None, link_rate_pps=None,
                        control_queue_depth=None) -> list[str]:
        if delay_us is not None:
            raise TargetError("bmv2 has no link-delay model (use a netem qdisc on the port's veth)")
        cmds = []
        if rate_pps is not None:  # bmv2 has per-queue frame rates only (shares_link_rate)
            cmds.append(f"set_queue_rate {rate_pps} {port}")
        if link_rate_pps is not None:
            cmds.append(f"set_queue_rate {link_rate_pps} {port}")
            # ... except the top queue: its frames (trimmed headers, ACKs, probes, CNPs) are ~100 bytes,
            # which a link of that many full frames a second carries ~80 times as often, and bmv2 can
            # charge a queue only per frame.  At the data's frame rate it tail-dropped ACKs and probes
            # (988 frames in a demo run, measured on softswitch with this model), and those losses
            # retired healthy EVs and stalled flows for up to 0.9 s; unlimited (0, bmv2's "no rate
            # limit") it dropped none (docs/demo.md, "The link model").  Its depth still bounds it.
            cmds.append(f"set_queue_rate 0 {port} {PRIORITY_TRIMMED}")
        if queue_depth is not None:
            cmds.append(f"set_queue_depth {queue_depth} {port}")
        if control_queue_depth is not None:
            cmds.append(f"set_queue_depth {control_queue_depth} {port} {PRIORITY_TRIMMED}")
        return cmds


def _stale(outputs: list[Path], src: Path) -> bool:
    """An output missing, or older than the program or a ``.p4`` file beside it or under its include/."""
    try:
        built = min(o.stat().st_mtime for o in outputs)
    except FileNotFoundError:
        return True
    # the program, the .p4 files beside it and under its include/ (the Makefile's P4_SRCS for
    # p4src/), not a walk of whatever tree the program sits in
    sources = [src, *src.parent.glob("*.p4"), *(src.parent / "include").rglob("*.p4")]
    return any(f.stat().st_mtime > built for f in sources if f.exists())


def _ensure_built(target: Bmv2, src: Path, out_dir: Path) -> None:
    """Compile ``src`` into ``out_dir`` with p4c when its outputs are missing or stale and p4c is here
    (a file lock keeps two processes -- the fabric and its controller -- from compiling at once; the
    outputs are written aside and renamed into place, so a reader never sees half a file)."""
    import fcntl
    import tempfile

    outputs = [out_dir / target.device_config_name, out_dir / "p4info.txtpb"]
    if not _stale(outputs, src) or target.compiler_missing() is not None:
        return
    if not src.exists():
        raise SessionError(f"bmv2: no P4 program {src}")
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".compile.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # bounded by the other holder's compile (p4c's own run)
        if not _stale(outputs, src):
            return
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".p4c-") as tmp:
            argv = target.compile_argv(src, Path(tmp))
            try:
                res = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                raise SessionError(f"bmv2: {P4C} took more than 600 s on {src}") from None
            if res.returncode != 0:
                raise SessionError(f"bmv2: {P4C} failed on {src}:\n{(res.stderr or res.stdout).strip()[-2000:]}")
            for o in outputs:
                os.replace(Path(tmp) / o.name, o)
        (out_dir / "COMPILER").write_text("p4c\n")


def _system_python_env() -> dict[str, str]:
    """The environment for bmv2's Python tools: without this project's virtualenv on PATH.  The CLI
    starts with ``#!/usr/bin/env python3`` and imports ``thrift`` and bmv2's runtime modules, which
    bmv2's install puts in the system Python, not in the virtualenv (docker/Dockerfile puts the
    virtualenv first on PATH)."""
    env = dict(os.environ)
    if sys.prefix != sys.base_prefix:  # running in a virtualenv
        venv_bin = os.path.realpath(os.path.join(sys.prefix, "bin"))
        env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                      if d and os.path.realpath(d) != venv_bin)
        env.pop("VIRTUAL_ENV", None)
    return env


def cli(thrift_port: int, commands: list[str], timeout_s: float = 20.0) -> str:
    """Run ``simple_switch_CLI`` commands against a bmv2 switch's Thrift port; raise on failure."""
    if not commands:
        return ""
    exe = shutil.which("simple_switch_CLI")
    if exe is None:
        raise TargetError("bmv2: simple_switch_CLI is not on PATH (needed for queue settings)")
    try:
        res = subprocess.run([exe, "--thrift-port", str(thrift_port)], check=False,
                             input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=timeout_s,
                             env=_system_python_env())
    except subprocess.TimeoutExpired:
        raise TargetError(f"simple_switch_CLI on thrift port {thrift_port} did not finish in {timeout_s:g} s") from None
    # the CLI exits 0 after a command it refused: it prints "Error: ..." (bad arguments, a failed
    # Thrift call), "Invalid ..." (runtime_CLI's handle_bad_input) or cmd's "*** Unknown syntax: ..."
    bad = [ln.strip() for ln in res.stdout.splitlines() if _cli_refused(ln)]
    if res.returncode != 0 or bad:
        said = "; ".join(bad) if bad else (res.stderr or res.stdout).strip()[-400:]
        raise TargetError(f"simple_switch_CLI on thrift port {thrift_port} failed: {said[:400]}")
    return res.stdout


def _cli_refused(line: str) -> bool:
    """A line of ``simple_switch_CLI`` output that reports a refused command."""
    text = line.strip()
    while text.startswith("RuntimeCmd:"):  # the prompt, echoed before each answer
        text = text[len("RuntimeCmd:"):].strip()
    return text.startswith(("Error", "Invalid ", "*** Unknown syntax")) or "Error:" in text
