"""``softswitch``: a simple_switch_grpc-compatible command line, plus ``compile`` and ``cli``.

    softswitch [--device-id N] [-i P@IF]... [--log-console] [--log-level L] [--log-file F]
               [--queue-depth [P[/Q]:]N] [--queue-rate [P[/Q]:]PPS] [--link-delay [P:]US]
               [--runtime-addr HOST:PORT] (--no-p4 | PROG.p4 [-D X] [-I DIR])
               -- --grpc-server-addr HOST:PORT [--cpu-port N]
    softswitch compile PROG.p4 [-D X] [-I DIR] --p4runtime-files OUT.txtpb ...
    softswitch cli [--addr HOST:PORT] COMMAND [ARG]...
    softswitch p4info-diff A B [--ignore WHAT]... [--lenient]
    softswitch stf PROG.p4 [TEST.stf] (as python -m softswitch.stf)
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from softswitch.contract import DROP_PORT
from softswitch.engine.control import (
    ARG_RANGES,
    COMMAND_ARGS,
    AddressError,
    ControlError,
    check_args,
    send_command,
    split_addr,
    strict_int,
)
from softswitch.engine.loop import GIL_SWITCH_INTERVAL_S
from softswitch.engine.ports import parse_interface
from softswitch.switch import TRACE, Switch, SwitchConfig, SwitchError

log = logging.getLogger("softswitch")

LOG_LEVELS = {"trace": TRACE, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "error": logging.ERROR, "off": logging.CRITICAL + 10}
DEFAULT_GRPC_ADDR = "0.0.0.0:9559"
DEFAULT_RUNTIME_ADDR = "127.0.0.1:9090"  # bmv2's Thrift default port, for `softswitch cli`

# bmv2 options with no meaning here: accepted (with their value) and warned about.
BMV2_VALUE_OPTIONS = ["--thrift-port", "--nanolog", "--packet-in", "--notifications-addr",
                      "--debugger-addr", "--restore-state", "--state-file", "--dump-packet-data",
                      "--max-port-count", "--to-pdf"]
BMV2_FLAG_OPTIONS = ["--debugger", "--log-flush", "--json-version"]
BMV2_TARGET_VALUE_OPTIONS = ["--dp-grpc-server-addr", "--grpc-server-cacert", "--grpc-server-cert",
                             "--grpc-server-key", "--load-modules", "--drop-port"]
BMV2_TARGET_FLAG_OPTIONS = ["--grpc-server-ssl", "--grpc-server-with-client-auth", "--enable-swap"]


def _in_range(text: str, what: str, v: int, key: str) -> None:
    lo, hi = ARG_RANGES[key]
    if not lo <= v <= hi:  # a port above 510 (or -5) made a queue no frame can reach, silently
        raise argparse.ArgumentTypeError(f"'{text}': {what} {v} is out of range {lo}..{hi}")


def _queue_spec(text: str, value: str = "DEPTH_PKTS") -> tuple[int | None, int | None, int]:
    """``N`` | ``PORT:N`` | ``PORT/PRIORITY:N`` → (port, priority, value); each in its range
    (softswitch.engine.control.ARG_RANGES, the one `softswitch cli` is checked against too)."""
    where, sep, value_text = text.rpartition(":")
    port = pri = None
    try:
        if sep:
            p, slash, q = where.partition("/")
            port = strict_int(p)
            pri = strict_int(q) if slash else None
        v = strict_int(value_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected N, PORT:N or PORT/PRIORITY:N") from None
    lo, hi = ARG_RANGES["PRIORITY"]
    if pri is not None and not lo <= pri <= hi:
        raise argparse.ArgumentTypeError(f"'{text}': priorities are {lo}..{hi}")
    if port is not None:
        _in_range(text, "port", port, "PORT")
    _in_range(text, "value", v, value)
    return port, pri, v


def _port_spec(text: str, value: str, what: str) -> tuple[int | None, int]:
    port, pri, v = _queue_spec(text, value)
    if pri is not None:
        raise argparse.ArgumentTypeError(f"'{text}': {what}")
    return port, v


def _delay_spec(text: str) -> tuple[int | None, int]:
    return _port_spec(text, "DELAY_US", "a link delay is per port: [PORT:]MICROSECONDS")


def _link_rate_spec(text: str) -> tuple[int | None, int]:
    return _port_spec(text, "RATE_PPS", "a link rate is per port: [PORT:]PPS")


def _link_bps_spec(text: str) -> tuple[int | None, int]:
    return _port_spec(text, "BITS_PER_S", "a link rate is per port: [PORT:]BITS_PER_S")


def _queue_rate_spec(text: str) -> tuple[int | None, int | None, int]:
    return _queue_spec(text, "RATE_PPS")


def _int_arg(text: str) -> int:
    try:
        return strict_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: '{text}'") from None


def _device_id(text: str) -> int:
    v = _int_arg(text)
    if not 0 <= v < 2**64:  # a P4Runtime device id is a uint64: no request could name the switch
        raise argparse.ArgumentTypeError(f"{v}: must be 0..{2**64 - 1} (a P4Runtime device id is a uint64)")
    return v


def _interface(text: str) -> tuple[int, str]:
    try:
        return parse_interface(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    """The switch's own options (before ``--``)."""
    p = argparse.ArgumentParser(
        prog="softswitch",
        usage="softswitch [options] (--no-p4 | PROG.p4) -- --grpc-server-addr HOST:PORT [--cpu-port N]\n"
              "       softswitch compile PROG.p4 ...   (P4Info and device config, like p4c)\n"
              "       softswitch cli [--addr HOST:PORT] COMMAND [ARG]...   (runtime control)\n"
              "       softswitch p4info-diff A B ...   (compare two P4Infos entity by entity)\n"
              "       softswitch stf PROG.p4 [TEST.stf]   (run a p4c-style STF script)",
        description="Embedded P4_16 v1model software switch with a P4Runtime server; a drop-in for "
                    "bmv2's simple_switch_grpc. Target options (gRPC address, CPU port) follow '--'.",
        epilog="target options after '--': --grpc-server-addr HOST:PORT (default 0.0.0.0:9559), "
               "--cpu-port N (frames the program sends there become PacketIn; PacketOut enters "
               "ingress on it), --priority-queues N (always 8 here). Runtime control commands: "
               "set_queue_depth, set_queue_rate, set_link_rate, set_link_bps, set_link_delay, port_stats, show_ports, "
               "switch_stats.")
    p.add_argument("program", nargs="?", metavar="PROG.p4",
                   help="P4_16 v1model source to run at start (P4Info is built from it)")
    p.add_argument("--no-p4", action="store_true",
                   help="start without a program and wait for SetForwardingPipelineConfig")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="preprocessor define for PROG.p4")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="include directory for PROG.p4")
    p.add_argument("--device-id", type=_device_id, default=1, help="P4Runtime device id (default 1)")
    p.add_argument("-i", "--interface", dest="interfaces", action="append", default=[], type=_interface,
                   metavar="PORT@IFNAME", help="bind P4 port PORT to Linux interface IFNAME (repeatable)")
    p.add_argument("--log-console", action="store_true", help="log to stdout, incl. the per-packet trace")
    p.add_argument("-L", "--log-level", choices=list(LOG_LEVELS), default=None,
                   help="trace|debug|info|warn|error|off (default: trace with a log target, else warn)")
    p.add_argument("--log-file", metavar="FILE", help="log to FILE (per-packet trace included)")
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="write every frame received and sent on interface IFNAME to IFNAME_in.pcap and "
                        "IFNAME_out.pcap in DIR (default: the current directory), as bmv2 does")
    q = p.add_argument_group("traffic manager (bmv2 defaults: 64 packets per queue, no rate limit)")
    q.add_argument("--queue-depth", action="append", default=[], type=_queue_spec, metavar="[P[/Q]:]N",
                   help="queue depth in packets, for all ports, port P, or priority queue Q of port P")
    q.add_argument("--queue-rate", action="append", default=[], type=_queue_rate_spec, metavar="[P[/Q]:]PPS",
                   help="queue rate in packets/s (0 = unlimited), same scoping as --queue-depth")
    q.add_argument("--link-rate", action="append", default=[], type=_link_rate_spec, metavar="[P:]PPS",
                   help="link rate in frames/s on port P (or all ports), shared by its 8 priority queues "
                        "(softswitch only: bmv2's rates are per queue, so its classes add up); 0 = none")
    q.add_argument("--link-bps", action="append", default=[], type=_link_bps_spec, metavar="[P:]BPS",
                   help="link rate in bits/s on port P (or all ports), shared by its 8 priority queues and "
                        "charged per byte on the wire (frame + 24 bytes), a truncated frame its own length "
                        "(softswitch only); 0 = none")
    q.add_argument("--link-delay", action="append", default=[], type=_delay_spec, metavar="[P:]US",
                   help="fixed delay in microseconds added after dequeue on port P (or all ports)")
    q.add_argument("--runtime-addr", metavar="HOST:PORT",
                   help="serve runtime control (JSON lines; `softswitch cli`) on HOST:PORT")
    p.add_argument("--ready-file", help=argparse.SUPPRESS)
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    p.add_argument("--use-files", dest="compat_use_files", metavar="WAIT",
                   help="bmv2's pcap-file ports: refused (softswitch's ports are Linux interfaces; see --pcap)")
    compat = p.add_argument_group("accepted for simple_switch_grpc compatibility and ignored")
    for name in BMV2_VALUE_OPTIONS:
        compat.add_argument(name, dest="compat_" + name[2:].replace("-", "_"), metavar="X")
    for name in BMV2_FLAG_OPTIONS:
        compat.add_argument(name, dest="compat_" + name[2:].replace("-", "_"), action="store_true")
    return p


def build_target_parser() -> argparse.ArgumentParser:
    """The target options that simple_switch_grpc takes after ``--``."""
    t = argparse.ArgumentParser(prog="softswitch ... --", add_help=False)
    t.add_argument("--grpc-server-addr", default=DEFAULT_GRPC_ADDR)
    t.add_argument("--cpu-port", type=_int_arg)
    t.add_argument("--priority-queues", type=_int_arg)
    for name in BMV2_TARGET_VALUE_OPTIONS:
        t.add_argument(name, dest="compat_" + name[2:].replace("-", "_"))
    for name in BMV2_TARGET_FLAG_OPTIONS:
        t.add_argument(name, dest="compat_" + name[2:].replace("-", "_"), action="store_true")
    return t


def _refuse_use_files(parser: argparse.ArgumentParser) -> None:
    # bmv2's --use-files WAIT turns every -i N@NAME into the files NAME_in.pcap / NAME_out.pcap: ignored,
    # the switch waited for interfaces with those paths as names, which never come (until 2026-12-06)
    parser.error("--use-files (bmv2's pcap-file ports) is not supported: softswitch's ports are Linux "
                 "interfaces (-i N@IFNAME, e.g. veths); --pcap DIR records what they carry")


def _refuse_misplaced(parser: argparse.ArgumentParser, argv: list[str], own: argparse.ArgumentParser,
                      owner: argparse.ArgumentParser, what: str) -> None:
    """An option of the other side of ``--`` (``owner``'s, where ``own`` parses ``argv``) is a usage
    error.  simple_switch_grpc refuses a target option before ``--`` (exit 1); after it, its target
    parser reports the stray option and the switch starts without any target option
    (docs/softswitch.md), which softswitch does not copy.  Until 2026-12-08 `-- --device-id 0` was
    warned about and ignored (the switch ran as device 1), and `--grpc-server-addr A` before ``--``
    made A the program: "give either PROG.p4 or --no-p4, not both".  An abbreviation (argparse, like
    bmv2's option parser, takes a unique prefix) and a short option with its value attached
    (``-i1@veth1``) are the option they stand for: `-- --device 0` was still the first of those."""
    own_names = set(own._option_string_actions)
    names = {o for o in owner._option_string_actions if o not in ("-h", "--help")}
    for a in argv:
        typed = a.split("=", 1)[0] if a.startswith("--") else a
        if typed.startswith("--"):
            if any(o.startswith(typed) for o in own_names):
                continue  # its own side's option, or an abbreviation argparse resolves there
            hits = [typed] if typed in names else [o for o in names if o.startswith(typed)]
        else:
            hits = [typed[:2]] if typed[:2] in names and typed[:2] not in own_names else []
        if hits:  # several: an abbreviation of more than one, all of the other side
            shown = typed if [typed] == hits else f"{typed} ({', '.join(sorted(hits))})"
            parser.error(f"{shown} is {what} (softswitch [options] PROG.p4|--no-p4 -- "
                         "[--grpc-server-addr HOST:PORT] [--cpu-port N])")


def parse_args(argv: Sequence[str]) -> tuple[SwitchConfig, argparse.Namespace, list[str]]:
    """Parse a simple_switch_grpc-style command line; returns (config, main options, warnings)."""
    argv = list(argv)
    main_argv, target_argv = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv \
        else (argv, [])
    parser = build_parser()
    if any(a == "--use-files" or a.startswith("--use-files=") for a in main_argv) \
            and not {"-v", "--version"} & set(main_argv):
        # before -i is parsed: bmv2's file ports are named by paths (softswitch.diff's bmv2 side
        # passes -i N@/tmp/tmpXXXXXXXX/pN), which -i would refuse first as too long for an
        # interface name, hiding the reason
        _refuse_use_files(parser)
    target_parser = build_target_parser()
    if {"-h", "--help"} & set(target_argv):  # `-- --help` (bmv2: an unknown target option): it was
        parser.print_help()                  # warned about as unknown and the switch started
        parser.exit()
    if "--" in target_argv:  # the options after a second '--' were each "unknown" and dropped
        parser.error("'--' given twice: the target options follow the first one")
    _refuse_misplaced(parser, main_argv, parser, target_parser, "a target option: give it after '--'")
    _refuse_misplaced(parser, target_argv, target_parser, parser, "a switch option: give it before '--'")
    ns, unknown = parser.parse_known_args(main_argv)
    warnings = [f"unknown option '{u}' ignored" for u in unknown]
    tns, tunknown = target_parser.parse_known_args(target_argv)
    warnings += [f"unknown target option '{u}' ignored" for u in tunknown]
    if tns.compat_drop_port == str(DROP_PORT):  # bmv2's default: what softswitch does anyway
        tns.compat_drop_port = None
    for space in (ns, tns):
        for key, value in vars(space).items():
            if key == "compat_drop_port" and value is not None:
                warnings.append(f"--drop-port {value}: softswitch's drop port is always {DROP_PORT} "
                                "(the v1model value); ignored")
            elif key.startswith("compat_") and value not in (None, False):
                warnings.append(f"bmv2 option --{key[7:].replace('_', '-')} is not supported by softswitch; "
                                "ignored")
    if tns.priority_queues not in (None, 8):
        warnings.append(f"--priority-queues {tns.priority_queues}: softswitch always has 8 priority queues")
    if ns.pcap is not None and ns.program is None and ns.pcap.endswith((".p4", ".json")) and not ns.no_p4:
        # `--pcap PROG.p4`: the directory is optional, so the program was read as it
        ns.program, ns.pcap = ns.pcap, "."
    if ns.version:
        return SwitchConfig(), ns, warnings
    if ns.no_p4 and ns.program:
        parser.error("give either PROG.p4 or --no-p4, not both")
    if not ns.no_p4 and not ns.program:
        parser.error("give PROG.p4 or --no-p4")
    if ns.program and ns.program.endswith(".json"):
        # softswitch's own device config (`softswitch compile -o`) is JSON too: not only bmv2's
        parser.error(f"{ns.program}: softswitch runs P4_16 source (.p4), not a bmv2 JSON file or a device config "
                     "(a device config goes to a switch started with --no-p4, through a controller)")
    if ns.compat_use_files is not None:  # (an abbreviation of it, e.g. --use-file, arrives here)
        _refuse_use_files(parser)
    ports = [n for n, _ in ns.interfaces]
    dup = {n for n in ports if ports.count(n) > 1}
    if dup:
        parser.error(f"port(s) {sorted(dup)} bound twice with -i")
    for flag, addr in (("--grpc-server-addr", tns.grpc_server_addr), ("--runtime-addr", ns.runtime_addr)):
        if addr is None or (flag == "--grpc-server-addr" and addr.startswith("unix:")):
            continue
        # a usage error like any other (exit 2): until 2026-12-07 it surfaced at start as exit 1; a port
        # above 65535 was taken modulo 65536 (99999 -> 34463: the switch served where nobody looked)
        try:
            split_addr(addr, default_host="0.0.0.0" if flag == "--runtime-addr" else None)
        except AddressError as e:
            unix = " (or unix:PATH)" if flag == "--grpc-server-addr" and e.reason == "expected HOST:PORT" else ""
            parser.error(f"{flag} {addr}: {e.reason}{unix}")
    if tns.cpu_port is not None and not 0 < tns.cpu_port < DROP_PORT:
        parser.error(f"--cpu-port {tns.cpu_port}: must be 1..{DROP_PORT - 1}")
    if tns.cpu_port is not None and tns.cpu_port in ports:
        parser.error(f"--cpu-port {tns.cpu_port} is also bound to an interface with -i")
    cfg = SwitchConfig(
        device_id=ns.device_id, interfaces=ns.interfaces, program=ns.program, defines=ns.defines,
        include_dirs=ns.include_dirs, grpc_addr=tns.grpc_server_addr, cpu_port=tns.cpu_port,
        queue_depths=ns.queue_depth, queue_rates=ns.queue_rate, link_delays=ns.link_delay,
        link_rates=ns.link_rate,
        link_bps=ns.link_bps,
        runtime_addr=ns.runtime_addr, pcap_dir=ns.pcap,
        trace=bool(ns.log_console or ns.log_file) and (ns.log_level or "trace") == "trace")
    return cfg, ns, warnings


def setup_logging(ns: argparse.Namespace) -> None:
    """bmv2-like logging: --log-console to stdout, --log-file to a file, warnings to stderr otherwise."""
    logging.addLevelName(TRACE, "TRACE")
    root = logging.getLogger("softswitch")
    root.handlers.clear()
    root.propagate = False
    fmt = logging.Formatter("[%(asctime)s.%(msecs)03d] [%(levelname)s] %(name)s: %(message)s", "%H:%M:%S")
    targets: list[logging.Handler] = []
    if ns.log_console:
        targets.append(logging.StreamHandler(sys.stdout))
    if ns.log_file:
        try:
            targets.append(logging.FileHandler(ns.log_file))
        except OSError as e:  # a missing directory was a FileNotFoundError traceback
            raise SwitchError(f"--log-file {ns.log_file}: {e.strerror or e}") from None
    level = LOG_LEVELS[ns.log_level] if ns.log_level else (TRACE if targets else logging.WARNING)
    if not targets:
        targets.append(logging.StreamHandler(sys.stderr))
    for h in targets:
        h.setFormatter(fmt)
        root.addHandler(h)
    root.setLevel(level)
    # the trace is logged at DEBUG on its own logger; show it only at level trace
    logging.getLogger("softswitch.trace").setLevel(logging.DEBUG if level <= TRACE else logging.INFO)


def run_switch(argv: Sequence[str]) -> int:
    """Run the switch until SIGINT/SIGTERM; 0 on a clean stop, 1 when it cannot start.  The process's
    GIL switch interval is ``GIL_SWITCH_INTERVAL_S``: the packet loop gets the GIL back promptly while
    the P4Runtime server answers a Read (softswitch.engine.loop)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    cfg, ns, warnings = parse_args(argv)
    if ns.version:
        print("softswitch 0.1.0 (simple_switch_grpc-compatible command line)")
        return 0
    try:
        setup_logging(ns)
    except SwitchError as e:
        print(f"softswitch: error: {e}", file=sys.stderr)
        return 1
    if ns.pcap is not None:
        # made (as documented) when a port opened its files: with no -i a directory that cannot be made
        # went unnoticed and the switch ran on (until 2026-12-07); now it is made, or refused, at start
        try:
            os.makedirs(ns.pcap, exist_ok=True)
        except OSError as e:
            print(f"softswitch: error: --pcap {ns.pcap}: cannot create the directory: {e.strerror or e}",
                  file=sys.stderr)
            return 1
    for w in warnings:
        log.warning("%s", w)
    try:
        switch = Switch(cfg)
    except SwitchError as e:  # e.g. --pcap into a directory that cannot be written
        print(f"softswitch: error: {e}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGINT, lambda *_: switch.stop())
    signal.signal(signal.SIGTERM, lambda *_: switch.stop())
    try:
        switch.start()
    except Exception as e:
        if _is_p4_error(e):  # already "[file:line:col: ]error: message", as `softswitch compile` prints it
            print(f"softswitch: {e}", file=sys.stderr)
        else:
            msg = str(e) if isinstance(e, (SwitchError, OSError, ValueError)) else repr(e)
            print(f"softswitch: error: {msg}", file=sys.stderr)
        if not _is_p4_error(e) and not isinstance(e, (SwitchError, OSError, ValueError)):
            log.debug("start failure", exc_info=True)
        return 1
    if ns.ready_file:
        Path(ns.ready_file).write_text(f"{switch.grpc_port or ''}\n")
    while not switch.wait(0.5):
        pass
    return 0


def _is_p4_error(e: BaseException) -> bool:
    return type(e).__module__.startswith("softswitch.frontend")


def run_cli(argv: Sequence[str]) -> int:
    """``softswitch cli``: send one runtime control command and print the answer."""
    p = argparse.ArgumentParser(prog="softswitch cli", description="Runtime control of a running softswitch "
                                "(started with --runtime-addr). Commands: set_queue_depth DEPTH [PORT [PRIO]], "
                                "set_queue_rate PPS [PORT [PRIO]], set_link_rate PPS [PORT], set_link_bps BPS [PORT], set_link_delay US [PORT], "
                                "port_stats [PORT], "
                                "show_ports, switch_stats.")
    p.add_argument("--addr", default=DEFAULT_RUNTIME_ADDR, help=f"HOST:PORT (default {DEFAULT_RUNTIME_ADDR})")
    p.add_argument("--json", action="store_true", help="print the raw JSON result")
    p.add_argument("command")
    # default=[]: without it argparse lists "args" as required beside a missing command ("the following
    # arguments are required: command, args"), though a command may take none
    p.add_argument("args", nargs="*", default=[])
    ns = p.parse_args(argv)
    try:
        split_addr(ns.addr)
    except AddressError as e:  # a usage error (exit 2), worded as the switch's own --runtime-addr
        p.error(f"--addr {ns.addr}: {e.reason}")
    known = sorted(COMMAND_ARGS)  # the server's own table of commands and their arguments
    if ns.command not in known:  # said only "cannot reach ..." when no switch ran there: the typo went unseen
        print(f"softswitch cli: error: unknown command '{ns.command}'; known: {', '.join(known)}", file=sys.stderr)
        return 2
    try:  # the server's own argument check, here before connecting: a usage error (exit 2), as above
        check_args(ns.command, ns.args)
    except ControlError as e:
        print(f"softswitch cli: error: {e}", file=sys.stderr)
        return 2
    try:
        result = send_command(ns.addr, ns.command, ns.args)
    except OSError as e:  # said only "[Errno 111] Connection refused": which switch?
        print(f"softswitch cli: error: cannot reach the runtime control at {ns.addr}: {e.strerror or e} "
              "(is a softswitch running with --runtime-addr there?)", file=sys.stderr)
        return 1
    except (ControlError, ValueError) as e:
        print(f"softswitch cli: error: {e}", file=sys.stderr)
        return 1
    if ns.json or not isinstance(result, list):
        if result is not None:
            print(json.dumps(result, indent=2))
        return 0
    for row in result:
        print("  ".join(f"{k}={v}" for k, v in row.items() if k != "queues"))
        for qrow in row.get("queues", []):
            if qrow["enqueued"] or qrow["dropped"] or qrow["queued"]:
                print("    " + "  ".join(f"{k}={v}" for k, v in qrow.items()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("compile", "p4info-diff", "stf", "cli"):
        try:  # Ctrl-C while a program compiles was a KeyboardInterrupt traceback out of the front end
            return _subcommand(argv)
        except KeyboardInterrupt:
            print(f"softswitch {argv[0]}: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # `softswitch stf ... | head`: the reader left (a traceback, and one at exit)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141  # as a shell reports a command ended by SIGPIPE
    return _subcommand(argv)


def _subcommand(argv: list[str]) -> int:
    if argv and argv[0] == "compile":
        from softswitch.compile_cmd import main as compile_main
        return compile_main(argv[1:])
    if argv and argv[0] == "cli":
        return run_cli(argv[1:])
    if argv and argv[0] == "stf":  # was taken for a program file named "stf": "cannot read stf"
        from softswitch.stf.__main__ import main as stf_main
        return stf_main(argv[1:], prog="softswitch stf")
    if argv and argv[0] == "p4info-diff":
        from softswitch.p4info_diff import main as diff_main
        return diff_main(argv[1:])  # a reader that leaves early: main's BrokenPipeError, 141
    return run_switch(argv)
