"""Programs p4c refuses, refused at the offending construct (each loaded until 2026-12-05, some
with a meaning, one with a Python error instead of a diagnostic), read from p4c's front end
(``typeCheckExpr.cpp``, ``typeCheckStmt.cpp``, ``validateParsedProgram.cpp``, its "Duplicates
declaration" check) and its bmv2 back end (``control.cpp``: one lpm key, a direct counter or
meter on one table, a direct meter something reads, into one destination; ``deparser.cpp``: no if/switch in a deparser), with p4c's own error programs
(``testdata/p4_16_bmv_errors``: basic, reused-counter, issue1167, issue1829) as the models."""
from __future__ import annotations

import pytest

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

_SRC = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> r; }
struct H { h_t h; h_t[2] s; }
struct M { }
FUNC
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); pk.extract(h.s.next); PSTMT transition accept; }
    STATE
}
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    DECLS
    apply { CSTMT sm.egress_spec = 1; }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { SDI apply { pk.emit(h.h); DEP } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def _src(**parts: str) -> str:
    s = _SRC
    parts = dict(parts, sdi="SD() sd;" if "sd.apply" in parts.get("dep", "") else "")
    for k in ("FUNC", "PSTMT", "STATE", "DECLS", "CSTMT", "DEP", "SDI"):
        s = s.replace(k, parts.get(k.lower(), ""))
    return s


@pytest.mark.parametrize("parts, line, why", [
    ({"cstmt": "h.h.r = h.s.last.a;"}, 14, "'last' can only be used in a parser"),
    ({"cstmt": "h.h.r = (bit<8>)h.s.lastIndex;"}, 14, "'lastIndex' can only be used in a parser"),
    ({"pstmt": "h.s.push_front(1);"}, 8, "'push_front' cannot be used in a parser"),
    ({"pstmt": "h.s.pop_front(1);"}, 8, "'pop_front' cannot be used in a parser"),
    ({"state": "state accept { transition reject; }"}, 9, "state 'accept' is built in"),
    ({"cstmt": "bit<8> x = 1; bit<8> x = 2; h.h.r = x;"}, 14, "'x' is declared twice in this block"),
    ({"func": "bit<8> f(in int x) { return (bit<8>)x; }", "cstmt": "h.h.r = f(3);"}, 6,
     "parameter 'x' of function 'f' has type int"),
    ({"cstmt": "switch (h.h.a) { 1: { h.h.r = 1; } 1: { h.h.r = 2; } }"}, 14, "switch label appears twice"),
    ({"decls": "action a() {} action b() {} table t { actions = { a; b; } }",
      "cstmt": "switch (t.apply().action_run) { a: { h.h.r = 1; } a: { h.h.r = 2; } }"}, 14, "'a' appears twice"),
    ({"cstmt": "switch (h.h.a) { default: { h.h.r = 1; } 1: { h.h.r = 2; } }"}, 14, "after 'default'"),
    ({"decls": "action a() {} table t { actions = { a; } const entries = { _ : a(); } }"}, 13, "has entries but no key"),
    ({"cstmt": "h.h.r = h.s[true].a;"}, 14, "stack index must be an integer"),
    ({"cstmt": "h.h.r = ~1;"}, 14, "'~' on an integer literal of unknown width"),
    ({"decls": "action a() {} table t { actions = { a; } } action b() { t.apply(); }"}, 13,
     "tables cannot be invoked from actions"),
    ({"func": "action ta() {} bit<8> f(in bit<8> x) { ta(); return x; }", "cstmt": "h.h.r = f(3);"}, 6,
     "a function cannot call an action"),
    ({"decls": "action a() {} table t { key = { h.h.a : lpm; h.h.r : lpm; } actions = { a; } }",
      "cstmt": "t.apply();"}, 13, "more than one lpm key"),
    ({"decls": "direct_counter(CounterType.packets) c; action a() {} "
               "table t1 { key = { h.h.a : exact; } actions = { a; } counters = c; } "
               "table t2 { key = { h.h.r : exact; } actions = { a; } counters = c; }",
      "cstmt": "t1.apply(); t2.apply();"}, 13, "is already attached to table"),
    ({"decls": "direct_meter<bit<2>>(MeterType.packets) dm; action a() {} "
               "table t { key = { h.h.a : exact; } actions = { a; } meters = dm; }",
      "cstmt": "t.apply();"}, 13, "but nothing reads it"),
    ({"decls": "direct_meter<bit<2>>(MeterType.packets) dm; bit<2> col; action a() { dm.read(col); } "
               "table t { key = { h.h.a : exact; } actions = { a; } }",
      "cstmt": "t.apply();"}, 13, "no table's 'meters' property names it"),
    ({"dep": "if (h.s[0].isValid()) { pk.emit(h.s[0]); }"}, 18, "IfStatement: not supported within a deparser"),
    ({"decls": "action a() {} action a() {} table t { actions = { a; } }", "cstmt": "t.apply();"}, 13,
     "'a' is declared twice in 'Ig'"),
    ({"decls": "action t() {} table t { actions = { NoAction; } }", "cstmt": "t.apply();"}, 13,
     "'t' is declared twice in 'Ig'"),
    ({"func": "control S(in H hh) { apply { hh.h.a = 1; } }", "decls": "S() s;", "cstmt": "s.apply(h);"}, 6,
     "cannot write to 'hh': it is an 'in' parameter, read-only"),
    ({"decls": "direct_meter<bit<2>>(MeterType.packets) dm; bit<2> c1; bit<2> c2; action a() { dm.read(c1); } "
               "action b() { dm.read(c2); } table t { key = { h.h.a : exact; } actions = { a; b; } meters = dm; }",
      "cstmt": "t.apply();"}, 13, "must write to the same destination"),
    ({"func": "type bit<1> T;", "cstmt": "T x = (T)h.h.a[0:0]; h.h.r = h.s[x].a;"}, 14,
     "not the type 'T'"),
    ({"dep": "h.h.a = 5;"}, 18, "'in' parameter, read-only"),
    ({"dep": "h.s[1].setInvalid();"}, 18, "'in' parameter, read-only"),
])
def test_refused_where_it_stands(parts: dict, line: int, why: str) -> None:
    with pytest.raises(P4Error) as ei:
        load_source(_src(**parts), "s.p4")
    assert f"s.p4:{line}:" in str(ei.value) and why in str(ei.value), str(ei.value)


@pytest.mark.parametrize("parts", [
    {"pstmt": "h.h.r = h.s.last.a; h.h.a = (bit<8>)h.s.lastIndex;"},  # in a parser: fine
    {"cstmt": "h.s.push_front(1); h.s.pop_front(1);"},  # in a control: fine
    {"cstmt": "{ bit<8> x = 1; h.h.r = x; } { bit<8> x = 2; h.h.a = x; }"},  # two blocks, two x
    {"cstmt": "switch (h.h.a) { 1: 2: { h.h.r = 1; } default: { h.h.r = 2; } }"},
    {"cstmt": "h.h.r = ~8w1; h.h.a = h.s[1w1].a;"},
    {"decls": "direct_meter<bit<2>>(MeterType.packets) dm; bit<2> col; action a() { dm.read(col); } "
              "table t { key = { h.h.a : lpm; h.h.r : exact; } actions = { a; } meters = dm; }",
     "cstmt": "t.apply();"},
    {"dep": "{ pk.emit(h.s); } pk.emit(h.s[1]);"},  # emits, also in a block
    {"dep": "if (true) { pk.emit(h.s); }"},  # p4c folds a constant condition first
    {"func": "control SD(packet_out p, in H hh) { apply { p.emit(hh.h); } }",
     "dep": "sd.apply(pk, h);"},  # a sub-control of emits (its copy-in is p4c's substitution)
    {"decls": "direct_meter<bit<2>>(MeterType.packets) dm; bit<2> col; action rd() { dm.read(col); } "
              "action a() { rd(); } table t { key = { h.h.a : exact; } actions = { a; } meters = dm; }",
     "cstmt": "t.apply();"},  # the read in a helper action (p4c inlines it)
    {"func": "enum bit<1> SE { X = 1 }", "cstmt": "h.h.r = h.s[SE.X].a;"},  # a serializable enum index
    {"decls": "action a() {} table t { actions = { a; } const entries = { } }", "cstmt": "t.apply();"},
    {"decls": "direct_meter<bit<2>>(MeterType.packets) dm; bit<2> c1; action a() { dm.read(c1); } "
              "action b() { dm.read(c1); } table t { key = { h.h.a : exact; } actions = { a; b; } meters = dm; }",
     "cstmt": "t.apply();"},  # two reads into one destination
    {"func": "control S(in H hh, inout bit<8> o) { apply { o = hh.h.a; } }", "decls": "S() s;",
     "cstmt": "s.apply(h, h.h.r);"},  # an 'in' parameter read, an inout one written
    {"func": "type bit<1> T;", "cstmt": "T x = (T)h.h.a[0:0]; h.h.r = h.s[(bit<1>)x].a;"},  # cast first
])

def test_the_forms_p4c_takes_load(parts: dict) -> None:
    load_source(_src(**parts), "s.p4")


def test_a_size_of_a_type_without_width_is_an_error_not_a_crash() -> None:
    with pytest.raises(P4Error, match="has no well-defined width"):
        load_source(_src(cstmt="h.h.r = (bit<8>)sm.maxSizeInBits();"), "s.p4")


_SUB_PARSER = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> r; }
struct H { h_t h; }
struct M { }
parser SP(packet_in pk, in bit<8> v, out h_t o) { state start { BODY pk.extract(o); transition accept; } }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    SP() sp;
    state start { sp.apply(pk, 8w1, h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def test_a_sub_parsers_in_parameter_is_read_only() -> None:
    with pytest.raises(P4Error, match=r"s\.p4:6:\d+: .*cannot write to 'v': it is an 'in' parameter"):
        load_source(_SUB_PARSER.replace("BODY", "v = 2;"), "s.p4")
    load_source(_SUB_PARSER.replace("BODY", "bit<8> w = v; w = w + 1;"), "s.p4")


def test_two_tables_of_one_control_plane_name_are_refused_by_name() -> None:
    """Two tables whose @name give one P4Info name: the P4Info listed one of them and the other
    was unreachable (softswitch kept one table in the control); refused by name (p4c's current
    duplicate-name check covers actions only)."""
    from softswitch.frontend.errors import P4Unsupported
    decls = ('action a() {} @name("tt") table t { key = { h.h.a : exact; } actions = { a; } } '
             '@name("tt") table u { key = { h.h.r : exact; } actions = { a; } }')
    with pytest.raises(P4Unsupported, match=r"s\.p4:13:\d+: .*two tables with the control-plane name 'Ig.tt'"):
        load_source(_src(decls=decls, cstmt="t.apply(); u.apply();"), "s.p4")


@pytest.mark.parametrize("parts, why", [
    ({"decls": "action z(bit<8> q, bit<8> q) { h.h.r = q; } table t { key = { h.h.a : exact; } actions = { z; } }",
      "cstmt": "t.apply();"}, "parameter 'q' of action 'z' is declared twice"),
    ({"func": "bit<8> f(in bit<8> x, in bit<8> x) { return x; }", "cstmt": "h.h.r = f(1, 2);"},
     "parameter 'x' of function 'f' is declared twice"),
])
def test_a_parameter_declared_twice_is_refused(parts: dict, why: str) -> None:
    with pytest.raises(P4Error, match=why):  # p4c: "Duplicates declaration"; the second shadowed the first
        load_source(_src(**parts), "s.p4")


def test_main_declared_twice_is_refused() -> None:
    with pytest.raises(P4Error, match=r"s\.p4:21:1: .*'main' is declared twice"):
        load_source(_src() + "\nV1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;\n", "s.p4")
