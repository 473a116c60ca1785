"""A Read answered from kept encodings (``SwitchState.read_wire``, the server's ``encoded_reads``) is
the message path's answer, byte for byte: the same entities, the same errors, after writes and with
counters changing between Reads; through gRPC the same responses, statuses and details."""
from __future__ import annotations

import time

import grpc
import pytest
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2 as pb
from rt_helpers import DELETE, INSERT, MODIFY, Builder, load_p4info, update

from softswitch.p4rt.reads import Cells, answer, read_units
from softswitch.p4rt.server import READ_CHUNK, SFPC, P4RuntimeServer
from softswitch.runtime import P4RuntimeError, SwitchState, wire
from softswitch.runtime.counters import ONE_PACKET, fill_counter_data, pack_cell

I63 = 1 << 63
# count values where a varint changes length or sign (int64 bytes: negative ones are 10 bytes)
VALUES = [0, 1, 127, 128, 16383, 16384, (1 << 32) + 5, I63 - 1, -1, -I63]


def _p4info() -> p4info_pb2.P4Info:
    """The features P4Info with a direct counter of each unit: l2 BOTH (its own), acl BYTES (it also
    has a direct meter), src_learn PACKETS, nexthop (indirect) of no unit; and counters of the units
    it lacks."""
    p = load_p4info()
    ids = {t.preamble.name: t.preamble.id for t in p.tables}
    for n, (table, unit) in enumerate((("MyIngress.acl", p4info_pb2.CounterSpec.BYTES),
                                       ("MyIngress.src_learn", p4info_pb2.CounterSpec.PACKETS),
                                       ("MyIngress.nexthop", p4info_pb2.CounterSpec.UNSPECIFIED))):
        dc = p.direct_counters.add()
        dc.preamble.id, dc.preamble.name = 0x13000100 + n, f"{table}_dc"
        dc.spec.unit = unit
        dc.direct_table_id = ids[table]
    for n, unit in enumerate((p4info_pb2.CounterSpec.BYTES, p4info_pb2.CounterSpec.UNSPECIFIED)):
        c = p.counters.add()
        c.preamble.id, c.preamble.name = 0x12000100 + n, f"extra_{n}"
        c.spec.unit, c.size = unit, 300
    return p


def _populate(s: SwitchState, bl: Builder) -> None:
    for i in range(40):  # l2: exact, with metadata on some
        kw = {"metadata": b"m%d" % i} if i % 3 == 0 else {}
        if i % 4 == 0:
            kw["controller_metadata"] = i
        s.write(update(INSERT, table_entry=bl.entry("l2", {"dst_mac": 0x020000000000 + i},
                                                    bl.action("MyIngress.set_port", dmac=i, port=i % 7), **kw)))
    for i, size in ((40, 200), (41, 20000)):  # entities past 1- and 2-byte length varints
        s.write(update(INSERT, table_entry=bl.entry("l2", {"dst_mac": 0x020000000000 + i},
                                                    bl.action("MyIngress.set_port", dmac=i, port=1),
                                                    metadata=b"x" * size)))
    for i in range(130):  # acl: ternary/range/optional with priorities (ties too), a direct meter
        m = {"h.ipv6.next_hdr": (i & 0xFF, 0xFF), "h.udp.dport": (i, 1000 + i)}
        if i % 2:
            m["m.l4_sport"] = i + 1
        te = bl.entry("acl", m, bl.action("MyIngress.acl_deny" if i % 2 else "MyIngress.acl_permit"),
                      priority=1 + i % 9)
        if i % 5 == 0:
            te.meter_config.cir, te.meter_config.cburst, te.meter_config.pir, te.meter_config.pburst = 10, 20, 30, 40
        s.write(update(INSERT, table_entry=te))
    for i in range(20):
        s.write(update(INSERT, table_entry=bl.entry("src_learn", {"h.eth.src": 0x0A0000000000 + i},
                                                    bl.action("MyIngress.learn"))))
    ecmp, nh = bl.pid("action_profiles", "ecmp_selector"), bl.pid("action_profiles", "nexthop_profile")
    for mid in (1, 2, 3):
        for prof in (ecmp, nh):
            s.write(update(INSERT, action_profile_member=pb.ActionProfileMember(
                action_profile_id=prof, member_id=mid, action=bl.action("ingress.nexthop", port=mid))))
    g = pb.ActionProfileGroup(action_profile_id=ecmp, group_id=7)
    g.members.add(member_id=1, weight=1)
    g.members.add(member_id=2, weight=3)
    s.write(update(INSERT, action_profile_group=g))
    for i in range(6):
        te = bl.entry("route_v6", {"h.ipv6.dst": ((0xFC00 + i) << 112, 16 + i)})
        te.action.action_profile_group_id = 7
        s.write(update(INSERT, table_entry=te))
        te = bl.entry("MyIngress.nexthop", {"h.ipv6.flow_label": i})
        te.action.action_profile_member_id = 1 + i % 3
        s.write(update(INSERT, table_entry=te))
    s.write(update(MODIFY, table_entry=bl.entry("l2", action=bl.action("MyIngress.l2_miss"),
                                                is_default_action=True, metadata=b"dflt")))
    _count(s, 0)


def _count(s: SwitchState, seed: int) -> None:
    """Give every direct counter cell and counter cell a value, some of them the varint edge cases
    (written as a controller would, or added to as the data plane does)."""
    n = seed
    for t in s.tables.values():
        if t.direct_counter is None:
            continue
        for e in [*t.entries(), t.default_entry]:
            n += 1
            if n % 3:
                e.cnt += (n * 977) % 20000 + ONE_PACKET * (n % 5)
            else:
                e.counter = [VALUES[n % len(VALUES)], VALUES[(n // 3) % len(VALUES)] & (I63 - 1)]
    for c in s.counters.values():
        for i in range(0, c.size, 7):
            n += 1
            c.cells[i] = pack_cell(VALUES[n % len(VALUES)], (n * 31) % 300) if n % 2 else c.cells[i] + n * 1500


@pytest.fixture()
def sb():
    p4info = _p4info()
    s = SwitchState(p4info)
    bl = Builder(p4info)
    _populate(s, bl)
    return s, bl


def _shapes(s: SwitchState, bl: Builder) -> list[pb.Entity]:
    """Read entities of every shape a client sends (and malformed ones)."""
    E = pb.Entity
    out: list[pb.Entity] = [E(table_entry=pb.TableEntry())]  # everything
    l2, acl = bl.tid("l2"), bl.tid("acl")
    for t in s.tables.values():
        out.append(E(table_entry=pb.TableEntry(table_id=t.id)))
        out.append(E(table_entry=pb.TableEntry(table_id=t.id, is_default_action=True)))
        dce = E()
        dce.direct_counter_entry.table_entry.table_id = t.id  # an error for tables without one
        out.append(dce)
        dce = E()
        dce.direct_counter_entry.table_entry.table_id = t.id
        dce.direct_counter_entry.table_entry.is_default_action = True
        out.append(dce)
    dce = E()
    dce.direct_counter_entry.SetInParent()  # every table's direct counters
    out.append(dce)
    # one entry by its key: present, absent, malformed
    for te in (bl.entry("l2", {"dst_mac": 0x020000000005}), bl.entry("l2", {"dst_mac": 0x0200000000FF}),
               bl.entry("acl", {"h.ipv6.next_hdr": (3, 0xFF), "h.udp.dport": (3, 1003), "m.l4_sport": 4},
                        priority=4),
               bl.entry("acl", {"h.ipv6.next_hdr": (3, 0xFF)}, priority=0),
               bl.entry("MyIngress.nexthop", {"h.ipv6.flow_label": 2})):
        out.append(E(table_entry=te))
        dce = E()
        dce.direct_counter_entry.table_entry.CopyFrom(te)
        out.append(dce)
    bad = bl.entry("l2")
    bad.match.add(field_id=99).exact.value = b"\x01"
    out.append(E(table_entry=bad))
    out.append(E(table_entry=pb.TableEntry(table_id=acl, priority=4)))  # entries of one priority
    out.append(E(table_entry=pb.TableEntry(table_id=l2, controller_metadata=8)))
    out.append(E(table_entry=pb.TableEntry(table_id=l2, metadata=b"m9")))
    out.append(E(table_entry=bl.entry("acl", action=bl.action("MyIngress.acl_deny"))))
    out.append(E(table_entry=pb.TableEntry(table_id=l2, is_default_action=True, priority=3)))
    for field in ("counter_data", "meter_config", "meter_counter_data", "time_since_last_hit"):
        for tid in (0, l2, acl):
            e = E(table_entry=pb.TableEntry(table_id=tid))
            getattr(e.table_entry, field).SetInParent()
            out.append(e)
    out.append(E(table_entry=pb.TableEntry(table_id=12345)))
    dce = E()
    dce.direct_counter_entry.table_entry.table_id = 12345
    out.append(dce)
    # counters: every cell of every counter, of one, one cell, bad cells and ids
    out.append(E(counter_entry=pb.CounterEntry()))
    idx0 = E(counter_entry=pb.CounterEntry())
    idx0.counter_entry.index.index = 5  # with id 0 the index is no filter
    out.append(idx0)
    for c in s.counters.values():
        out.append(E(counter_entry=pb.CounterEntry(counter_id=c.id)))
        for i in (0, 1, 127, 128, c.size - 1, c.size, -1):
            e = E(counter_entry=pb.CounterEntry(counter_id=c.id))
            e.counter_entry.index.index = i
            out.append(e)
    out.append(E(counter_entry=pb.CounterEntry(counter_id=777)))
    # the kinds read through the messages: members, groups, meters, registers, PRE, value sets
    out += [E(action_profile_member=pb.ActionProfileMember()), E(action_profile_group=pb.ActionProfileGroup()),
            E(action_profile_member=pb.ActionProfileMember(action_profile_id=bl.pid("action_profiles",
                                                                                   "nexthop_profile"), member_id=2)),
            E(meter_entry=pb.MeterEntry()), E(direct_meter_entry=pb.DirectMeterEntry()),
            E(register_entry=pb.RegisterEntry()), E(packet_replication_engine_entry=pb.PacketReplicationEngineEntry()),
            E(value_set_entry=pb.ValueSetEntry()), E(extern_entry=pb.ExternEntry(extern_type_id=9)), E()]
    return out


def _same(s: SwitchState, ent: pb.Entity) -> int:
    """Assert read_wire(ent) is read(ent) serialized (or fails the same way); how many entities."""
    try:
        slow = s.read(ent)
    except P4RuntimeError as err:
        with pytest.raises(P4RuntimeError) as fast_err:
            s.read_wire(ent)
        assert (fast_err.value.code, fast_err.value.message) == (err.code, err.message), ent
        return 0
    fast = s.read_wire(ent)
    assert fast == [e.SerializeToString() for e in slow], ent
    assert [pb.Entity.FromString(b) for b in fast] == slow, ent  # field for field
    return len(fast)


def test_every_read_shape_is_the_message_answer(sb):
    s, bl = sb
    shapes = _shapes(s, bl)
    counts = [_same(s, e) for e in shapes]
    assert sum(counts) > 3000 and counts.count(0) >= 10  # it compared entities and errors
    assert max(len(b) for b in s.read_wire(pb.Entity(table_entry=pb.TableEntry()))) > 1 << 14


def test_the_servers_units_answer_the_same(sb):
    """As the server reads: each requested entity in units (``read_units``), each unit answered
    encoded or as messages (``answer``; a wildcard counter Read's cells at once when encoded)."""
    s, bl = sb
    cells = 0
    for ent in _shapes(s, bl):
        for unit in read_units(s, ent, cells=100):
            cells += isinstance(unit, Cells)
            try:
                slow = answer(s, unit, False)
            except P4RuntimeError as err:
                with pytest.raises(P4RuntimeError) as fast_err:
                    answer(s, unit, True)
                assert (fast_err.value.code, fast_err.value.message) == (err.code, err.message)
                continue
            assert answer(s, unit, True) == [e.SerializeToString() for e in slow], ent
    assert cells >= 20  # the wildcard counter Reads were split into cell ranges


def test_after_writes_and_counting_the_answer_follows(sb):
    """Cached encodings never outlive the entry's message: modify (action, metadata, counter data,
    a key-only MODIFY), delete and re-insert, a default entry reset; counters change between Reads."""
    s, bl = sb
    shapes = _shapes(s, bl)
    for e in shapes:  # fill the caches
        _same(s, e)
    l2 = lambda i, **kw: bl.entry("l2", {"dst_mac": 0x020000000000 + i}, **kw)
    s.write(update(MODIFY, table_entry=l2(5, action=bl.action("MyIngress.set_port", dmac=99, port=3),
                                          metadata=b"new")))
    s.write(update(MODIFY, table_entry=l2(6, action=bl.action("MyIngress.set_port", dmac=1, port=1),
                                          controller_metadata=77)))
    te = l2(7)
    te.counter_data.byte_count, te.counter_data.packet_count = 5, 6
    s.write(update(MODIFY, table_entry=te))
    s.write(update(MODIFY, table_entry=l2(8)))  # key only: a no-op
    s.write(update(DELETE, table_entry=l2(9)))
    s.write(update(INSERT, table_entry=l2(9, action=bl.action("MyIngress.set_port", dmac=2, port=2))))
    s.write(update(DELETE, table_entry=l2(10)))
    s.write(update(MODIFY, table_entry=bl.entry("l2", is_default_action=True)))  # reset
    acl = bl.entry("acl", {"h.ipv6.next_hdr": (3, 0xFF), "h.udp.dport": (3, 1003), "m.l4_sport": 4}, priority=4,
                   action=bl.action("MyIngress.to_cpu", reason=9))
    s.write(update(MODIFY, table_entry=acl))
    dce = pb.Entity()
    dce.direct_counter_entry.table_entry.CopyFrom(bl.entry("src_learn", {"h.eth.src": 0x0A0000000003}))
    dce.direct_counter_entry.data.packet_count = 1 << 40
    s.write(pb.Update(type=MODIFY, entity=dce))
    _count(s, 5)
    got = s.read_wire(pb.Entity(table_entry=pb.TableEntry(table_id=bl.tid("l2"))))
    assert any(pb.Entity.FromString(b).table_entry.metadata == b"new" for b in got)  # the new message read
    for e in shapes:
        _same(s, e)


def test_wire_encodings_are_protobufs():
    """The encoders against protobuf's own for the edge values (int64 sign, varint lengths, zeros)."""
    for unit in (0, 1, 2, 3):
        for nbytes in VALUES:
            for npackets in (0, 1, 300, I63 - 1, -5):
                slow = pb.Entity()
                slow.counter_entry.counter_id = 0x12000001
                slow.counter_entry.index.index = abs(npackets) % 1000
                fill_counter_data(slow.counter_entry.data, unit, nbytes, npackets)
                fast = wire.counter_entity(0x12000001, abs(npackets) % 1000, unit, nbytes, npackets)
                assert fast == slow.SerializeToString(), (unit, nbytes, npackets)
    assert wire.counter_entity(1, 0, 3, 1 << 63, 0) is None  # out of int64: the message path decides
    for n in (0, 127, 128, 300, 1 << 35, (1 << 64) - 1):
        m = pb.Index(index=n if n < I63 else -1)
        assert wire.varint(n) == m.SerializeToString()[1:] or n == 0


# ---- through gRPC: two servers on one state, one encoding, one building messages -------------------
class _Pair:
    def __init__(self, s: SwitchState) -> None:
        self.servers, self.channels = [], []
        for encoded in (True, False):
            srv = P4RuntimeServer(1, lambda p4info, cfg: s, lambda frame: None, "127.0.0.1:0",
                                  encoded_reads=encoded)
            port = srv.start()
            req = SFPC(device_id=1, action=SFPC.VERIFY_AND_COMMIT)
            req.config.p4info.CopyFrom(s.p4info)
            srv.set_pipeline(req)
            self.servers.append(srv)
            self.channels.append(grpc.insecure_channel(f"127.0.0.1:{port}"))

    def read(self, req: pb.ReadRequest) -> list[tuple]:
        """Per server: the raw response bytes and the status (code, details) it ended with."""
        out = []
        for ch in self.channels:
            call = ch.unary_stream("/p4.v1.P4Runtime/Read", request_serializer=pb.ReadRequest.SerializeToString,
                                   response_deserializer=None)
            got: list[bytes] = []
            try:
                got.extend(call(req, timeout=30))
                status = (grpc.StatusCode.OK, None)
            except grpc.RpcError as err:
                status = (err.code(), err.details())
            out.append((got, status))
        return out

    def close(self) -> None:
        for ch in self.channels:
            ch.close()
        for srv in self.servers:
            srv.stop()


@pytest.fixture()
def pair(sb):
    p = _Pair(sb[0])
    try:
        yield p, sb[0], sb[1]
    finally:
        p.close()


def test_grpc_answers_are_the_same(pair):
    p, s, bl = pair
    shapes = _shapes(s, bl)
    reqs = [pb.ReadRequest(device_id=1, entities=[e]) for e in shapes]
    # several entities in one request (a poll), one that fails after others (what was read goes first),
    # and answers of more than READ_CHUNK entities (split the same way)
    reqs.append(pb.ReadRequest(device_id=1, entities=shapes))
    reqs.append(pb.ReadRequest(device_id=1, entities=[e for e in shapes if e.WhichOneof("entity") in
                                                      ("direct_counter_entry", "counter_entry")]))
    reqs += [pb.ReadRequest(device_id=2, entities=shapes[:1]), pb.ReadRequest(device_id=1, role="x"),
             pb.ReadRequest(device_id=1)]
    seen_codes, big = set(), 0
    for n, req in enumerate(reqs):
        if n == len(shapes) // 2:
            _count(s, 11)  # counters change between Reads
        fast, slow = p.read(req)
        assert fast == slow, req
        for raw in fast[0]:
            pb.ReadResponse.FromString(raw)  # each one a ReadResponse
        seen_codes.add(fast[1][0])
        big = max(big, len(fast[0]))
    assert {grpc.StatusCode.OK, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT} <= seen_codes
    assert big >= 2 and READ_CHUNK < 3000


def test_grpc_client_decodes_the_answer(pair):
    """A client's generated stub decodes the passed-through bytes as ReadResponses."""
    p, s, bl = pair
    from p4.v1 import p4runtime_pb2_grpc
    dce = pb.Entity()
    dce.direct_counter_entry.table_entry.table_id = bl.tid("acl")
    stub = p4runtime_pb2_grpc.P4RuntimeStub(p.channels[0])
    got = [e for r in stub.Read(pb.ReadRequest(device_id=1, entities=[dce])) for e in r.entities]
    assert got == s.read(dce) and len(got) == 130


# ---- the entry kinds the fixture above lacks -----------------------------------------------------
def _masked(raw: bytes) -> pb.Entity:
    """An encoded Entity with its time_since_last_hit's elapsed_ns zeroed (it is taken at each Read)."""
    e = pb.Entity.FromString(raw)
    if e.HasField("table_entry") and e.table_entry.HasField("time_since_last_hit"):
        e.table_entry.time_since_last_hit.elapsed_ns = 0
    return e


def _same_units(s: SwitchState, ent: pb.Entity) -> int:
    """As the server reads ``ent`` (``read_units``, ``answer``): encoded is the messages' answer, the
    elapsed time since the last hit aside (read at each Read: it must be there, not a kept one)."""
    n = 0
    for unit in read_units(s, ent, cells=100):
        try:
            slow = answer(s, unit, False)
        except P4RuntimeError as err:
            with pytest.raises(P4RuntimeError) as fast_err:
                answer(s, unit, True)
            assert (fast_err.value.code, fast_err.value.message) == (err.code, err.message), ent
            continue
        fast = answer(s, unit, True)
        assert [_masked(b) for b in fast] == [_masked(e.SerializeToString()) for e in slow], ent
        for b, e in zip(fast, slow):
            got = pb.Entity.FromString(b)
            assert got.table_entry.HasField("time_since_last_hit") == e.table_entry.HasField("time_since_last_hit")
            if e.table_entry.HasField("time_since_last_hit"):  # the encoded one is read after the other
                assert got.table_entry.time_since_last_hit.elapsed_ns >= e.table_entry.time_since_last_hit.elapsed_ns
        n += len(fast)
    return n


def test_idle_timeout_const_and_one_shot_entries_read_the_same():
    """An idle-timeout table (time_since_last_hit is read at each Read, never from a kept encoding),
    const entries and a const default action (is_const), one-shot action sets: read the same encoded
    as from messages, also after writes that change them and a failed MODIFY that keeps a one-shot."""
    p = _p4info()
    bl = Builder(p)
    by_name = {t.preamble.name: t for t in p.tables}
    by_name["MyIngress.src_learn"].idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
    by_name["MyIngress.acl"].const_default_action_id = bl.aid("MyIngress.acl_deny")
    s = SwitchState(p)
    learn = lambda i, **kw: bl.entry("src_learn", {"h.eth.src": 0x0A0000000000 + i}, **kw)
    for i in range(12):
        s.write(update(INSERT, table_entry=learn(i, action=bl.action("MyIngress.learn"),
                                                 idle_timeout_ns=(0, 10**9, 5 * 10**12)[i % 3],
                                                 metadata=b"s%d" % i if i % 2 else b"")))
    l2 = s.table("MyIngress.l2")
    for i in range(4):  # a program's `const entries` (and one of its `entries`, not const)
        l2.add_const_entry(bl.entry("l2", {"dst_mac": 0x0C0000000000 + i},
                                    bl.action("MyIngress.set_port", dmac=i, port=i)), is_const=i != 3)
    oneshot = lambda i, *ports: _oneshot(bl, {"h.ipv6.dst": ((0xFD00 + i) << 112, 24)}, ports)
    for i in range(5):
        s.write(update(INSERT, table_entry=oneshot(i, 1 + i, 2)))
    _count(s, 3)
    now = time.monotonic_ns()
    for n, e in enumerate(s.table("MyIngress.src_learn").entries()):
        e.since_ns = now - n * 10**9  # hit 0 .. 11 s ago
    E = pb.Entity
    shapes = [E(table_entry=pb.TableEntry())]
    for name in ("src_learn", "l2", "route_v6", "acl"):
        tid = bl.tid(name)
        shapes += [E(table_entry=pb.TableEntry(table_id=tid)),
                   E(table_entry=pb.TableEntry(table_id=tid, is_default_action=True))]
        for field in ("time_since_last_hit", "counter_data"):
            e = E(table_entry=pb.TableEntry(table_id=tid))
            getattr(e.table_entry, field).SetInParent()
            shapes.append(e)
        dce = E()
        dce.direct_counter_entry.table_entry.table_id = tid
        shapes.append(dce)
    e = E(table_entry=pb.TableEntry())
    e.table_entry.time_since_last_hit.SetInParent()  # the wildcard asks it of the idle-timeout table only
    shapes.append(e)
    e = E(table_entry=learn(4))
    e.table_entry.time_since_last_hit.SetInParent()
    shapes.append(e)

    def check() -> None:
        got = [_same_units(s, e) for e in shapes]
        assert sum(got) > 60 and 0 in got  # entities compared, errors too
        for e in shapes:  # each whole request entity as well (SwitchState.read_wire)
            try:
                slow = s.read(e)
            except P4RuntimeError:
                continue
            assert [_masked(b) for b in s.read_wire(e)] == [_masked(m.SerializeToString()) for m in slow], e

    check()
    tsl = E(table_entry=pb.TableEntry(table_id=bl.tid("src_learn")))
    tsl.table_entry.time_since_last_hit.SetInParent()
    read = {bytes(m.table_entry.match[0].exact.value): m.table_entry for b in s.read_wire(tsl)
            for m in [pb.Entity.FromString(b)]}
    assert read[b"\x0a\x00\x00\x00\x00\x0b"].time_since_last_hit.elapsed_ns >= 11 * 10**9
    consts = [pb.Entity.FromString(b).table_entry for b in s.read_wire(E(table_entry=pb.TableEntry(table_id=l2.id)))]
    assert sum(t.is_const for t in consts) == 3
    acl_default = pb.Entity.FromString(s.read_wire(E(table_entry=pb.TableEntry(table_id=bl.tid("acl"),
                                                                                is_default_action=True)))[0])
    assert acl_default.table_entry.is_const
    # writes that change what is read (or are refused and change nothing)
    s.write(update(MODIFY, table_entry=learn(1, action=bl.action("MyIngress.learn"), idle_timeout_ns=7,
                                             metadata=b"new")))
    s.write(update(MODIFY, table_entry=learn(2, action=bl.action("NoAction"))))  # its idle timeout goes
    s.write(update(MODIFY, table_entry=oneshot(1, 9, 8, 7)))
    bad = oneshot(2)
    bad.action.action_profile_group_id = 999
    with pytest.raises(P4RuntimeError):  # NOT_FOUND: the one-shot it had stays
        s.write(update(MODIFY, table_entry=bad))
    c = bl.entry("l2", {"dst_mac": 0x0C0000000001})
    c.counter_data.byte_count = 1 << 40  # a const entry takes its direct counter
    s.write(update(MODIFY, table_entry=c))
    with pytest.raises(P4RuntimeError):
        s.write(update(MODIFY, table_entry=bl.entry("acl", action=bl.action("MyIngress.acl_permit"),
                                                    is_default_action=True)))
    s.write(update(DELETE, table_entry=oneshot(3)))
    check()
    read = [pb.Entity.FromString(b).table_entry for b in s.read_wire(E(table_entry=pb.TableEntry(
        table_id=bl.tid("route_v6"))))]
    assert [len(t.action.action_profile_action_set.action_profile_actions) for t in read] == [2, 3, 2, 2]


def _oneshot(bl: Builder, match: dict, ports: tuple[int, ...]) -> pb.TableEntry:
    te = bl.entry("route_v6", match)
    for n, port in enumerate(ports):
        te.action.action_profile_action_set.action_profile_actions.add(
            action=bl.action("ingress.nexthop", port=port), weight=1 + n)
    return te
