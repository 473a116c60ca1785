"""Shifts of an arbitrary-precision int: by a constant they fold at unlimited precision; by an amount
known only at run time p4c refuses them ("width of left operand of shift needs to be specified"),
and so does softswitch, at the operator's file:line:col -- it used to take the width from the
context, running a program p4c would not compile."""
from __future__ import annotations

import pytest

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

_SRC = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { h.h.b = EXPR; sm.egress_spec = 1; }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


@pytest.mark.parametrize("expr", ["1 << h.h.a", "255 >> h.h.a", "(1 << h.h.a) + 1"])
def test_an_int_shifted_by_a_run_time_amount_is_refused_where_it_stands(expr: str) -> None:
    src = _SRC.replace("EXPR", expr)
    with pytest.raises(P4Error) as ei:
        load_source(src, "shift.p4")
    msg = str(ei.value)
    col = src.splitlines()[10].index(expr.lstrip("(").split(")")[0]) + 1
    assert f"shift.p4:11:{col}" in msg and "give the left operand a width" in msg, msg


@pytest.mark.parametrize("expr", ["(bit<8>)1 << h.h.a", "8w1 << h.h.a", "(1 << 10) >> 8", "1 << 3"])
def test_a_shift_with_a_width_or_a_constant_amount_loads(expr: str) -> None:
    load_source(_SRC.replace("EXPR", expr), "shift.p4")
