"""In-process packets/s of softswitch's compiled v1model pipeline on the four-table bench program.

Packets are injected by calling the pipeline's ``ingress_item`` / ``egress_frame`` directly, the
entry points the packet loop uses (no sockets, no traffic manager), so the generator is not the bottleneck.  Prints packets/s for 64-byte and
1500-byte frames and the ratio to a bare-Python baseline measured in the same run (alternating
batches, best batch of each): a hand-written loop that does the same forwarding work (parse, one
dict lookup, rewrite, re-serialise) with no P4 at all.  ``--program mrc`` runs ``p4src/mrc_switch.p4``
as leaf p1l1 of ``examples/small.yaml`` with the controller's tables instead (host port 3 to spine
port 1: uN shift, route, telemetry/congestion tables; 64-byte frames are plain UDP since a RoCE BTH
does not fit, larger ones RoCE v2), against the same hand-written baseline.
Usage: ``python bench/softswitch_pipeline.py [--seconds S] [--program bench4|mrc|both]``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p4.v1 import p4runtime_pb2

from controller.p4contract import CPU_PORT
from mrc_fabric.targets import DEFAULT_PROGRAM
from softswitch.exec import build_pipeline
from softswitch.frontend import load_program
from softswitch.runtime import SwitchState

BENCH4 = ROOT / "tests" / "softswitch" / "exec" / "data" / "bench4.p4"  # copy of the conformance program
ROUTER_MAC = 0x00AABBCCDDEE
DST = 0xFC000001_00020003_00040000_00000000  # uSID carrier block fc00:1, uSIDs 2, 3, 4


def _p4info(program):
    from softswitch.p4info import build_p4info
    return build_p4info(program)


def _write(state, te) -> None:
    state.write(p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT,
                                     entity=p4runtime_pb2.Entity(table_entry=te)))


def _entry(p4info, table, matches, action, priority=0, **params):
    t = next(x for x in p4info.tables if x.preamble.name == table)
    a = next(x for x in p4info.actions if x.preamble.name == action)
    te = p4runtime_pb2.TableEntry(table_id=t.preamble.id, priority=priority)
    fields = list(t.match_fields)
    for f, m in zip(fields, matches):
        if m is None:
            continue
        fm = te.match.add(field_id=f.id)
        kind, *v = m
        if kind == "exact":
            fm.exact.value = v[0].to_bytes((f.bitwidth + 7) // 8, "big")
        elif kind == "lpm":
            fm.lpm.value = v[0].to_bytes((f.bitwidth + 7) // 8, "big")
            fm.lpm.prefix_len = v[1]
        elif kind == "ternary":
            fm.ternary.value = v[0].to_bytes((f.bitwidth + 7) // 8, "big")
            fm.ternary.mask = v[1].to_bytes((f.bitwidth + 7) // 8, "big")
    te.action.action.action_id = a.preamble.id
    for p in a.params:
        te.action.action.params.add(param_id=p.id, value=params[p.name].to_bytes((p.bitwidth + 7) // 8, "big"))
    return te


def build():
    program = load_program(str(BENCH4))
    p4info = _p4info(program)
    state = SwitchState(p4info)
    pipeline = build_pipeline(program, state, None)
    _write(state, _entry(p4info, "I.my_mac", [("exact", ROUTER_MAC)], "I.nop"))
    _write(state, _entry(p4info, "I.usid_un", [("lpm", 0xFC000001_0002 << 80, 48)], "I.usid_shift"))
    for i in range(64):  # a realistic route table: many prefixes, the packet hits one
        _write(state, _entry(p4info, "I.route_v6", [("lpm", (0xFC000001_0003 + i) << 80, 48)], "I.fwd",
                             port=1 + i % 8, dmac=0x020000000000 + i))
    _write(state, _entry(p4info, "I.acl", [("ternary", 6, 0xFF), None], "I.drop", priority=10))
    return pipeline


def frame(size: int) -> bytes:
    """Ethernet/IPv6/[SRH + 2 segments]/UDP padded to ``size`` bytes (no SRH when it would not fit)."""
    eth = ROUTER_MAC.to_bytes(6, "big") + bytes.fromhex("020000000001") + b"\x86\xdd"
    udp = (4791).to_bytes(2, "big") + (4791).to_bytes(2, "big") + b"\x00\x08\x00\x00"
    with_srh = size >= 14 + 40 + 8 + 32 + 8
    nh = 43 if with_srh else 17
    srh = bytes([17, 4, 4, 1, 1, 0, 0, 0]) + (DST).to_bytes(16, "big") + (DST + 1).to_bytes(16, "big")
    body = (srh if with_srh else b"") + udp
    pad = size - 14 - 40 - len(body)
    plen = len(body) + pad
    ipv6 = bytes([0x60, 0, 0, 0]) + plen.to_bytes(2, "big") + bytes([nh, 64]) + bytes(16) + DST.to_bytes(16, "big")
    return eth + ipv6 + body + bytes(pad)


def build_mrc():
    """mrc_switch.p4 as leaf p1l1 with every entity the controller writes there."""
    from controller import build_plan, load_topology
    from controller.mapping import P4Names, desired_state

    program = load_program(str(DEFAULT_PROGRAM), {}, [str(DEFAULT_PROGRAM.parent)])
    p4info = _p4info(program)
    state = SwitchState(p4info)
    pipeline = build_pipeline(program, state, CPU_PORT)
    plan = build_plan(load_topology(str(ROOT / "examples" / "small.yaml")))
    d = desired_state(P4Names.from_p4info(p4info), plan.switches["p1l1"])
    for e in d.all():
        utype = p4runtime_pb2.Update.MODIFY if e in d.defaults else p4runtime_pb2.Update.INSERT
        state.write(p4runtime_pb2.Update(type=utype, entity=e))
    return pipeline


def mrc_frame(size: int) -> bytes:
    """Host h1 → leaf p1l1 (port 3) → spine p1s1: dst fc00:0:2101:1101:2102:8012:: (uSIDs)."""
    dst = bytes.fromhex("fc000000210111012102801200000000")
    src = bytes.fromhex("fc000000801100000000000000000000")
    roce = size >= 14 + 40 + 8 + 12
    udp_len = size - 14 - 40
    udp = (49152).to_bytes(2, "big") + (4791 if roce else 1234).to_bytes(2, "big") + udp_len.to_bytes(2, "big") \
        + b"\0\0"
    if roce:  # BTH: SEND only, pkey 0xffff, QP 0x11, PSN 1
        udp += bytes([0x04, 0, 0xFF, 0xFF, 0, 0, 0, 0x11, 0, 0, 0, 1])
    ip6 = bytes([0x60, 0, 0, 0]) + udp_len.to_bytes(2, "big") + bytes([17, 64]) + src + dst
    return bytes.fromhex("020021010003020180110001") + b"\x86\xdd" + ip6 + udp + bytes(size - 54 - len(udp))


def baseline(routes: dict[int, tuple[int, int]]):
    """Same forwarding work written directly in Python (reference for the ratio)."""
    def forward(data: bytes):
        if data[12:14] != b"\x86\xdd" or int.from_bytes(data[0:6], "big") != ROUTER_MAC:
            return None
        dst = int.from_bytes(data[38:54], "big")
        if dst >> 80 == 0xFC000001_0002:
            dst = (dst & (0xFFFFFFFF << 96)) | ((dst << 16) & ((1 << 96) - 1))
        hit = routes.get(dst >> 80)
        if hit is None:
            return None
        port, dmac = hit
        out = dmac.to_bytes(6, "big") + data[6:21] + bytes([data[21] - 1]) + data[22:38] + dst.to_bytes(16, "big") + data[54:]
        return port, out
    return forward


def measure_pair(fn_a, fn_b, seconds: float, batch: int = 500) -> tuple[float, float]:
    """Packets/s of two loops, measured in alternating batches; the best batch of each counts,
    so a machine shared with other work still gives a stable ratio."""
    best_a = best_b = float("inf")
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        fn_a(batch)
        t1 = time.perf_counter()
        fn_b(batch)
        t2 = time.perf_counter()
        best_a = min(best_a, (t1 - t0) / batch)
        best_b = min(best_b, (t2 - t1) / batch)
    return 1 / best_a, 1 / best_b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="measuring time per case")
    ap.add_argument("--program", choices=["bench4", "mrc", "both"], default="bench4",
                    help="bench4.p4 (default), p4src/mrc_switch.p4 with the controller's tables, or both")
    args = ap.parse_args()
    routes = {0xFC000001_0003 + i: (1 + i % 8, 0x020000000000 + i) for i in range(64)}
    fwd = baseline(routes)
    cases = []
    if args.program in ("bench4", "both"):
        cases.append(("bench4.p4", build(), frame, 1, True))
    if args.program in ("mrc", "both"):
        cases.append(("mrc_switch.p4 leaf p1l1", build_mrc(), mrc_frame, 3, False))
    print("softswitch pipeline, in-process injection (ingress_item + egress_frame), one core")
    for label, pl, make, in_port, same_work in cases:
        print(label + ("" if same_work else " (baseline: the bench4 hand-written forwarder, as a fixed reference)"))
        for size in (64, 1500):
            data = make(size)
            res = pl.ingress(data, in_port, 0)
            assert res.to_tm, f"bench packet of {size} bytes was dropped: {res.drop_reason}"
            out = pl.egress(res.to_tm[0], 1).frames[0]
            ref_data = frame(size)
            ref = fwd(ref_data)
            if same_work:
                assert ref is not None and ref[0] == out.port, "baseline and pipeline disagree"
            # the entry points the packet loop uses: a plain unicast packet's TmItem itself, the
            # frame's bytes, header objects recycled between packets
            ingress, egress = pl.ingress_item, pl.egress_frame

            def run_pipeline(n, data=data, ingress=ingress, egress=egress, in_port=in_port):
                for i in range(n):
                    if egress(ingress(data, in_port, i), i).__class__ is not bytes:
                        raise SystemExit("bench packet not forwarded as one frame")

            def run_baseline(n, data=ref_data):
                for _ in range(n):
                    fwd(data)

            pps, base = measure_pair(run_pipeline, run_baseline, args.seconds)
            print(f"{size:5d}-byte frames: {pps:10,.0f} packets/s   baseline {base:10,.0f} packets/s   "
                  f"ratio {pps / base:.3f}")


if __name__ == "__main__":
    main()
