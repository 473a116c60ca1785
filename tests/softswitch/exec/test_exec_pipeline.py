"""v1model pipeline behaviour on real packet bytes through a program compiled from P4 source."""
from __future__ import annotations

import random

import pytest
from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from softswitch.contract import (
    PKT_INSTANCE_EGRESS_CLONE,
    PKT_INSTANCE_INGRESS_CLONE,
    PKT_INSTANCE_NORMAL,
    PKT_INSTANCE_REPLICATION,
)
from softswitch.exec import hashes

PROG = DATA / "exec_features.p4"


@pytest.fixture
def rig():
    return Rig(PROG)


def pkt(kind=None, arg=0, dst="10.1.2.3", src="1.2.3.4", sport=1000, dport=None, mac="00:00:00:00:00:aa",
        payload=b"") -> bytes:
    if kind is not None:
        dport = 0x1234
    p = Ether(dst=mac, src="00:00:00:00:00:01") / IP(src=src, dst=dst) / UDP(sport=sport, dport=dport or 80)
    if kind is not None:
        p = p / Raw(bytes([kind, arg]))
    return bytes(p / Raw(payload))


def src_fields(frame: bytes):
    """(instance_type, egress_rid, mark) the egress control wrote into eth.src."""
    v = int.from_bytes(frame[6:12], "big")
    return v & 0xFF, (v >> 8) & 0xFFFF, v >> 24


def test_exact_hit_direct_counter_and_lpm_fallback(rig):
    te = rig.entry("I.t_exact", {"h.eth.dst": ("exact", 0xAA)}, rig.action("I.fwd_count", port=5))
    data = pkt(dport=80)
    res, eg = rig.run(data)
    assert [f.port for f in eg[0].frames] == [5]
    entry = rig.state.table("I.t_exact").find(te)
    assert entry.counter == [len(data), 1]
    # a miss falls back to the LPM table: the longest prefix wins
    rig.entry("I.t_lpm", {"h.ipv4.dst": ("lpm", 0x0A000000, 8)}, rig.action("I.fwd", port=6))
    rig.entry("I.t_lpm", {"h.ipv4.dst": ("lpm", 0x0A010200, 24)}, rig.action("I.fwd", port=7))
    assert rig.run(pkt(mac="00:00:00:00:00:bb"))[1][0].frames[0].port == 7
    assert rig.run(pkt(mac="00:00:00:00:00:bb", dst="10.9.9.9"))[1][0].frames[0].port == 6
    # LPM miss: default action drop()
    res, eg = rig.run(pkt(mac="00:00:00:00:00:bb", dst="11.0.0.1"))
    assert res.dropped and not res.to_tm


def test_ternary_range_optional_with_priority(rig):
    rig.entry("I.t_lpm", {"h.ipv4.dst": ("lpm", 0, 1)}, rig.action("I.fwd", port=2))
    rig.entry("I.t_acl", {"h.ipv4.protocol": ("ternary", 17, 0xFF), "h.udp.dport": ("range", 100, 200),
                          "h.ipv4.src": ("optional", 0x01020304)}, rig.action("I.drop"), priority=10)
    assert rig.run(pkt(dport=150))[0].dropped
    assert not rig.run(pkt(dport=201))[0].dropped
    assert not rig.run(pkt(dport=150, src="1.2.3.5"))[0].dropped


def test_multicast_replicas_carry_rid_and_instance_type(rig):
    grp = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=3)
    grp.replicas.add(egress_port=2, instance=1)
    grp.replicas.add(egress_port=4, instance=2)
    rig.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=grp))
    res, eg = rig.run(pkt(kind=1, arg=3))
    assert sorted(it.egress_port for it in res.to_tm) == [2, 4]
    outs = {e.frames[0].port: src_fields(e.frames[0].data) for e in eg}
    assert outs[2][:2] == (PKT_INSTANCE_REPLICATION, 1)
    assert outs[4][:2] == (PKT_INSTANCE_REPLICATION, 2)
    # an unknown group: nothing leaves
    res, _ = rig.run(pkt(kind=1, arg=9))
    assert res.dropped and not res.to_tm


def _clone_session(rig, sid, port, trunc=0):
    cs = p4runtime_pb2.CloneSessionEntry(session_id=sid, packet_length_bytes=trunc)
    cs.replicas.add(egress_port=port, instance=3)
    rig.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs))


def test_ingress_clone_preserves_field_list_and_truncates(rig):
    _clone_session(rig, 9, 6, trunc=30)
    data = pkt(kind=2, arg=9, payload=b"x" * 40)
    _res, eg = rig.run(data)
    frames = {e.frames[0].port: e.frames[0].data for e in eg}
    assert set(frames) == {1, 6}
    itype, rid, mark = src_fields(frames[6])
    assert (itype, rid, mark) == (PKT_INSTANCE_INGRESS_CLONE, 3, 0xC0FFEE)
    assert len(frames[6]) == 30
    assert src_fields(frames[1]) == (PKT_INSTANCE_NORMAL, 0, 0xC0FFEE)
    assert len(frames[1]) == len(data)
    # no session configured: only the original leaves
    _res, eg = rig.run(pkt(kind=2, arg=10))
    assert [e.frames[0].port for e in eg] == [1]


def test_egress_clone_gets_preserved_fields(rig):
    _clone_session(rig, 5, 8)
    _res, eg = rig.run(pkt(kind=14))
    assert [e.frames[0].port for e in eg] == [1]
    assert src_fields(eg[0].frames[0].data)[2] == 0
    (clone_item,) = eg[0].to_tm
    assert clone_item.egress_port == 8
    out = rig.pipeline.egress(clone_item, 10)
    assert src_fields(out.frames[0].data) == (PKT_INSTANCE_EGRESS_CLONE, 3, 0xBEEF)


def test_resubmit_loops_with_preserved_fields(rig):
    res, eg = rig.run(pkt(kind=3))
    assert [it.egress_port for it in res.to_tm] == [12]  # passes went 0 -> 1 -> 2
    assert eg[0].frames[0].data[-1] == 77  # m.mark preserved across the resubmissions


def test_recirculate(rig):
    _res, eg = rig.run(pkt(kind=4))
    assert not eg[0].frames
    ((data, preserved),) = eg[0].recirculate
    res2 = rig.pipeline.ingress_recirculated(data, preserved, 5)
    assert [it.egress_port for it in res2.to_tm] == [9]


def test_truncate(rig):
    _res, eg = rig.run(pkt(kind=5, payload=b"y" * 50))
    assert len(eg[0].frames[0].data) == 20


def test_digest(rig):
    got = []
    rig.state.digests.set_sink(got.append)
    did = rig._id("digests", "learn_t")
    rig.write(INSERT, digest_entry=p4runtime_pb2.DigestEntry(
        digest_id=did, config=p4runtime_pb2.DigestEntry.Config(max_list_size=1)))
    rig.run(pkt(kind=6), port=7)
    assert len(got) == 1
    assert got[0].digest_id == did and got[0].values == [(1, 7)]


def test_register_read_write(rig):
    _res, eg = rig.run(pkt(kind=7, arg=5))
    first = eg[0].frames[0].data
    _res, eg = rig.run(pkt(kind=7, arg=5))
    second = eg[0].frames[0].data
    assert int.from_bytes(first[40:42], "big") == 0
    assert int.from_bytes(second[40:42], "big") == 5
    assert rig.state.register("I.regs").values[1] == 10


def test_counter_indexed(rig):
    for _ in range(3):
        rig.run(pkt(kind=11, arg=1), port=4)
    c = rig.state.counter("I.rx")
    assert c.packets[4] == 3 and c.bytes[4] == 3 * len(pkt(kind=11, arg=1))


def test_meter_colours(rig):
    me = p4runtime_pb2.MeterEntry(meter_id=rig._id("meters", "I.m0"), index=p4runtime_pb2.Index(index=0),
                                  config=p4runtime_pb2.MeterConfig(cir=1, cburst=1, pir=2, pburst=2))
    rig.write(p4runtime_pb2.Update.MODIFY, meter_entry=me)
    colours = []
    for i in range(6):
        _res, eg = rig.run(pkt(kind=8), now=1000 + i)
        colours.append(eg[0].frames[0].data[-1])
    assert colours[0] == 0 and 2 in colours


def test_hash_matches_bmv2_packing(rig):
    _res, eg = rig.run(pkt(kind=9, arg=0x5A, src="1.2.3.4", dst="10.1.2.3"))
    got = int.from_bytes(eg[0].frames[0].data[40:42], "big")
    data = bytes([1, 2, 3, 4, 10, 1, 2, 3, 0x5A])
    assert got == 100 + hashes.crc16(data) % 1000


def test_selector_spreads_flows(rig):
    ap = rig._id("action_profiles", "I.sel")
    for mid, port in ((1, 20), (2, 21), (3, 22)):
        rig.write(INSERT, action_profile_member=p4runtime_pb2.ActionProfileMember(
            action_profile_id=ap, member_id=mid, action=rig.action("I.fwd", port=port)))
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=ap, group_id=1, max_size=8)
    for mid in (1, 2, 3):
        g.members.add(member_id=mid, weight=1)
    rig.write(INSERT, action_profile_group=g)
    rig.entry("I.t_ecmp", {"h.ipv4.dst": ("exact", 0x0A010203)}, group=1)
    ports = set()
    for sport in range(1000, 1040):
        p1 = rig.run(pkt(kind=10, sport=sport))[0].to_tm[0].egress_port
        p2 = rig.run(pkt(kind=10, sport=sport))[0].to_tm[0].egress_port
        assert p1 == p2  # one flow, one path
        ports.add(p1)
    assert len(ports) >= 2 and ports <= {20, 21, 22}


def test_const_entries_and_exit(rig):
    assert rig.run(pkt(kind=11, arg=7))[0].to_tm[0].egress_port == 7
    assert rig.run(pkt(kind=11, arg=8))[0].to_tm[0].egress_port == 8
    assert rig.run(pkt(kind=11, arg=9))[0].to_tm[0].egress_port == 1
    assert rig.run(pkt(kind=12))[0].to_tm[0].egress_port == 3  # exit skipped the later statement


def test_priority_and_queue_metadata(rig):
    res = rig.pipeline.ingress(pkt(kind=15), 0, 0)
    item = res.to_tm[0]
    assert item.priority == 5
    item.enq_qdepth = 7
    assert rig.pipeline.egress(item, 3).frames[0].data[-1] == 7


def test_mark_to_drop_in_egress(rig):
    _res, eg = rig.run(pkt(kind=16))
    assert eg[0].dropped and not eg[0].frames


def test_checksum_verify_and_update(rig):
    good = pkt(kind=11, arg=1)
    bad = bytearray(good)
    bad[24] ^= 0xFF  # corrupt the IPv4 checksum
    res = rig.pipeline.ingress(bytes(bad), 0, 0)
    assert res.to_tm[0].meta.S.f_checksum_error == 1
    out = rig.pipeline.egress(res.to_tm[0], 0).frames[0].data
    assert out[14:34] == good[14:34]  # computeChecksum restored the right checksum
    res = rig.pipeline.ingress(good, 0, 0)
    assert res.to_tm[0].meta.S.f_checksum_error == 0
    # the switch's own rewrite (eth.src) does not touch IPv4, so the checksum scapy computed stays
    assert IP(rig.pipeline.egress(res.to_tm[0], 0).frames[0].data[14:34]).chksum == IP(good[14:34]).chksum


def test_truncated_packet_sets_parser_error(rig):
    data = pkt(dport=80)[:20]  # ethernet + 6 bytes of IPv4
    res, eg = rig.run(data)
    assert res.to_tm[0].meta.S.f_parser_error == 1
    assert [it.egress_port for it in res.to_tm] == [13]
    assert eg[0].frames[0].data[12:] == data[12:]


def test_garbage_never_raises(rig):
    rnd = random.Random(7)
    for n in range(200):
        data = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 80)))
        if n % 3 == 0 and len(data) > 14:
            data = data[:12] + b"\x08\x00" + data[14:]
        res = rig.pipeline.ingress(data, rnd.randrange(0, 8), n)
        for it in res.to_tm:
            rig.pipeline.egress(it, n)


def test_trace_reports_parser_tables_actions_and_drops():
    lines: list[str] = []
    r = Rig(PROG, trace=lines.append)
    r.run(pkt(mac="00:00:00:00:00:bb", dst="11.0.0.1"))
    text = "\n".join(lines)
    assert "parser state start" in text
    assert "table I.t_exact: miss" in text
    assert "action I.drop" in text
    assert "drop:" in text
