"""Which metadata fields a ``@field_list(N)`` preserves, as p4c builds bmv2's field list: its mid
end flattens the metadata struct (``FlattenInterfaceStructs``), each leaf taking the annotations
of the struct types and fields above it before its own, and its back end reads one
``@field_list`` per leaf, the first (``createRecirculateFieldsList``, ``getSingle``). Until
2026-12-06 softswitch put a leaf in every list any of those annotations named (a field's own
``@field_list(2)`` under a ``@field_list(1)`` struct field, a second ``@field_list`` on a field)
and ignored ``@field_list`` on a struct type: the resubmitted pass saw other values than bmv2's."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, through_loop

from softswitch.stf import parse_stf, run_stf

PROG = DATA / "exec_field_list_first.p4"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def test_lists_follow_the_first_annotation(rig):
    meta = rig.program.ingress.params[1].type
    assert rig.program.field_list(meta, 1) == [("in1", "a"), ("in1", "b"), ("q",)]
    assert rig.program.field_list(meta, 2) == []  # in1.b's and q's first @field_list is 1
    assert rig.program.field_list(meta, 3) == [("t", "a"), ("t", "b")]  # from the struct type


STF = """
packet 0 01 00 00 00 00 00
expect 1 01 04 05 06 00 00
packet 0 02 00 00 00 00 00
expect 1 02 00 00 00 00 00
packet 0 03 00 00 00 00 00
expect 1 03 00 00 00 07 08
"""


def test_resubmitted_values(rig):
    res = run_stf(rig.program, parse_stf(STF))
    assert res.passed and len(res.checks) == 3


def test_resubmitted_values_loop_path(rig):
    # the loop's entry point hands a resubmission back to the same code: one packet per list
    for op, want in ((1, "010405060000"), (2, "020000000000"), (3, "030000000708")):
        assert through_loop(rig.pipeline, bytes([op]) + bytes(5)).hex() == want


def test_flat_metadata_struct_keeps_its_type_annotation(tmp_path):
    # without a struct field the metadata struct is not flattened (p4c's isNestedStruct), so a
    # @field_list on its type reaches no field
    from softswitch.frontend import load_program

    src = PROG.read_text().replace("struct M {\n  @field_list(1) inner_t in1;\n  @field_list(1) @field_list(2) bit<8> q;\n  tagged_t t;\n}",
                                   "@field_list(3) struct M {\n  bit<8> q;\n}")
    src = src.replace("m.in1.a = 4; m.in1.b = 5; m.q = 6; m.t.a = 7; m.t.b = 8;", "m.q = 6;")
    src = src.replace("h.h.ia = m.in1.a; h.h.ib = m.in1.b; h.h.q = m.q; h.h.ta = m.t.a; h.h.tb = m.t.b;",
                      "h.h.q = m.q;")
    p = tmp_path / "flat.p4"
    p.write_text(src)
    prog = load_program(str(p), {}, [])
    assert prog.field_list(prog.ingress.params[1].type, 3) == []
