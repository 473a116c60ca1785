"""``mrc-perf`` (also ``python -m mrc``): RDMA WRITE bandwidth/latency between two MRC endpoints.

    mrc-perf server --ifaces eth1,eth2 [--plan h2.yaml] [--bootstrap [::]:18515] [--forever]
    mrc-perf client --ifaces eth1,eth2 --peer h2-addr [--plan h1.yaml] --size 1M --iters 100 --mode mrc

Exit status: 0 success, 1 the run failed (errors, verification mismatch), 2 bad arguments or setup.

The commands; the entry point, ``mrc.cli.main``, imports this module inside its Ctrl-C handling.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
from typing import Any

from mrc.core.types import evidence_text
from mrc.endpoint.bootstrap import DEFAULT_PORT, BootstrapError, Listener, parse_address
from mrc.endpoint.driver import EndpointError
from mrc.endpoint.netif import InterfaceError, parse_mac
from mrc.endpoint.perf import HostConfig, PerfError, PerfParams, ServerLimits, run_client, serve_one
from mrc.endpoint.plan import PlanError, load_plan
from mrc.wire import formats as F

EVIDENCE_SHOWN = 10  # EV changes the text report explains (a "why:" line each); --json has every one
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(text: str) -> int:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1] if t and t[-1] in "KMG" else ""
    try:
        v = int(t[: len(t) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (e.g. 4096, 64K, 64M)") from None
    if v < 1:
        raise argparse.ArgumentTypeError("size must be >= 1")
    return v


def _ifaces(text: str) -> list[tuple[int, str]]:
    out = []
    for i, item in enumerate(x for x in text.split(",") if x):
        if "@" in item:
            n, name = item.split("@", 1)
            try:
                num = int(n)
            except ValueError:
                raise argparse.ArgumentTypeError(f"bad port number in {item!r} (want PORT@IFNAME)") from None
        else:
            num, name = i + 1, item
        if num < 1 or not name:
            raise argparse.ArgumentTypeError(f"bad interface {item!r}: ports are 1-based")
        out.append((num, name))
    if not out:
        raise argparse.ArgumentTypeError("give at least one interface")
    if len({n for n, _ in out}) != len(out):
        raise argparse.ArgumentTypeError("port numbers repeat")
    names = [name for _, name in out]
    if len(set(names)) != len(names):  # lo,lo: two ports on one interface, each frame received twice
        raise argparse.ArgumentTypeError(f"interface(s) {', '.join(sorted({n for n in names if names.count(n) > 1}))} "
                                         "given twice (one interface per NIC port)")
    return out


def _macs(text: str) -> list[bytes]:
    try:
        return [parse_mac(m) for m in text.split(",") if m]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _host_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("endpoint")
    g.add_argument("--ifaces", required=True, type=_ifaces, metavar="IF[,IF...]",
                   help="NIC ports in order (port 1, 2, ...), or PORT@IF; one per plane")
    g.add_argument("--plan", help="this host's EV plan file from the controller (YAML/JSON); without it the "
                                  "hosts are taken as directly linked port to port")
    g.add_argument("--encap", choices=("srv6", "stev", "udp"), default="srv6", help="EV encapsulation (default srv6)")
    g.add_argument("--gid", help="this host's GID (IPv6); default: the plan's, else fd00::<port-1 MAC>")
    g.add_argument("--next-hop-macs", type=_macs, metavar="MAC[,MAC...]",
                   help="next-hop MAC per port (in --ifaces order); default: the plan's leaf MACs, else the "
                        "peer's port MACs (direct link)")
    g.add_argument("--evs-per-port", type=int, default=2, help="EVs per port without a plan (default 2)")
    g.add_argument("--rate-gbps", type=float, default=10.0, help="per-port pacing rate (default 10)")
    g.add_argument("--tx-delay-us", type=int, default=0, metavar="US",
                   help="delay every frame sent by this much (a propagation delay on this host's side, for "
                        "switches that cannot delay, e.g. bmv2 without netem; docs/fabric.md); default 0")
    g.add_argument("--telemetry", action="store_true", help="carry the Hop-by-Hop telemetry option")
    g.add_argument("--json", action="store_true", help="print one JSON report (progress as JSON lines on stderr)")


def _dscp(text: str) -> int | None:
    """``--resend-dscp``: a DSCP (0-63) or ``none``."""
    if text.strip().lower() == "none":
        return None
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a DSCP (0-63) or none") from None
    if not 0 <= v <= 63:
        raise argparse.ArgumentTypeError(f"DSCP {v} is not in 0-63")
    if v == F.DSCP_TRIMMED:
        raise argparse.ArgumentTypeError(f"DSCP {v} marks a trimmed packet: a resend with it would be taken for one")
    return v


def _nscc_param(text: str) -> tuple[str, int | float | bool]:
    """``--nscc NAME=VALUE``: an integer, a float, or true/false (disable_qa)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not PARAM=VALUE")
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    try:
        return name, int(value)
    except ValueError:
        try:
            return name, float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {value!r} is not a number") from None


def _address(text: str) -> str:
    """``--peer`` / ``--bootstrap``, checked when parsed: a bad one ("port out of range in address
    '...:99999'", naming no flag) was found only after the interfaces had been opened."""
    try:
        parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="mrc-perf", description="RDMA WRITE bandwidth and latency over MRC "
                                 "(or the single-path RC baseline), in the spirit of ib_write_bw.")
    sub = ap.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server", help="receive writes (the per-host daemon: --forever)")
    _host_args(s)
    s.add_argument("--bootstrap", default=f"[::]:{DEFAULT_PORT}", type=_address,
                   help=f"listen address: HOST:PORT, [V6]:PORT or unix:PATH (default [::]:{DEFAULT_PORT})")
    s.add_argument("--forever", action="store_true", help="serve clients one after another until killed")
    s.add_argument("--max-bytes", type=_size, default=1 << 30, help="largest qps x size accepted (default 1G)")
    s.add_argument("--accept-timeout", type=float, default=0.0,
                   help="give up if no client connects within this many seconds (default 0: wait forever)")
    c = sub.add_parser("client", help="post writes to a server and measure")
    _host_args(c)
    c.add_argument("--peer", required=True, type=_address, help="server bootstrap address: HOST[:PORT], [V6]:PORT or unix:PATH")
    c.add_argument("--size", type=_size, default=65536, help="message size (default 64K; K/M/G suffixes)")
    c.add_argument("--iters", type=int, default=1000, help="messages to write (default 1000)")
    c.add_argument("--duration", type=float, default=0.0, help="write for this many seconds instead of --iters (default 0: --iters)")
    c.add_argument("--qps", type=int, default=1, help="queue pairs (default 1)")
    c.add_argument("--mode", choices=("mrc", "rc"), default="mrc", help="mrc (sprayed; the default) or rc (single-path baseline)")
    c.add_argument("--cc", choices=("nscc", "dcqcn", "none"), default="",
                   help="congestion control (default: nscc for --mode mrc, dcqcn for rc; the server uses the same)")
    c.add_argument("--nscc", action="append", default=[], metavar="PARAM=VALUE", type=_nscc_param,
                   help="an NSCC parameter of the run's CC profile (NsccConfig names: base_rtt in ns, max_cwnd in "
                        "bytes, ...; repeatable; with any, base_rtt is required). Default: each QP learns the base RTT")
    c.add_argument("--resend-dscp", type=_dscp, default=F.DSCP_RESEND, metavar="DSCP|none",
                   help=f"--mode mrc: DSCP of data resent after a loss verdict, which mrc_switch.p4 queues ahead of "
                        f"the data queue (default {F.DSCP_RESEND}; none: resend as data)")
    c.add_argument("--imm", action="store_true", help="WRITE_WITH_IMM (the server counts immediates)")
    c.add_argument("--tx-depth", type=int, default=16, help="outstanding messages per QP (default 16)")
    c.add_argument("--mtu", type=int, default=0, help="path MTU (default: largest the interfaces allow)")
    c.add_argument("--mpr", type=int, default=1, help="PSN window in units of 128 packets (default 1)")
    c.add_argument("--verify", action="store_true", help="the server checks every byte of each QP's buffer against the payload after the run")
    c.add_argument("--seed", type=int, default=1, help="payload seed (default 1)")
    c.add_argument("--progress", type=float, default=1.0, help="seconds between progress lines (default 1; 0: none)")
    c.add_argument("--timeout", type=float, default=120.0, help="give up after this many seconds (default 120)")
    return ap


def _host(a: argparse.Namespace) -> HostConfig:
    plan = load_plan(a.plan) if a.plan else None
    gid = None
    if a.gid:
        import ipaddress

        try:
            gid = ipaddress.IPv6Address(a.gid).packed
        except ValueError:
            raise PerfError(f"--gid: not an IPv6 address: {a.gid!r}") from None
    nh: dict[int, bytes] = {}
    if a.next_hop_macs:
        if len(a.next_hop_macs) != len(a.ifaces):
            raise PerfError(f"--next-hop-macs has {len(a.next_hop_macs)} MACs for {len(a.ifaces)} interfaces")
        nh = {num: mac for (num, _), mac in zip(a.ifaces, a.next_hop_macs, strict=True)}
    if not 1 <= a.evs_per_port <= 256:
        raise PerfError("--evs-per-port must be 1..256")
    if not 0 < a.rate_gbps < math.inf:  # nan and inf passed '<= 0' and reached the pacing
        raise PerfError(f"--rate-gbps must be positive and finite, got {a.rate_gbps}")
    if a.tx_delay_us < 0:
        raise PerfError("--tx-delay-us must be >= 0")
    import socket

    for _, name in a.ifaces:  # before the bootstrap: a typo must not wait for a peer (or listen for one)
        try:
            socket.if_nametoindex(name)
        except OSError:
            raise PerfError(f"--ifaces: no interface {name!r} in this network namespace") from None
    return HostConfig(a.ifaces, a.encap, plan, gid, nh, a.evs_per_port, a.rate_gbps, a.telemetry, a.tx_delay_us)


def format_client(r: dict[str, Any]) -> str:
    """The human report of a client run."""
    cfg, res, rx = r["config"], r["results"], r["retransmissions"]
    lat = res["latency_us"]
    lines = [
        (f"mrc-perf client  mode={cfg['mode']} cc={cfg.get('cc')} encap={cfg['encap']} qps={cfg['qps']} size={cfg['size']} "
        f"mtu={cfg['mtu']} ports={len(cfg['ports'])} evs={cfg['evs']} imm={'yes' if cfg['imm'] else 'no'}"),
        (f"{'bytes':>14} {'messages':>9} {'seconds':>9} {'MB/s':>10} {'Gb/s':>8} "
        f"{'lat p50 us':>11} {'p99 us':>10} {'p999 us':>10}"),
        (f"{res['bytes']:>14} {res['messages']:>9} {res['seconds']:>9.3f} {res['mb_per_s']:>10.1f} "
        f"{res['gbit_per_s']:>8.3f} {lat['p50']:>11.1f} {lat['p99']:>10.1f} {lat['p999']:>10.1f}"),
        (f"retransmissions: total={rx['total']} rack={rx['rack']} timeout={rx['timeout']} trim={rx['trim']} "
        f"nak={rx['nak']} rnr={rx.get('rnr', 0)}"),
    ]
    lines += _timelines(r)
    s = r.get("server") or {}
    if s:
        lines.append(f"server: verify={s.get('verify')} imm={s.get('imm')} bytes_placed={s.get('bytes_placed')} "
                     f"duplicates_received={s.get('duplicates_received')} imm_completions={s.get('imm_completions')} "
                     f"imm_in_order={s.get('imm_in_order')}")
    for e in r["errors"]:
        lines.append(f"error: {e}")
    return "\n".join(lines)


def _timelines(r: dict[str, Any]) -> list[str]:
    out = []
    if r["link_events"]:
        out.append("link events:")
        # signed: a port's state at the socket's opening comes before the run's t0 ("+-0.07 s" until 2026-12-07)
        out += [f"  {e['t_s']:+.6f} s  port {e['port']} ({e['ifname']}) {e['state']}" for e in r["link_events"]]
    out.append(f"EV timeline ({len(r['ev_timeline'])} changes):" if r["ev_timeline"] else "EV timeline: no changes")
    shown = r["ev_timeline"][:50]
    for k, e in enumerate(shown):
        out.append(f"  {e['t_s']:+.6f} s  qp {e['qpn']} ev {e['ev']} port {e['port']}  {e['from']} -> {e['to']}"
                   f"  ({e['cause']})")
        if k < EVIDENCE_SHOWN and e.get("evidence"):  # why, for the first changes (all of it in --json)
            out.append(f"      why: {evidence_text(e['evidence'])}")
    if len(r["ev_timeline"]) > len(shown):
        out.append(f"  ... {len(r['ev_timeline']) - len(shown)} more (see --json)")
    return out


def format_server(r: dict[str, Any]) -> str:
    """The human report of one served session."""
    lines = [f"mrc-perf server: verify={r['verify']} imm={r.get('imm')} bytes_placed={r['bytes_placed']} "
             f"duplicates_received={r['duplicates_received']} imm_completions={r['imm_completions']} "
             f"imm_in_order={r['imm_in_order']}" + (" (client never said done)" if r["timed_out"] else "")]
    return "\n".join(lines + _timelines(r))


def _progress_printer(as_json: bool):
    def show(p: dict[str, Any]) -> None:
        if as_json:
            print(json.dumps({"progress": p}), file=sys.stderr, flush=True)
        else:
            print(f"[{p['t_s']:8.2f} s] {100 * p['fraction']:6.2f}%  {p['mb_per_s']:10.1f} MB/s  "
                  f"{p['messages_done']} messages done", file=sys.stderr, flush=True)
    return show


def perf_params(a: argparse.Namespace) -> PerfParams:
    """The client's measurement parameters from its command line."""
    return PerfParams(a.size, a.iters, a.qps, a.mode, a.imm, a.duration, a.tx_depth, a.verify, a.seed,
                      a.mtu, a.mpr, a.progress, a.timeout, a.cc, dict(a.nscc), a.resend_dscp)


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    # SIGTERM ends a run like Ctrl-C (exit status 130; the server's listener still removes its unix
    # socket); the handler before is put back for callers that run main() in-process
    try:
        before = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        installed = True
    except ValueError:  # not the main thread: signals stay as they are
        installed = False
    try:
        return _run(a)
    finally:
        if installed:
            signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)


def _run(a: argparse.Namespace) -> int:
    try:
        host = _host(a)
        if a.role == "client":
            prm = perf_params(a)
            r = run_client(host, prm, parse_address(a.peer), _progress_printer(a.json),
                           lambda msg: print(json.dumps({"note": msg}) if a.json else f"mrc-perf client: {msg}",
                                             file=sys.stderr, flush=True))
            print(json.dumps(r, default=str) if a.json else format_client(r), flush=True)
            return 0 if r["ok"] else 1
        if a.accept_timeout < 0 or math.isnan(a.accept_timeout):  # -1 waited forever, as 0 does
            raise PerfError(f"--accept-timeout must be 0 (wait forever) or more seconds, got {a.accept_timeout}")
        listener = Listener(parse_address(a.bootstrap))
        try:
            if not a.json:
                print(f"mrc-perf server listening on {listener.addr}", file=sys.stderr, flush=True)
            status = 0
            if a.forever:  # a bad or idle peer is refused and logged, never ends the daemon
                from mrc.endpoint.perf import serve_forever

                serve_forever(host, listener, ServerLimits(a.max_bytes),
                              lambda r: print(json.dumps(r, default=str) if a.json else format_server(r), flush=True),
                              lambda msg: print(f"mrc-perf server: session failed: {msg}", file=sys.stderr,
                                                flush=True))
                return 0
            while True:
                r = serve_one(host, listener, ServerLimits(a.max_bytes),
                              a.accept_timeout if a.accept_timeout > 0 else None)
                if r is None:
                    print("mrc-perf server: no client within --accept-timeout", file=sys.stderr)
                    return 1
                print(json.dumps(r, default=str) if a.json else format_server(r), flush=True)
                if r["verify"] not in ("ok", "skipped") or r.get("imm", "skipped") not in ("ok", "skipped"):
                    status = 1
                if not a.forever:
                    return status
        finally:
            listener.close()
    except (PerfError, PlanError, EndpointError, InterfaceError, BootstrapError, ValueError) as exc:
        print(f"mrc-perf: {exc}", file=sys.stderr)
        if a.json:  # a JSON reader gets an answer on stdout too, not an empty document
            print(json.dumps({"role": a.role, "ok": False, "error": str(exc)}), flush=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
