"""Action profiles/selectors, counters, meters, registers, PRE, digests and reconcile."""
from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2
from rt_helpers import DELETE, INSERT, MODIFY, Builder, load_p4info, update

from softswitch.runtime import (
    GREEN,
    NO_ACTION_ID,
    RED,
    YELLOW,
    Code,
    P4RuntimeError,
    SwitchState,
    digest_values,
)


@pytest.fixture()
def sb():
    p4info = load_p4info()
    return SwitchState(p4info), Builder(p4info)


def code_of(fn) -> Code:
    with pytest.raises(P4RuntimeError) as ei:
        fn()
    return ei.value.code


def member(bl, prof, mid, port):
    return update(INSERT, action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=bl.pid("action_profiles", prof), member_id=mid, action=bl.action("ingress.nexthop", port=port)))


def group(bl, prof, gid, members, utype=INSERT, max_size=0):
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=bl.pid("action_profiles", prof), group_id=gid,
                                         max_size=max_size)
    for mid, w in members:
        g.members.add(member_id=mid, weight=w)
    return update(utype, action_profile_group=g)


def _group_route(s, bl, mids, weights):
    """Members ``mids`` of ecmp_selector, created in that order (member m forwards to port 10 + m),
    group 7 of ``weights`` ((member, weight) pairs) and a route_v6 entry to it: (the table, a key
    that hits the entry)."""
    for mid in mids:
        s.write(member(bl, "ecmp_selector", mid, 10 + mid))
    s.write(group(bl, "ecmp_selector", 7, weights))
    te = bl.entry("route_v6", {"h.ipv6.dst": (1 << 127, 1)})
    te.action.action_profile_group_id = 7
    s.write(update(INSERT, table_entry=te))
    return s.table("route_v6"), ((1 << 127) | 5,)


def test_action_profile_member_entries(sb):
    s, bl = sb
    nh = s.table("MyIngress.nexthop")
    s.write(member(bl, "nexthop_profile", 1, 5))
    te = bl.entry("MyIngress.nexthop", {"h.ipv6.flow_label": 7})
    te.action.action_profile_member_id = 1
    s.write(update(INSERT, table_entry=te))
    assert nh.lookup((7,))[:2] == (bl.aid("ingress.nexthop"), (5,))
    # modifying the member changes every entry using it
    m = member(bl, "nexthop_profile", 1, 6)
    m.type = MODIFY
    s.write(m)
    assert nh.lookup((7,))[:2] == (bl.aid("ingress.nexthop"), (6,))
    # a member in use cannot be deleted; unknown member -> NOT_FOUND; direct action -> INVALID_ARGUMENT
    d = member(bl, "nexthop_profile", 1, 6)
    d.type = DELETE
    assert code_of(lambda: s.write(d)) == Code.FAILED_PRECONDITION
    te2 = bl.entry("MyIngress.nexthop", {"h.ipv6.flow_label": 8})
    te2.action.action_profile_member_id = 99
    assert code_of(lambda: s.write(update(INSERT, table_entry=te2))) == Code.NOT_FOUND
    te3 = bl.entry("MyIngress.nexthop", {"h.ipv6.flow_label": 8}, bl.action("ingress.nexthop", port=1))
    assert code_of(lambda: s.write(update(INSERT, table_entry=te3))) == Code.INVALID_ARGUMENT
    # groups on a profile without selector
    assert code_of(lambda: s.write(group(bl, "nexthop_profile", 1, [(1, 1)]))) == Code.INVALID_ARGUMENT
    s.write(update(DELETE, table_entry=te))
    s.write(d)
    assert s.action_profile("nexthop_profile").members == {}
    # @tableonly drop is fine in a member, @defaultonly NoAction is not
    bad = member(bl, "nexthop_profile", 2, 1)
    bad.entity.action_profile_member.action.CopyFrom(bl.action("NoAction"))
    assert code_of(lambda: s.write(bad)) == Code.PERMISSION_DENIED


def test_selector_groups_weights_and_empty_group(sb):
    s, bl = sb
    rt, key = _group_route(s, bl, (1, 2, 3), [(2, 1), (1, 2)])
    # bmv2's order: members by handle (m1 0, m2 1, m3 2), m1's weight-2 copy made with the group (3):
    # handles [0 m1, 1 m2, 3 m1]
    assert [rt.lookup(key, h)[1] for h in range(6)] == [(11,), (12,), (11,)] * 2
    # a member in a group cannot be deleted
    d = member(bl, "ecmp_selector", 2, 0)
    d.type = DELETE
    assert code_of(lambda: s.write(d)) == Code.FAILED_PRECONDITION
    # shrink the group to nothing: hit, but no action runs (bmv2's empty_action)
    s.write(group(bl, "ecmp_selector", 7, [], utype=MODIFY))
    aid, args, e = rt.lookup(key, 3)
    assert (aid, args) == (NO_ACTION_ID, ()) and e is not None
    # errors
    assert code_of(lambda: s.write(group(bl, "ecmp_selector", 8, [(1, 0)]))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: s.write(group(bl, "ecmp_selector", 8, [(1, 1), (1, 1)]))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: s.write(group(bl, "ecmp_selector", 8, [(42, 1)]))) == Code.NOT_FOUND
    assert code_of(lambda: s.write(group(bl, "ecmp_selector", 7, [(1, 1)], max_size=3, utype=MODIFY))) \
        == Code.INVALID_ARGUMENT
    assert code_of(lambda: s.write(group(bl, "ecmp_selector", 7, [(1, 1)]))) == Code.ALREADY_EXISTS
    # wcmp_selector has @max_group_size(16)
    assert code_of(lambda: s.write(group(bl, "wcmp_selector", 1, [], max_size=17))) == Code.INVALID_ARGUMENT
    s.write(member(bl, "wcmp_selector", 1, 1))
    assert code_of(lambda: s.write(group(bl, "wcmp_selector", 1, [(1, 5)], max_size=4))) == Code.RESOURCE_EXHAUSTED
    # max_size 0 (left unset, as p4runtime-shell does): the group holds up to max_group_size
    # (p4runtime.proto's ActionProfileGroup; bmv2's PI server takes it so too)
    s.write(group(bl, "wcmp_selector", 2, [(1, 16)]))
    assert code_of(lambda: s.write(group(bl, "wcmp_selector", 3, [(1, 17)]))) == Code.RESOURCE_EXHAUSTED
    # a MODIFY that leaves max_size 0 keeps the group's; one that names another size changes it: refused
    s.write(group(bl, "wcmp_selector", 4, [(1, 1)], max_size=2))
    s.write(group(bl, "wcmp_selector", 4, [(1, 2)], utype=MODIFY))
    assert code_of(lambda: s.write(group(bl, "wcmp_selector", 4, [(1, 3)], utype=MODIFY))) == Code.RESOURCE_EXHAUSTED
    got = {r.action_profile_group.group_id: r.action_profile_group.max_size for r in s.read(p4runtime_pb2.Entity(
        action_profile_group=p4runtime_pb2.ActionProfileGroup(action_profile_id=bl.pid("action_profiles", "wcmp_selector"))))}
    assert got == {2: 0, 4: 2}
    for gid in (2, 4):
        s.write(group(bl, "wcmp_selector", gid, [], utype=DELETE))
    # group still referenced by the entry
    gd = group(bl, "ecmp_selector", 7, [], utype=DELETE)
    assert code_of(lambda: s.write(gd)) == Code.FAILED_PRECONDITION
    reads = s.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()))
    assert [r.action_profile_group.group_id for r in reads] == [7]
    reads = s.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()))
    assert len(reads) == 4
    # profile 0 with an id: that member (group) of every profile that has one -- member 1 is in both
    reads = s.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(member_id=1)))
    assert sorted(r.action_profile_member.action_profile_id for r in reads) == sorted(
        bl.pid("action_profiles", n) for n in ("ecmp_selector", "wcmp_selector"))
    reads = s.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(group_id=7)))
    assert [r.action_profile_group.action_profile_id for r in reads] == [bl.pid("action_profiles", "ecmp_selector")]
    assert s.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(member_id=9))) == []
    # one member or group that does not exist, in a named profile: nothing, as a table key that does
    # not exist and as from bmv2's PI server (it was NOT_FOUND)
    ecmp = bl.pid("action_profiles", "ecmp_selector")
    assert s.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=ecmp, member_id=9))) == []
    assert s.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(
        action_profile_id=ecmp, group_id=9))) == []


def test_selector_members_in_bmv2_handle_order(sb):
    """A group picks among its members in bmv2's handle order (PI and bmv2: a member's handle is
    the profile's lowest free number at its creation; weight copies are made when a group first
    needs them and given back when none does), not by member id (softswitch until 2026-12-05)."""
    s, bl = sb
    rt, key = _group_route(s, bl, (2, 1), [(1, 1), (2, 1)])  # member 2 created first: handle 0
    assert [rt.lookup(key, h)[1] for h in range(4)] == [(12,), (11,)] * 2
    # member 1 at weight 3: copies 2 and 3 -> [0 m2, 1 m1, 2 m1, 3 m1]
    s.write(group(bl, "ecmp_selector", 7, [(1, 3), (2, 1)], utype=MODIFY))
    assert [rt.lookup(key, h)[1] for h in range(4)] == [(12,), (11,), (11,), (11,)]
    # back to weight 1: the copies are given back; a new member takes the lowest free handle (2)
    s.write(group(bl, "ecmp_selector", 7, [(1, 1), (2, 1)], utype=MODIFY))
    s.write(member(bl, "ecmp_selector", 3, 13))
    s.write(group(bl, "ecmp_selector", 7, [(1, 1), (2, 1), (3, 1)], utype=MODIFY))
    assert [rt.lookup(key, h)[1] for h in range(3)] == [(12,), (11,), (13,)]
    assert [m.handles for m in (s.action_profile("ecmp_selector").members[i] for i in (1, 2, 3))] == [[1], [0], [2]]


def test_oneshot_action_set(sb):
    s, bl = sb
    rt = s.table("route_v6")
    te = bl.entry("route_v6", {"h.ipv6.dst": (1 << 127, 1)})
    for port, w in ((4, 1), (5, 1)):
        te.action.action_profile_action_set.action_profile_actions.add(
            action=bl.action("ingress.nexthop", port=port), weight=w)
    s.write(update(INSERT, table_entry=te))
    assert {rt.lookup(((1 << 127),), h)[1] for h in range(4)} == {(4,), (5,)}
    (got,) = s.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=bl.tid("route_v6"))))
    assert len(got.table_entry.action.action_profile_action_set.action_profile_actions) == 2
    # one-shot members are not visible as members
    assert s.read(p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember())) == []
    # sum of weights above @max_group_size on wcmp_selector: RESOURCE_EXHAUSTED, as PI (its only table,
    # selector_keys, has no key and so takes no entry: the selector is asked directly)
    aset = p4runtime_pb2.ActionProfileActionSet()
    aset.action_profile_actions.add(action=bl.action("ingress.nexthop", port=1), weight=17)
    assert code_of(lambda: s.action_profile("wcmp_selector").oneshot(aset, "one-shot")) == Code.RESOURCE_EXHAUSTED
    aset.action_profile_actions[0].weight = 16
    s.action_profile("wcmp_selector").release_oneshot(s.action_profile("wcmp_selector").oneshot(aset, "one-shot"))
    # one-shot on a profile without selector
    te3 = bl.entry("MyIngress.nexthop", {"h.ipv6.flow_label": 1})
    te3.action.action_profile_action_set.action_profile_actions.add(action=bl.action("ingress.nexthop", port=1),
                                                                     weight=1)
    assert code_of(lambda: s.write(update(INSERT, table_entry=te3))) == Code.INVALID_ARGUMENT
    s.write(update(DELETE, table_entry=te))
    assert s.action_profile("ecmp_selector")._hidden_members == 0


def test_oneshot_and_members_do_not_mix_on_one_selector(sb):
    """A selector is programmed with one-shot action sets or with members and groups, never both:
    mixing is INVALID_ARGUMENT (spec, "One Shot Action Selector Programming"; PI: "Invalid attempt
    to mix action selector programming modes"); once empty it may be taken the other way."""
    s, bl = sb
    te = bl.entry("route_v6", {"h.ipv6.dst": (1 << 127, 1)})
    te.action.action_profile_action_set.action_profile_actions.add(action=bl.action("ingress.nexthop", port=4),
                                                                    weight=1)
    s.write(update(INSERT, table_entry=te))
    assert code_of(lambda: s.write(member(bl, "ecmp_selector", 1, 3))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: s.write(group(bl, "ecmp_selector", 1, [], max_size=4))) == Code.INVALID_ARGUMENT
    s.write(update(DELETE, table_entry=te))
    s.write(member(bl, "ecmp_selector", 1, 3))  # empty again: members now
    s.write(group(bl, "ecmp_selector", 1, [(1, 1)], max_size=4))
    assert code_of(lambda: s.write(update(INSERT, table_entry=te))) == Code.INVALID_ARGUMENT
    assert s.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=bl.tid("route_v6")))) == []


def test_p4runtime_index_and_direct_resource_errors(sb):
    """A negative index is INVALID_ARGUMENT (past the end: OUT_OF_RANGE); a direct counter or meter
    read naming an entry that does not exist is NOT_FOUND; a counter MODIFY without data leaves the
    counter as it is; eburst on a two-rate meter and per-colour meter counters are refused (spec,
    CounterEntry, DirectCounterEntry, MeterEntry & DirectMeterEntry, MeterCounterData)."""
    s, bl = sb
    c = s.counter("port_rx")
    neg = p4runtime_pb2.CounterEntry(counter_id=c.id)
    neg.index.index = -1
    neg.data.packet_count = 1
    assert code_of(lambda: s.write(update(MODIFY, counter_entry=neg))) == Code.INVALID_ARGUMENT
    assert code_of(lambda: s.read(p4runtime_pb2.Entity(counter_entry=neg))) == Code.INVALID_ARGUMENT
    m = s.meter("port_meter")
    mneg = p4runtime_pb2.MeterEntry(meter_id=m.id)
    mneg.index.index = -2
    assert code_of(lambda: s.write(update(MODIFY, meter_entry=mneg))) == Code.INVALID_ARGUMENT
    # a MODIFY without data changes nothing
    c.count(3, 100)
    keep = p4runtime_pb2.CounterEntry(counter_id=c.id)
    keep.index.index = 3
    s.write(update(MODIFY, counter_entry=keep))
    assert (c.bytes[3], c.packets[3]) == (100, 1)
    te = bl.entry("l2", {"dst_mac": 1}, bl.action("set_port", dmac=1, port=1))
    te.counter_data.packet_count = 9
    s.write(update(INSERT, table_entry=te))
    s.write(update(MODIFY, direct_counter_entry=p4runtime_pb2.DirectCounterEntry(table_entry=bl.entry("l2", {"dst_mac": 1}))))
    assert s.table("l2").lookup((1,))[2].counter[1] == 9
    # direct resources of an entry that does not exist
    missing = p4runtime_pb2.DirectCounterEntry(table_entry=bl.entry("l2", {"dst_mac": 2}))
    assert code_of(lambda: s.read(p4runtime_pb2.Entity(direct_counter_entry=missing))) == Code.NOT_FOUND
    acl = p4runtime_pb2.DirectMeterEntry(table_entry=bl.entry("acl", {"h.ipv6.next_hdr": (6, 0xFF)}, priority=1))
    assert code_of(lambda: s.read(p4runtime_pb2.Entity(direct_meter_entry=acl))) == Code.NOT_FOUND
    # eburst belongs to single-rate meters
    cfg = p4runtime_pb2.MeterEntry(meter_id=m.id, config=p4runtime_pb2.MeterConfig(cir=1, cburst=1, pir=2, pburst=2,
                                                                                    eburst=5))
    cfg.index.index = 1
    assert code_of(lambda: s.write(update(MODIFY, meter_entry=cfg))) == Code.INVALID_ARGUMENT
    cfg.config.eburst = 0
    cfg.counter_data.green.packet_count = 5
    assert code_of(lambda: s.write(update(MODIFY, meter_entry=cfg))) == Code.UNIMPLEMENTED
    rd = p4runtime_pb2.MeterEntry(meter_id=m.id)
    rd.counter_data.SetInParent()
    assert code_of(lambda: s.read(p4runtime_pb2.Entity(meter_entry=rd))) == Code.UNIMPLEMENTED


def test_direct_counter(sb):
    s, bl = sb
    l2 = s.table("l2")
    te = bl.entry("l2", {"dst_mac": 1}, bl.action("set_port", dmac=1, port=1))
    te.counter_data.byte_count = 100
    s.write(update(INSERT, table_entry=te))
    dc = s.direct_counter("l2_counter")
    _, _, e = l2.lookup((1,))
    dc.count(e, 64)
    dc.count(e, 36)
    dc.count(None, 1000)  # a miss counts nothing
    rd = p4runtime_pb2.Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry(
        table_entry=bl.entry("l2", {"dst_mac": 1})))
    (got,) = s.read(rd)
    assert (got.direct_counter_entry.data.byte_count, got.direct_counter_entry.data.packet_count) == (200, 2)
    w = p4runtime_pb2.DirectCounterEntry(table_entry=bl.entry("l2", {"dst_mac": 1}))
    w.data.packet_count = 7
    s.write(update(MODIFY, direct_counter_entry=w))
    assert e.counter == [0, 7]
    assert code_of(lambda: s.write(update(INSERT, direct_counter_entry=w))) == Code.INVALID_ARGUMENT
    w.table_entry.match[0].exact.value = b"\x09"
    assert code_of(lambda: s.write(update(MODIFY, direct_counter_entry=w))) == Code.NOT_FOUND
    # a write without its (required) table_entry is malformed, not a missing table (it was NOT_FOUND)
    for ent in ({"direct_counter_entry": p4runtime_pb2.DirectCounterEntry()},
                {"direct_meter_entry": p4runtime_pb2.DirectMeterEntry()}):
        assert code_of(lambda ent=ent: s.write(update(MODIFY, **ent))) == Code.INVALID_ARGUMENT
    # counter_data through TableEntry reads
    req = bl.entry("l2")
    req.counter_data.SetInParent()
    (got,) = s.read(p4runtime_pb2.Entity(table_entry=req))
    assert got.table_entry.counter_data.packet_count == 7
    # all direct counters of all tables
    assert len(s.read(p4runtime_pb2.Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry()))) == 1


def test_indexed_counter(sb):
    s, _bl = sb
    c = s.counter("port_rx")
    c.count(3, 100)
    c.count(3, 50)
    c.count(512, 1)  # out of range: ignored like v1model
    rd = p4runtime_pb2.CounterEntry(counter_id=c.id)
    rd.index.index = 3
    (got,) = s.read(p4runtime_pb2.Entity(counter_entry=rd))
    assert (got.counter_entry.data.byte_count, got.counter_entry.data.packet_count) == (150, 2)
    assert len(s.read(p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=c.id)))) == 512
    # packets-only counter reports no bytes
    d = s.counter("drop_reasons")
    d.count(0, 99)
    rd2 = p4runtime_pb2.CounterEntry(counter_id=d.id)
    rd2.index.index = 0
    (got,) = s.read(p4runtime_pb2.Entity(counter_entry=rd2))
    assert (got.counter_entry.data.byte_count, got.counter_entry.data.packet_count) == (0, 1)
    rd.index.index = 600
    assert code_of(lambda: s.read(p4runtime_pb2.Entity(counter_entry=rd))) == Code.OUT_OF_RANGE
    w = p4runtime_pb2.CounterEntry(counter_id=c.id)  # no index: every cell
    w.data.byte_count = 5
    s.write(update(MODIFY, counter_entry=w))
    assert c.bytes[0] == c.bytes[511] == 5 and c.packets[3] == 0
    assert code_of(lambda: s.write(update(INSERT, counter_entry=w))) == Code.INVALID_ARGUMENT


def test_meters_trtcm(sb):
    s, bl = sb
    m = s.meter("port_meter")  # bytes
    assert m.execute(1, 1500, 0) == GREEN  # unconfigured
    cfg = p4runtime_pb2.MeterEntry(meter_id=m.id, config=p4runtime_pb2.MeterConfig(cir=1000, cburst=1000,
                                                                                    pir=2000, pburst=2000))
    cfg.index.index = 1
    s.write(update(MODIFY, meter_entry=cfg))
    colours = [m.execute(1, 600, 0) for _ in range(4)]
    assert colours == [GREEN, YELLOW, YELLOW, RED]
    # after one second: +1000 committed, +2000 peak tokens
    assert m.execute(1, 600, 1_000_000) == GREEN
    (got,) = s.read(p4runtime_pb2.Entity(meter_entry=cfg))
    assert got.meter_entry.config.pir == 2000
    bad = p4runtime_pb2.MeterEntry(meter_id=m.id, config=p4runtime_pb2.MeterConfig(cir=10, cburst=1, pir=5, pburst=1))
    assert code_of(lambda: s.write(update(MODIFY, meter_entry=bad))) == Code.INVALID_ARGUMENT
    reset = p4runtime_pb2.MeterEntry(meter_id=m.id)
    reset.index.index = 1
    s.write(update(MODIFY, meter_entry=reset))
    assert m.execute(1, 10**6, 2_000_000) == GREEN
    # direct meter (packets) on acl entries
    te = bl.entry("acl", {"h.ipv6.next_hdr": (6, 0xFF)}, bl.action("acl_deny"), priority=1)
    te.meter_config.CopyFrom(p4runtime_pb2.MeterConfig(cir=1, cburst=1, pir=1, pburst=2))
    s.write(update(INSERT, table_entry=te))
    dm = s.direct_meter("acl_meter")
    _, _, e = s.table("acl").lookup((6, 0, 0, 0))
    assert [dm.execute(e, 1500, 10) for _ in range(3)] == [GREEN, YELLOW, RED]
    assert dm.execute(None, 1, 10) == GREEN
    # MODIFY without meter_config resets the meter to default (spec: Direct Resources)
    te.ClearField("meter_config")
    te.ClearField("action")
    s.write(update(MODIFY, table_entry=te))
    assert e.meter is None


def test_meter_tokens_come_on_bmv2s_grid():
    """bmv2 (src/bm_sim/meters.cpp) credits whole tokens on a fixed grid of 1/rate from the clock's
    origin, not 1/rate after the bucket emptied: at 2 packets/s the grid points are 0.5 s apart, so a
    bucket emptied at 0.4 s has a token again at 0.5 s; the next one, used at 0.5 s, only at 1.0 s."""
    from softswitch.runtime.meters import TrTcm

    m = TrTcm(cir=2, cburst=1, pir=2, pburst=1)
    assert m.execute(1, 400_000) == GREEN  # both buckets empty now
    assert m.execute(1, 499_999) == RED
    assert m.execute(1, 500_000) == GREEN  # 0.1 s later: the grid point, not 0.4 + 0.5 s
    assert [m.execute(1, t) for t in (600_000, 999_999, 1_000_000)] == [RED, RED, GREEN]
    # a full bucket keeps its place on the grid and its tokens stay whole (no fractions banked)
    m = TrTcm(cir=1, cburst=2, pir=1, pburst=2)
    assert [m.execute(1, t) for t in (5_700_000, 5_700_001, 5_700_002)] == [GREEN, GREEN, RED]
    assert m.execute(1, 5_999_999) == RED and m.execute(1, 6_000_000) == GREEN


def test_registers(sb):
    s, _bl = sb
    r = s.register("flow_state")
    r.write(5, (1 << 40) + 3)
    assert r.read(5) == 3  # truncated to bit<32>
    r.write(5000, 1)  # out of range: no-op
    assert r.read(5000) == 0
    w = p4runtime_pb2.RegisterEntry(register_id=r.id)
    w.index.index = 9
    w.data.bitstring = b"\x01\x02"
    s.write(update(MODIFY, register_entry=w))
    assert r.read(9) == 0x102
    (got,) = s.read(p4runtime_pb2.Entity(register_entry=w))
    assert got.register_entry.data.bitstring == b"\x01\x02"
    w.data.bitstring = b"\x01" * 5
    assert code_of(lambda: s.write(update(MODIFY, register_entry=w))) == Code.OUT_OF_RANGE  # spec "Bytestrings": over-width
    w.data.bitstring = b"\x01"
    w.index.index = 1024
    assert code_of(lambda: s.write(update(MODIFY, register_entry=w))) == Code.OUT_OF_RANGE


def test_pre(sb):
    s, _ = sb
    mg = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=5)
    mg.replicas.add(egress_port=1, instance=0)
    mg.replicas.add(port=b"\x02", instance=1)
    s.write(update(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=mg)))
    assert s.pre.multicast_group(5) == ((1, 0), (2, 1))
    assert s.pre.multicast_group(6) == ()
    pre = p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=mg)
    assert code_of(lambda: s.write(update(INSERT, packet_replication_engine_entry=pre))) == Code.ALREADY_EXISTS
    mg.replicas.add(egress_port=1, instance=0)
    assert code_of(lambda: s.write(update(MODIFY, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=mg)))) == Code.INVALID_ARGUMENT
    cs = p4runtime_pb2.CloneSessionEntry(session_id=3, packet_length_bytes=64)
    cs.replicas.add(egress_port=255, instance=0)
    s.write(update(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs)))
    sess = s.pre.clone_session(3)
    assert sess.replicas == ((255, 0),) and sess.class_of_service == 0 and sess.packet_length_bytes == 64
    assert s.pre.clone_session(4) is None
    everything = s.read(p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()))
    assert len(everything) == 2
    s.write(update(DELETE, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=p4runtime_pb2.MulticastGroupEntry(multicast_group_id=5))))
    assert s.pre.multicast_group(5) == ()
    assert code_of(lambda: s.write(update(DELETE, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=p4runtime_pb2.MulticastGroupEntry(multicast_group_id=5))))) == Code.NOT_FOUND


def test_digests_batching_dedup_ack_timeout():
    now = [0]
    p4info = load_p4info()
    s = SwitchState(p4info)
    from softswitch.runtime import DigestState

    s.digests = DigestState(p4info, clock_ns=lambda: now[0])
    got = []
    s.digests.set_sink(got.append)
    did = s.digest_ids["learn_t"]
    s.digests.emit(did, (1, 2))  # not configured yet: dropped
    cfg = p4runtime_pb2.DigestEntry(digest_id=did, config=p4runtime_pb2.DigestEntry.Config(
        max_timeout_ns=1000, max_list_size=2, ack_timeout_ns=5000))
    s.write(update(INSERT, digest_entry=cfg))
    s.digests.emit(did, (0xAA, 1))
    s.digests.emit(did, (0xAA, 1))  # duplicate of a pending tuple
    assert got == []
    s.digests.emit(did, (0xBB, 2))
    assert len(got) == 1 and got[0].values == [(0xAA, 1), (0xBB, 2)]
    msg = s.digests.to_proto(got[0])
    assert [digest_values(d) for d in msg.data] == [(0xAA, 1), (0xBB, 2)] and msg.list_id == got[0].list_id
    assert got[0].list_id == 1  # each digest numbers its lists from 1 (PI's DigestData)
    s.digests.emit(did, (0xAA, 1))  # in flight, not acked: suppressed
    s.poll = None
    now[0] = 2000
    s.digests.poll()
    assert len(got) == 1
    assert s.digests.ack(did, got[0].list_id)
    s.digests.emit(did, (0xAA, 1))
    assert len(got) == 1  # pending until max_timeout passes
    now[0] = 3500
    s.digests.poll()
    assert len(got) == 2 and got[1].values == [(0xAA, 1)]
    # never acked: after ack_timeout the tuple may be reported again
    now[0] = 9000
    s.digests.emit(did, (0xAA, 1))
    now[0] = 10500
    s.digests.poll()
    assert len(got) == 3
    assert [e.digest_entry.config.max_list_size for e in s.read(p4runtime_pb2.Entity(
        digest_entry=p4runtime_pb2.DigestEntry()))] == [2]
    with pytest.raises(P4RuntimeError) as ei:
        s.write(update(INSERT, digest_entry=cfg))
    assert ei.value.code == Code.ALREADY_EXISTS


def test_reconcile_keeps_state(sb):
    s, bl = sb
    s.write(update(INSERT, table_entry=bl.entry("l2", {"dst_mac": 1}, bl.action("set_port", dmac=1, port=1))))
    s.write(member(bl, "ecmp_selector", 1, 3))
    s.write(group(bl, "ecmp_selector", 1, [(1, 1)]))
    te = bl.entry("route_v6", {"h.ipv6.dst": (1 << 127, 1)})
    te.action.action_profile_group_id = 1
    s.write(update(INSERT, table_entry=te))
    s.write(update(MODIFY, table_entry=bl.entry("acl", action=bl.action("to_cpu", reason=2), is_default_action=True)))
    s.register("flow_state").write(3, 77)
    new = SwitchState(load_p4info())
    dropped = new.reconcile_from(s)
    assert dropped == []
    assert new.table("l2").lookup((1,))[1] == (1, 1)
    assert new.table("route_v6").lookup((1 << 127,), 0)[1] == (3,)
    assert new.table("acl").lookup((0, 0, 0, 0)) == (bl.aid("to_cpu"), (2,), None)
    assert new.register("flow_state").read(3) == 77


def test_default_entry_of_a_table_with_an_action_profile_reads_back_without_an_action(sb):
    """Such a table has no default action a client could write (PERMISSION_DENIED) and on bmv2 a miss
    runs none; its default entry read back as NoAction, which the same client could not write back.
    It reads back with no action, as from bmv2's PI server; a plain table's still names its action."""
    s, bl = sb
    for name, has_action in (("route_v6", False), ("MyIngress.nexthop", False), ("l2", True)):
        (got,) = s.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
            table_id=bl.tid(name), is_default_action=True)))
        assert got.table_entry.is_default_action
        assert got.table_entry.HasField("action") is has_action, name


def test_pre_replica_ports_are_bytestrings(sb):
    """A replica's ``port`` follows the spec's Bytestrings rules: any zero-extended length is taken, an
    empty string is OUT_OF_RANGE, and reads answer the canonical (shortest) form."""
    s, _ = sb

    def pre(gid: int, *ports: bytes) -> p4runtime_pb2.PacketReplicationEngineEntry:
        mg = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=gid)
        for i, p in enumerate(ports):
            mg.replicas.add(port=p, instance=i)
        return p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=mg)

    s.write(update(INSERT, packet_replication_engine_entry=pre(1, b"\x00\x01", b"\x00\x00\x00\x00\x01\xff", b"\x00")))
    assert s.pre.multicast_group(1) == ((1, 0), (511, 1), (0, 2))
    got = s.read(p4runtime_pb2.Entity(packet_replication_engine_entry=pre(1)))
    assert [r.port for r in got[0].packet_replication_engine_entry.multicast_group_entry.replicas] == \
        [b"\x01", b"\x01\xff", b"\x00"]
    assert code_of(lambda: s.write(update(INSERT, packet_replication_engine_entry=pre(2, b"")))) == Code.OUT_OF_RANGE
    cs = p4runtime_pb2.CloneSessionEntry(session_id=3)
    cs.replicas.add(port=b"\x00\x00\x07")
    s.write(update(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs)))
    got = s.read(p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=p4runtime_pb2.CloneSessionEntry(session_id=3))))
    assert got[0].packet_replication_engine_entry.clone_session_entry.replicas[0].port == b"\x07"
