"""Extern instances constructed in a table property (``implementation = action_selector(...)``,
``counters = direct_counter(...)``), through the compiled pipeline and P4Info."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error
from softswitch.runtime.errors import P4RuntimeError

PROG = DATA / "exec_anon_externs.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, op, a=0, b=0) -> bytes:
    return rig.output(ETH + bytes([op, a, b, 0]), port=0)[14:]


def _member(rig, profile: str, mid: int, v: int) -> None:
    rig.write(INSERT, action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=rig._id("action_profiles", profile), member_id=mid, action=rig.action("set_r", v=v)))


def test_p4info_names_them_after_the_property_as_p4c_does(rig):
    """p4c's P4Info for its action_profile_max_group_size_annotation sample: the profiles are
    named "ap" and "ap_ws" (the property's @name, no control prefix), ids 294074782 and
    300324846, each table's implementation_id pointing at its own; max_group_size from the
    property's annotation."""
    aps = {a.preamble.name: a for a in rig.p4info.action_profiles}
    assert set(aps) == {"ap", "ap_ws"}
    ap, ws = aps["ap"], aps["ap_ws"]
    assert (ap.preamble.id, ap.size, ap.with_selector) == (294074782, 16, False)
    assert (ws.preamble.id, ws.size, ws.with_selector, ws.max_group_size) == (300324846, 64, True, 4)
    tables = {t.preamble.name: t for t in rig.p4info.tables}
    assert tables["I.t_ap"].implementation_id == ap.preamble.id
    assert tables["I.t_sel"].implementation_id == ws.preamble.id
    assert list(ap.table_ids) == [tables["I.t_ap"].preamble.id]
    assert list(ws.table_ids) == [tables["I.t_sel"].preamble.id]
    # the selector key is no match field
    assert [f.name for f in tables["I.t_sel"].match_fields] == ["h.op.a"]
    (dc,) = rig.p4info.direct_counters
    assert dc.preamble.name == "t_cnt_counter" and dc.direct_table_id == tables["I.t_cnt"].preamble.id
    assert list(tables["I.t_cnt"].direct_resource_ids) == [dc.preamble.id]


def test_action_profile_member(rig):
    _member(rig, "ap", 1, 0x41)
    rig.entry("I.t_ap", {"h.op.a": ("exact", 5)}, member=1)
    assert run(rig, 1, a=5)[3] == 0x41
    assert run(rig, 1, a=6)[3] == 0      # miss: NoAction


def test_action_selector_group_spreads_and_keeps_flows(rig):
    _member(rig, "ap_ws", 1, 0x51)
    _member(rig, "ap_ws", 2, 0x52)
    ap = rig._id("action_profiles", "ap_ws")
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=ap, group_id=1, max_size=4)
    g.members.add(member_id=1, weight=1)
    g.members.add(member_id=2, weight=1)
    rig.write(INSERT, action_profile_group=g)
    rig.entry("I.t_sel", {"h.op.a": ("exact", 7)}, group=1)
    seen = set()
    for b in range(16):
        r = run(rig, 2, a=7, b=b)[3]
        assert run(rig, 2, a=7, b=b)[3] == r
        seen.add(r)
    assert seen == {0x51, 0x52}


def test_action_selector_max_group_size_from_the_property(rig):
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=rig._id("action_profiles", "ap_ws"),
                                         group_id=2, max_size=5)
    with pytest.raises(P4RuntimeError):
        rig.write(INSERT, action_profile_group=g)


def test_direct_counter_counts_the_tables_hits(rig):
    rig.entry("I.t_cnt", {"h.op.a": ("exact", 9)}, action=rig.action("set_r", v=0x61))
    for _ in range(3):
        assert run(rig, 3, a=9)[3] == 0x61
    run(rig, 3, a=10)  # a miss is not counted
    t = next(x for x in rig.p4info.tables if x.preamble.name == "I.t_cnt")
    te = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
    te.match.add(field_id=1).exact.value = bytes([9])
    (got,) = rig.state.read(p4runtime_pb2.Entity(
        direct_counter_entry=p4runtime_pb2.DirectCounterEntry(table_entry=te)))
    assert got.direct_counter_entry.data.packet_count == 3
    assert got.direct_counter_entry.data.byte_count == 3 * 18


def _reject(old: str, new: str) -> str:
    src = PROG.read_text()
    assert old in src
    with pytest.raises(P4Error) as ei:
        load_source(src.replace(old, new), "anon.p4")
    return str(ei.value)


def test_without_a_name_it_is_rejected_as_p4c_does():
    msg = _reject('@name("ap") implementation', "implementation")
    assert msg.startswith("anon.p4:26:") and "unsupported: an anonymous 'implementation' of table " \
        "'t_ap' without a @name annotation" in msg


def test_an_anonymous_direct_meter_is_rejected_by_name():
    msg = _reject('@name("t_cnt_counter") counters = direct_counter(CounterType.packets_and_bytes);',
                  '@name("m") meters = direct_meter<bit<32>>(MeterType.packets);')
    assert msg.startswith("anon.p4:38:") and "unsupported: a direct_meter constructed in the 'meters' " \
        "property of table 't_cnt'" in msg


def test_a_constructor_of_the_wrong_kind_is_an_error():
    msg = _reject("implementation = action_profile(32w16)", "implementation = direct_counter(CounterType.packets)")
    assert msg.startswith("anon.p4:26:") and "expected a action_profile or action_selector instance" in msg
