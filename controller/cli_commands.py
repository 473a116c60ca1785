"""``mrc-controller``: topology generation/checking, SID plan, static plan, EV plans, and the
P4Runtime daemon (``run``) with its terminal view (``status``).

The commands; the entry point, ``controller.cli.main``, imports this module inside its Ctrl-C handling.
"""
from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from . import p4contract as P4
from .evplan import (
    EvPlanError,
    host_ev_data,
    srv6_profile,
    stev_profile,
    walk_srv6,
    walk_stev,
    write_ev_files,
)
from .plan import STEV_ECMP, STEV_MODES, build_plan, plan_to_data
from .sidplan import DEFAULT_BLOCK, DEFAULT_GID_PREFIX, build_sid_plan
from .status import DEFAULT_METRICS_PORT
from .topogen import clos_data, dump_yaml
from .topology import DEFAULT_GRPC_BASE, Topology, TopologyError, load_topology, parse_topology
from .wiring import MAX_WAIT_S

# With the live view on, the loop checks wiring and reads counters this often (s) unless told otherwise.
VIEW_WIRING_INTERVAL = 0.5
VIEW_WIRING_TIMEOUT = 0.5
VIEW_COUNTERS_INTERVAL = 1.0


def _write(out: str, text: str) -> None:
    """Write an output file; an unwritable ``-o`` (no such directory, a directory) was an OSError traceback."""
    try:
        Path(out).write_text(text)
    except OSError as e:
        raise TopologyError(f"-o {out}: cannot write: {e.strerror or e}") from None


def _emit(data: Any, fmt: str, out: str | None) -> None:
    text = (json.dumps(data, indent=1) + "\n" if fmt == "json"
            else yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120))
    if out:
        _write(out, text)
    else:
        sys.stdout.write(text)


# A leaf's uplink ECMP group has one member per spine of its plane; mrc_switch.p4's ecmp_selector
# holds at most this many (@max_group_size, from the generated contract), and converge refuses more.
ECMP_MAX_GROUP = P4.MAX_GROUP_SIZE[P4.AP_INGRESS_ROUTING_ECMP_SELECTOR]


def check_group_size(topo: Topology, limit: int) -> None:
    """Refuse a plane with more spines than a leaf's ECMP group can hold (``limit`` 0: no check).  The
    topology itself is target-neutral (the simulator takes it as it is); the limit is the program's."""
    if not limit:
        return
    for plane in range(1, topo.planes + 1):
        n = len(topo.spines(plane))
        if n > limit and topo.leaves(plane):
            whose = ("mrc_switch.p4's ecmp_selector @max_group_size; --max-group-size N for another program, "
                     "0 for none" if limit == ECMP_MAX_GROUP else "--max-group-size")
            raise TopologyError(f"plane {plane} has {n} spines, but a leaf's ECMP group (one member per spine) "
                                f"holds at most {limit} ({whose})")


def _names(names) -> str:
    """Up to 8 of ``names``, sorted, for a message that says which ones there are."""
    names = sorted(names)
    return ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")


def _load_plan(args: argparse.Namespace):
    topo = load_topology(args.topology)
    return build_plan(topo, build_sid_plan(topo, args.block, args.gid_prefix))


def cmd_topo_gen(args: argparse.Namespace) -> int:
    data = clos_data(args.planes, args.spines, args.leaves, args.hosts_per_leaf, name=args.name,
                     grpc_base_port=args.grpc_base_port)
    check_group_size(parse_topology(data), args.max_group_size)  # the generator's output must validate
    text = dump_yaml(data)
    if args.output:
        _write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_topo_check(args: argparse.Namespace) -> int:
    t = load_topology(args.topology)
    check_group_size(t, args.max_group_size)
    print(f"{args.topology}: ok: {t.name}: {t.planes} plane(s), {len(t.spines())} spine(s), "
          f"{len(t.leaves())} leaf(s), {len(t.hosts)} host(s), {len(t.links)} link(s)")
    return 0


def cmd_sid(args: argparse.Namespace) -> int:
    topo = load_topology(args.topology)
    _emit(build_sid_plan(topo, args.block, args.gid_prefix).to_data(), args.format, args.output)
    return 0


def _shown(name: str) -> str:
    return name or "''"  # an empty name is seen


def cmd_plan(args: argparse.Namespace) -> int:
    plan = _load_plan(args)
    check_group_size(plan.topology, args.max_group_size)
    data = plan_to_data(plan)
    if args.switch is not None:  # an empty --switch "" (an unset $SW) printed every switch
        if args.switch not in data:
            raise TopologyError(f"--switch {_shown(args.switch)}: no such switch in {args.topology} "
                                f"(switches: {_names(data)})")
        data = {args.switch: data[args.switch]}
    _emit(data, args.format, args.output)
    return 0


def _ev_formats(text: str) -> tuple[str, ...]:
    typed = [f.strip() for f in text.split(",") if f.strip()]
    if not typed:  # ',' wrote plans with no EV at all, which every host then refused
        raise EvPlanError(f"--ev-format {text!r}: give srv6, stev or both")
    unknown = [f for f in typed if f.upper() not in ("SRV6", "STEV")]
    if unknown:  # was "unknown EV format 'FOO' (SRV6, STEV)": upper case the user never typed
        raise EvPlanError(f"--ev-format {text!r}: unknown format {unknown[0]!r}: give srv6, stev or both")
    return tuple(f.upper() for f in typed)


def cmd_ev_gen(args: argparse.Namespace) -> int:
    plan = _load_plan(args)
    formats = _ev_formats(args.ev_format)
    if args.host is not None:  # an empty --host "" (an unset $HOST) wrote every host's plan
        if args.host not in plan.topology.hosts:
            raise EvPlanError(f"--host {_shown(args.host)}: no such host in {args.topology} "
                              f"(hosts: {_names(plan.topology.hosts)})")
        _emit(host_ev_data(plan, args.host, args.evs_per_path, formats), args.format, args.output)
        return 0
    if not args.output:
        raise EvPlanError("ev gen: give -o DIR (one file per host) or --host NAME (to stdout)")
    out = Path(args.output)
    if out.exists() and not out.is_dir():  # a FileExistsError traceback
        raise EvPlanError(f"-o {out}: exists and is not a directory")
    try:
        paths = write_ev_files(plan, args.output, args.evs_per_path, args.format, formats)
    except OSError as e:
        raise EvPlanError(f"-o {out}: cannot write: {e.strerror or e}") from None
    print(f"wrote {len(paths)} EV plan file(s) to {args.output}")
    return 0


def cmd_ev_check(args: argparse.Namespace) -> int:
    plan = _load_plan(args)
    hosts = [h.name for h in plan.topology.host_list()]
    n = 0
    for src in hosts:
        for dst in hosts:
            if src == dst:
                continue
            gid = str(plan.sids.host_gid(dst))
            for ev in srv6_profile(plan, src, dst, args.evs_per_path).evs:
                got = walk_srv6(plan, src, ev.port, ev.value)[:2]
                if got != (dst, ev.port):
                    raise EvPlanError(f"SRv6 EV {ev.index} {src}->{dst} reaches {got}")
                n += 1
            for ev in stev_profile(plan, src, dst, args.evs_per_path).evs:
                got = walk_stev(plan, src, ev.port, gid, ev.flow_label)[:2]
                if got != (dst, ev.port):
                    raise EvPlanError(f"STEV EV {ev.index} {src}->{dst} reaches {got}")
                n += 1
    print(f"ok: {n} EVs walked hop by hop to their destination port")
    return 0


def _run_args_error(args: argparse.Namespace) -> str:
    """What is wrong with ``run``'s numbers, or "".  Each of these was taken as given: a negative
    election id crashed the arbitration (a Uint128 holds none), ``--watch-qp 0x1000000`` watched QP 0
    (the table key is 24 bits), ``--retries 0`` reported every switch not converged without trying
    one, and ``--wiring-timeout 0`` / ``--counters-interval 0`` silently meant the default."""
    if not 1 <= args.election_id < 1 << 128:
        return f"--election-id must be 1 .. 2^128-1, got {args.election_id}"
    if args.retries < 1:
        return f"--retries must be 1 or more, got {args.retries}"
    for flag, value in (("--interval", args.interval), ("--wiring-interval", args.wiring_interval),
                        ("--wiring-timeout", args.wiring_timeout), ("--counters-interval", args.counters_interval)):
        if value is not None and not 0 < value <= threading.TIMEOUT_MAX:  # inf: an OverflowError in its thread
            return f"{flag} must be more than 0 seconds (and finite), got {value}"
    if args.view_port and args.wiring_timeout is not None and 2 * args.wiring_timeout > threading.TIMEOUT_MAX:
        # with the live view a wiring round may wait twice the timeout (Options.wiring_max_wait_s), which
        # Options refuses past TIMEOUT_MAX: until 2026-12-08 a ValueError traceback after the pipeline loaded
        return (f"--wiring-timeout must be at most {threading.TIMEOUT_MAX / 2:g} seconds with --view-port "
                f"(a wiring round may wait twice it), got {args.wiring_timeout}")
    for qp in args.watch_qp:
        if not 0 <= qp <= 0xFFFFFF:
            return f"--watch-qp must be a 24-bit QP number (0 .. 0xFFFFFF), got {qp:#x}"
    if args.grpc_base_port is not None and not 1 <= args.grpc_base_port <= 65535:
        return f"--grpc-base-port must be 1 .. 65535, got {args.grpc_base_port}"
    for flag, port in (("--metrics-port", args.metrics_port), ("--view-port", args.view_port)):
        if not 0 <= port <= 65535:  # 70000 was an OverflowError traceback from bind() after the sessions opened
            return f"{flag} must be 0 (none) .. 65535, got {port}"
    try:  # a name that does not resolve was "no P4Runtime server at HOST:PORT" for every switch, retried
        socket.getaddrinfo(args.grpc_host.strip("[]"), None)
    except socket.gaierror as e:
        if e.errno != socket.EAI_AGAIN:  # a resolver that is down for now may come back: the retries stay
            return f"--grpc-host {args.grpc_host}: the name does not resolve ({e.strerror})"
    return ""


def cmd_run(args: argparse.Namespace) -> int:
    """Converge every switch (``--once``) or run the daemon loop until SIGINT/SIGTERM."""
    import signal
    import threading

    # The command line is where a pipeline is built for the daemon: the target plugin compiles or
    # loads it (the controller library itself only receives the ready PipelineConfig).
    from mrc_fabric.targets import load_pipeline, selected_target

    from .daemon import Controller, Options, setup_logging
    from .mapping import MappingError
    from .session import SessionError

    bad = _run_args_error(args)
    if bad:
        print(f"mrc-controller run: error: {bad}", file=sys.stderr)
        return 2
    setup_logging(args.log_format, args.log_level)
    log = logging.getLogger("controller")
    try:
        plan = _load_plan(args)
        pipeline = load_pipeline(args.target or selected_target(), args.program, args.p4info, args.device_config)
    except SessionError as e:
        print(f"mrc-controller: error: {e}", file=sys.stderr)
        return 2
    live = bool(args.view_port)  # the live view wants a fault shown within a second: probe and read often
    opts = Options(election_id=args.election_id, takeover=not args.no_takeover, retries=args.retries,
                   reconcile_interval_s=args.interval,
                   wiring_interval_s=args.wiring_interval or (VIEW_WIRING_INTERVAL if live else 10.0),
                   wiring_timeout_s=args.wiring_timeout or (VIEW_WIRING_TIMEOUT if live else 1.5),
                   # the live view shows a dead cable within ~2 s: its rounds are not stretched past
                   # twice their timeout by late probes (a slow target: give a longer --wiring-timeout)
                   wiring_max_wait_s=(2 * (args.wiring_timeout or VIEW_WIRING_TIMEOUT)) if live else MAX_WAIT_S,
                   counters_interval_s=args.counters_interval or (VIEW_COUNTERS_INTERVAL if live else 2.0),
                   stev_mode=args.stev_mode,
                   grpc_host=args.grpc_host, grpc_base_port=args.grpc_base_port,
                   watch_qps=tuple(args.watch_qp))
    ctl = Controller(plan, pipeline, opts, log)
    stop = threading.Event()
    server = view = None
    try:
        if args.view_port:
            from .web import serve_view

            try:
                view = serve_view(ctl, args.view_port, args.view_addr)
            except OSError as e:  # most often EADDRINUSE, as for --metrics-port
                print(f"mrc-controller: error: cannot serve the live view on {args.view_addr}:{args.view_port}: "
                      f"{e.strerror or e} (choose another --view-port)", file=sys.stderr)
                return 2
            log.info("live view", extra={"fields": {"url": view.url}})
        if args.metrics_port:
            from .metrics import MetricsError, serve

            try:
                _, server, _ = serve(ctl.metrics_snapshot, args.metrics_port, args.metrics_addr)
            except MetricsError as e:
                print(f"mrc-controller: error: {e}", file=sys.stderr)
                return 2
            log.info("metrics", extra={"fields": {"url": f"http://{args.metrics_addr}:{args.metrics_port}/metrics"}})
        if args.once:
            try:
                result = ctl.converge_all()
            except MappingError as e:
                print(f"mrc-controller: error: {e}", file=sys.stderr)
                return 2
            except KeyboardInterrupt:  # was a traceback, then (a second one) another from close()
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # close() below is short: let it finish
                ctl.interrupt()  # before the line: attempts failing from now on give up, none says "will retry"
                print("mrc-controller run: interrupted; closing the sessions", file=sys.stderr, flush=True)
                return 130
            if all(result.values()) and not args.no_wiring:
                ctl.wiring_check()
            return 0 if all(result.values()) else 1
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        ctl.run(stop)
        return 0
    finally:
        ctl.close()
        if server is not None:
            server.shutdown()
        if view is not None:
            view.stop()


def cmd_status(args: argparse.Namespace) -> int:
    """Print the running controller's view (from its metrics endpoint)."""
    import time
    import urllib.error
    import urllib.parse

    from .status import show

    url = args.url or f"http://127.0.0.1:{args.metrics_port}/metrics"
    if urllib.parse.urlsplit(url).scheme.lower() not in ("http", "https"):
        # urllib also opens file:// (and ftp://, data:), and the parse error quoted what it read: a file
        # only root may read came back a line at a time on stderr; "garbage" was "unknown url type"
        print(f"mrc-controller status: error: --url {url}: give an http:// or https:// URL (the metrics "
              "endpoint of `mrc-controller run --metrics-port`)", file=sys.stderr)
        return 2
    if not 0 <= args.watch <= threading.TIMEOUT_MAX:  # -1 was a ValueError traceback from sleep() after the first view
        print(f"mrc-controller status: error: --watch must be 0 (once) or more seconds, got {args.watch}", file=sys.stderr)
        return 2
    if not args.url and not 1 <= args.metrics_port <= 65535:
        print(f"mrc-controller status: error: --metrics-port must be 1 .. 65535, got {args.metrics_port}",
              file=sys.stderr)
        return 2
    try:
        while True:
            show(url, clear=bool(args.watch))
            if not args.watch:
                return 0
            time.sleep(args.watch)  # refresh period of the view
    except (urllib.error.URLError, OSError) as e:
        # the reason alone: "<urlopen error [Errno 111] Connection refused>" was urllib's wrapping
        why = e.reason if isinstance(e, urllib.error.URLError) and not isinstance(e, urllib.error.HTTPError) else e
        why = getattr(why, "strerror", None) or why
        print(f"mrc-controller: error: cannot read {url}: {why} (is `mrc-controller run --metrics-port` running?)",
              file=sys.stderr)
        return 2
    except ValueError as e:  # not a URL (--url garbage), or what it serves is not Prometheus text
        print(f"mrc-controller: error: {url}: {e} (want the metrics URL of `mrc-controller run --metrics-port`)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


def _plan_args(p: argparse.ArgumentParser, output_help: str | None = "output file (default stdout)") -> None:
    """The topology and SID plan options; ``--format`` and ``-o`` too unless ``output_help`` is None (a
    command that writes no document: ``ev check`` listed both and ignored them)."""
    p.add_argument("--topology", "-t", required=True, help="topology YAML file")
    p.add_argument("--block", default=DEFAULT_BLOCK, help=f"locator block /32 (default {DEFAULT_BLOCK})")
    p.add_argument("--gid-prefix", default=DEFAULT_GID_PREFIX,
                   help=f"host GID /64 (default {DEFAULT_GID_PREFIX})")
    if output_help is not None:
        p.add_argument("--format", choices=("yaml", "json"), default="yaml", help="output format (default yaml)")
        p.add_argument("-o", "--output", help=output_help)


def _count(text: str) -> int:
    """A number >= 0 (argparse's ``int`` let ``--max-group-size -1`` through)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be 0 or more")
    return n


def _qp_number(text: str) -> int:
    """``--watch-qp``: a QP number, decimal or 0x hex (its range is checked with the other numbers).
    A lambda here made argparse say "invalid <lambda> value: 'abc'"."""
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a QP number (decimal or 0x hex, 0 .. 0xFFFFFF)") from None


def max_group_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-group-size", type=_count, default=ECMP_MAX_GROUP, metavar="N",
                   help=f"refuse a plane with more spines than a leaf's ECMP group holds (default "
                        f"{ECMP_MAX_GROUP}: mrc_switch.p4's ecmp_selector; 0: no check, e.g. a topology for "
                        "the simulator or for a program with a larger selector)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands carry their handler in ``func``)."""
    ap = argparse.ArgumentParser(prog="mrc-controller", description=" ".join(__doc__.split("\n\n")[0].replace("``", "").split()))
    sub = ap.add_subparsers(dest="cmd", required=True)

    topo = sub.add_parser("topo", help="generate or check topologies").add_subparsers(dest="topo_cmd",
                                                                                     required=True)
    g = topo.add_parser("gen", help="generate a multi-plane two-tier Clos topology")
    g.add_argument("--planes", type=int, default=2, help="planes = NIC ports per host (default 2)")
    g.add_argument("--spines", type=int, default=2, help="spines per plane (default 2)")
    g.add_argument("--leaves", type=int, default=2, help="leaves per plane (default 2)")
    g.add_argument("--hosts-per-leaf", type=int, default=2, help="hosts per leaf (default 2)")
    g.add_argument("--grpc-base-port", type=int, default=DEFAULT_GRPC_BASE,
                   help=f"gRPC port of switch i (file order) = this + i (default {DEFAULT_GRPC_BASE})")
    g.add_argument("--name")
    g.add_argument("-o", "--output", help="output file (default stdout)")
    max_group_arg(g)
    g.set_defaults(func=cmd_topo_gen)
    c = topo.add_parser("check", help="validate a topology file")
    c.add_argument("topology")
    max_group_arg(c)
    c.set_defaults(func=cmd_topo_check)

    s = sub.add_parser("sid", help="print the SID plan (uSIDs, addresses, MACs)")
    _plan_args(s)
    s.set_defaults(func=cmd_sid)
    p = sub.add_parser("plan", help="print the static per-switch intents")
    _plan_args(p)
    p.add_argument("--switch", help="only this switch")
    max_group_arg(p)
    p.set_defaults(func=cmd_plan)

    ev = sub.add_parser("ev", help="EV plans for hosts").add_subparsers(dest="ev_cmd", required=True)
    e = ev.add_parser("gen", help="write EV plan files (one per host) or print one host's")
    _plan_args(e, "directory for one plan file per host (required without --host); with --host, "
                  "the file for that host's plan (default stdout)")
    e.add_argument("--evs-per-path", type=int, default=1, help="EVs per (plane, spine) path (default 1)")
    e.add_argument("--ev-format", default="srv6,stev", help="comma list of srv6, stev (default srv6,stev)")
    e.add_argument("--host", help="print only this host's plan")
    e.set_defaults(func=cmd_ev_gen)
    k = ev.add_parser("check", help="walk every EV of every host pair through the static plan")
    _plan_args(k, None)
    k.add_argument("--evs-per-path", type=int, default=1, help="EVs per (plane, spine) path (default 1)")
    k.set_defaults(func=cmd_ev_check)

    r = sub.add_parser("run", help="converge the switches over P4Runtime and keep them converged")
    r.add_argument("--topology", "-t", required=True, help="topology YAML file")
    r.add_argument("--target",
                   help="switch target plugin that builds the pipeline (fabric/targets; default $TARGET or "
                        "softswitch)")
    r.add_argument("--once", action="store_true", help="converge every switch, then exit (1 if one failed)")
    r.add_argument("--election-id", type=int, default=1, help="P4Runtime election id (higher = primary; default 1)")
    r.add_argument("--no-takeover", action="store_true",
                   help="stay a passive standby when the primary goes away (also when the switch promotes "
                        "it itself, as bmv2's PI server does)")
    r.add_argument("--metrics-port", type=int, default=0, help="serve Prometheus metrics on this port (default 0: none)")
    r.add_argument("--metrics-addr", default="127.0.0.1", help="address of the metrics server (default 127.0.0.1)")
    r.add_argument("--log-format", choices=("json", "text"), default="text", help="log lines on stderr (default text)")
    r.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"), help="(default info)")
    r.add_argument("--program", help="P4 source for a target that compiles it (default p4src/mrc_switch.p4)")
    r.add_argument("--p4info", help="P4Info text file (with --device-config; default: what the target builds)")
    r.add_argument("--device-config", help="device config file (bmv2 JSON or softswitch bundle)")
    r.add_argument("--grpc-host", default="127.0.0.1", help="host of every switch's gRPC server (default 127.0.0.1)")
    r.add_argument("--grpc-base-port", type=int, help="switch i (file order) at this port + i (default: the topology's grpc_port)")
    r.add_argument("--retries", type=int, default=4, help="attempts per switch with --once (default 4)")
    r.add_argument("--interval", type=float, default=10.0, help="reconcile period (s; default 10)")
    r.add_argument("--view-port", type=int, default=0, help="serve the live fabric view (HTML) on this port (default 0: none)")
    r.add_argument("--view-addr", default="127.0.0.1", help="address of the view server (default 127.0.0.1)")
    r.add_argument("--wiring-interval", type=float,
                   help=f"wiring check period (s; default 10, {VIEW_WIRING_INTERVAL:g} with --view-port)")
    r.add_argument("--wiring-timeout", type=float,
                   help=f"how long a wiring round waits for its probes (s; default 1.5, {VIEW_WIRING_TIMEOUT:g} "
                        "with --view-port)")
    r.add_argument("--counters-interval", type=float,
                   help=f"counter read period (s; default 2, {VIEW_COUNTERS_INTERVAL:g} with --view-port)")
    r.add_argument("--no-wiring", action="store_true", help="--once: skip the wiring check")
    r.add_argument("--stev-mode", choices=STEV_MODES, default=STEV_ECMP,
                   help=f"how leaves spread STEV traffic to remote hosts (default {STEV_ECMP})")
    r.add_argument("--watch-qp", action="append", default=[], type=_qp_number,
                   help="send postcards for RoCE packets to this destination QP (repeatable)")
    r.add_argument("--block", default=DEFAULT_BLOCK, help=f"locator block /32 (default {DEFAULT_BLOCK})")
    r.add_argument("--gid-prefix", default=DEFAULT_GID_PREFIX, help=f"host GID /64 (default {DEFAULT_GID_PREFIX})")
    r.set_defaults(func=cmd_run)

    st = sub.add_parser("status", help="terminal view of a running controller (links, drops, queues)")
    st.add_argument("--metrics-port", type=int, default=DEFAULT_METRICS_PORT,
                    help=f"the controller's --metrics-port (default {DEFAULT_METRICS_PORT})")
    st.add_argument("--url", help="metrics URL, http:// or https:// (default http://127.0.0.1:PORT/metrics)")
    st.add_argument("--watch", type=float, default=0, help="refresh every N seconds until Ctrl-C (default 0: print once)")
    st.set_defaults(func=cmd_status)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-controller``; bad input exits 2 with a message naming the element."""
    args = None
    try:  # the parser is built inside: a Ctrl-C then is one line too
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return func(args)
    except (TopologyError, EvPlanError) as e:
        print(f"mrc-controller: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # e.g. during `run`'s pipeline compile (seconds; p4c for bmv2): was a traceback
        print(f"mrc-controller{'' if args is None else ' ' + args.cmd}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mrc-controller plan ... | head`: the reader left; a traceback, and one at exit
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE (mrc-fabric and p4info-diff do the same)


if __name__ == "__main__":
    sys.exit(main())
