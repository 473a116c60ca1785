"""Identifiers spelled like type names: fields, variables, parameters and instances hide a type
in their scope (as p4c's lexer does), and `a < E.x` is a comparison, not type arguments."""
from __future__ import annotations

import pytest

from softswitch.frontend import ir, load_source
from softswitch.frontend.errors import P4Error

_SRC = """
#include <core.p4>
#include <v1model.p4>
enum bit<8> Kind { A = 1, B = 7 }
header eth_t { bit<48> dst; bit<48> src; bit<16> type_; }
header packet_in_t { bit<8> reason; }
header meta_h { bit<8> v; }
struct H { eth_t eth; packet_in_t packet_in; meta_h meta_h; }
struct M { bit<8> packet_out; bit<8> k; }
parser P(packet_in packet_in, out H h, inout M m, inout standard_metadata_t sm) {
    state start { packet_in.extract(h.eth); transition accept; }
}
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) eth_t;
    action packet_in_t() { m.k = 1; }
    table meta_h { actions = { packet_in_t; } }
    apply {
        eth_t.count(0);
        meta_h.apply();
        packet_in_t();
        bit<8> meta_h = 3;
        meta_h = meta_h + 1;
        h.meta_h.v = meta_h;
        h.packet_in.setValid();
        m.packet_out = Kind.B;
        if (m.k < Kind.B && m.k > Kind.A) { h.packet_in.reason = meta_h; }
        if (m.k<Kind.B) { m.k = 0; }
    }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { eth_t e = h.eth; meta_h x = h.meta_h; h.eth = e; h.meta_h = x; }
}
control CC(inout H h, inout M m) { apply {} }
control D(packet_out packet_out, in H h) { apply { packet_out.emit(h.eth); packet_out.emit(h.meta_h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def _walk(node, out: list) -> list:
    out.append(node)
    for name in getattr(node, "__slots__", ()):
        v = getattr(node, name, None)
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, (ir.Expr, ir.Stmt)):
                _walk(x, out)
    return out


def test_names_equal_to_type_names() -> None:
    p = load_source(_SRC, "n.p4")
    assert [f.name for f in p.types["H"].fields] == ["eth", "packet_in", "meta_h"]
    assert p.parser.params[0].name == "packet_in" and p.deparser.params[0].name == "packet_out"
    assert "Ig.eth_t" in p.ingress.externs and "Ig.meta_h" in p.ingress.tables
    assert "Ig.packet_in_t" in p.actions
    assert "meta_h" in p.ingress.locals  # a local variable named like a header type
    nodes = _walk(p.ingress.body, [])
    lts = [n for n in nodes if isinstance(n, ir.Binary) and n.op == "<"]
    assert len(lts) == 2 and all(isinstance(b.right, ir.Const) and b.right.value == 7 for b in lts)
    # the types are types again after the scopes that hid them
    assert isinstance(p.egress.locals["e"], ir.HeaderT) and p.egress.locals["x"].name == "meta_h"
    assert sum(isinstance(s, ir.Emit) for s in p.deparser.body.stmts) == 2


def test_a_hidden_type_is_not_a_type_in_its_scope() -> None:
    bad = _SRC.replace("h.meta_h.v = meta_h;", "meta_h y = h.meta_h;")
    with pytest.raises(P4Error) as ei:
        load_source(bad, "n.p4")
    assert str(ei.value).startswith("n.p4:24:")


def test_generic_calls_still_parse() -> None:
    src = _SRC.replace("packet_in.extract(h.eth);",
                       "bit<16> t = packet_in.lookahead<bit<16>>(); packet_in.extract(h.eth);")
    p = load_source(src, "n.p4")
    assert isinstance(p.parser.states["start"].stmts[0].init, ir.Lookahead)


def test_initializer_fields_named_like_types() -> None:
    src = _SRC.replace("m.packet_out = Kind.B;", "h.packet_in = {reason = 2}; h.meta_h = {v = 1};") \
        .replace("struct M { bit<8> packet_out; bit<8> k; }",
                 "struct M { bit<8> packet_out; bit<8> k; }\nstruct S { bit<8> packet_in; bit<8> meta_h; }") \
        .replace("bit<8> meta_h = 3;", "S s = {packet_in = 1, meta_h = 2}; bit<8> meta_h = s.meta_h;")
    p = load_source(src, "n.p4")
    decl = next(s for s in p.ingress.body.stmts if isinstance(s, ir.VarDecl) and s.var.name == "s")
    assert [(n, v.value) for n, v in decl.init.fields] == [("packet_in", 1), ("meta_h", 2)]
