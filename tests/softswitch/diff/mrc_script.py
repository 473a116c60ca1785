"""A differential script for p4src/mrc_switch.p4 on leaf p1l1 of examples/small.yaml: the
controller's tables and random MRC traffic -- SRv6 and STEV data, ACKs, telemetry, hop-limit
edges, truncated and mutated frames, 802.1Q/802.1ad-tagged frames, and bursts into a rate-limited
port so ECN marking, trimming and queue-full drops run with packets in flight.

bmv2 replays a script's pcaps as fast as it reads them, whatever their timestamps
(``softswitch.diff.bmv2side``), so what the program decides from queue occupancy is kept
independent of the replay speed: single packets never go to BURST_PORT (p1l1's port to h1: only
STEV packets to h1 leave by it, and all of them are burst packets) and
their ports drain at QUEUE_RATE_PPS, faster than bmv2 can feed them (so they never reach a
threshold); every burst packet goes to BURST_PORT, whose queues drain at BURST_RATE_PPS, and the
bursts come last, back to back: after the first one leaves, nothing else leaves that port for
1/BURST_RATE_PPS, far longer than bmv2 takes to read them all, so each burst packet finds the same
backlog on both targets.  Telemetry records' timestamps, latencies and queue depths report time
and are masked in the comparison (``--normalise mrc-telemetry``)."""
from __future__ import annotations

import random
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = ROOT / "p4src" / "mrc_switch.p4"
TOPO = ROOT / "examples" / "small.yaml"
LEAF = "p1l1"
QUEUE_RATE_PPS = 20_000  # on the leaf's other ports: more than bmv2 (~10-20k packets/s) can feed one port
BURST_PORT = 3  # p1l1's port to h1: only burst packets are addressed to h1
BURST_RATE_PPS = 5  # 200 ms between departures: bmv2 reads the bursts long before a second one leaves
BURST = 40
# 200 packets (a quarter ACKs, a third of the rest hop limit 0/1): the data queue reaches ECN at 16 and
# trimming at 56 (of 64); trimmed headers and ACKs then fill the top queue, which tail-drops
BURSTS = 5


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
    script.queues = [{"port": p, "rate_pps": BURST_RATE_PPS if p == BURST_PORT else QUEUE_RATE_PPS}
                     for p in ports]
    burst_dst = plan.topology.peer(LEAF, BURST_PORT).node
    sids = plan.sids
    hosts = list(plan.topology.hosts)
    rng = random.Random(seed)
    encaps, burst_encaps = [], []
    for src in hosts:
        for dst in hosts:
            if src == dst:
                continue
            sg, dg = sids.host_gid(src).packed, sids.host_gid(dst).packed
            for ev in srv6_profile(plan, src, dst).evs:  # injected at p1l1 as their first hop: up a spine
                encaps.append(Encap(ENCAP_SRV6, sg, dg, ev.value, ev_index=ev.index, telemetry=rng.random() < 0.2))
            # STEV is routed on its destination: to h1, p1l1 sends it out of BURST_PORT
            to = burst_encaps if dst == burst_dst else encaps
            for _ in range(2):
                to.append(Encap(ENCAP_STEV, sg, dg, rng.getrandbits(32), telemetry=rng.random() < 0.2))
    counts: dict[str, int] = {}
    t = 0

    def add(kind: str, port: int, data: bytes, at: int) -> None:
        counts[kind] = counts.get(kind, 0) + 1
        script.packets.append(Packet(port, data, at))

    def valid(pool: list = encaps) -> bytes:
        enc = rng.choice(pool)
        enc.hlim = rng.choice((64, 64, 64, 2, 1, 0))
        if rng.random() < 0.25:
            return encode_ack(enc, rng.getrandbits(24), rng.getrandbits(24))
        op = rng.choice((F.OP_WRITE_ONLY, F.OP_WRITE_FIRST, F.OP_WRITE_MIDDLE, F.OP_WRITE_LAST))
        size = rng.choice((0, 16, 64, 256, 1024))
        return encode_data(enc, op, rng.getrandbits(24), rng.getrandbits(24), rng.getrandbits(64),
                           rng.getrandbits(32), size, rng.randbytes(size),
                           ecn=rng.choice((F.ECN_ECT0, F.ECN_ECT0, F.ECN_NOT_ECT, F.ECN_CE)))

    singles = n_packets - BURSTS * BURST
    while len(script.packets) < singles:
        t += rng.randint(100, 400)  # 100-400 µs apart: the queues drain between singles
        roll = rng.random()
        port = rng.choice(ports)
        if roll < 0.12:
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
    for _ in range(BURSTS):  # last, back to back (10 us apart: nothing leaves BURST_PORT meanwhile)
        t += 10
        port = rng.choice(ports)
        for _ in range(BURST):
            add("burst", port, valid(burst_encaps), t)
    return program, script, counts
