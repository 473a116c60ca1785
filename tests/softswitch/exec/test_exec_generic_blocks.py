"""Generic parsers and controls (issue 16) through the compiled pipeline: each instance
(``Swap<bit<8>>() sw8;``, ``Get<h_t>() gh;`` in a parser, ``Eg<hs_t, m_t>() eg;`` at the top
level, ``Dep<hs_t>()`` as a V1Switch argument, ``Swap<bit<16>>.apply(...)`` applied directly,
``Put(16w0x1234) pc;`` with T inferred from a constructor argument) is specialised at its type
arguments, as p4c's SpecializeAll does; tables and actions keep their instance names in P4Info (``Ing.s8.t``), with
action data of the argument's width. Until 2026-12-03 every generic parser or control was
rejected by name (``generic control 'S'``); what stays rejected is rejected by name at
file:line:col."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, v1_template

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error, P4Unsupported

PROG = DATA / "exec_generic_blocks.p4"
PAY = b"pay"

# packet: op(8) a(8) b(8) c(16) d(16) [x.v(8) when op == 4], then payload
CASES = [
    ("01010200030004", "01020100040003"),  # Swap<bit<8>> and Swap<bit<16>>
    ("02010200030004", "02ab02beef0004"),  # SetIf<bit<8>>/<bit<16>>: k = b = 2 hits, set(x)
    ("02010500030004", "02010500030004"),  # k = 5: both miss
    ("03010200030004", "03770100030004"),  # Nest<h_t> -> Swap<h_t>: whole headers swapped
    ("0401020003000455", "0455020003000401"),  # Get<x_t> sub-parser, a second Swap<bit<8>>
    ("05010200030004", "05090200030004"),  # Put<bit<8>>(8w9): a constructor parameter of type T
    ("0601020003000466", "0666020004000301"),  # direct applications: Get<x_t>.apply, Swap<bit<8>>.apply...
    ("07010200030004", "07010212340004"),  # Put(16w0x1234): T = bit<16> from the constructor argument
]


@pytest.fixture(scope="module")
def rig():
    r = Rig(PROG)
    r.entry("Ing.s8.t", {"k": ("exact", 2)}, r.action("Ing.s8.set", x=0xAB))
    r.entry("Ing.s16.t", {"k": ("exact", 2)}, r.action("Ing.s16.set", x=0xBEEF))
    return r


@pytest.mark.parametrize("data,out", CASES)
def test_generic_blocks_run(rig, data, out):
    assert rig.output(bytes.fromhex(data) + PAY) == bytes.fromhex(out) + PAY


def test_loop_path_agrees(rig):
    for data, out in CASES + CASES[::-1]:
        assert rig.loop_output(bytes.fromhex(data) + PAY) == bytes.fromhex(out) + PAY, data


def test_p4info_names_are_the_instances(rig):
    """One table and one action per instance, named by the instance as p4c names an inlined
    control's objects; the action data has the width of each instance's T."""
    assert [t.preamble.name for t in rig.p4info.tables] == ["Ing.s8.t", "Ing.s16.t"]
    assert [(a.preamble.name, [(p.name, p.bitwidth) for p in a.params]) for a in rig.p4info.actions] == [
        ("NoAction", []), ("Ing.s8.set", [("x", 8)]), ("Ing.s16.set", [("x", 16)])]


def test_top_level_blocks_take_their_type_arguments(rig):
    prog = rig.program
    assert [p.type.name for p in prog.deparser.params[1:]] == ["hs_t"]
    assert [p.type.name for p in prog.egress.params[:2]] == ["hs_t", "m_t"]
    assert [p.type.name for p in prog.verify_checksum.params] == ["hs_t", "m_t"]


_BASE = v1_template("bit<8> a; bit<16> c;")
_SW = "control Sw<T>(inout T a, inout T b) { apply { T t = a; a = b; b = t; } }"


def test_the_old_rejection_is_gone():
    """``control X<T>...`` was 'unsupported: generic control' even when never instantiated."""
    p = load_source(_BASE % (_SW, "Sw<bit<8>>() s; apply { s.apply(h.h.a, m.x); }"), "g.p4")
    assert p.ingress.name == "I"


@pytest.mark.parametrize("decls,body,words,where", [
    # a T operation that does not type-check at the given argument, at its place in the body
    ("control Inc<T>(inout T v) {\n    apply { v = v + 1; } }", "Inc<bool>() i; apply { bool f = true; i.apply(f); }",
     "(in control 'Inc' at T = bool, instantiated at g.p4:10:", ":6:"),
    (_SW, "Sw<bit<16>>() s; apply { s.apply(h.h.a, h.h.c); }", "expected bit<16>, got bit<8>", ":9:"),
    (_SW, "Sw<bit<8>, bit<8>>() s; apply { }", "control 'Sw' takes 1 type arguments, 2 given", ":9:"),
    (_SW, "Sw<int>() s; apply { }", "int cannot be a type argument of control 'Sw'", ":9:"),
    ("control X(inout bit<8> a) { apply { } }", "X<bit<8>>() x; apply { x.apply(h.h.a); }",
     "control 'X' is not generic: it takes no type arguments", ":9:"),
    ("control K<T, T>(inout T v) { apply { } }", "apply { }", "control 'K' declares a type parameter twice", ":5:"),
    ("control K<T>(inout T v)(T k) { apply { v = k; } }", "K(3) k; apply { k.apply(h.h.a); }",
     "cannot infer a width for type parameter 'T' of control 'K'", ":9:"),
    ("control K<T, U>(inout U v)(T k) { apply { } }", "K(8w3) k; apply { k.apply(h.h.a); }",
     "cannot infer type argument 'U' of control 'K' from its constructor arguments", ":9:"),
])
def test_type_errors_at_file_line_col(decls, body, words, where):
    with pytest.raises(P4Error) as ei:
        load_source(_BASE % (decls, body), "g.p4")
    msg = str(ei.value)
    assert "g.p4" + where in msg and words in msg, msg


@pytest.mark.parametrize("decls,body,words", [
    # type arguments are not inferred from apply arguments: p4c's SpecializeAll specialises no
    # instance without type or constructor arguments
    (_SW, "Sw() s; apply { s.apply(h.h.a, m.x); }",
     "an instance of generic control 'Sw' without type arguments"),
    (_SW, "apply { Sw.apply(h.h.a, m.x); }", "direct application of generic control 'Sw' without type arguments"),
])
def test_unsupported_forms_rejected_by_name(decls, body, words):
    with pytest.raises(P4Unsupported) as ei:
        load_source(_BASE % (decls, body), "g.p4")
    assert words in str(ei.value) and "g.p4:9:" in str(ei.value), str(ei.value)


_PARSER = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; } struct hs_t { h_t h; } struct m_t { bit<8> x; }
parser G<H>(packet_in p, out H x) { state start { p.extract(x); transition accept; } }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    %s
    state start { %s transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), I(), V(), D()) main;
"""


@pytest.mark.parametrize("local,stmt,words", [
    ("G() g;", "g.apply(p, h.h);", "unsupported: an instance of generic parser 'G' without type arguments"),
    ("", "G.apply(p, h.h);", "unsupported: direct application of generic parser 'G' without type arguments"),
    ("", "G<h_t, h_t>.apply(p, h.h);", "parser 'G' takes 1 type arguments, 2 given"),
    ("G<bit<8>>() g;", "g.apply(p, h.h);", "expected bit<8>, got h_t"),
])
def test_generic_sub_parser_errors(local, stmt, words):
    with pytest.raises(P4Error) as ei:
        load_source(_PARSER % (local, stmt), "q.p4")
    assert words in str(ei.value) and "q.p4:" in str(ei.value), str(ei.value)


_GI = """control GI<H, M>(inout H h, inout M m, inout standard_metadata_t s) {
    action fwd(bit<9> p) { s.egress_spec = p; }
    table t { key = { s.ingress_port: exact; } actions = { fwd; NoAction; } default_action = NoAction(); }
    apply { t.apply(); }
}"""


@pytest.mark.parametrize("extra,name", [("", "GI_0"), ("const bit<8> GI_0 = 1;", "GI_1")])
def test_top_level_generic_ingress_named_as_p4c_specialises_it(tmp_path, extra, name):
    """``V1Switch(..., GI<hs_t, m_t>(), ...)``: p4c's SpecializeAll makes a new control ``GI_0``
    (the next free ``GI_N``) and its objects are named after it."""
    src = v1_template("bit<8> a;", main_ingress="%s") % (_GI + extra, "apply { }", "GI<hs_t, m_t>()")
    f = tmp_path / "gi.p4"
    f.write_text(src)
    r = Rig(f)
    assert [t.preamble.name for t in r.p4info.tables] == [f"{name}.t"]
    assert [a.preamble.name for a in r.p4info.actions] == ["NoAction", f"{name}.fwd"]
    r.entry(f"{name}.t", {"s.ingress_port": ("exact", 1)}, r.action(f"{name}.fwd", p=5))
    res = r.pipeline.ingress(b"\x07pay", 1, 0)
    assert res.to_tm[0].egress_port == 5
