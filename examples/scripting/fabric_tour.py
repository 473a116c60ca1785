"""Script the controller from Python: a fabric, a controller, traffic, a failed link, its repair.

    sudo .venv/bin/python examples/scripting/fabric_tour.py            # --help for the options

Steps (each prints a line; the last lines are a SUMMARY and RESULT PASS/FAIL):
  1. bring up the topology (default examples/small.yaml) with ``mrc_fabric.Fabric``, as a context
     manager: the namespaces, veths and switch processes go away on exit, on an error and on Ctrl-C;
  2. build the static plan and start a ``controller.Controller`` on it; ``converge_all()`` pushes
     the pipeline and writes every switch's tables;
  3. ``wiring_check()``: probe every fabric cable and print the report;
  4. write the hosts' EV plans and run ``mrc-perf`` (MRC RDMA Writes, every byte verified) from
     --src to --dst, in their network namespaces;
  5. ``poll_counters()`` + ``metrics_snapshot()``: per switch, packets forwarded, trimmed, CE-marked
     and dropped during the traffic;
  6. take a leaf-spine link down (``Fabric.link_down``, the same fault as ``mrc-fabric fault
     link-down``), show what the controller sees (wiring, link state, the port's counters), send
     the same traffic again (MRC retires the paths through the dead link and still delivers);
  7. bring the link back, wait (bounded) until the wiring check sees it up, and ``converge_all()``
     again: the read-diff-write reconcile finds nothing to repair (a link flap loses no table entry);
  8. the same as a daemon: ``run(stop_event)`` on a thread (its own wiring rounds, counter reads and
     reconciles); take the link down and up again and watch ``metrics_snapshot().links`` follow.

Needs root (namespaces, veths, switch processes):
    sudo .venv/bin/python examples/scripting/fabric_tour.py
Exit status: 0 every step passed, 1 a step failed (the line says which), 2 bad arguments / not root.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import mrc_fabric  # noqa: F401  -- first: it switches gRPC's fork handlers off before grpc loads

# isort: split
from controller import Controller, Options, build_plan, load_topology, setup_logging, write_ev_files
from controller import p4contract as P4  # program names and constants, never typed by hand
from controller.telemetry import EVENT_ECN_MARKED, EVENT_TRIMMED
from mrc_fabric import Fabric, FabricError
from mrc_fabric.targets import TARGETS, load_pipeline, selected_target

REPO = Path(__file__).resolve().parents[2]


class StepFailed(RuntimeError):
    """A step did not do what it should; the message says which and why."""


def say(msg: str) -> None:
    print(msg, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Pick a --prefix and --grpc-base-port no other fabric on the machine uses "
                                        "(the test suite's fabrics use other prefixes, gRPC ports 20900-24500 and 27300-28999, "
                                        "run-time ports 1000 above).")
    ap.add_argument("--topology", default=str(REPO / "examples" / "small.yaml"), help="topology file (default: %(default)s)")
    ap.add_argument("--target", choices=TARGETS, default=selected_target(), help="switch target (default $TARGET or softswitch)")
    ap.add_argument("--prefix", default="exa", help="namespace/interface prefix of this fabric (default %(default)s)")
    ap.add_argument("--grpc-base-port", type=int, default=25100,
                    help="switch i (file order) serves P4Runtime on this + i; its run-time port is 1000 above "
                         "(default %(default)s)")
    ap.add_argument("--src", default="h1", help="host that writes (default %(default)s)")
    ap.add_argument("--dst", default="h3", help="host written to (default %(default)s)")
    ap.add_argument("--fail", default="p1l1,p1s1", metavar="A,B",
                    help="the link to take down: two switch names, or node:port (default %(default)s)")
    ap.add_argument("--size", default="64K", help="mrc-perf message size (default %(default)s)")
    ap.add_argument("--iters", type=int, default=16, help="mrc-perf messages per run (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds each traffic run may take (default %(default)s)")
    ap.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                    help="the controller's log lines on stderr (default %(default)s)")
    ap.add_argument("--workdir", help="where EV plans, state and switch logs go (default: a temporary directory)")
    args = ap.parse_args(argv)
    if len(args.fail.split(",")) != 2:
        ap.error("--fail takes A,B")
    return args


# ---- the controller's view ----------------------------------------------------------------------------
def counter_totals(ctl: Controller) -> dict[str, dict[str, int]]:
    """Read every switch's counters now and sum them the way an operator reads them."""
    ctl.poll_counters()
    out = {}
    for name, c in ctl.metrics_snapshot().counters.items():
        out[name] = {
            "fwd": sum(p for port, (p, _b) in c.port_tx.items() if port != P4.CPU_PORT),
            "trim": c.congestion.get(EVENT_TRIMMED, 0),
            "ce": c.congestion.get(EVENT_ECN_MARKED, 0),
            "drop": sum(p for p, _b in c.drops.values()),
        }
    return out


def print_counter_delta(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> dict[str, int]:
    say("    switch   forwarded  trimmed     CE  dropped")
    total = dict.fromkeys(("fwd", "trim", "ce", "drop"), 0)
    for name in sorted(after):
        d = {k: v - before.get(name, {}).get(k, 0) for k, v in after[name].items()}
        for k in total:
            total[k] += d[k]
        say(f"    {name:<8} {d['fwd']:>9} {d['trim']:>8} {d['ce']:>6} {d['drop']:>8}")
    return total


def port_packets(ctl: Controller, end: str) -> tuple[int, int]:
    """(rx, tx) packets of one switch port (``switch:port``) as of the last counter read."""
    sw, port = end.split(":")
    c = ctl.metrics_snapshot().counters.get(sw)
    if c is None:
        return 0, 0
    return c.port_rx.get(int(port), (0, 0))[0], c.port_tx.get(int(port), (0, 0))[0]


def wiring(ctl: Controller, label: str) -> dict:
    rep = ctl.wiring_check()
    s = rep.summary()
    say(f"[wiring] {label}: {s['links_up']}/{s['links']} links up, dead {s['dead'] or 'none'}, "
        f"miswired {s['miswired'] or 'none'}, unexpected {s['unexpected'] or 'none'}")
    return s


def link_state(ctl: Controller, a: str, b: str) -> str:
    """The state the controller exports for the cable a--b (``mrc_link_state``)."""
    for (x, y), st in ctl.metrics_snapshot().links.items():
        if {x, y} == {a, b}:
            return st
    raise StepFailed(f"the controller knows no link {a}--{b}")


def wait_link(ctl: Controller, a: str, b: str, pred, timeout_s: float) -> tuple[str, float]:
    """Poll the controller's exported link state until ``pred(state)`` or the timeout; (state, seconds)."""
    t0 = time.monotonic()
    while True:
        st = link_state(ctl, a, b)
        if pred(st) or time.monotonic() - t0 > timeout_s:
            return st, time.monotonic() - t0
        time.sleep(0.1)


# ---- traffic --------------------------------------------------------------------------------------------
def mrc_perf(fab: Fabric, plans: Path, src: str, dst: str, planes: int, args: argparse.Namespace,
             sock: Path) -> dict:
    """One mrc-perf run src -> dst (server in dst's namespace, client in src's), every byte verified."""
    ifaces = ",".join(f"nic{p}" for p in range(1, planes + 1))
    py = sys.executable
    sock.unlink(missing_ok=True)
    server = subprocess.Popen(
        ["ip", "netns", "exec", fab.netns(dst), py, "-m", "mrc", "server", "--ifaces", ifaces,
         "--plan", str(plans / f"{dst}.json"), "--bootstrap", f"unix:{sock}", "--accept-timeout", str(args.timeout)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 20
        while not sock.exists():  # the server's unix socket appears once it listens
            if server.poll() is not None or time.monotonic() > end:
                raise StepFailed(f"mrc-perf server on {dst} did not start: {server.stderr.read()[-500:]}")
            time.sleep(0.05)
        try:
            cli = subprocess.run(
                ["ip", "netns", "exec", fab.netns(src), py, "-m", "mrc", "client", "--ifaces", ifaces,
                 "--plan", str(plans / f"{src}.json"), "--peer", f"unix:{sock}", "--size", args.size,
                 "--iters", str(args.iters), "--verify", "--json", "--progress", "0", "--timeout", str(args.timeout)],
                cwd=REPO, capture_output=True, text=True, timeout=args.timeout + 30, check=False)
        except subprocess.TimeoutExpired:
            raise StepFailed(f"mrc-perf client {src} -> {dst} did not end within {args.timeout + 30:.0f} s") from None
        server.wait(timeout=15)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        sock.unlink(missing_ok=True)
    try:
        rep = json.loads(cli.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise StepFailed(f"mrc-perf client {src} -> {dst} failed (exit {cli.returncode}): {cli.stderr[-500:]}") from None
    if cli.returncode != 0 or rep["server"].get("verify") != "ok":
        raise StepFailed(f"mrc-perf {src} -> {dst}: exit {cli.returncode}, server verify "
                         f"{rep['server'].get('verify')}: {cli.stderr[-300:]}")
    bad = [e for e in rep.get("ev_timeline", ()) if e.get("to") == "ASSUMED_BAD"]
    say(f"[traffic] {src} -> {dst}: {rep['results']['bytes']} bytes in {rep['results']['seconds']:.2f} s "
        f"({rep['results']['mb_per_s']:.2f} MB/s), verified by the server, "
        f"{rep['retransmissions']['total']} resent, {len(bad)} EV(s) retired")
    return rep


# ---- the tour -------------------------------------------------------------------------------------------
def tour(args: argparse.Namespace, work: Path) -> list[str]:
    topo = load_topology(args.topology)
    for h in (args.src, args.dst):
        if h not in topo.hosts:
            raise StepFailed(f"host {h!r} is not in {args.topology}")
    fa, fb = args.fail.split(",")
    if not topo.links_between(fa.split(":")[0], fb.split(":")[0]):  # say so before building anything
        raise StepFailed(f"--fail {args.fail}: no link between {fa} and {fb} in {args.topology}")
    summary: list[str] = []
    t0 = time.monotonic()
    say(f"[fabric] bringing up {args.topology} on {args.target}: prefix {args.prefix}, "
        f"gRPC ports {args.grpc_base_port}..{args.grpc_base_port + len(topo.switches) - 1}")
    with Fabric(topo, prefix=args.prefix, target=args.target, grpc_base_port=args.grpc_base_port,
                state_dir=work / "state", topology_path=args.topology) as fab:
        say(f"[fabric] up in {time.monotonic() - t0:.1f} s: {len(topo.switches)} switches, {len(topo.hosts)} host "
            f"namespaces ({fab.netns(args.src)}, ...); switch logs in {work / 'state' / args.prefix}")
        plan = build_plan(topo)
        # the same pipeline `mrc-controller run --target ...` pushes; gRPC ports as the fabric's
        # wiring and counter periods only matter for run() (step 8): short, so it notices a fault fast
        ctl = Controller(plan, load_pipeline(args.target),
                         Options(grpc_base_port=args.grpc_base_port, wiring_interval_s=0.5, wiring_timeout_s=0.5,
                                 counters_interval_s=1.0))
        try:
            fab.port_admin_hook = ctl.set_port_admin  # `fab.port_admin(...)` now goes through the controller

            t1 = time.monotonic()
            ok = ctl.converge_all()
            snap = ctl.metrics_snapshot()
            written = sum(i.entities_written for i in snap.switches.values())
            say(f"[controller] converge_all: {sum(ok.values())}/{len(ok)} switches converged, {written} entities "
                f"written, in {time.monotonic() - t1:.1f} s")
            if not all(ok.values()):
                raise StepFailed(f"switches not converged: {sorted(n for n, v in ok.items() if not v)}")
            summary.append(f"SUMMARY converge: {sum(ok.values())}/{len(ok)} switches, {written} entities written")

            s = wiring(ctl, "after converge")
            if s["links_up"] != s["links"]:
                raise StepFailed(f"wiring check: only {s['links_up']}/{s['links']} links up")
            summary.append(f"SUMMARY wiring: {s['links_up']}/{s['links']} links up")

            plans = work / "evplans"
            write_ev_files(plan, plans, fmt="json")  # what `mrc-controller ev gen -o evplans/` writes
            sock = work / "perf.sock"
            c0 = counter_totals(ctl)
            rep = mrc_perf(fab, plans, args.src, args.dst, topo.planes, args, sock)
            say("[counters] during the traffic (poll_counters + metrics_snapshot):")
            tot = print_counter_delta(c0, counter_totals(ctl))
            summary.append(f"SUMMARY traffic: {args.src}->{args.dst} {rep['results']['bytes']} bytes verified; "
                           f"switches forwarded {tot['fwd']}, trimmed {tot['trim']}, CE {tot['ce']}, "
                           f"dropped {tot['drop']}")

            # ---- a failure ----
            link = fab.link_down(fa, fb)
            la, lb = str(link.a), str(link.b)
            say(f"[fault] link {la}--{lb} down (both veth ends)")
            s = wiring(ctl, "after the fault")
            st = link_state(ctl, la, lb)
            say(f"[controller] link {la}--{lb}: {st}")
            if st == "up":
                raise StepFailed(f"the wiring check still reports {la}--{lb} up after the fault")
            c1 = counter_totals(ctl)
            p1 = {e: port_packets(ctl, e) for e in (la, lb)}
            rep = mrc_perf(fab, plans, args.src, args.dst, topo.planes, args, sock)
            c2 = counter_totals(ctl)
            say("[counters] during the traffic with the link down:")
            print_counter_delta(c1, c2)
            for e in (la, lb):  # what the program counted on the dead link's two ports
                rx, tx = (n - o for n, o in zip(port_packets(ctl, e), p1[e], strict=True))
                say(f"[counters] port {e}: rx +{rx}, tx +{tx}")
            summary.append(f"SUMMARY fault: {la}--{lb} {st}, {s['links_up']}/{s['links']} links up; traffic "
                           f"{rep['results']['bytes']} bytes verified")

            # ---- the repair ----
            fab.link_up(fa, fb)
            say(f"[fault] link {la}--{lb} up again")
            end = time.monotonic() + 15
            while True:  # the carrier takes a moment; each round waits for its probes
                s = wiring(ctl, "after the repair")
                if s["links_up"] == s["links"] or time.monotonic() > end:
                    break
            if s["links_up"] != s["links"]:
                raise StepFailed(f"after link-up only {s['links_up']}/{s['links']} links up within 15 s")
            before = {n: (i.reconcile_runs, i.entities_written) for n, i in ctl.metrics_snapshot().switches.items()}
            ok = ctl.converge_all()
            after = {n: (i.reconcile_runs, i.entities_written) for n, i in ctl.metrics_snapshot().switches.items()}
            runs = sum(after[n][0] - before[n][0] for n in after)
            wrote = sum(after[n][1] - before[n][1] for n in after)
            say(f"[controller] reconcile: {runs} switch(es) read and compared, {wrote} entities written "
                f"(a link flap changes no table)")
            if not all(ok.values()):
                raise StepFailed(f"switches not converged after the repair: {sorted(n for n, v in ok.items() if not v)}")
            summary.append(f"SUMMARY repair: {s['links_up']}/{s['links']} links up; reconcile of {runs} switches "
                           f"wrote {wrote}")

            # ---- the same as a daemon: run() on a thread does wiring, counters and reconciles itself ----
            stop = threading.Event()
            loop = threading.Thread(target=ctl.run, args=(stop,), name="controller", daemon=True)
            loop.start()
            try:
                fab.link_down(fa, fb)
                seen = wait_link(ctl, la, lb, lambda st: st == "dead", 10.0)  # a round under way may say "half"
                say(f"[daemon] link {la}--{lb} down: run()'s own wiring rounds show it {seen[0]} "
                    f"after {seen[1]:.1f} s")
                fab.link_up(fa, fb)
                back = wait_link(ctl, la, lb, lambda st: st == "up", 10.0)
                say(f"[daemon] link up again: shown {back[0]} after {back[1]:.1f} s")
            finally:
                stop.set()
                loop.join(timeout=20)  # run() ends within a wiring round and its stop wait
            if seen[0] != "dead" or back[0] != "up":
                raise StepFailed(f"the daemon's view of {la}--{lb}: {seen[0]} with the link down, {back[0]} after")
            summary.append(f"SUMMARY daemon: run() showed {la}--{lb} {seen[0]} in {seen[1]:.1f} s and up again "
                           f"in {back[1]:.1f} s")
        finally:
            ctl.close()
    summary.append(f"SUMMARY teardown: fabric {args.prefix} removed, {time.monotonic() - t0:.0f} s in all")
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("fabric_tour: needs root (network namespaces, veths, switch processes); run it with sudo",
              file=sys.stderr)
        return 2
    setup_logging("text", args.log_level)  # the controller's log lines, with their fields, on stderr
    with tempfile.TemporaryDirectory(prefix="mrc-tour-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        try:
            summary = tour(args, work)
        except (StepFailed, FabricError) as e:
            say(f"RESULT FAIL: {e}")
            return 1
        except KeyboardInterrupt:
            say("RESULT FAIL: interrupted (the fabric was removed)")
            return 130
    for line in summary:
        say(line)
    say("RESULT PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
