#!/usr/bin/env python3
"""Run the fabric PTF suite: bring a topology up, converge it with the controller, run PTF with every
host NIC port as a device port, tear everything down (also on failure or SIGTERM).

    ptf_tests/run_fabric.py [--target softswitch|bmv2] [--topology examples/small.yaml] [--test GROUP ...]
                            [--prefix w3b] [--grpc-base-port N] [--log-dir DIR]

Steps: 1) compile/load the pipeline once (softswitch: its compiler; bmv2: build/mrc_switch/ from p4c)
and write it to the log dir; 2) ``fabric.Fabric`` builds namespaces, veths and one switch process per
switch; 3) ``mrc-controller run --once`` pushes the pipeline and converges every switch; the EV plan
files come from ``mrc-controller ev gen``; 4) PTF runs in the root namespace with the ``netns_eth``
platform (``ptf_tests/platforms``), which opens each host NIC socket inside its host's namespace:
``-i <host#>-<plane>@<prefix>-<host>/nic<plane>``, plus read-only taps on leaf uplinks
(``-i <1000+leaf device id>-<port>@<leaf port veth>``).  Needs root.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "ptf_tests")]

from base.fabric_ports import fabric_ports

from controller.plan import STEV_ECMP
from controller.session import SessionError
from controller.sidplan import build_sid_plan
from controller.topology import TopologyError, load_topology
from mrc_fabric import Fabric
from mrc_fabric.fabric import FabricError
from mrc_fabric.naming import NamingError, check_prefix
from mrc_fabric.switches import TARGETS, target_available
from mrc_fabric.targets import load_pipeline, selected_target

DEFAULT_TOPOLOGY = ROOT / "examples" / "small.yaml"
DEFAULT_PREFIX = "w3b"
PORT_SEARCH = range(28000, 31000, 97)  # below the kernel's ephemeral range (32768+), +1000 too


def free_port_block(count: int, offset: int) -> int:
    """A base port such that base..base+count-1 and the same + ``offset`` are all free on 127.0.0.1."""
    for base in PORT_SEARCH:
        socks = []
        try:
            for p in [*range(base, base + count), *range(base + offset, base + offset + count)]:
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free block of TCP ports on 127.0.0.1")


def ptf_bin() -> str:
    """PTF's script next to this interpreter (a venv), else the one on PATH (a system install)."""
    local = Path(sys.executable).with_name("ptf")
    if local.exists():
        return str(local)
    found = shutil.which("ptf")
    if found is None:
        raise RuntimeError("the ptf script is neither next to this Python nor on PATH (pip install ptf)")
    return found


def run(cmd: list[str], log: Path, what: str, timeout: float) -> None:
    """Run a step, its output to ``log``; fail with the log's tail."""
    with open(log, "w") as f:
        res = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, check=False, timeout=timeout)
    if res.returncode != 0:
        tail = log.read_text()[-3000:]
        raise RuntimeError(f"{what} failed (exit {res.returncode}); {log}:\n{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=TARGETS, default=selected_target())
    ap.add_argument("--topology", "-t", default=str(DEFAULT_TOPOLOGY))
    ap.add_argument("--test", action="append", default=[], help="ptf test name or group (repeatable)")
    ap.add_argument("--prefix", default=DEFAULT_PREFIX, help="fabric run prefix (namespaces, interfaces)")
    ap.add_argument("--grpc-base-port", type=int, default=0, help="default: a free block")
    ap.add_argument("--log-dir", help="switch, controller and ptf logs (default: a temp dir)")
    args = ap.parse_args(argv)

    if os.geteuid() != 0:
        print("run_fabric.py: needs root (namespaces, veths, raw sockets)", file=sys.stderr)
        return 2
    why = target_available(args.target)
    if why:
        print(f"run_fabric.py: target {args.target}: {why}", file=sys.stderr)
        return 2
    try:
        check_prefix(args.prefix)
        topo_path = str(Path(args.topology).resolve())
        topo = load_topology(topo_path)
        pipeline = load_pipeline(args.target)
    except (NamingError, TopologyError, SessionError, OSError) as e:
        print(f"run_fabric.py: {e}", file=sys.stderr)
        return 2

    log_dir = Path(args.log_dir or tempfile.mkdtemp(prefix=f"{args.prefix}-ptf-fabric-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    p4info_path, config_path = log_dir / "p4info.txtpb", log_dir / "device_config.bin"
    p4info_path.write_text(str(pipeline.p4info))
    config_path.write_bytes(pipeline.device_config)
    evplan_dir = log_dir / "evplans"
    base = args.grpc_base_port or free_port_block(len(topo.switches), 1000)
    py = sys.executable
    t0 = time.monotonic()
    print(f"run_fabric.py: target {args.target}, topology {topo_path}, prefix {args.prefix}, "
          f"gRPC from {base}, logs in {log_dir}", flush=True)
    try:
        with Fabric(topo, prefix=args.prefix, target=args.target, grpc_base_port=base,
                    state_dir=log_dir / "state", topology_path=topo_path) as fab:
            print(f"run_fabric.py: fabric up ({time.monotonic() - t0:.1f}s)", flush=True)
            run([py, "-m", "controller", "run", "--once", "--no-wiring", "-t", topo_path, "--target", args.target,
                 "--p4info", str(p4info_path), "--device-config", str(config_path),
                 "--grpc-base-port", str(base)], log_dir / "controller.log", "mrc-controller run --once", 300)
            run([py, "-m", "controller", "ev", "gen", "-t", topo_path, "-o", str(evplan_dir)],
                log_dir / "evgen.log", "mrc-controller ev gen", 60)
            print(f"run_fabric.py: converged ({time.monotonic() - t0:.1f}s)", flush=True)
            params = {"topology": topo_path, "prefix": args.prefix, "grpc_base_port": base,
                      "target": args.target, "stev_mode": STEV_ECMP, "p4info": str(p4info_path), "device_config": str(config_path),
                      "evplan_dir": str(evplan_dir), "state_dir": str(fab.state_dir)}
            cmd = [ptf_bin(), "--test-dir", str(ROOT / "ptf_tests" / "fabric"),
                   "--pypath", str(ROOT / "ptf_tests"), "--pypath", str(ROOT),
                   "--platform-dir", str(ROOT / "ptf_tests" / "platforms"), "--platform", "netns_eth",
                   "--log-file", str(log_dir / "ptf.log"),
                   "--test-params", ";".join(f"{k}={v!r}" for k, v in params.items())]
            for port in fabric_ports(topo, build_sid_plan(topo), args.prefix):
                cmd += ["-i", port.ptf_arg()]
            rc = subprocess.run([*cmd, *args.test], check=False, cwd=ROOT).returncode
    except (FabricError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"run_fabric.py: {e}", file=sys.stderr)
        return 1
    print(f"run_fabric.py: done in {time.monotonic() - t0:.1f}s (exit {rc}), logs in {log_dir}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
