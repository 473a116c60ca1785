"""Programs p4c refuses that softswitch loaded and ran (found 2026-12-05 by running p4c's own
negative tests, testdata/p4_16_errors and p4_16_bmv_errors, and a differential fuzzer of tables),
each now refused at its construct; and a valid keyset form that was a syntax error."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "exec"))

_SRC = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { }
TOP
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t sm) { state start { p.extract(h.h); transition accept; } }
control VC(VCPARAMS) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    DECLS
    apply { sm.egress_spec = 1; BODY }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def program(top: str = "", decls: str = "", body: str = "", vc: str = "inout H h, inout M m") -> str:
    return (_SRC.replace("TOP", top).replace("DECLS", decls).replace("BODY", body)
            .replace("VCPARAMS", vc))


@pytest.mark.parametrize("src, line, why", [
    # a block's parameter direction must be V1Switch's (p4c: "Cannot unify 'in' parameter 'hdr' with
    # 'inout' parameter 'hdr' because they have different directions"); softswitch ran the block
    # with the package's direction
    (program(vc="in H h, inout M m"), 8, "parameter 1 'h' is 'in', V1Switch's VerifyChecksum has it 'inout'"),
    (program().replace("control I(inout H h", "control I(out H h"), 9, "parameter 1 'h' is 'out'"),
    (program().replace("control D(packet_out p, in H h)", "control D(packet_out p, inout H h)"), 15,
     "Deparser has it 'in'"),
    # a directional parameter of an action in a table's actions list must be bound there (p4c:
    # "Parameter b must be bound"); every packet running it was an internal error
    (program(decls="action a(inout bit<8> b, bit<8> d) { b = d; } "
                   "table t { key = { h.h.a : exact; } actions = { a; } default_action = a(0x77); }",
             body="t.apply();"), 10, "parameter 'b' of action 'a' has a direction (inout): it must be bound"),
    # arguments repeating the bound ones must be them (p4c: "argument does not match declaration in
    # actions list"); the repeated ones were dropped unread
    (program(decls="action a(inout bit<8> b, bit<8> d) { b = d; } "
                   "table t { key = { h.h.a : exact; } actions = { a(h.h.b); } default_action = a(h.h.c, 0x77); }",
             body="t.apply();"), 10, "argument 'h.h.c' for parameter 'b' of 'a' does not match 'h.h.b'"),
    (program(decls="action a(in bit<8> x, bit<8> v) { h.h.b = x; h.h.c = v; } "
                   "table t { key = { h.h.a : exact; } actions = { a(8w1); } const entries = { 7 : a(8w3, 9); } }",
             body="t.apply();"), 10, "argument '8w3' for parameter 'x' of 'a' does not match '1'"),
    # an entry's keyset must be a form its key's match kind takes (p4c's bmv2 back end: "unsupported
    # ternary key expression"...); a range on a ternary key matched its low bound only
    (program(decls="action s(bit<8> v) { h.h.b = v; } "
                   "table t { key = { h.h.a : ternary; } actions = { s; } const entries = { 1 .. 5 : s(1); } }",
             body="t.apply();"), 10, "'1 .. 5' cannot match the ternary key 'h.h.a'"),
    (program(decls="action s(bit<8> v) { h.h.b = v; } "
                   "table t { key = { h.h.a : range; } actions = { s; } const entries = { 0x15 &&& 0xf0 : s(1); } }",
             body="t.apply();"), 10, "cannot match the range key"),
    (program(decls="action s(bit<8> v) { h.h.b = v; } "
                   "table t { key = { h.h.a : optional; } actions = { s; } const entries = { 5 &&& 0xf0 : s(1); } }",
             body="t.apply();"), 10, "an optional key takes a value or _"),
    # two parameters, enum members, errors or match kinds of one name (p4c: "Duplicates declaration")
    (program(top="control c(inout bit<8> p, inout bit<8> p) { apply { p = 0xEE; } }",
             decls="c() cc;", body="cc.apply(h.h.a, h.h.b);"), 6, "parameter 'p' of control 'c' is declared twice"),
    (program(top="enum bit<8> e_t { a = 1, a = 2 }", body="h.h.c = e_t.a;"), 6, "enum 'e_t' member 'a' is declared twice"),
    (program(top="enum e_t { x, y, x }"), 6, "enum 'e_t' member 'x' is declared twice"),
    (program(top="error { Mine, Mine }"), 6, "error member 'Mine' is declared twice"),
    (program(top="match_kind { mk1, mk1 }"), 6, "match_kind member 'mk1' is declared twice"),
    # these crashed in Python: an int action parameter, a program's own match kind, a string hashed
    (program(decls="action a(in int v) { h.h.c = h.h.c + v; }", body="a(1);"), 10,
     "parameter 'v' of action 'a' has type int"),
    (program(top="match_kind { mk1 }",
             decls="table t { key = { h.h.a : mk1; } actions = { NoAction; } }", body="t.apply();"), 10,
     "match kind 'mk1' declared by the program"),
    (program(body='bit<32> r; hash(r, HashAlgorithm.crc32, 32w0, { "hi" }, 32w100);'), 11,
     "holds a string, which has no bits"),
    # directionless (action data) parameters come last (P4_16 spec 14.1; p4c: "direction-less action
    # parameters have to be at the end")
    (program(decls="action a(bit<8> x, out bit<8> y) { y = x; }", body="a(1, h.h.b);"), 10,
     "parameter 'y' of action 'a' has a direction (out) but follows a directionless one"),
    # the headers struct holds headers, stacks and unions (p4c's bmv2 back end: "the type should be a
    # struct of headers, stacks, or unions"); nested structs of them are flattened, and still load
    (program().replace("struct H { h_t h; }", "struct H { h_t h; bit<8> x; }"), 7,
     "has member 'x' of type bit<8>"),
    # v1model's register has read(out result, in index) only; the value-returning form softswitch's
    # copy of v1model.p4 declared could never be called ("takes 2 arguments, 1 given")
    (program(decls="register<bit<8>, bit<8>>(4) r;", body="h.h.b = r.read(h.h.a);"), 11,
     "unsupported: 'r.read(index)' returning the value"),
])
def test_refused_at_its_construct(src: str, line: int, why: str) -> None:
    with pytest.raises(P4Error) as ei:
        load_source(src, "r.p4")
    assert f"r.p4:{line}:" in str(ei.value) and why in str(ei.value), str(ei.value)


@pytest.mark.parametrize("keyset", ["(_)", "(default)", "_", "default"])
def test_a_one_element_tuple_of_dont_care_is_a_keyset(keyset: str, tmp_path) -> None:
    """``(_)`` and ``(default)`` are keysets (the grammar's tupleKeysetExpression of one
    reducedSimpleKeysetExpression), in a table's entries and in a select; they were syntax errors."""
    from exec_rig import Rig, through_api, through_loop

    src = program(decls="action s(bit<8> v) { h.h.b = v; } "
                        f"table t {{ key = {{ h.h.a : ternary; }} actions = {{ s; }} const entries = {{ {keyset} : s(9); }} }}",
                  body="t.apply();")
    src = src.replace("transition accept; }", f"transition select(h.h.a) {{ 1: reject; {keyset}: accept; }} }}")
    (tmp_path / "k.p4").write_text(src)
    rig = Rig(tmp_path / "k.p4")
    for a in (0, 5, 0xFF):
        for run in (through_api, through_loop):
            assert run(rig.pipeline, bytes([a, 0, 0])) == bytes([a, 9, 0])
