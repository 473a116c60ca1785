"""In-process packets/s of softswitch's compiled v1model pipeline on the four-table bench program.

Packets are injected by calling ``Pipeline.ingress`` / ``Pipeline.egress`` directly (no sockets,
no traffic manager), so the generator is not the bottleneck.  Prints packets/s for 64-byte and
1500-byte frames and the ratio to a bare-Python baseline measured in the same run (alternating
batches, best batch of each): a hand-written loop that does the same forwarding work (parse, one
dict lookup, rewrite, re-serialise) with no P4 at all.  Usage: ``python bench/softswitch_pipeline.py [--seconds S]``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p4.v1 import p4runtime_pb2

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
    args = ap.parse_args()
    pl = build()
    routes = {0xFC000001_0003 + i: (1 + i % 8, 0x020000000000 + i) for i in range(64)}
    fwd = baseline(routes)
    print("softswitch pipeline, in-process injection (Pipeline.ingress + egress), one core")
    for size in (64, 1500):
        data = frame(size)
        res = pl.ingress(data, 1, 0)
        assert res.to_tm, f"bench packet of {size} bytes was dropped: {res.drop_reason}"
        out = pl.egress(res.to_tm[0], 1).frames[0]
        ref = fwd(data)
        assert ref is not None and ref[0] == out.port, "baseline and pipeline disagree"
        ingress, egress = pl.ingress, pl.egress

        def run_pipeline(n, data=data, ingress=ingress, egress=egress):
            for i in range(n):
                for item in ingress(data, 1, i).to_tm:
                    egress(item, i)

        def run_baseline(n, data=data):
            for _ in range(n):
                fwd(data)

        pps, base = measure_pair(run_pipeline, run_baseline, args.seconds)
        print(f"{size:5d}-byte frames: {pps:10,.0f} packets/s   baseline {base:10,.0f} packets/s   "
              f"ratio {pps / base:.3f}")


if __name__ == "__main__":
    main()
