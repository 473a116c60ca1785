"""Faults a review of the 2026-12-05 changes found, each fixed (programs in data/exec_review_*.p4):
a refused table INSERT kept its one-shot selector state (and so locked the selector in one-shot
mode); a struct holding a header stack, assigned in a parser, lost the stack's nextIndex (bmv2's
assign_header_stack copies it there); making a header_union member valid took the other
member's bytes off egress's packet_length (bmv2 invalidates siblings without touching the length
register); a varbit header made invalid took off only its fixed bytes; a slice key of an invalid
header's field matched the stale value (p4c makes it the field with a mask: bmv2 reads 0)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig, enc
from p4.v1 import p4runtime_pb2

from softswitch.runtime.errors import P4RuntimeError


def test_a_refused_insert_leaves_the_selector_as_it_was():
    r = Rig(DATA / "exec_review_sel_meter.p4")
    t = r.p4info.tables[0]
    te = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
    te.match.add(field_id=t.match_fields[0].id).exact.value = enc(5)
    te.action.action_profile_action_set.action_profile_actions.add(weight=1).action.CopyFrom(r.action("set", v=1))
    te.meter_config.cir, te.meter_config.cburst, te.meter_config.pir, te.meter_config.pburst = 1, 1, 2, 2
    te.meter_config.eburst = 5  # refused: two-rate meter
    with pytest.raises(P4RuntimeError, match="eburst"):
        r.write(INSERT, table_entry=te)
    ts = r.state.tables[t.preamble.id]
    prof = ts.profile
    assert (len(ts), prof._hidden_members, prof._group_usage, ts._handles.next) == (0, 0, 0, 0)
    m = p4runtime_pb2.ActionProfileMember(action_profile_id=prof.id, member_id=1)
    m.action.CopyFrom(r.action("set", v=2))
    r.write(INSERT, action_profile_member=m)  # the selector is empty: members may be written


@pytest.mark.parametrize("path", ["api", "loop"])
def test_a_struct_with_a_stack_assigned_in_a_parser_keeps_next_index(path):
    r = Rig(DATA / "exec_review_struct_stack_parser.p4")
    out = (r.output if path == "api" else r.loop_output)(bytes([0xAA, 0xBB, 0xCC]))
    assert out == bytes([0xAA, 0xBB, 0xCC]), out.hex()


@pytest.mark.parametrize("path", ["api", "loop"])
def test_union_member_made_valid_counts_its_bytes_only(path):
    r = Rig(DATA / "exec_review_union_len.p4")
    out = (r.output if path == "api" else r.loop_output)(bytes(10))  # u.a (4 bytes) + 6 of payload
    assert int.from_bytes(out[:4], "big") == 18  # 10 + u.b's 8; u.a invalidated by the union


def test_a_varbit_header_made_invalid_takes_off_its_varbit_bytes_too():
    r = Rig(DATA / "exec_review_varbit_len.p4")
    out = r.output(bytes([4, 1, 2, 3, 4]) + bytes(5))  # 1 fixed + 4 varbit bytes, then 5
    assert int.from_bytes(out[:4], "big") == 5


@pytest.mark.parametrize("path", ["api", "loop"])
def test_a_slice_key_of_an_invalid_header_is_zero(path):
    r = Rig(DATA / "exec_review_slice_key.p4")
    name = r.p4info.tables[0].match_fields[0].name
    r.entry("t", {name: ("exact", 5)}, r.action("set", v=0x55))
    r.entry("t", {name: ("exact", 0)}, r.action("set", v=0x10))
    out = (r.output if path == "api" else r.loop_output)(bytes([5, 0, 0]))
    assert out.hex() == "10", out.hex()
