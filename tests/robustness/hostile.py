"""Deterministic hostile inputs for the robustness suite: P4Runtime requests, malformed frames and
bootstrap sessions, all derived from a seed (``random.Random``) and bounded in number."""
from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

U = p4runtime_pb2.Update
UTYPES = (U.INSERT, U.MODIFY, U.DELETE, U.UNSPECIFIED, 7)


def _rbytes(rng: random.Random, hi: int = 24) -> bytes:
    n = rng.choice((0, 1, 2, rng.randrange(0, hi + 1), 64, 300))
    return rng.randbytes(n)


def _rid(rng: random.Random, valid: list[int]) -> int:
    r = rng.random()
    if r < 0.6 and valid:
        return rng.choice(valid)
    return rng.choice((0, 1, 0xFFFFFFFF, rng.getrandbits(32), (valid[0] & 0xFF000000) | 0xABCDEF if valid else 5))


def mutate_entity(rng: random.Random, ent: p4runtime_pb2.Entity, info: p4info_pb2.P4Info) -> p4runtime_pb2.Entity:
    """A copy of a valid entity with one to three fields made hostile."""
    e = p4runtime_pb2.Entity()
    e.CopyFrom(ent)
    tables = [t.preamble.id for t in info.tables]
    actions = [a.preamble.id for a in info.actions]
    for _ in range(rng.randint(1, 3)):
        kind = e.WhichOneof("entity")
        if kind == "table_entry":
            te = e.table_entry
            r = rng.randrange(9)
            if r == 0:
                te.table_id = _rid(rng, tables)
            elif r == 1 and len(te.match):
                m = rng.choice(te.match)
                which = m.WhichOneof("field_match_type")
                if which == "exact":
                    m.exact.value = _rbytes(rng)
                elif which == "lpm":
                    m.lpm.value = _rbytes(rng)
                    m.lpm.prefix_len = rng.choice((0, 1, 128, 129, 4096, -1, rng.getrandbits(31)))
                elif which == "ternary":
                    m.ternary.value, m.ternary.mask = _rbytes(rng), _rbytes(rng)
                elif which == "range":
                    m.range.low, m.range.high = _rbytes(rng), _rbytes(rng)
                else:
                    m.exact.value = _rbytes(rng)
                if rng.random() < 0.3:
                    m.field_id = rng.choice((0, 99, rng.getrandbits(32)))
            elif r == 2:
                te.priority = rng.choice((-1, 0, 1, 2 ** 31 - 1, -(2 ** 31)))
            elif r == 3 and te.action.HasField("action"):
                te.action.action.action_id = _rid(rng, actions)
            elif r == 4 and te.action.HasField("action") and len(te.action.action.params):
                p = rng.choice(te.action.action.params)
                p.value = _rbytes(rng)
                if rng.random() < 0.3:
                    p.param_id = rng.getrandbits(8)
            elif r == 5:
                te.ClearField("action")
            elif r == 6:
                te.is_default_action = not te.is_default_action
            elif r == 7:
                dup = te.match.add()
                dup.field_id = te.match[0].field_id if len(te.match) > 1 else 1
                dup.exact.value = _rbytes(rng)
            else:
                te.action.action_profile_member_id = rng.getrandbits(32)
        elif kind == "action_profile_member":
            m = e.action_profile_member
            m.action_profile_id = rng.choice((m.action_profile_id, 0, rng.getrandbits(32)))
            m.member_id = rng.choice((0, rng.getrandbits(32)))
            m.action.action_id = _rid(rng, actions)
        elif kind == "action_profile_group":
            g = e.action_profile_group
            for _ in range(rng.choice((0, 1, 50))):
                g.members.add(member_id=rng.getrandbits(32), weight=rng.choice((0, 1, -5, 2 ** 31 - 1)))
            g.max_size = rng.choice((0, -1, 1, 2 ** 31 - 1))
        elif kind == "packet_replication_engine_entry":
            mg = e.packet_replication_engine_entry.multicast_group_entry
            mg.multicast_group_id = rng.choice((0, 1, rng.getrandbits(32)))
            for _ in range(rng.choice((0, 1, 200))):
                if rng.random() < 0.5:
                    mg.replicas.add(egress_port=rng.getrandbits(16), instance=rng.getrandbits(16))
                else:
                    mg.replicas.add(port=rng.randbytes(rng.choice((0, 1, 2, 9))), instance=rng.getrandbits(16))
        else:
            e.table_entry.table_id = _rid(rng, tables)
    return e


def array_entity(rng: random.Random, info: p4info_pb2.P4Info) -> p4runtime_pb2.Entity:
    """A counter / register / meter / digest entity with hostile ids, indexes and data."""
    e = p4runtime_pb2.Entity()
    r = rng.randrange(4)
    idx = rng.choice((0, 1, 511, 512, 2 ** 31, 2 ** 63 - 1, -1))
    if r == 0 or not info.registers:
        c = e.counter_entry
        c.counter_id = _rid(rng, [x.preamble.id for x in info.counters])
        c.index.index = idx
        c.data.byte_count, c.data.packet_count = rng.choice((0, -1, 2 ** 63 - 1)), rng.getrandbits(16)
    elif r == 1:
        g = e.register_entry
        g.register_id = _rid(rng, [x.preamble.id for x in info.registers])
        g.index.index = idx
        g.data.bitstring = _rbytes(rng, 40)
    elif r == 2:
        m = e.meter_entry
        m.meter_id = _rid(rng, [x.preamble.id for x in info.meters])
        m.index.index = idx
        m.config.cir, m.config.pir = rng.choice((-1, 0, 2 ** 62)), rng.choice((-5, 1))
        m.config.cburst, m.config.pburst = rng.choice((-1, 0)), rng.choice((0, 2 ** 62))
    else:
        d = e.digest_entry
        d.digest_id = _rid(rng, [x.preamble.id for x in info.digests])
        d.config.max_timeout_ns = rng.choice((-1, 0, 2 ** 62))
        d.config.max_list_size = rng.choice((-1, 0, 1, 2 ** 31 - 1))
        d.config.ack_timeout_ns = rng.choice((-1, 0, 10 ** 9))
    return e


def read_entity(rng: random.Random, info: p4info_pb2.P4Info) -> p4runtime_pb2.Entity:
    """A read request entity: wildcards (bounded by the switch's limits) and hostile ids."""
    e = p4runtime_pb2.Entity()
    r = rng.randrange(7)
    if r == 0:
        e.table_entry.table_id = rng.choice((0, _rid(rng, [t.preamble.id for t in info.tables])))
    elif r == 1:
        e.counter_entry.counter_id = rng.choice((0, _rid(rng, [x.preamble.id for x in info.counters])))
    elif r == 2:
        e.register_entry.register_id = _rid(rng, [x.preamble.id for x in info.registers])
        if rng.random() < 0.5:
            e.register_entry.index.index = rng.choice((0, -1, 2 ** 40))
    elif r == 3:
        e.direct_counter_entry.table_entry.table_id = rng.choice((0, rng.getrandbits(32)))
    elif r == 4:
        e.action_profile_group.action_profile_id = rng.choice((0, rng.getrandbits(32)))
    elif r == 5:
        e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = rng.getrandbits(8)
    # r == 6: an entity with no type at all
    return e


def garbage_p4info(rng: random.Random, info: p4info_pb2.P4Info) -> p4info_pb2.P4Info:
    """A P4Info with duplicate ids, dangling references or nonsense sizes."""
    bad = p4info_pb2.P4Info()
    bad.CopyFrom(info)
    r = rng.randrange(4)
    if r == 0 and len(bad.tables) > 1:
        bad.tables[1].preamble.id = bad.tables[0].preamble.id
    elif r == 1 and len(bad.tables):
        bad.tables[0].action_refs.add(id=rng.getrandbits(32))
    elif r == 2 and len(bad.counters):
        bad.counters[0].size = -rng.randrange(1, 100)
    else:
        bad.ClearField("actions")
    return bad


# ---- frames --------------------------------------------------------------------------------------
def malformed_frames(rng: random.Random, valid: list[bytes], n: int, max_len: int = 1514) -> Iterator[bytes]:
    """``n`` frames derived from valid ones: truncated, bit-flipped, length fields lying, wrong
    ethertypes and next headers, oversized, pure garbage.  Every frame is >= 14 bytes (AF_PACKET
    sends nothing shorter than an Ethernet header) and at most ``max_len`` (the link MTU + 14)."""
    for _ in range(n):
        base = bytearray(rng.choice(valid))
        r = rng.randrange(10)
        if r == 0:  # truncated anywhere
            base = base[:rng.randint(14, max(14, len(base) - 1))]
        elif r == 1:  # 1..16 random byte flips in the headers
            for _ in range(rng.randint(1, 16)):
                i = rng.randrange(14, min(len(base), 120))
                base[i] ^= 1 << rng.randrange(8)
        elif r == 2:  # IPv6 payload length lies
            base[18:20] = rng.getrandbits(16).to_bytes(2, "big")
        elif r == 3:  # next header / routing header fields garbage
            for off in (20, 54, 55, 56, 57, 58):
                if off < len(base):
                    base[off] = rng.getrandbits(8)
        elif r == 4:  # another ethertype on the same bytes (ARP, VLAN, IPv4, MPLS, LLDP...)
            base[12:14] = rng.choice((0x0806, 0x8100, 0x0800, 0x8847, 0x88CC, 0x88B5, 0xFFFF)).to_bytes(2, "big")
        elif r == 5:  # random garbage after a valid Ethernet header
            base = base[:14] + bytearray(rng.randbytes(rng.randint(0, 400)))
        elif r == 6:  # oversized: padded to a jumbo frame
            base += rng.randbytes(rng.randint(1500, 8900))
        elif r == 7:  # IPv6 version nibble / hop limit 0 / 1
            base[14] = (rng.getrandbits(4) << 4) | (base[14] & 0x0F)
            base[21] = rng.choice((0, 1, 255))
        elif r == 8:  # segments left / last entry beyond the list
            if len(base) > 60:
                base[57] = rng.getrandbits(8)
                base[58] = rng.getrandbits(8)
        else:  # fully random frame
            base = bytearray(rng.randbytes(rng.randint(14, 1514)))
        yield bytes(base[:max_len])


# ---- bootstrap sessions --------------------------------------------------------------------------
GOOD_HELLO = {"hello": 1, "gid": "fd00::1", "ports": {"1": "02:00:00:00:00:01"}, "mode": "mrc", "encap": "srv6",
              "mtu": 1500, "mpr": 1, "qps": 1, "size": 4096, "imm": False, "seed": 1, "verify": True}


@dataclass(frozen=True)
class Session:
    """One hostile bootstrap peer: what it sends (None: connect and close)."""

    what: str
    data: bytes | None


def _hello(**kw) -> bytes:
    return json.dumps({**GOOD_HELLO, **kw}).encode() + b"\n"


def bootstrap_sessions(rng: random.Random, n: int) -> list[Session]:
    """``n`` hostile sessions: every fixed case once, then seeded random ones."""
    fixed = [
        Session("connect then close", None),
        Session("garbage line", b"\x00\xff garbage\n"),
        Session("2 MiB line", b"y" * (2 << 20)),
        Session("deep nesting", b"[" * 40000 + b"\n"),
        Session("JSON array", b"[1]\n"),
        Session("qps -1", _hello(qps=-1)),
        Session("qps 20000", _hello(qps=20000)),
        Session("size 2^70", _hello(size=2 ** 70)),
        Session("mpr huge", _hello(mpr=10 ** 9)),
        Session("bad GID", _hello(gid="::zz")),
        Session("bad mode", _hello(mode="rdma")),
        Session("bad ports", _hello(ports={"x": "y"})),
        Session("too many ports", _hello(ports={str(i): "02:00:00:00:00:01" for i in range(100)})),
        Session("error message", b'{"error": "x"}\n'),
        Session("float qps", _hello(qps=2.5)),
        Session("string size", _hello(size="64K")),
        Session("huge int", b'{"qps": ' + b"9" * 6000 + b"}\n"),
        Session("wrong version", _hello(hello=2)),
        Session("partial line", b'{"hello": 1, "gid"'),
    ]
    out = list(fixed)
    keys = list(GOOD_HELLO)
    while len(out) < n:
        r = rng.randrange(3)
        if r == 0:
            out.append(Session("random bytes", rng.randbytes(rng.randint(1, 2000)) + b"\n"))
        elif r == 1:
            k = rng.choice(keys)
            v = rng.choice((None, -1, 0, 2 ** 64, "", [], {}, True, 1e308, "x" * 100))
            out.append(Session(f"hello {k}={v!r:.20}", _hello(**{k: v})))
        else:
            out.append(Session("two hellos in one line", _hello()[:-1] + _hello()))
    return out[:n]
