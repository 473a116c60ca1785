#!/usr/bin/env python3
"""Run the MRC switch PTF tests: create veths (prefix h8), start the target switch(es), run ptf,
tear everything down (also on failure).

    ptf_tests/run.py [--target TARGET] [--test GROUP_OR_TEST ...] [--log-dir DIR]

Switch 1 ports 1-4 face PTF ports 1-4; switch 1 port 5 is wired to switch 2 port 1 (the
telemetry chain) and switch 2 port 2 faces PTF port 12.  Needs root (veth, AF_PACKET).
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import text_format

from controller.session import SessionError
from mrc_fabric.netbuild import disable_offloads
from mrc_fabric.targets import DEFAULT_PROGRAM, TARGETS, Target, get_target, push_pipeline, selected_target

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = DEFAULT_PROGRAM
PREFIX = "h8"
SLOW_PORT, SLOW_RATE_PPS = 4, 200


@dataclass
class Link:
    """A veth pair: ``switch_if`` is bound to a switch port, ``peer`` to PTF or another switch."""

    switch_if: str
    peer: str


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def create_link(link: Link) -> None:
    sh("ip", "link", "add", link.switch_if, "type", "veth", "peer", "name", link.peer)
    for ifname in (link.switch_if, link.peer):
        # no IPv6 on test links: router solicitations would be stray packets in every test
        sh("sysctl", "-qw", f"net.ipv6.conf.{ifname}.disable_ipv6=1")
        # a switch port's capture ring holds 1,310 frames instead of 32 (bmv2's libpcap sizes its
        # slots for 64 KiB frames while segmentation offloads are on: netbuild.disable_offloads)
        disable_offloads(ifname)
        sh("ip", "link", "set", ifname, "up")


def delete_link(link: Link) -> None:
    subprocess.run(["ip", "link", "del", link.switch_if], check=False, capture_output=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_grpc(addr: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Poll until the switch's gRPC port answers; fail early if the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"switch exited with code {proc.returncode} before serving {addr}")
        channel = grpc.insecure_channel(addr)
        try:
            grpc.channel_ready_future(channel).result(timeout=1.0)
            return
        except grpc.FutureTimeoutError:
            continue
        finally:
            channel.close()
    raise RuntimeError(f"switch did not serve gRPC on {addr} within {timeout}s")


def switch_command(target: Target, ports: dict[int, str], grpc_port: int, slow: bool, program: str,
                   device_id: int = 1, runtime_port: int = 0) -> list[str]:
    """One switch of the suite, from the target plugin: the slow port's rate on the command line when
    the target takes shaping there (else ``main`` sets it over the runtime port once it runs); the
    program loaded at start when the target can (else the tests push the pipeline)."""
    return target.switch_argv(device_id, ports, grpc_port, runtime_port=runtime_port,
                              queue_rate={SLOW_PORT: SLOW_RATE_PPS} if slow and target.shapes_at_start else None,
                              program=program if target.loads_source_at_start else None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=TARGETS, default=selected_target())
    ap.add_argument("--test", action="append", default=[], help="ptf test spec or group (repeatable)")
    ap.add_argument("--log-dir", default=None, help="keep switch and ptf logs here")
    ap.add_argument("--program", default=str(PROGRAM), help="P4 source a target that compiles gets (default: ours)")
    args = ap.parse_args(argv)

    if os.geteuid() != 0:
        print("run.py: needs root (veth interfaces, raw sockets)", file=sys.stderr)
        return 2
    target = get_target(args.target)
    why = target.missing()
    try:
        pipeline = None if why else target.pipeline(args.program)
    except SessionError as e:
        why = str(e)
    if why or pipeline is None:
        print(f"run.py: {why}", file=sys.stderr)
        return 2

    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix="h8ptf-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    s1_links = {p: Link(f"{PREFIX}s1p{p}", f"{PREFIX}t1p{p}") for p in range(1, 5)}
    chain = Link(f"{PREFIX}s1p5", f"{PREFIX}s2p1")
    s2_out = Link(f"{PREFIX}s2p2", f"{PREFIX}t2p2")
    links = [*s1_links.values(), chain, s2_out]
    addr1, addr2 = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"

    with ExitStack() as stack:
        for link in links:
            stack.callback(delete_link, link)
            create_link(link)
        procs = []
        runtime1 = free_port()
        for name, ports, addr in (
                ("s1", {**{p: lk.switch_if for p, lk in s1_links.items()}, 5: chain.switch_if}, addr1),
                ("s2", {1: chain.peer, 2: s2_out.switch_if}, addr2)):
            log = open(log_dir / f"{name}.log", "w")  # noqa: SIM115 -- closed by the stack
            stack.callback(log.close)
            cmd = switch_command(target, ports, int(addr.rsplit(":", 1)[1]), slow=(name == "s1"),
                                 program=args.program, runtime_port=runtime1 if name == "s1" else free_port())
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
            stack.callback(_stop, proc)
            procs.append((proc, addr))
        for proc, addr in procs:
            wait_grpc(addr, proc)
        if not target.shapes_at_start:
            if target.shapes_need_pipeline:  # bmv2: its CLI needs a loaded pipeline (the tests push it again)
                push_pipeline("s1", addr1, 1, pipeline)
            target.shape(runtime1, SLOW_PORT, rate_pps=SLOW_RATE_PPS)

        params = {"grpcaddr": addr1, "grpcaddr2": addr2, "target": args.target, "ports": "1,2,3,4",
                  "chain_s1_port": 5, "chain_s2_in_port": 1, "chain_s2_out_port": 2, "chain_ptf_port": 12}
        # the P4Info of the pipeline the target runs; its device config too when the tests must push it
        (log_dir / "p4info.txtpb").write_text(text_format.MessageToString(pipeline.p4info))
        params["p4info"] = str(log_dir / "p4info.txtpb")
        params["slow_port"] = SLOW_PORT
        params["can_write_registers"] = int(target.can_write_registers)
        if not target.loads_source_at_start:
            (log_dir / target.device_config_name).write_bytes(pipeline.device_config)
            params["config"] = str(log_dir / target.device_config_name)
        ptf_bin = str(Path(sys.executable).with_name("ptf"))
        cmd = [ptf_bin, "--test-dir", str(ROOT / "ptf_tests" / "mrc_switch"),
               "--pypath", str(ROOT / "ptf_tests"), "--pypath", str(ROOT),
               "--log-file", str(log_dir / "ptf.log"),
               "--test-params", ";".join(f"{k}={v!r}" for k, v in params.items())]
        for port, link in s1_links.items():
            cmd += ["-i", f"{port}@{link.peer}"]
        cmd += ["-i", f"12@{s2_out.peer}", *args.test]
        print(f"run.py: target {args.target}, logs in {log_dir}", flush=True)
        return subprocess.run(cmd, check=False, cwd=ROOT).returncode
    return 1


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
