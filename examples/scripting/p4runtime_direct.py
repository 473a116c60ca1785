"""Talk P4Runtime to one switch directly: read a table and counters, write and delete an entry,
then let the controller's reconcile repair what the script changed.

    sudo .venv/bin/python examples/scripting/p4runtime_direct.py      # --help for the options

Steps (each prints a line; the last lines are a SUMMARY and RESULT PASS/FAIL):
  1. bring up the topology with ``mrc_fabric.Fabric`` (removed on exit, error or Ctrl-C) and converge
     it with a ``controller.Controller``; then close the controller, as an operator would stop the
     daemon before working on a switch by hand;
  2. open a session to --switch with the project's P4Runtime client (``controller.p4rt.P4RuntimeClient``)
     and resolve names to ids from the P4Info the switch runs (``controller.P4Names``); every program
     name comes from ``controller/p4contract.py``, none is typed here;
  3. read every entry of ``route_v6`` and print a few; read the switch's per-port rx/tx counters and
     its drop counters by reason;
  4. INSERT one entry (a documentation prefix, 2001:db8::/32 -> drop_no_route), read it back by its
     key, DELETE it and check it is gone;
  5. make drift on purpose: delete one of the controller's routes and insert the extra entry again;
  6. start a new controller and ``converge_all()``: its read-diff-write reconcile writes exactly two
     updates on that switch (the route back, the extra entry deleted), and the table is as before.

Needs root (namespaces, veths, switch processes):
    sudo .venv/bin/python examples/scripting/p4runtime_direct.py
Exit status: 0 every step passed, 1 a step failed (the line says which), 2 bad arguments / not root.
"""
from __future__ import annotations

import argparse
import ipaddress
import os
import sys
import tempfile
import time
from pathlib import Path

import mrc_fabric  # noqa: F401  -- first: it switches gRPC's fork handlers off before grpc loads

# isort: split
from p4.v1 import p4runtime_pb2

from controller import Controller, Options, P4Names, build_plan, load_topology, setup_logging
from controller import p4contract as P4  # program names and constants, never typed by hand
from controller.p4rt import P4RuntimeClient, P4RuntimeError, describe_entity
from mrc_fabric import Fabric, FabricError
from mrc_fabric.targets import TARGETS, load_pipeline, selected_target

ROUTE_V6 = P4.T_INGRESS_ROUTING_ROUTE_V6
DST_ADDR = P4.MATCH_FIELDS[ROUTE_V6][0]  # the table's one key field, as the P4Info names it
EXTRA = ipaddress.IPv6Network("2001:db8::/32")  # RFC 3849 documentation prefix: no plan ever routes it
INSERT, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.DELETE

REPO = Path(__file__).resolve().parents[2]


class StepFailed(RuntimeError):
    """A step did not do what it should; the message says which and why."""


def say(msg: str) -> None:
    print(msg, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Pick a --prefix and --grpc-base-port no other fabric on the machine uses "
                                        "(the test suite's fabrics use other prefixes, gRPC ports 20900-24500 and 27300-28999, "
                                        "run-time ports 1000 above).")
    ap.add_argument("--topology", default=str(REPO / "examples" / "small.yaml"), help="topology file (default: %(default)s)")
    ap.add_argument("--target", choices=TARGETS, default=selected_target(), help="switch target (default $TARGET or softswitch)")
    ap.add_argument("--prefix", default="exb", help="namespace/interface prefix of this fabric (default %(default)s)")
    ap.add_argument("--grpc-base-port", type=int, default=25200,
                    help="switch i (file order) serves P4Runtime on this + i; its run-time port is 1000 above "
                         "(default %(default)s)")
    ap.add_argument("--switch", default="p1l1", help="the switch to work on (default %(default)s)")
    ap.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                    help="the controller's log lines on stderr (default %(default)s)")
    ap.add_argument("--workdir", help="where state and switch logs go (default: a temporary directory)")
    return ap.parse_args(argv)


def route_entry(names: P4Names, net: ipaddress.IPv6Network, with_action: bool = True) -> p4runtime_pb2.Entity:
    """A route_v6 entry for ``net`` -> drop_no_route (the key alone for a read or a delete)."""
    return names.table_entry(ROUTE_V6, {DST_ADDR: (int(net.network_address), net.prefixlen)},
                             P4.A_INGRESS_ROUTING_DROP_NO_ROUTE if with_action else None)


def all_entries(names: P4Names, table: str) -> p4runtime_pb2.Entity:
    """A wildcard read of every entry of ``table``."""
    ent = p4runtime_pb2.Entity()
    ent.table_entry.table_id = names.table(table).preamble.id
    return ent


def counter_cells(names: P4Names, counter: str, indexes: list[int] | None = None) -> list[p4runtime_pb2.Entity]:
    """CounterEntry reads: the given cells, or every cell (one wildcard) when ``indexes`` is None."""
    cid = names.counters_named(counter)[0].preamble.id
    out = []
    for i in indexes if indexes is not None else [None]:
        ent = p4runtime_pb2.Entity()
        ent.counter_entry.counter_id = cid
        if i is not None:
            ent.counter_entry.index.index = i
        out.append(ent)
    return out


def converge(args: argparse.Namespace, plan, label: str) -> tuple[int, int]:
    """A controller that converges every switch and closes; returns (switches converged, entities
    written on --switch)."""
    ctl = Controller(plan, load_pipeline(args.target), Options(grpc_base_port=args.grpc_base_port))
    try:
        ok = ctl.converge_all()
        if not all(ok.values()):
            raise StepFailed(f"{label}: switches not converged: {sorted(n for n, v in ok.items() if not v)}")
        written = ctl.metrics_snapshot().switches[args.switch].entities_written
    finally:
        ctl.close()  # ends its streams: the switch has no primary until the next client arbitrates
    say(f"[controller] {label}: {sum(ok.values())}/{len(ok)} switches converged, {written} entities written on "
        f"{args.switch}; controller closed")
    return sum(ok.values()), written


def run(args: argparse.Namespace, work: Path) -> list[str]:
    topo = load_topology(args.topology)
    if args.switch not in topo.switches:
        raise StepFailed(f"switch {args.switch!r} is not in {args.topology}")
    summary: list[str] = []
    t0 = time.monotonic()
    say(f"[fabric] bringing up {args.topology} on {args.target}: prefix {args.prefix}, "
        f"gRPC ports {args.grpc_base_port}..{args.grpc_base_port + len(topo.switches) - 1}")
    with Fabric(topo, prefix=args.prefix, target=args.target, grpc_base_port=args.grpc_base_port,
                state_dir=work / "state", topology_path=args.topology) as fab:
        plan = build_plan(topo)
        n_ok, _ = converge(args, plan, "first converge")
        summary.append(f"SUMMARY converge: {n_ok}/{len(topo.switches)} switches")

        addr, dev = fab.grpc_addr(args.switch), topo.switches[args.switch].device_id
        client = P4RuntimeClient(addr, device_id=dev, election_id=1)  # primary: the controller has gone
        try:
            p4info = client.get_p4info()
            if p4info is None:
                raise StepFailed(f"{args.switch} runs no pipeline")
            names = P4Names.from_p4info(p4info)
            say(f"[p4rt] {args.switch} at {addr} (device {dev}): primary, P4Info with {len(p4info.tables)} tables")

            # ---- read a table ----
            routes = client.read(all_entries(names, ROUTE_V6))
            say(f"[p4rt] {ROUTE_V6}: {len(routes)} entries, e.g.")
            for e in routes[:3]:
                say(f"    {describe_entity(e, names)}")

            # ---- read counters ----
            ports = sorted(topo.ports_of(args.switch))
            cells = client.read(counter_cells(names, P4.C_INGRESS_STATS_PORT_RX_COUNTER, ports)
                                + counter_cells(names, P4.C_EGRESS_STATS_PORT_TX_COUNTER, ports))
            rx = {c.counter_entry.index.index: c.counter_entry.data.packet_count for c in cells[:len(ports)]}
            tx = {c.counter_entry.index.index: c.counter_entry.data.packet_count for c in cells[len(ports):]}
            say("[p4rt] per-port packets (port_rx_counter / port_tx_counter): "
                + ", ".join(f"port {p} {rx[p]}/{tx[p]}" for p in ports))
            drops = client.read(counter_cells(names, P4.C_DROP_REASONS))
            by_reason = {P4.DROP_REASONS.get(c.counter_entry.index.index, str(c.counter_entry.index.index)):
                         c.counter_entry.data.packet_count for c in drops}
            say(f"[p4rt] {P4.C_DROP_REASONS}: " + (", ".join(f"{r} {n}" for r, n in sorted(by_reason.items()) if n)
                                                    or "none yet"))

            # ---- write and delete one entry ----
            client.write(INSERT, route_entry(names, EXTRA))
            back = client.read(route_entry(names, EXTRA, with_action=False))
            if len(back) != 1:
                raise StepFailed(f"read of {EXTRA} after INSERT returned {len(back)} entries")
            say(f"[p4rt] INSERT, read back: {describe_entity(back[0], names)}")
            client.write(DELETE, route_entry(names, EXTRA, with_action=False))
            gone = client.read(route_entry(names, EXTRA, with_action=False))
            if gone:
                raise StepFailed(f"{EXTRA} still there after DELETE")
            say(f"[p4rt] DELETE {EXTRA}: read back 0 entries")
            summary.append(f"SUMMARY p4rt: {ROUTE_V6} {len(routes)} entries read; counters read for "
                           f"{len(ports)} ports; INSERT/read/DELETE of {EXTRA} ok")

            # ---- drift on purpose ----
            victim = next((e for e in routes if names.action_by_id[e.table_entry.action.action.action_id]
                           .preamble.name == P4.A_INGRESS_ROUTING_SET_NEXT_HOP), None)
            if victim is None:
                raise StepFailed(f"{args.switch} has no {P4.A_INGRESS_ROUTING_SET_NEXT_HOP} route to delete")
            client.write(DELETE, victim)
            client.write(INSERT, route_entry(names, EXTRA))
            say(f"[p4rt] drift: deleted '{describe_entity(victim, names)}', inserted {EXTRA} again")
        except P4RuntimeError as e:
            raise StepFailed(f"P4Runtime on {args.switch}: {e}") from None
        finally:
            client.close()

        # ---- the controller repairs it ----
        _, written = converge(args, plan, "reconcile")
        client = P4RuntimeClient(addr, device_id=dev, election_id=1)
        try:
            after = client.read(all_entries(names, ROUTE_V6))
        finally:
            client.close()
        same = ({e.SerializeToString(deterministic=True) for e in after}
                == {e.SerializeToString(deterministic=True) for e in routes})
        say(f"[p4rt] {ROUTE_V6} after reconcile: {len(after)} entries, "
            f"{'the same as before' if same else 'NOT the same as before'}")
        if written != 2 or not same:
            raise StepFailed(f"reconcile wrote {written} entities on {args.switch} (expected 2: the route back, the "
                             f"extra one deleted); table {'restored' if same else 'differs'}")
        summary.append(f"SUMMARY reconcile: {written} entities written on {args.switch}, {ROUTE_V6} restored")
    summary.append(f"SUMMARY teardown: fabric {args.prefix} removed, {time.monotonic() - t0:.0f} s in all")
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("p4runtime_direct: needs root (network namespaces, veths, switch processes); run it with sudo",
              file=sys.stderr)
        return 2
    setup_logging("text", args.log_level)  # the controller's log lines, with their fields, on stderr
    with tempfile.TemporaryDirectory(prefix="mrc-p4rt-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        try:
            summary = run(args, work)
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
