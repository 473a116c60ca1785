"""Calls of user functions in a ``select`` key and in a table key, which p4c accepts and which
softswitch refused by name ("call of function ... outside a statement") until 2026-12-06.

p4c's ``DoSimplifyExpressions`` (frontends/p4/sideEffects.cpp, ``postorder(IR::ParserState*)``)
puts a call in a select into a temporary at the end of the state, before the select; a key with
no call stays in place, so it reads what the call wrote.  Its ``KeySideEffect`` (sideEffects.h)
computes every key of a table into a temporary before the lookup when one key has a call, and its
LocalCopyPropagation (``apply_table``) puts a key whose value is an lvalue back into the table: a
field key stays a field, matched as 0 while its header is invalid, as bmv2's match-key builder
reads it."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, through_api, through_loop, v1_template

from softswitch.frontend import load_source


@pytest.fixture(scope="module")
def rig():
    r = Rig(DATA / "exec_calls_in_keys.p4")
    r.entry("I.t", {"lowb": ("exact", 3), "h.x.v": ("ternary", 0x77, 0xFF)}, r.action("I.set", v=0x99),
            priority=1)
    r.entry("I.t", {"lowb": ("exact", 3), "h.x.v": ("ternary", 0, 0xFF)}, r.action("I.set", v=0x55),
            priority=2)
    return r


@pytest.mark.parametrize("through", [through_api, through_loop])
def test_select_key_calls_run_before_the_select_in_order(rig, through):
    # a = 0xA1: count() makes m.cnt 1 and gives 0xA, low(a) + 1 is 2: h.x is extracted
    assert through(rig.pipeline, bytes([0xA1, 0x00, 0x00, 0x77])) == bytes([0xA1, 0x00, 0x00])
    # a = 0xB1: no match, h.x not extracted, the byte stays payload
    assert through(rig.pipeline, bytes([0xB1, 0x00, 0x00, 0x77])) == bytes([0xB1, 0x00, 0x00, 0x77])


@pytest.mark.parametrize("through", [through_api, through_loop])
def test_table_keys_are_computed_before_the_lookup(rig, through):
    # low(b) = 3; h.x was extracted (0x77) and made invalid: its field key matches as 0
    assert through(rig.pipeline, bytes([0xA1, 0x13, 0x00, 0x77])) == bytes([0xA1, 0x13, 0x55])
    # h.x never valid
    assert through(rig.pipeline, bytes([0xB1, 0xF3, 0x00])) == bytes([0xB1, 0xF3, 0x55])
    # low(b) = 4: miss
    assert through(rig.pipeline, bytes([0xB1, 0x14, 0x00])) == bytes([0xB1, 0x14, 0x00])


def test_p4info_key_names_and_widths(rig):
    (t,) = [x for x in rig.p4info.tables if x.preamble.name == "I.t"]
    assert [(f.name, f.bitwidth) for f in t.match_fields] == [("lowb", 8), ("h.x.v", 8)]


@pytest.mark.parametrize("through", [through_api, through_loop])
def test_a_key_calling_a_function_with_an_inout_parameter(through):
    """p4c's KeySideEffect computes every key into a temporary before each apply, in key order
    (refused by name until 2026-12-06): a field key before the call is read before the call
    writes the field; the call runs at every apply."""
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    src = v1_template("bit<8> a;") % (
        "bit<8> inc(inout bit<8> c) { c = c + 1; return c; }",
        ("action set(bit<8> v) { h.h.a = v; } "
         "table t { key = { m.x: exact; inc(m.x): exact @name(\"nx\"); } actions = { set; NoAction; } "
         "const entries = { (5, 6): set(0x55); (6, 7): set(0x66); } default_action = NoAction(); } "
         "apply { s.egress_spec = 1; m.x = h.h.a; t.apply(); if (m.x == 7) { t.apply(); } }"))
    prog = load_source(src, "k.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    assert through(pl, bytes([5])) == bytes([0x55])  # keys (5, 6), not (6, 6)
    assert through(pl, bytes([6])) == bytes([0x66])  # (6, 7) hits; m.x is 7: applied again, (7, 8) misses
    assert through(pl, bytes([9])) == bytes([9])


def test_switch_on_a_call_of_a_function_with_inout_parameters():
    """``switch (f(x))`` with ``f`` writing ``x``: evaluated once, before the cases, as p4c's
    DoSimplifyExpressions dismantles a switch's expression (refused by name until 2026-12-06)."""
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    src = v1_template("bit<8> a;") % (
        "bit<8> inc(inout bit<8> c) { c = c + 1; return c; }",
        ("apply { s.egress_spec = 1; m.x = h.h.a;"
         " switch (inc(m.x)) { 2: { h.h.a = 0x20 + m.x; } default: { h.h.a = 0xD0 + m.x; } } }"))
    prog = load_source(src, "sw.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    assert through_api(pl, bytes([1])) == bytes([0x22])
    assert through_loop(pl, bytes([4])) == bytes([0xD5])
