"""``mrc-fabric``: bring an emulated fabric up or down, show it, inject faults.

The commands; the entry point, ``mrc_fabric.cli.main``, imports this module inside its Ctrl-C handling.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from controller.cli_commands import check_group_size, max_group_arg
from controller.topology import TopologyError, load_topology

from .fabric import Fabric, FabricError, down_prefix
from .faults import REGISTRY, FaultError
from .naming import NamingError
from .netbuild import NetBuildError
from .scenarios.runner import RunError
from .scenarios.spec import DELAY_AT, Scenario, ScenarioError
from .state import DEFAULT_STATE_DIR, StateError
from .switches import TARGETS, SwitchError
from .targets import selected_target

ERRORS = (FabricError, FaultError, NamingError, NetBuildError, SwitchError, TopologyError, ScenarioError, RunError,
          StateError)


def _fabric(args: argparse.Namespace) -> Fabric:
    return Fabric.attach(args.prefix, args.state_dir)


def cmd_up(args: argparse.Namespace) -> int:
    target = None if args.target == "none" else args.target
    topo = load_topology(args.topology)
    if target is not None:  # converge refused a plane of 65 spines only once the whole fabric was up
        check_group_size(topo, args.max_group_size)
    fab = Fabric(topo, prefix=args.prefix, target=target, state_dir=args.state_dir,
                 grpc_base_port=args.grpc_base_port, ready_timeout_s=args.ready_timeout,
                 topology_path=str(Path(args.topology).resolve()), restart=not args.no_restart)
    if not args.wait:
        # a SIGTERM during bring-up (`timeout`, a CI job cancelled) undoes it, as Ctrl-C does:
        # Fabric.up tears down on any exception, and the handler raises SystemExit(143)
        old = signal.signal(signal.SIGTERM, fab._on_sigterm)
        try:
            fab.up()
        finally:
            signal.signal(signal.SIGTERM, old)
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
    from .naming import check_prefix
    from .state import FabricState

    if not FabricState.path(args.prefix, args.state_dir).exists():
        # a prefix `up` refuses ('Lab', 'lab ') cannot have a fabric: it said "nothing recorded", exit 0,
        # and a cleanup script went on with the real fabric still up.  A state file, whatever its name, is
        # always torn down.
        check_prefix(args.prefix)
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
        sup = p.get("supervisor") or {}
        extra = f"  restarts {sup.get('restarts', 0)}" if sup else ""
        if sup.get("last_exit"):
            extra += f", last exit: {sup['last_exit']}"
        kd = st.get("kernel_rx_drops", {}).get(name)
        if kd is not None:
            extra += f"  kernel rx drops {kd}"
        qd = st.get("queue_tail_drops", {}).get(name)
        if qd is not None:
            extra += f"  queue tail drops {qd}"
        td = st.get("tx_drops", {}).get(name)
        if td is not None:  # frames its ports could not send: a link down, a transmit ring full
            extra += f"  tx drops {td}"
        re_ = st.get("rx_errors", {}).get(name)
        if re_:  # frames cut by a receive ring (too large for its slot): shown only when there are any
            extra += f"  rx errors {re_}"
        print(f"  switch {name:8} {state:8} pid {p['pid']:<7} {p['grpc']} "
              f"{'answers' if p['grpc_answers'] else 'NOT ANSWERING'}{extra}")
    for name, lk in st["links"].items():
        why = f"  (switch {', '.join(lk['stopped_switches'])} stopped)" if lk.get("stopped_switches") else ""
        print(f"  link {name:24} {'up' if lk['up'] else 'DOWN':5} {' <-> '.join(lk['ends'])}{why}")
    missing = [ns for ns, ok in st["namespaces"].items() if not ok]
    if missing:
        print(f"  missing namespaces: {', '.join(missing)}")
    return 0


def cmd_reshape(args: argparse.Namespace) -> int:
    """Give a running switch its topology's link properties again (the supervisor runs this after it
    restarts a switch of a target that keeps them in process state, e.g. bmv2's queues)."""
    ports = _fabric(args).reshape(args.switch, wait_s=args.wait)
    print(f"switch {args.switch}: " + (f"the topology's link properties applied to port(s) {', '.join(map(str, ports))}"
                                       if ports else "nothing to reapply (no link properties kept in the switch process)"),
          flush=True)
    return 0


def cmd_fault(args: argparse.Namespace) -> int:
    """Apply one fault kind of the registry to a running fabric (``--duration``: undo it after that long)."""
    from .faults import TopologyCheck, check_engine, get
    from .scenarios.runner import NetnsFaults
    from .scenarios.spec import FaultSpec

    kind = get(args.fault)
    elsewhere = _cli_fault_elsewhere(kind, NetnsFaults)
    if elsewhere:  # first: link-loss asked for its a, b and loss, then said it could not run here at all
        raise FaultError(f"fault {kind.cli_name}: {elsewhere}")
    if not 0 <= args.duration <= threading.TIMEOUT_MAX:  # NaN too; inf overflowed the wait after the fault
        raise FaultError(f"fault {kind.cli_name}: --duration must be 0 (keep the fault) or more seconds, "
                         f"got {args.duration:g}")
    f = FaultSpec(at=0.0, kind=kind.name, duration=args.duration,
                  params={p.name: getattr(args, p.name) for p in kind.params if getattr(args, p.name) is not None})
    try:
        kind.validate(f, f"fault {kind.cli_name}")
    except FaultError as e:  # the kind words its options by their scenario-file keys: "delay_us must be ..."
        msg = str(e)
        for p in kind.params:
            if not p.positional:
                msg = re.sub(rf"(?<![\w-]){p.name}(?![\w-])", "--" + p.name.replace("_", "-"), msg)
        raise FaultError(msg) from None
    check_engine(kind, NetnsFaults.fault_primitives, "netns", f"fault {kind.cli_name}")
    fab = _fabric(args)
    try:  # names first, as a scenario file's faults are: the fault and its undo, dry-run on the topology
        kind.apply(TopologyCheck(fab.topo), f, False)
        kind.apply(TopologyCheck(fab.topo), f, True)
    except ValueError as e:  # each primitive worded it its own way: "fault: no host ...", "unknown switch ..."
        raise FaultError(f"fault {kind.cli_name}: {e}") from None
    target = NetnsFaults(fab)
    if args.duration <= 0:
        print(kind.apply(target, f, False), flush=True)
        return 0
    # the fault, its duration, then its undo; Ctrl-C or SIGTERM (`timeout`, a job cancelled) ends the fault
    # early rather than leaving it in force with no one left to undo it.  That covers the apply too: a
    # signal between one link end going down and the other (seen: 1 run in 8 of the SIGINT test, until
    # 2026-12-07) left both down with exit 130 and no undo.  Undoing a fault only half applied is safe.
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        print(kind.apply(target, f, False), flush=True)
        threading.Event().wait(args.duration)
    except KeyboardInterrupt:
        print(f"mrc-fabric fault {kind.cli_name}: interrupted; undoing the fault now", file=sys.stderr, flush=True)
        raise
    finally:
        signal.signal(signal.SIGTERM, old)
        print(kind.apply(target, f, True), flush=True)
    return 0


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _cli_fault_note(kind, engine) -> str:
    """What `mrc-fabric fault` itself cannot do: the kinds stay listed (one registry for the CLI and
    scenario files) and say so in their help, from the primitives the engine declares."""
    if kind.needs - engine.fault_primitives:
        return " (not on the emulated fabric: `mrc-fabric scenario run --engine sim`)"
    if kind.needs & engine.controller_primitives:
        return " (a P4Runtime write: only in `mrc-fabric scenario run`, whose controller makes it)"
    return ""


def _cli_fault_elsewhere(kind, engine) -> str:
    """Why `mrc-fabric fault KIND` can never run ``kind`` and where it does run, or "" when it can."""
    keys = ", ".join(p.name for p in kind.params)
    entry = f"a scenario file's faults: entry (kind: {kind.name}{', ' + keys if keys else ''})"
    if kind.needs - engine.fault_primitives:
        return (f"only the simulated fabric has this fault (the emulated one cannot carry it out); put it in "
                f"{entry} and run `mrc-fabric scenario run --engine sim FILE` (docs/simulation.md)")
    if kind.needs & engine.controller_primitives:
        return ("a P4Runtime write the fabric's controller makes, and `mrc-fabric fault` has none (a second "
                "client would fight the running controller for mastership); put it in "
                f"{entry} for `mrc-fabric scenario run FILE`")
    return ""


def _check_out_dir(out: Path, flag: str = "--out") -> list[Path]:
    """An output directory that cannot be one was a FileExistsError traceback, from the scenario engine
    only once the whole run was over (it writes result.json at the end).  One that cannot be made or
    written (``--out /proc/x``, a read-only place) was a FileNotFoundError / PermissionError traceback
    (until 2026-12-07): it is made here, before anything runs.  Returns the directories it made,
    outermost first (for ``_out_dir`` to take back)."""
    if out.exists() and not out.is_dir():
        raise FabricError(f"{flag} {out}: exists and is not a directory")
    made = []
    d = out.absolute()
    while not d.exists() and d != d.parent:
        made.insert(0, d)
        d = d.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FabricError(f"{flag} {out}: cannot create the directory: {e.strerror or e}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        _remove_empty(made)
        raise FabricError(f"{flag} {out}: the directory is not writable")
    return made


def _remove_empty(made: list[Path]) -> None:
    for d in reversed(made):  # innermost first; one that holds anything stays, with its parents
        try:
            d.rmdir()
        except OSError:
            return


@contextlib.contextmanager
def _out_dir(out: Path, flag: str = "--out") -> Iterator[None]:
    """``_check_out_dir``, and if the command then fails before it wrote anything there (a refused
    prefix or port, a scenario its engine refuses, Ctrl-C during bring-up), the directories it made
    go again: until 2026-12-08 such a refusal left an empty --out folder behind.  Whatever a failed
    run wrote (an agent's log) stays, and so does the folder holding it."""
    made = _check_out_dir(out, flag)
    try:
        yield
    except BaseException:
        _remove_empty(made)
        raise


def _check_port(flag: str, port: int | None, lo: int = 0) -> None:
    if port is not None and not lo <= port <= 65535:  # 70000 was an OverflowError traceback after bring-up
        raise FabricError(f"{flag} must be {lo}{' (none)' if lo == 0 else ''} .. 65535, got {port}")


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    from .naming import check_prefix

    check_prefix(args.prefix)  # before the banner: a bad prefix printed the whole intro, then the error
    if not 0 < args.deadline < float("inf"):  # was "scenario.deadline_s: ...", a name the user never typed
        raise FabricError(f"--deadline must be more than 0 seconds (and finite), got {args.deadline}")
    _check_port("--view-port", args.view_port)
    _check_port("--metrics-port", args.metrics_port)
    _check_port("--grpc-base-port", args.grpc_base_port, 1)
    with _out_dir(args.out):  # last: it makes the directory (and takes it back if the demo is refused)
        return run_demo(args.out, target=args.target, prefix=args.prefix, grpc_base_port=args.grpc_base_port,
                        deadline_s=args.deadline, keep=args.keep, view_port=args.view_port,
                        metrics_port=args.metrics_port, delay_at=args.delay_at)


def cmd_scenario_run(args: argparse.Namespace) -> int:
    from .scenarios import load_scenario

    sc = load_scenario(args.file)
    _check_port("--grpc-base-port", args.grpc_base_port, 1)
    if args.engine == "netns":  # as `up`: the simulator's fabric has no selector and takes any plane
        from controller.topology import parse_topology

        from .scenarios.runner import topology_data

        try:
            check_group_size(parse_topology(topology_data(sc.fabric)), args.max_group_size)
        except TopologyError as e:
            raise ScenarioError(f"{args.file}: fabric: {e}") from None
    with _out_dir(args.out):  # last: it makes the directory, and takes it back if the run is refused
        return _scenario_run(args, sc)


def _scenario_run(args: argparse.Namespace, sc: Scenario) -> int:
    from .scenarios import run_scenario, summary_lines, timeline_lines
    from .scenarios.plot import goodput_png

    if args.engine == "netns" and sc.sim != type(sc.sim)():
        # a file written for the simulator (µs timers, 100 Gb/s links) fails on the emulated fabric for
        # reasons its verdict does not name
        print(f"note: {args.file} has a sim: section (settings of the simulated engine); the emulated "
              f"fabric (--engine netns, the default) ignores it -- run it with --engine sim", file=sys.stderr)
    progress = None
    if args.engine == "sim" and not args.quiet:
        from .sim import progress_bar

        progress = progress_bar()
    res = run_scenario(sc, prefix=args.prefix, grpc_base_port=args.grpc_base_port, workdir=args.out,
                       target=args.target, engine=args.engine, progress=progress)
    if progress is not None:
        print(file=sys.stderr)
    if not args.no_plot:
        goodput_png(res["metrics"], Path(args.out) / "goodput.png", f"{sc.name} ({args.engine})")
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
    ap = argparse.ArgumentParser(prog="mrc-fabric", description=" ".join(__doc__.split("\n\n")[0].replace("``", "").split()))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--prefix", default="mrc", help="name prefix of this fabric (default mrc)")
    common.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help=f"where run state and switch logs live (default {DEFAULT_STATE_DIR})")
    sub = ap.add_subparsers(dest="cmd", required=True)

    up = sub.add_parser("up", parents=[common], help="build the fabric and start its switches")
    up.add_argument("--topology", "-t", required=True, help="topology YAML (e.g. examples/small.yaml)")
    up.add_argument("--target", choices=(*TARGETS, "none"), default=selected_target(),
                    help="switch target (default $TARGET or softswitch); none = network only")
    up.add_argument("--grpc-base-port", type=int, help="override the topology's gRPC ports: base + index")
    up.add_argument("--ready-timeout", type=float, default=60.0, help="seconds to wait for every gRPC port (default 60)")
    up.add_argument("--wait", action="store_true", help="stay in the foreground; tear down on Ctrl-C")
    up.add_argument("--no-restart", action="store_true",
                    help="do not restart a switch that crashes (its exit reason is still logged)")
    max_group_arg(up)
    up.set_defaults(func=cmd_up)

    down = sub.add_parser("down", parents=[common], help="remove everything a fabric run recorded")
    down.set_defaults(func=cmd_down)

    st = sub.add_parser("status", parents=[common], help="switch processes, links, namespaces")
    st.add_argument("--json", action="store_true", help="print the status as JSON")
    st.set_defaults(func=cmd_status)

    rs = sub.add_parser("reshape", parents=[common], help="give a running switch its topology's link properties "
                        "again (after a restart of a target that loses them, e.g. bmv2)")
    rs.add_argument("switch")
    rs.add_argument("--wait", type=float, default=30.0,
                    help="seconds to wait for a controller that holds the switch to load its pipeline (bmv2; default 30)")
    rs.set_defaults(func=cmd_reshape)

    fault = sub.add_parser("fault", help="inject a fault (kinds: fabric/faults.py)").add_subparsers(
        dest="fault", required=True)
    from .scenarios.runner import NetnsFaults

    for kind in REGISTRY.values():
        elsewhere = _cli_fault_elsewhere(kind, NetnsFaults)
        f = fault.add_parser(kind.cli_name, parents=[common], help=kind.help + _cli_fault_note(kind, NetnsFaults),
                             description=f"{kind.help}. Not here: {elsewhere}." if elsewhere else None)
        # A kind this command never runs takes whatever it is given (its parameters optional, other words
        # let through by main), so that `fault link-loss` says where it runs instead of which of its
        # arguments are missing.
        f.set_defaults(func=cmd_fault, takes_any=bool(elsewhere))
        for p in kind.params:
            conv = (lambda v: v.lower() in ("1", "true", "yes", "up")) if p.type is bool else p.type
            if elsewhere:  # not even a value's type is checked before "not here"
                conv = str
            if p.positional:
                f.add_argument(p.name, type=conv, nargs="?" if elsewhere else None, help=p.help)
            else:
                f.add_argument(f"--{p.name.replace('_', '-')}", dest=p.name, type=conv, help=p.help)
        f.add_argument("--duration", type=str if elsewhere else float, default=0.0,
                       help="undo the fault after this many seconds (at once on Ctrl-C or SIGTERM; default 0: leave it)")
    # `mrc-fabric demo` (issue 6: traffic, failures, timeline) registers its subparser here.
    demo = sub.add_parser("demo", help="MRC vs the RC baseline through the small fabric while a spine link "
                          "and then a spine fail (timeline, summary, plot)")
    demo.add_argument("--target", choices=TARGETS, default=selected_target(), help="switch target (default $TARGET or softswitch)")
    demo.add_argument("--out", type=Path, default=Path("demo-out"), help="folder for result.json, summary.txt, goodput.png and the agents' logs (default demo-out)")
    demo.add_argument("--prefix", default="demo", help="namespace prefix of the demo fabric (default demo)")
    demo.add_argument("--grpc-base-port", type=int, default=27300, help="gRPC port of switch i = this + i (default 27300)")
    demo.add_argument("--deadline", type=float, default=20.0, help="seconds each run may take (RC is cut off; default 20)")
    demo.add_argument("--delay-at", choices=DELAY_AT, default="auto",
                      help="where the links' propagation delay is applied: switches (the target's link model, "
                           "else netem), hosts (each NIC delays what it sends by a path's one-way delay), auto "
                           "(switches where possible, else hosts; the default)")
    demo.add_argument("--keep", action="store_true",
                      help="keep the fabric, its controller, live view and metrics up after the runs (Ctrl-C ends)")
    demo.add_argument("--view-port", type=int, default=9180, help="live fabric view port (0: none; default 9180)")
    demo.add_argument("--metrics-port", type=int, default=9108,
                      help="Prometheus metrics port of the demo's controller (0: none; default 9108)")
    demo.set_defaults(func=cmd_demo)
    scen = sub.add_parser("scenario", help="scenarios as code").add_subparsers(dest="scenario", required=True)
    srun = scen.add_parser("run", help="run a scenario YAML file (every mode it lists) and print the results")
    srun.add_argument("file", type=Path)
    srun.add_argument("--engine", choices=("netns", "sim"), default="netns",
                      help="netns: the emulated fabric (namespaces, switch processes; default); sim: the "
                      "simulated fabric (docs/simulation.md)")
    srun.add_argument("--target", choices=TARGETS, default=selected_target(),
                      help="switch target of the netns engine (default $TARGET or softswitch)")
    srun.add_argument("--no-plot", action="store_true", help="do not write goodput.png")
    srun.add_argument("--quiet", action="store_true", help="no progress bar")
    srun.add_argument("--out", type=Path, default=Path("scenario-out"), help="folder for the results and goodput.png (default scenario-out)")
    srun.add_argument("--prefix", default="scn", help="name prefix of the netns engine's fabric (default scn)")
    srun.add_argument("--grpc-base-port", type=int, default=27400, help="gRPC port of switch i = this + i (default 27400)")
    srun.add_argument("--json", action="store_true", help="print the metrics as JSON")
    max_group_arg(srun)
    srun.set_defaults(func=cmd_scenario_run)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-fabric``; errors exit 2 with a message naming the element."""
    args = None
    try:
        ap = build_parser()  # in the try: a Ctrl-C while the parser is built is one line too
        args, extra = ap.parse_known_args(argv)
        if extra and not getattr(args, "takes_any", False):
            ap.error(f"unrecognized arguments: {' '.join(extra)}")  # what parse_args says
        return args.func(args)
    except ERRORS as e:
        print(f"mrc-fabric: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # `up` has torn down what it built (Fabric.up undoes all on any exception)
        print(f"mrc-fabric{'' if args is None else ' ' + args.cmd}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mrc-fabric status | head`: the reader left; no traceback, and none at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE


if __name__ == "__main__":  # python -m mrc_fabric.cli_commands, as python -m mrc_fabric
    sys.exit(main())
