"""A differential script for p4src/mrc_switch.p4 on leaf p1l1 of examples/small.yaml: the
controller's tables and random MRC traffic -- SRv6 and STEV data, ACKs, telemetry, hop-limit
edges, truncated and mutated frames, 802.1Q/802.1ad-tagged frames, and bursts into rate-limited
ports so ECN marking, trimming and threshold drops run with packets in flight."""
from __future__ import annotations

import random
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = ROOT / "p4src" / "mrc_switch.p4"
TOPO = ROOT / "examples" / "small.yaml"
LEAF = "p1l1"
QUEUE_RATE_PPS = 20_000  # on every port of the leaf: bursts of BURST frames pile up
BURST = 40


def build(n_packets: int = 5000, seed: int = 16):
    """(program, script, counts by kind) -- deterministic for a seed."""
    from controller import build_plan, load_topology
    from controller.evplan import srv6_profile
    from controller.mapping import P4Names, desired_state
    from mrc.wire import formats as F
    from mrc.wire.codec import ENCAP_SRV6, ENCAP_STEV, Encap, encode_ack, encode_data
    from softswitch.diff.script import Packet, Script
    from softswitch.frontend import load_program
    from softswitch.p4info import build_p4info

    program = load_program(str(PROGRAM), {}, [])
    names = P4Names.from_p4info(build_p4info(program))
    plan = build_plan(load_topology(TOPO))
    script = Script(entities=list(desired_state(names, plan.switches[LEAF]).all()))
    ports = sorted({p for p in range(1, 5)})
    script.queues = [{"port": p, "rate_pps": QUEUE_RATE_PPS} for p in ports]
    sids = plan.sids
    hosts = list(plan.topology.hosts)
    rng = random.Random(seed)
    encaps = []
    for src in hosts:
        for dst in hosts:
            if src == dst:
                continue
            sg, dg = sids.host_gid(src).packed, sids.host_gid(dst).packed
            for ev in srv6_profile(plan, src, dst).evs:
                encaps.append(Encap(ENCAP_SRV6, sg, dg, ev.value, ev_index=ev.index,
                                    telemetry=rng.random() < 0.2))
            for _ in range(2):
                encaps.append(Encap(ENCAP_STEV, sg, dg, rng.getrandbits(32), telemetry=rng.random() < 0.2))
    counts: dict[str, int] = {}
    t = 0

    def add(kind: str, port: int, data: bytes, at: int) -> None:
        counts[kind] = counts.get(kind, 0) + 1
        script.packets.append(Packet(port, data, at))

    def valid() -> bytes:
        enc = rng.choice(encaps)
        enc.hlim = rng.choice((64, 64, 64, 2, 1, 0))
        if rng.random() < 0.25:
            return encode_ack(enc, rng.getrandbits(24), rng.getrandbits(24))
        op = rng.choice((F.OP_WRITE_ONLY, F.OP_WRITE_FIRST, F.OP_WRITE_MIDDLE, F.OP_WRITE_LAST))
        size = rng.choice((0, 16, 64, 256, 1024))
        return encode_data(enc, op, rng.getrandbits(24), rng.getrandbits(24), rng.getrandbits(64),
                           rng.getrandbits(32), size, rng.randbytes(size),
                           ecn=rng.choice((F.ECN_ECT0, F.ECN_ECT0, F.ECN_NOT_ECT, F.ECN_CE)))

    while len(script.packets) < n_packets:
        t += rng.randint(100, 400)  # 100-400 µs apart: the queues drain between singles
        roll = rng.random()
        port = rng.choice(ports)
        if roll < 0.015:  # a burst: packets in flight, queue thresholds
            for _ in range(BURST):
                add("burst", port, valid(), t)
            t += 5000
        elif roll < 0.12:
            d = valid()
            tpid = rng.choice((0x8100, 0x88A8))
            tag = struct.pack("!HH", tpid, rng.getrandbits(12))
            add("tagged", port, d[:12] + tag + d[12:], t)
        elif roll < 0.20:
            d = valid()
            add("truncated", port, d[:rng.randint(0, len(d) - 1)], t)
        elif roll < 0.30:
            d = bytearray(valid())
            for _ in range(rng.randint(1, 4)):
                d[rng.randrange(len(d))] = rng.getrandbits(8)
            add("mutated", port, bytes(d), t)
        else:
            add("valid", port, valid(), t)
    del script.packets[n_packets:]
    return program, script, counts
