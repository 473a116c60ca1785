"""Generic functions and generic struct/header types (issue 16) through the compiled pipeline:
specialised per distinct type-argument tuple as p4c's front end does (SpecializeGenericFunctions,
SpecializeGenericTypes); type arguments inferred from argument types or given; P4Info names a
specialised type as current p4c does (``P<bit<16>, bool>`` is ``P_bit16_bool``); what stays
rejected is rejected by name at file:line:col (user externs). Generic parsers and controls:
test_exec_generic_blocks.py."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig, v1_template
from p4.v1 import p4runtime_pb2

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

PROG = DATA / "exec_generics.p4"
PAY = b"pay"

# packet: op(8) v(16) st[0].x(8) st[1].x(8), then payload
CASES = [
    ("0112340156", "0112355656"),  # v = id(v) + 1; st[0] = id<bit<8>>(st[1])
    ("0212340156", "0212345601"),  # swap of two stack headers (T = header E_bit8)
    ("0312340156", "0300010101"),  # pick: (T)b casts; v = (bit<16>) 1, st[1] = (bit<8>) v
    ("0312349956", "0300999999"),
    ("0412340156", "0412355601"),  # generic structs in metadata; out and inout of generic type
    ("0512340156", "0512344723"),  # swap of whole P_bit8_bit8 locals, then of their fields
    ("0512340056", "0512344722"),
    ("0612340156", "06beef0156"),  # table key on generic struct fields: hit
    ("0612340056", "0612340056"),  # miss
    ("0812340156", "0812340101"),  # T inferred through P<T, T> and through T[2]
    ("0912340156", "0912340702"),  # a generic header_union: members stay exclusive
]


@pytest.fixture(scope="module")
def rig():
    r = Rig(PROG)
    r.entry("by_p", {"m.p.a": ("exact", 0x1234), "m.p.b": ("exact", 1)}, r.action("set_v", v=0xBEEF))
    return r


def run(rig, data: bytes) -> bytes:
    return rig.output(data)


def run_loop(rig, data: bytes) -> bytes:
    return rig.loop_output(data)


@pytest.mark.parametrize("data,out", CASES)
def test_generic_functions_and_types_run(rig, data, out):
    assert run(rig, bytes.fromhex(data) + PAY) == bytes.fromhex(out) + PAY


def test_loop_path_agrees(rig):
    for data, out in CASES + CASES[::-1]:
        assert run_loop(rig, bytes.fromhex(data) + PAY) == bytes.fromhex(out) + PAY, data


def test_one_specialisation_per_type_arguments(rig):
    fns = sorted(n for n, a in rig.program.actions.items() if a.function)
    assert fns == ["id<bit<16>>", "id<bit<8>>", "last<E_bit8>", "pick<bit<16>, bit<8>>", "pick<bit<8>, bit<16>>",
                   "put<bit<16>>", "second<bit<8>>", "swap<E_bit8>", "swap<P_bit8_bit8>", "swap<bit<8>>"]
    assert [a.preamble.name for a in rig.p4info.actions] == ["NoAction", "Ing.set_v"]  # no function
    hs = rig.program.types["hs_t"]
    assert [(f.name, getattr(f.type, "name", None)) for f in hs.fields] == [("g", "G_bit16"), ("st", None)]
    assert hs.fields[1].type.elem.name == "E_bit8"
    assert rig.program.types["U_bit8"].union
    assert [f.type.name for f in rig.program.types["U_bit8"].fields] == ["E_bit8", "E_bit16"]
    w = rig.program.types["W_bit16"]
    assert w.fields[0].type.name == "P_bit16_bit8"


def test_p4info_names_the_specialised_types(rig):
    info = rig.p4info
    t = info.tables[0]
    assert [(f.name, f.bitwidth) for f in t.match_fields] == [("m.p.a", 16), ("m.p.b", 1)]
    (d,) = info.digests
    assert d.preamble.name == "P_bit16_bool"
    assert d.type_spec.struct.name == "P_bit16_bool"
    st = info.type_info.structs["P_bit16_bool"]
    assert [(m.name, m.type_spec.WhichOneof("type_spec")) for m in st.members] == [("a", "bitstring"),
                                                                                    ("b", "bool")]
    assert st.members[0].type_spec.bitstring.bit.bitwidth == 16


def test_digest_of_a_generic_struct(rig):
    got: list = []
    rig.state.digests.set_sink(got.append)
    did = rig._id("digests", "P_bit16_bool")
    rig.write(INSERT, digest_entry=p4runtime_pb2.DigestEntry(
        digest_id=did, config=p4runtime_pb2.DigestEntry.Config(max_list_size=1)))
    run(rig, bytes.fromhex("07abcd0100") + PAY)
    assert [(x.digest_id, x.values) for x in got] == [(did, [(0xABCD, 1)])]


_BASE = v1_template("bit<8> a; bit<16> c;")

_ID = "T id<T>(in T x) { return x; }"
_SWAP = "void swap<T>(inout T a, inout T b) { T t = a; a = b; b = t; }"


@pytest.mark.parametrize("decls,body,words,where", [
    (_ID, "apply { h.h.a = id(5); }", "cannot infer a width for type parameter 'T' of function 'id'", ":9:"),
    (_SWAP, "apply { swap(h.h.a, h.h.c); }", ("type parameter 'T' of function 'swap' cannot be both bit<8> "
                                               "and bit<16>"), ":9:"),
    (_ID, "apply { h.h.a = id<bit<8>, bit<8>>(h.h.a); }", "takes 1 type arguments, 2 given", ":9:"),
    ("T f<T, U>(in T x) { return x; }", "apply { h.h.a = f(h.h.a); }", "cannot infer type argument 'U'",
     ":9:"),
    ("T f<T>(in T x) { return f(x); }", "apply { h.h.a = f(h.h.a); }", "recursive function 'f'", ":5:"),
    ("struct S<T> { T f; }", "apply { S s; }", "'S' is generic: give its type arguments", ":9:"),
    ("struct S<T> { T f; }", "apply { S<bit<8>, bit<8>> s; }", "'S' takes 1 type arguments, 2 given", ":9:"),
    ("header G<T> { T f; }", "apply { G<bit<8>>[2] st; G<error> e; }", "header field 'f' must be", ":5:"),
    ("header X { bit<8> y; } header_union U<T> { X a; T b; }", "apply { U<bit<8>> u; }",
     "header_union member 'b' must be a header, not bit<8>", ":5:"),
    ("extern T xf<T>(in T x);", "apply { }", "unsupported: user-defined extern function 'xf'", ":5:"),
])
def test_rejected_at_file_line_col(decls, body, words, where):
    with pytest.raises(P4Error) as ei:
        load_source(_BASE % (decls, body), "gen.p4")
    msg = str(ei.value)
    assert words in msg and "gen.p4" + where in msg, msg


def test_called_from_a_parser_state_and_nested_in_arguments():
    """``m.x = id(a); bump(m.x, 2)`` in the parser; ``id(id(m.x)) + id(a)`` (the inner call's type
    gives the outer's T) and ``bump(c, (bit<16>) a)`` in ingress."""
    r = Rig(DATA / "exec_generics_nested.p4")
    assert sorted(n for n, a in r.program.actions.items() if a.function) == [
        "bump<bit<16>>", "bump<bit<8>>", "id<bit<8>>"]
    for a, c in ((5, 1), (200, 0xFFFF)):
        res = r.pipeline.ingress(bytes([a]) + c.to_bytes(2, "big"), 1, 0)
        x = (a + 2) & 0xFF
        na = (x + a) & 0xFF
        assert r.pipeline.egress(res.to_tm[0], 0).frames[0].data == bytes([na]) + ((c + na) & 0xFFFF).to_bytes(2, "big")


def test_specialised_type_named_alike_inside_a_generic_function():
    """``Q<T>`` inside ``f<T>`` at T = tuple<bit<8>, bit<16>> is the same type as a ``Q<tuple<bit<8>,
    bit<16>>>`` written out, and gets the same name whichever use comes first (it was
    ``Q_tuplebit8, bit16`` when the function's use came first: a name with a comma and a space)."""
    decls = "struct Q<T> { T a; }\nvoid f<T>(in T x) { Q<T> v = { x }; }"
    tup = "tuple<bit<8>, bit<16>> t = {h.h.a, h.h.c};"
    for body in (f"apply {{ {tup} f(t); Q<tuple<bit<8>, bit<16>>> w = {{t}}; }}",
                 f"apply {{ {tup} Q<tuple<bit<8>, bit<16>>> w = {{t}}; f(t); }}"):
        p = load_source(_BASE % (decls, body), "gen.p4")
        assert [k for k in p.types if k.startswith("Q_")] == ["Q_tuplebit8_bit16"], body
