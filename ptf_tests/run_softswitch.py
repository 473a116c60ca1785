#!/usr/bin/env python3
"""Run the softswitch acceptance PTF suite (ptf_tests/softswitch): compile its P4 programs, create
veths (prefix w3c), start one switch with no program, run ptf, tear everything down (also on failure).

    ptf_tests/run_softswitch.py [--target TARGET] [--test GROUP_OR_TEST ...] [--log-dir DIR]

Switch ports 1-4 face PTF ports 1-4; the CPU port is 255.  Each test class pushes its program
over P4Runtime (SetForwardingPipelineConfig), as a controller would.  With ``--target bmv2`` the
programs are compiled with ``p4c-bm2-ss`` and run on ``simple_switch_grpc``.  Needs root.
Exit code: ptf's, or 2 when something needed is missing (the message names it).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from run import Link, _stop, create_link, delete_link, free_port, wait_grpc

from controller.gen_p4contract import read_constants
from mrc_fabric.targets import TARGETS, Target, get_target, selected_target

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "ptf_tests" / "softswitch"
PREFIX = "w3c"
PORTS = (1, 2, 3, 4)
CPU_PORT = read_constants([SUITE / "p4" / "cpu.p4"])["CPU_PORT"]  # the suite's own program says which port


def missing_tools(target: Target, build: Path) -> str | None:
    """Why the target cannot run the suite here (its switch, its run-time tools, the compiler it
    names), or None."""
    return target.missing() or target.tools_missing() or target.compiler_missing()


def compile_programs(target: Target, build: Path) -> None:
    """Compile every program of the suite into ``build/<name>/`` (P4Info + device config)."""
    for src in sorted((SUITE / "p4").glob("*.p4")):
        if src.name == "common.p4":
            continue
        out = build / src.stem
        out.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(target.compile_argv(src, out), capture_output=True, text=True, cwd=ROOT, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"compiling {src.name} failed:\n{res.stdout}{res.stderr}")


def switch_command(target: Target, links: dict[int, Link], grpc_port: int, runtime_port: int) -> list[str]:
    """The switch, started empty (each test class pushes its program), from the target plugin."""
    return target.switch_argv(1, {p: lk.switch_if for p, lk in links.items()}, grpc_port,
                              runtime_port=runtime_port, cpu_port=CPU_PORT)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=TARGETS, default=selected_target())
    ap.add_argument("--test", action="append", default=[], help="ptf test spec or group (repeatable)")
    ap.add_argument("--log-dir", default=None, help="keep the build, switch and ptf logs here")
    args = ap.parse_args(argv)

    if os.geteuid() != 0:
        print("run_softswitch.py: needs root (veth interfaces, raw sockets)", file=sys.stderr)
        return 2
    target = get_target(args.target)
    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="w3cptf-"))
    build = log_dir / "build"
    missing = missing_tools(target, build)
    if missing:
        print(f"run_softswitch.py: {missing}", file=sys.stderr)
        return 2

    compile_programs(target, build)
    links = {p: Link(f"{PREFIX}s{p}", f"{PREFIX}t{p}") for p in PORTS}
    grpc_port, runtime_port = free_port(), free_port()
    grpc_addr = f"127.0.0.1:{grpc_port}"
    runtime = target.runtime_address(runtime_port)

    with ExitStack() as stack:
        for link in links.values():
            stack.callback(delete_link, link)
            create_link(link)
        log = stack.enter_context(open(log_dir / "switch.log", "w"))
        proc = subprocess.Popen(switch_command(target, links, grpc_port, runtime_port),
                                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        stack.callback(_stop, proc)
        wait_grpc(grpc_addr, proc)

        params = {"grpcaddr": grpc_addr, "target": args.target, "build_dir": str(build),
                  "runtime": runtime, "cpu_port": CPU_PORT, "device_config_name": target.device_config_name,
                  "can_write_registers": int(target.can_write_registers)}
        ptf_bin = str(Path(sys.executable).with_name("ptf"))
        cmd = [ptf_bin, "--test-dir", str(SUITE),
               "--pypath", str(ROOT / "ptf_tests"), "--pypath", str(SUITE), "--pypath", str(ROOT),
               "--log-file", str(log_dir / "ptf.log"),
               "--test-params", ";".join(f"{k}={v!r}" for k, v in params.items())]
        for port, link in links.items():
            cmd += ["-i", f"{port}@{link.peer}"]
        cmd += args.test
        print(f"run_softswitch.py: target {args.target}, logs in {log_dir}", flush=True)
        rc = subprocess.run(cmd, check=False, cwd=ROOT).returncode
        if proc.poll() is not None:
            print(f"run_softswitch.py: the switch exited during the run (code {proc.returncode})",
                  file=sys.stderr)
            return rc or 1
        return rc
    return 1


if __name__ == "__main__":
    sys.exit(main())
