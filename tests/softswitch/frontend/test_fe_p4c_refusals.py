"""Expressions p4c refuses, refused the same way (each ran until 2026-12-05, with a meaning p4c
never gives them), at the expression's file:line:col -- read from p4c's source: a saturating
operator on two `int`s (constant folding: "saturating operation on untyped values"), `?:` between
two untyped literals under a condition known only at run time (type inference: "Width must be
specified for at least one of ..."; p4c folds a constant condition first), a serializable enum
cast to anything but its own underlying type or another enum over it (canCastBetween), an `int`
shifted by a run-time amount, a divisor that folds to constant zero outside code a constant
condition leaves out (strength reduction).  And the forms p4c takes, which must keep loading."""
from __future__ import annotations

import pytest

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

_SRC = """#include <core.p4>
#include <v1model.p4>
enum bit<8> K { A = 3, B = 200 }
enum bit<8> K2 { X = 3 }
header h_t { bit<8> a; bit<8> r; bit<16> w; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { STMT; sm.egress_spec = 1; }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


@pytest.mark.parametrize("stmt, why", [
    ("h.h.r = 200 |+| 100", "saturating operation needs a width"),
    ("h.h.r = h.h.a + (250 |-| 10)", "saturating operation needs a width"),
    ("h.h.r = (h.h.a == 1) ? 1 : 2", "give one of them a width"),
    ("h.h.w = (bit<16>)K.B", "cannot cast K to bit<16>"),
    ("h.h.r = (bit<8>)(int<8>)K.B", "cannot cast K to int<8>"),
    # strength reduction: "Division by zero" / "Modulo by zero", after constant folding
    ("h.h.r = h.h.a / 0", "division by zero"),
    ("h.h.r = h.h.a % (8w2 - 2)", "modulo by zero"),
    ("if (h.h.a == 1) { h.h.r = h.h.a / 8w0; }", "division by zero"),
    ("h.h.r = (h.h.a == 1) ? h.h.a % 0 : 8w1", "modulo by zero"),
    # the bmv2 back end's convertToList: "expected a struct"
    ("hash(h.h.r, HashAlgorithm.crc16, 8w0, h.h.a, 32w256)", "expected a struct"),
    ("update_checksum(true, h.h.a, h.h.w, HashAlgorithm.csum16)", "expected a struct"),
])
def test_refused_where_it_stands(stmt: str, why: str) -> None:
    src = _SRC.replace("STMT", stmt)
    with pytest.raises(P4Error) as ei:
        load_source(src, "r.p4")
    assert "r.p4:13:" in str(ei.value) and why in str(ei.value), str(ei.value)


@pytest.mark.parametrize("stmt", [
    "h.h.r = h.h.a / 2", "h.h.r = h.h.a |+| 100", "h.h.r = (h.h.a == 1) ? 8w1 : 2",
    "h.h.r = (bit<8>)K.B", "h.h.w = (bit<16>)(bit<8>)K.B", "h.h.r = 200 + 100",
    "h.h.r = true ? 1 : 2", "h.h.r = (8 == 16) ? 1 : 2",  # a constant condition is folded first
    "if (false) { h.h.r = h.h.a / 0; }",  # dead code: p4c folds it away before it looks at divisors
    "if (true) { h.h.r = 1; } else { h.h.r = h.h.a % 0; }", "h.h.r = (1 == 2) ? h.h.a / 0 : 8w1",
    "h.h.r = (false && h.h.a / 0 == 1) ? 8w1 : 8w0", "h.h.r = h.h.a / (8w0 + 1)",
    "hash(h.h.r, HashAlgorithm.crc16, 8w0, {h.h.a}, 32w256)", "hash(h.h.r, HashAlgorithm.crc16, 8w0, h.h, 32w256)",
    "h.h.r = (K.A == 3) ? 8w1 : 8w0", "h.h.r = (2 != K.B) ? 8w1 : 8w0", "h.h.r = (bit<8>)(K2)K.B",
])
def test_the_forms_p4c_takes_load(stmt: str) -> None:
    load_source(_SRC.replace("STMT", stmt), "r.p4")


@pytest.mark.parametrize("expr", ["1 << h.h.a", "255 >> h.h.a", "(1 << h.h.a) + 1"])
def test_an_int_shifted_by_a_run_time_amount_is_refused_where_it_stands(expr: str) -> None:
    """p4c: "width of left operand of shift needs to be specified"; softswitch took the width from
    the context until 2026-12-05, running a program p4c would not compile."""
    src = _SRC.replace("STMT", f"h.h.r = {expr}")
    with pytest.raises(P4Error) as ei:
        load_source(src, "shift.p4")
    msg = str(ei.value)
    col = src.splitlines()[12].index(expr.lstrip("(").split(")")[0]) + 1
    assert f"shift.p4:13:{col}" in msg and "give the left operand a width" in msg, msg


@pytest.mark.parametrize("expr", ["(bit<8>)1 << h.h.a", "8w1 << h.h.a", "(1 << 10) >> 8", "1 << 3"])
def test_a_shift_with_a_width_or_a_constant_amount_loads(expr: str) -> None:
    load_source(_SRC.replace("STMT", f"h.h.r = {expr}"), "shift.p4")


def test_a_shift_amount_wider_than_8_bits_is_refused() -> None:
    """p4c's bmv2 back end limits a shift amount to 8 bits (LowerExpressions::shift: "shift amount
    limited to 8 bits on this target"); softswitch ran such shifts until 2026-12-05."""
    src = _SRC.replace("STMT", "h.h.r = h.h.a << h.h.w")
    with pytest.raises(P4Error, match=r"r\.p4:13:\d+: .*at most 8 bits"):
        load_source(src, "r.p4")
    load_source(_SRC.replace("STMT", "h.h.r = h.h.a << (bit<8>)h.h.w"), "r.p4")
