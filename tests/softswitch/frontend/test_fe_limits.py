"""Lifted limitations: a sub-control applied more than once, `(a &&& b)` keysets in parentheses."""
from __future__ import annotations

import pytest

from softswitch.exec import build_pipeline
from softswitch.frontend import ir, load_source
from softswitch.frontend.errors import P4Error
from softswitch.p4info import build_p4info
from softswitch.runtime import SwitchState

_SRC = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type_; }
struct H { eth_t eth; }
struct M { bit<16> n; bit<16> other; }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.eth);
        transition select(h.eth.type_) { (0x0800 &&& 0xff00): accept; (0x9000 .. 0x90ff): accept; }
    }
}
control VC(inout H h, inout M m) { apply {} }
control Bump(inout M m, in bit<16> step) {
    counter(2, CounterType.packets) seen;
    action add() { m.n = m.n + step; }
    table t { key = { m.n: exact; } actions = { add; NoAction; } default_action = add(); }
    apply { seen.count(0); t.apply(); }
}
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    Bump() bump;
    apply {
        m.n = 1;
        bump.apply(m, 2);
        bump.apply(m, 40);
        h.eth.type_ = m.n;
        sm.egress_spec = 1;
    }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out b, in H h) { apply { b.emit(h.eth); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def _bump_run(src: str) -> tuple[bytes, int]:
    """Load ``src``, check its one table ``Ig.bump.t``, run one packet: (ethertype out, bump.seen count)."""
    p = load_source(src, "l.p4")
    info = build_p4info(p)
    assert [t.preamble.name for t in info.tables] == ["Ig.bump.t"]
    state = SwitchState(info)
    pipe = build_pipeline(p, state, None)
    res = pipe.ingress(bytes(12) + b"\x08\x42", 0, 0)
    out = pipe.egress(res.to_tm[0], 1).frames[0].data
    return out[12:14], state.counter("Ig.bump.seen").packets[0]


def test_sub_control_applied_twice_shares_its_table_and_runs_twice() -> None:
    p = load_source(_SRC, "l.p4")
    assert list(p.ingress.tables) == ["Ig.bump.t"] and list(p.ingress.externs) == ["Ig.bump.seen"]
    assert _bump_run(_SRC) == ((1 + 2 + 40).to_bytes(2, "big"), 2)


def test_parenthesised_mask_and_range_keysets() -> None:
    p = load_source(_SRC, "l.p4")
    cases = p.parser.states["start"].transition.cases
    assert [(c.keysets[0].kind, c.keysets[0].value) for c in cases] == [("mask", 0x0800), ("range", 0x9000)]
    assert cases[0].keysets[0].mask == 0xFF00 and cases[1].keysets[0].hi == 0x90FF


def test_sub_control_applied_again_with_another_lvalue_runs_on_each_argument() -> None:
    """``bump.apply(m, 2); bump.apply(m2, 40);``: each apply copies its own inout argument in
    and out (before, the second apply was rejected); the table and the counter stay one."""
    src = _SRC.replace("bump.apply(m, 40);", "m2.n = 5; bump.apply(m2, 40);") \
              .replace("h.eth.type_ = m.n;", "h.eth.type_ = m.n + m2.n;") \
              .replace("    Bump() bump;", "    Bump() bump;\n    M m2;")
    assert _bump_run(src) == (((1 + 2) + (5 + 40)).to_bytes(2, "big"), 2)


def test_sub_control_applied_again_with_a_run_time_in_argument() -> None:
    src = _SRC.replace("bump.apply(m, 40);", "bump.apply(m, m.other);")
    body = load_source(src, "l.p4").ingress.body
    assert sum(isinstance(s, ir.Block) for s in body.stmts) == 2


# p4c's limits (DefaultP4CConfiguration): widths up to 2048 bits, header stacks up to 256 elements.
# Before, a wider type or literal made the checker compute 1 << W: a 2**64-bit width never returned.
_LIMIT_SRC = """
#include <core.p4>
#include <v1model.p4>
header w_t { WIDE x; }
struct H { w_t w; STACK }
struct M { }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.w); transition accept; } }
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) { apply { LITERAL } }
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out b, in H h) { apply { b.emit(h.w); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def _limit_src(wide="bit<8>", stack="", literal=""):
    return _LIMIT_SRC.replace("WIDE", wide).replace("STACK", stack).replace("LITERAL", literal)


@pytest.mark.parametrize("kw,msg", [
    ({"wide": "bit<18446744073709551616>"}, "width 18446744073709551616 (p4c supports widths up to 2048)"),
    ({"wide": "int<2049>"}, "width 2049"),
    ({"wide": "varbit<4096>"}, "width 4096"),
    ({"literal": "sm.egress_spec = (bit<9>)4096w1;"}, "width 4096 of the literal '4096w1'"),
    ({"stack": "w_t[257] s;"}, "header stack of 257 elements (p4c takes at most 256)"),
])
def test_p4c_limits_are_clean_errors(kw, msg):
    with pytest.raises(P4Error) as ei:
        load_source(_limit_src(**kw), "limits.p4")
    assert msg in str(ei.value)
    assert "limits.p4:" in str(ei.value).splitlines()[0]


def test_the_limits_themselves_load():
    prog = load_source(_limit_src(wide="bit<2048>", stack="w_t[256] s;",
                                  literal="sm.egress_spec = (bit<9>)2048w1;"), "limits.p4")
    assert prog is not None


_AGAIN_SRC = """
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> v; }
struct H { e_t[4] s; }
struct M { bit<8> i; bit<8> j; }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.s.next); b.extract(h.s.next); b.extract(h.s.next); b.extract(h.s.next);
                  transition accept; } }
control VC(inout H h, inout M m) { apply {} }
control Inc(inout e_t p) { apply { p.v = p.v + 1; } }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    Inc() inc;
    apply {
        m.i = h.s[0].v;
        m.j = h.s[0].v;
        FIRST
        SECOND
        sm.egress_spec = 1;
    }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out b, in H h) { apply { b.emit(h.s); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def test_sub_control_applied_again_with_the_same_run_time_index_runs_twice() -> None:
    """The same instance applied twice to ``h.s[(bit<2>)(m.i + 1)]``: the out/inout arguments
    are compared as lvalue structures (index expressions too), not printed text, which could not
    print the index and rejected the program."""
    arg = "h.s[(bit<2>)(m.i + 1)]"
    src = _AGAIN_SRC.replace("FIRST", f"inc.apply({arg});").replace("SECOND", f"inc.apply({arg});")
    p = load_source(src, "a.p4")
    state = SwitchState(build_p4info(p))
    pipe = build_pipeline(p, state, None)
    res = pipe.ingress(bytes([1, 10, 20, 30]), 0, 0)
    assert pipe.egress(res.to_tm[0], 1).frames[0].data == bytes([1, 10, 22, 30])


def _elem(arg: str, s: list[int], i: int, j: int) -> int:
    """Which element of ``h.s`` (values ``s``, nextIndex 4) ``arg`` names, with m.i, m.j."""
    return {"h.s[(bit<2>)m.i]": i % 4, "h.s[(bit<2>)m.j]": j % 4, "h.s[(bit<2>)(m.i + 1)]": (i + 1) % 4,
            "h.s[1]": 1, "h.s[2]": 2}[arg]


@pytest.mark.parametrize("first,second", [
    ("h.s[(bit<2>)m.i]", "h.s[(bit<2>)m.j]"),  # another field in the index
    ("h.s[(bit<2>)m.i]", "h.s[(bit<2>)(m.i + 1)]"),  # another index expression
    ("h.s[(bit<2>)m.i]", "h.s[1]"),  # a run-time index that is 1 here
    ("h.s[1]", "h.s[2]"),  # ('h.s.last' is a parser-only form: p4c refuses it in a control)
])
def test_sub_control_applied_again_with_another_element_runs_on_each(first: str, second: str) -> None:
    """The same instance applied to two stack elements (before: rejected unless the lvalues
    were the same): each apply increments the element its own argument names."""
    src = _AGAIN_SRC.replace("FIRST", f"inc.apply({first});").replace("SECOND", f"inc.apply({second});") \
                    .replace("m.j = h.s[0].v;", "m.j = h.s[0].v + 1;")
    p = load_source(src, "a.p4")
    pipe = build_pipeline(p, SwitchState(build_p4info(p)), None)
    data = [1, 10, 20, 30]
    want = list(data)
    for arg in (first, second):
        want[_elem(arg, data, data[0], data[0] + 1)] += 1
    res = pipe.ingress(bytes(data), 0, 0)
    assert pipe.egress(res.to_tm[0], 1).frames[0].data == bytes(want)


def test_same_lvalue_is_structural() -> None:
    """A variable whose name has a dot is not the member it prints like; index expressions are
    compared node by node (a dotted variable in an index is not the member either)."""
    from softswitch.frontend.check_blocks import _same_lvalue
    from softswitch.frontend.ir import NO_LOC as L

    b8 = ir.BitT(8)
    e_t = ir.HeaderT("e_t", (ir.Field("v", b8),))
    st = ir.StackT(e_t, 4)
    m_t = ir.StructT("m_t", (ir.Field("i", b8),))
    h_t = ir.StructT("h_t", (ir.Field("a", e_t), ir.Field("s", st)))
    h, m = ir.Var(h_t, L, "h"), ir.Var(m_t, L, "m")
    mi = ir.Member(b8, L, m, "i")

    def elem(k: ir.Expr) -> ir.Expr:
        return ir.StackIndex(e_t, L, ir.Member(st, L, h, "s"), k)

    assert not _same_lvalue(ir.Var(e_t, L, "h.a"), ir.Member(e_t, L, h, "a"))
    assert _same_lvalue(ir.Member(e_t, L, h, "a"), ir.Member(e_t, L, ir.Var(h_t, L, "h"), "a"))
    assert _same_lvalue(elem(mi), elem(ir.Member(b8, L, ir.Var(m_t, L, "m"), "i")))
    assert not _same_lvalue(elem(mi), elem(ir.Var(b8, L, "m.i")))
    one = ir.Const(b8, L, 1)
    plus = ir.Binary(b8, L, "+", mi, one)
    assert _same_lvalue(elem(plus), elem(ir.Binary(b8, L, "+", mi, ir.Const(b8, L, 1))))
    assert not _same_lvalue(elem(plus), elem(ir.Binary(b8, L, "-", mi, one)))
    assert not _same_lvalue(elem(plus), elem(ir.Binary(b8, L, "+", mi, ir.Const(b8, L, 2))))
    av = ir.Member(b8, L, ir.Member(e_t, L, h, "a"), "v")
    assert _same_lvalue(ir.Slice(ir.BitT(4), L, av, 7, 4), ir.Slice(ir.BitT(4), L, av, 7, 4))
    assert not _same_lvalue(ir.Slice(ir.BitT(4), L, av, 7, 4), ir.Slice(ir.BitT(4), L, av, 6, 3))
    assert not _same_lvalue(av, ir.Member(e_t, L, h, "a"))  # a field is not its header
