"""``mrc-fabric``: bring an emulated fabric up or down, show it, inject faults."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

from controller.topology import TopologyError, load_topology

from .fabric import Fabric, FabricError, down_prefix
from .naming import NamingError
from .netbuild import NetBuildError
from .scenarios.runner import RunError
from .scenarios.spec import ScenarioError
from .state import DEFAULT_STATE_DIR
from .switches import TARGETS, SwitchError

ERRORS = (FabricError, NamingError, NetBuildError, SwitchError, TopologyError, ScenarioError, RunError)


def _fabric(args: argparse.Namespace) -> Fabric:
    return Fabric.attach(args.prefix, args.state_dir)


def cmd_up(args: argparse.Namespace) -> int:
    target = None if args.target == "none" else args.target
    topo = load_topology(args.topology)
    fab = Fabric(topo, prefix=args.prefix, target=target, state_dir=args.state_dir,
                 grpc_base_port=args.grpc_base_port, ready_timeout_s=args.ready_timeout,
                 topology_path=str(Path(args.topology).resolve()))
    if not args.wait:
        fab.up()
        fab.detach()
        print(f"fabric {args.prefix} up: {len(topo.hosts)} host namespace(s), {len(topo.links)} link(s), "
              f"{len(fab.state.procs)} switch process(es); `mrc-fabric down --prefix {args.prefix}` removes it")
        return 0
    stop = threading.Event()
    with fab:
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        print(f"fabric {args.prefix} up; Ctrl-C tears it down", flush=True)
        stop.wait()
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    done = down_prefix(args.prefix, args.state_dir)
    print("\n".join(done) if done else f"nothing recorded for prefix {args.prefix}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    st = _fabric(args).status()
    if args.json:
        print(json.dumps(st, indent=1))
        return 0
    print(f"fabric {st['prefix']}  target {st['target'] or 'none'}  topology {st['topology']}")
    for name, p in st["switches"].items():
        state = "running" if p["running"] else "STOPPED"
        kd = st.get("kernel_rx_drops", {}).get(name)
        print(f"  switch {name:8} {state:8} pid {p['pid']:<7} {p['grpc']} "
              f"{'answers' if p['grpc_answers'] else 'NOT ANSWERING'}"
              + (f"  kernel rx drops {kd}" if kd is not None else ""))
    for name, lk in st["links"].items():
        print(f"  link {name:24} {'up' if lk['up'] else 'DOWN':5} {' <-> '.join(lk['ends'])}")
    missing = [ns for ns, ok in st["namespaces"].items() if not ok]
    if missing:
        print(f"  missing namespaces: {', '.join(missing)}")
    return 0


def cmd_fault(args: argparse.Namespace) -> int:
    fab = _fabric(args)
    kind = args.fault
    if kind in ("link-down", "link-up"):
        link = fab.set_link(args.a, args.b, kind == "link-up")
        print(f"link {link.name} {kind.split('-')[1]}")
    elif kind == "switch-stop":
        fab.switch_stop(args.switch)
        print(f"switch {args.switch} stopped")
    elif kind == "switch-start":
        fab.switch_start(args.switch)
        print(f"switch {args.switch} started (pid {fab.state.procs[args.switch].pid})")
    elif kind in ("port-down", "port-up"):
        fab.port_admin(args.switch, args.port, kind == "port-up")
    elif kind == "shape":
        fab.shape(args.switch, args.port, delay_us=args.delay_us, rate_pps=args.rate_pps,
                  queue_depth=args.queue_depth)
        print(f"switch {args.switch} port {args.port} shaped")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(args.out, target=args.target, prefix=args.prefix, grpc_base_port=args.grpc_base_port,
                    deadline_s=args.deadline)


def cmd_scenario_run(args: argparse.Namespace) -> int:
    from .scenarios import load_scenario, run_scenario, summary_lines, timeline_lines

    sc = load_scenario(args.file)
    res = run_scenario(sc, prefix=args.prefix, grpc_base_port=args.grpc_base_port, workdir=args.out,
                       target=args.target)
    if args.json:
        print(json.dumps({"metrics": res["metrics"], "comparison": res.get("comparison")}, indent=1, default=str))
        return 0
    for m in res["metrics"].values():
        print("\n".join(timeline_lines(m) + summary_lines(m)))
    if "comparison" in res:
        print(json.dumps(res["comparison"], indent=1))
    ok = all(m["completed"] and not m["data_loss"] for k, m in res["metrics"].items() if k == "mrc")
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; each subcommand carries its handler in ``func``."""
    ap = argparse.ArgumentParser(prog="mrc-fabric", description=" ".join(__doc__.split("\n\n")[0].split()))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--prefix", default="mrc", help="name prefix of this fabric (default mrc)")
    common.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help=f"where run state and switch logs live (default {DEFAULT_STATE_DIR})")
    sub = ap.add_subparsers(dest="cmd", required=True)

    up = sub.add_parser("up", parents=[common], help="build the fabric and start its switches")
    up.add_argument("--topology", "-t", required=True)
    up.add_argument("--target", choices=(*TARGETS, "none"), default=os.environ.get("TARGET", "softswitch"),
                    help="switch target (default $TARGET or softswitch); none = network only")
    up.add_argument("--grpc-base-port", type=int, help="override the topology's gRPC ports: base + index")
    up.add_argument("--ready-timeout", type=float, default=60.0, help="seconds to wait for every gRPC port")
    up.add_argument("--wait", action="store_true", help="stay in the foreground; tear down on Ctrl-C")
    up.set_defaults(func=cmd_up)

    down = sub.add_parser("down", parents=[common], help="remove everything a fabric run recorded")
    down.set_defaults(func=cmd_down)

    st = sub.add_parser("status", parents=[common], help="switch processes, links, namespaces")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)

    fault = sub.add_parser("fault", help="inject a fault").add_subparsers(dest="fault", required=True)
    for kind in ("link-down", "link-up"):
        f = fault.add_parser(kind, parents=[common], help="both veth ends of a link down/up")
        f.add_argument("a", help="node or node:port")
        f.add_argument("b", help="node or node:port")
    for kind in ("switch-stop", "switch-start"):
        f = fault.add_parser(kind, parents=[common], help="kill / restart a switch process")
        f.add_argument("switch")
    for kind in ("port-down", "port-up"):
        f = fault.add_parser(kind, parents=[common], help="port admin state (through the controller)")
        f.add_argument("switch")
        f.add_argument("port", type=int)
    f = fault.add_parser("shape", parents=[common], help="softswitch port delay/rate/queue depth")
    f.add_argument("switch")
    f.add_argument("port", type=int)
    f.add_argument("--delay-us", type=int)
    f.add_argument("--rate-pps", type=int)
    f.add_argument("--queue-depth", type=int)
    for p in fault.choices.values():
        p.set_defaults(func=cmd_fault)
    # `mrc-fabric demo` (issue 6: traffic, failures, timeline) registers its subparser here.
    demo = sub.add_parser("demo", help="MRC vs the RC baseline through the small fabric while a spine link "
                          "and then a spine fail (timeline, summary, plot)")
    demo.add_argument("--target", choices=TARGETS, default=os.environ.get("TARGET", "softswitch"))
    demo.add_argument("--out", type=Path, default=Path("demo-out"), help="result.json, summary.txt, goodput.png")
    demo.add_argument("--prefix", default="demo", help="namespace prefix of the demo fabric (default demo)")
    demo.add_argument("--grpc-base-port", type=int, default=27300)
    demo.add_argument("--deadline", type=float, default=20.0, help="seconds each run may take (RC is cut off)")
    demo.set_defaults(func=cmd_demo)
    scen = sub.add_parser("scenario", help="scenarios as code").add_subparsers(dest="scenario", required=True)
    srun = scen.add_parser("run", help="run a scenario YAML file (every mode it lists) and print the results")
    srun.add_argument("file", type=Path)
    srun.add_argument("--target", choices=TARGETS, default=os.environ.get("TARGET", "softswitch"))
    srun.add_argument("--out", type=Path, default=Path("scenario-out"))
    srun.add_argument("--prefix", default="scn")
    srun.add_argument("--grpc-base-port", type=int, default=27400)
    srun.add_argument("--json", action="store_true", help="print the metrics as JSON")
    srun.set_defaults(func=cmd_scenario_run)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-fabric``; errors exit 2 with a message naming the element."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ERRORS as e:
        print(f"mrc-fabric: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
