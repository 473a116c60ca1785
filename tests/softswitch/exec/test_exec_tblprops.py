"""Table forms p4c accepts, through the compiled pipeline and P4Info: ``actions = {}``, a
``selector`` key without an action selector, and an unused action sharing a P4Info name (two
used ones are an error, as p4c's "conflicting control plane name")."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig
from p4.config.v1 import p4info_pb2

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error
from softswitch.runtime.errors import P4RuntimeError

PROG = DATA / "exec_tblprops.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"
NO_ACTION = 21257015


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, op, a=0, b=0) -> bytes:
    return rig.output(ETH + bytes([op, a, b, 0]), port=0)[14:]


def table(rig, name):
    return next(t for t in rig.p4info.tables if t.preamble.name == name)


# ---- actions = {}
def test_empty_actions_list_gets_default_only_no_action_as_p4c(rig):
    """p4c's P4Info for its issue2362-bmv2 sample: the table's only action is NoAction,
    @defaultonly, the initial default, not const."""
    t = table(rig, "I.t_empty")
    assert [(r.id, r.scope, list(r.annotations)) for r in t.action_refs] == [
        (NO_ACTION, p4info_pb2.ActionRef.DEFAULT_ONLY, ["@defaultonly"])]
    assert t.initial_default_action.action_id == NO_ACTION and t.const_default_action_id == 0


def test_empty_actions_list_table_misses_and_its_hit_is_a_key(rig):
    rig.entry("I.t_outer", {"empty_hit": ("exact", 0)}, action=rig.action("set_r", v=0x71))
    assert run(rig, 1, a=5)[3] == 0x71


def test_no_entry_can_be_added_to_an_empty_actions_table(rig):
    with pytest.raises(P4RuntimeError):
        rig.entry("I.t_empty", {"h.op.a": ("exact", 5)}, action=rig.action("NoAction"))


# ---- a selector key without an action_selector
def test_selector_key_without_selector_is_ignored_as_p4c(rig):
    """p4c's P4Info for its issue1560-bmv2 sample lists only the exact key of such a table,
    and its bmv2 back end leaves the selector key out: the table is a plain exact table."""
    t = table(rig, "I.t_nosel")
    assert [(f.name, f.match_type) for f in t.match_fields] == [("h.op.a", p4info_pb2.MatchField.EXACT)]
    assert t.implementation_id == 0
    assert any("table 't_nosel' has selector keys but no action_selector" in w and "exec_tblprops.p4:32:"
               in w for w in rig.program.warnings)
    rig.entry("I.t_nosel", {"h.op.a": ("exact", 3)}, action=rig.action("set_r", v=0x33))
    assert {run(rig, 2, a=3, b=b)[3] for b in range(8)} == {0x33}
    assert run(rig, 2, a=4)[3] == 0


# ---- actions sharing a name
def test_shared_name_listed_once_unused_one_left_out(rig):
    marks = [a for a in rig.p4info.actions if a.preamble.name == "I.mark"]
    assert len(marks) == 1 and list(marks[0].params) == []  # not mark_unused's parameter
    assert marks[0].preamble.id in [r.id for r in table(rig, "I.t_a").action_refs]


def test_each_table_runs_its_own_action(rig):
    assert run(rig, 3, a=1)[3] == 0xA1           # t_a's const entry: mark_a
    out = run(rig, 4, a=1)
    assert (out[2], out[3]) == (0xBB, 0xB2)       # t_b's default: mark_b, and action_run names it
    rig.entry("I.t_b", {"h.op.a": ("exact", 2)}, action=rig.action("I.mark_b"))
    assert run(rig, 4, a=2)[3] == 0xB2


def _variant(old: str, new: str) -> str:
    src = PROG.read_text()
    assert old in src
    return src.replace(old, new)


@pytest.mark.parametrize("old, new, line", [
    ("    action mark_b()", '    @name("mark") action mark_b()', 36),  # two used actions named I.mark
    ("actions = { mark_b; NoAction; }", "actions = { mark_b; mark_unused; NoAction; }", 37),  # params differ
    ("    action mark_b()", '    @name(".I.mark") action mark_b()', 36),  # the same name, absolute
])
def test_used_actions_of_one_control_plane_name_are_an_error(old, new, line):
    with pytest.raises(P4Error) as ei:
        load_source(_variant(old, new), "tp.p4")
    assert str(ei.value).startswith(f"tp.p4:{line}:") and "conflicting control plane name 'I.mark'" in str(ei.value)


def test_one_table_listing_two_actions_of_one_name_is_an_error():
    with pytest.raises(P4Error) as ei:
        load_source(_variant("actions = { mark_a; NoAction; }", "actions = { mark_a; mark_unused; NoAction; }"),
                    "tp.p4")
    assert str(ei.value).startswith("tp.p4:40:") and "table 't_a' lists two actions named 'I.mark'" in str(ei.value)


def test_a_top_level_action_used_in_two_controls_is_one_action():
    src = PROG.read_text().replace("control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }",
                                   "control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { "
                                   "apply { NoAction(); } }")
    load_source(src, "tp.p4")
