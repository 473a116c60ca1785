"""Programs p4c's front end refuses, refused at the offending construct (each loaded until
2026-12-05, some with a meaning, one with a Python error instead of a diagnostic), read from p4c's
``typeCheckExpr.cpp``, ``validateParsedProgram.cpp`` and its "Duplicates declaration" check."""
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
    apply { CSTMT sm.egress_spec = 1; }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def _src(**parts: str) -> str:
    s = _SRC
    for k in ("FUNC", "PSTMT", "STATE", "CSTMT"):
        s = s.replace(k, parts.get(k.lower(), ""))
    return s


@pytest.mark.parametrize("parts, line, why", [
    ({"cstmt": "h.h.r = h.s.last.a;"}, 13, "'last' can only be used in a parser"),
    ({"cstmt": "h.h.r = (bit<8>)h.s.lastIndex;"}, 13, "'lastIndex' can only be used in a parser"),
    ({"pstmt": "h.s.push_front(1);"}, 8, "'push_front' cannot be used in a parser"),
    ({"pstmt": "h.s.pop_front(1);"}, 8, "'pop_front' cannot be used in a parser"),
    ({"state": "state accept { transition reject; }"}, 9, "state 'accept' is built in"),
    ({"cstmt": "bit<8> x = 1; bit<8> x = 2; h.h.r = x;"}, 13, "'x' is declared twice in this block"),
    ({"func": "bit<8> f(in int x) { return (bit<8>)x; }", "cstmt": "h.h.r = f(3);"}, 6,
     "parameter 'x' of function 'f' has type int"),
])
def test_refused_where_it_stands(parts: dict, line: int, why: str) -> None:
    with pytest.raises(P4Error) as ei:
        load_source(_src(**parts), "s.p4")
    assert f"s.p4:{line}:" in str(ei.value) and why in str(ei.value), str(ei.value)


@pytest.mark.parametrize("parts", [
    {"pstmt": "h.h.r = h.s.last.a; h.h.a = (bit<8>)h.s.lastIndex;"},  # in a parser: fine
    {"cstmt": "h.s.push_front(1); h.s.pop_front(1);"},  # in a control: fine
    {"cstmt": "{ bit<8> x = 1; h.h.r = x; } { bit<8> x = 2; h.h.a = x; }"},  # two blocks, two x
])
def test_the_forms_p4c_takes_load(parts: dict) -> None:
    load_source(_src(**parts), "s.p4")
