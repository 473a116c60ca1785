"""User function declarations: run through the compiled pipeline, and what stays rejected."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, v1_template

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

PROG = DATA / "exec_functions.p4"

@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)

def run(rig, a: int, b: int) -> list[int]:
    res = rig.pipeline.ingress(bytes([a, b, 0, 0]), 1, 0)
    return list(rig.pipeline.egress(res.to_tm[0], 0).frames[0].data)

def test_values_returns_inout_and_hoisting(rig):
    # parser: m.x = a + 3; r = max(a, b) + 3; big(a) swaps a and b; s = max + 1, then
    # s + 5 (count_and's value) + 1 (its inout c, written before the statement reads it) + m.x
    assert run(rig, 150, 7) == [7, 150, 153, (151 + 5 + 1 + 153) & 0xFF]
    assert run(rig, 50, 70) == [50, 70, 73, (71 + 5 + 1 + 53) & 0xFF]

def test_functions_are_not_in_p4info(rig):
    assert [a.preamble.name for a in rig.p4info.actions] == ["I.act_fn"]

_BASE = v1_template("bit<8> a;")

@pytest.mark.parametrize("fn,body,words", [
    # an inout argument of a control's apply before a call with effects: its copy-back is not done
    (("bit<8> f(inout bit<8> c) { c = c + 1; return c; } "
      "control S(inout bit<8> a, in bit<8> b) { apply { a = a + b; } }"),
     "S() s; apply { s.apply(m.x, f(m.x)); }", "after an inout argument of a control's apply"),
    # a call's value is no left-value (p4c: "must be a left-value"), also as an inout argument
    ("bit<8> f(inout bit<8> c) { c = c + 1; return c; }",
     "apply { h.h.a = f(f(m.x)); }", "not assignable"),
    ("bit<8> f(bit<8> c) { return c; }",
     "table t { key = { f(h.h.a): exact; } actions = { NoAction; } } apply { t.apply(); }",
     "requires a @name annotation"),  # a call in a key runs (test_exec_calls_in_keys.py) but needs a name
    ("bit<8> f(bit<8> c) { if (c == 1) { return c; } }", "apply { h.h.a = f(h.h.a); }",
     "without returning"),
    ("bit<8> f(bit<8> c) { exit; return c; }", "apply { h.h.a = f(h.h.a); }", "exit is not allowed"),
    # a switch without a default case can run none of its cases
    ("bit<8> f(bit<8> c) { switch (c) { 1: { return 5; } 2: { return 6; } } }",
     "apply { h.h.a = f(h.h.a); }", "without returning"),
])
def test_rejected_by_name_at_file_line_col(fn, body, words):
    with pytest.raises(P4Error) as ei:
        load_source(_BASE % (fn, body), "fn.p4")
    msg = str(ei.value)
    assert words in msg and "fn.p4:" in msg, msg

def test_pure_function_in_short_circuit_operand_is_fine():
    prog = load_source(_BASE % ("bool f(bit<8> c) { return c == 3; }",
                                "apply { if (h.h.a != 0 && f(h.h.a)) { h.h.a = 9; } }"), "fn.p4")
    assert "f" in prog.actions and prog.actions["f"].function

def test_top_level_action_with_a_local_variable_compiles_and_runs():
    """Its locals live in the generated function (this failed to compile: 'unknown variable')."""

    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    prog = load_source(_BASE % ("action top(inout bit<8> y, bit<8> v) { bit<8> t = v + 1; y = t; }",
                                "apply { s.egress_spec = 1; top(h.h.a, 41); }"), "act.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    res = pl.ingress(bytes([0]), 1, 0)
    assert pl.egress(res.to_tm[0], 0).frames[0].data == bytes([42])


def test_package_forms_type_decls_int_stack_index_dontcare_and_enum_entries():
    """Issue 16's small forms: top-level parser/control instances passed to a specialised
    V1Switch<H, M>, a ``type`` declaration, an int<N> run-time stack index, ``_`` for an out
    argument and serializable-enum keys in const entries."""
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    src = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; } struct hs_t { h_t[2] h; } struct m_t { bit<8> x; }
enum bit<8> Kind { A = 1, B = 2 }
type bit<8> MyT;
void two(out bit<8> x, out bit<8> y) { x = 3; y = 4; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h[0]); p.extract(h.h[1]); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action set(bit<8> v) { h.h[0].b = v; }
    table t { key = { h.h[0].a: exact; } actions = { set; NoAction; }
              const entries = { Kind.A : set(10); Kind.B : set(20); } default_action = NoAction(); }
    apply {
        s.egress_spec = 1;
        int<8> i = 1;
        MyT v = (MyT) h.h[0].a;
        h.h[i].a = (bit<8>) v + 1;
        two(_, h.h[i].b);
        t.apply();
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
P() prs;
I() ig;
V1Switch<hs_t, m_t>(prs, V(), ig, E(), C(), D()) main;
"""
    prog = load_source(src, "forms.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    got = []
    for a in (1, 2, 3):
        res = pl.ingress(bytes([a, 0, 0, 0]), 1, 0)
        got.append(list(pl.egress(res.to_tm[0], 0).frames[0].data))
    assert got == [[1, 10, 2, 4], [2, 20, 3, 4], [3, 0, 4, 4]]


def test_action_arguments_bound_in_the_actions_list():
    """``actions = { add(1, h.h.b); }``: the bound in/inout arguments are the action's leading
    directional parameters; the entry supplies the rest; P4Info lists only those."""
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    src = _BASE % ("", """
    action add(in bit<8> k, inout bit<8> acc, bit<8> v) { acc = acc + k + v; }
    table t { key = { h.h.a: exact; } actions = { add(1, m.x); NoAction; }
              const entries = { 5 : add(1, m.x, 10); 6 : add(20); } default_action = add(1, m.x, 100); }
    apply { s.egress_spec = 1; m.x = 2; t.apply(); h.h.a = m.x; }""")
    prog = load_source(src, "bound.p4")
    info = build_p4info(prog)
    (add,) = [a for a in info.actions if a.preamble.name == "I.add"]
    assert [p.name for p in add.params] == ["v"]
    pl = build_pipeline(prog, SwitchState(info), None)
    got = []
    for a in (5, 6, 7):
        res = pl.ingress(bytes([a]), 1, 0)
        got.append(pl.egress(res.to_tm[0], 0).frames[0].data[0])
    assert got == [2 + 1 + 10, 2 + 1 + 20, 2 + 1 + 100]
    with pytest.raises(P4Error) as ei:
        body = ("action a(bit<8> v) { } table t { key = { h.h.a: exact; } "
                "actions = { a(1); } } apply { t.apply(); }")
        load_source(_BASE % ("", body), "b2.p4")
    assert "set by the control plane" in str(ei.value) and "b2.p4:" in str(ei.value)


def test_named_arguments_and_extract_into_dont_care():
    rig = Rig(DATA / "exec_named_args.p4")
    res = rig.pipeline.ingress(bytes([5, 6, 7, 8, 9]), 1, 0)
    # h.a = sub8(y = 1, x = 10); a(w = 2, v = 7) sets h.b = 5; extract<h_t>(_) skipped 7, 8
    assert rig.pipeline.egress(res.to_tm[0], 0).frames[0].data == bytes([9, 5, 9])
    res = rig.pipeline.ingress(bytes([5, 6, 7]), 1, 0)
    assert res.to_tm[0].meta.S.f_parser_error == 1  # PacketTooShort on the discarded header
    with pytest.raises(P4Error) as ei:
        load_source(_BASE % ("bit<8> f(bit<8> x) { return x; }", "apply { h.h.a = f(z = 1); }"), "n.p4")
    assert "no parameter named 'z'" in str(ei.value)


def test_method_call_statements_whose_value_is_unused():
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    src = _BASE % ("bit<8> g(bit<8> x) { return x + 1; }", """
    action set() { h.h.a = 0x42; }
    table t { key = { h.h.a: exact; } actions = { set; } default_action = set(); }
    apply { s.egress_spec = 1; h.h.isValid(); g(3); t.apply(); }""")
    prog = load_source(src, "es.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    res = pl.ingress(bytes([7]), 1, 0)
    assert pl.egress(res.to_tm[0], 0).frames[0].data == bytes([0x42])


def test_size_methods_and_typed_initialisers():
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    src = _BASE % ("header g_t { bit<8> x; bit<16> y; }", """
    apply { s.egress_spec = 1; g_t g = (g_t) { 7, 0x0102 };
            h.h.a = (bit<8>) g.sizeInBits() + (bit<8>) g.sizeInBytes() + (bit<8>) h.h.minSizeInBits()
                    + (g.isValid() ? 8w100 : 8w0) + g.x; }""")
    prog = load_source(src, "sz.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    res = pl.ingress(bytes([0]), 1, 0)
    assert pl.egress(res.to_tm[0], 0).frames[0].data == bytes([24 + 3 + 8 + 100 + 7])



def _run_one(src: str, data: bytes) -> bytes:
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState

    prog = load_source(src, "fn.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    res = pl.ingress(data, 1, 0)
    return pl.egress(res.to_tm[0], 0).frames[0].data


def test_a_switch_with_a_default_whose_cases_all_return_ends_the_function():
    """Every path of f returns through the switch: a default case runs when no label matches."""
    fn = "bit<8> f(in bit<8> c) { switch (c) { 1: { return 5; } 7: 9: { return 6; } default: { return c + 1; } } }"
    src = _BASE % (fn, "apply { s.egress_spec = 1; h.h.a = f(h.h.a); }")
    assert [_run_one(src, bytes([x])) for x in (1, 7, 9, 40)] == [bytes([5]), bytes([6]), bytes([6]), bytes([41])]


def test_out_inout_call_under_a_cast():
    """Nothing is evaluated before the call, so running it before the statement is its order."""
    src = _BASE % ("bit<8> f(inout bit<8> c) { c = c + 10; return c; }",
                   "apply { s.egress_spec = 1; m.x = 0x21; h.h.a = (bit<8>)(bit<4>) f(m.x); }")
    assert _run_one(src, bytes([0])) == bytes([0x0B])  # f(0x21) = 0x2B, cut to 4 bits


def test_out_inout_call_as_an_index_of_the_assigned_lvalue():
    """The lvalue (with its index) is evaluated before the right-hand side, which reads m.x after
    the call changed it."""
    body = ("apply { s.egress_spec = 1; m.x = 1; h.st[1].setValid(); h.st[f(m.x)].a = m.x; "
            "h.h.a = h.st[1].a; }")
    src = (_BASE % ("bit<1> f(inout bit<8> c) { c = c + 10; return 1; }", body)).replace("struct hs_t { h_t h; }", "struct hs_t { h_t h; h_t[2] st; }")
    assert _run_one(src, bytes([0])) == bytes([11])


@pytest.mark.parametrize("body,out", [
    # f runs only when needed: '||' with a true left, '&&' with a false left skip it
    ("m.x = 1; bool b = h.h.a == 0 || f(m.x); h.h.a = m.x;", 1),
    ("m.x = 1; bool b = h.h.a == 7 || f(m.x); h.h.a = m.x;", 11),
    ("m.x = 1; bool b = h.h.a == 7 && f(m.x); h.h.a = m.x;", 1),
    ("m.x = 1; bool b = h.h.a == 0 && f(m.x); h.h.a = m.x;", 11),
    ("m.x = 1; bool b = true || f(m.x); h.h.a = m.x;", 1),
    # '?:' runs only the chosen branch
    ("m.x = 1; h.h.a = h.h.a == 0 ? (bit<8>) 5 : (f(m.x) ? m.x : 8w0);", 5),
    ("m.x = 1; h.h.a = h.h.a == 7 ? (bit<8>) 5 : (f(m.x) ? m.x : 8w0);", 11),
    # a literal left operand reads nothing, so the call may be its right operand
    ("m.x = 1; h.h.a = (8w1 != (bit<8>) (bit<1>) f(m.x)) ? m.x : 8w0;", 0),
])
def test_out_inout_calls_in_short_circuit_and_mux_run_only_when_chosen(body, out):
    src = _BASE % ("bool f(inout bit<8> c) { c = c + 10; return true; }",
                   "apply { s.egress_spec = 1; " + body + " }")
    assert _run_one(src, bytes([0])) == bytes([out])


@pytest.mark.parametrize("body,out", [
    ("h.h.a = 5; h.h.a += 3; h.h.a -= 1; h.h.a *= 3; h.h.a <<= 1; h.h.a >>= 2; h.h.a |= 0x40;", 0x4A),
    ("h.h.a = 0xF0; h.h.a &= 0x3C; h.h.a ^= 0x01; h.h.a |+|= 0xF0; h.h.a |-|= 0x03;", 0xFC),
    ("h.h.a = 100; h.h.a /= 7; h.h.a %= 5;", 4),
    # the lvalue (and the call in its index) is evaluated once
    ("m.x = 0; h.st[1].setValid(); h.st[0].setValid(); h.st[f(m.x)].a += 7; h.h.a = h.st[1].a + m.x;", 7 + 10),
])
def test_compound_assignments(body, out):
    src = (_BASE % ("bit<1> f(inout bit<8> c) { c = c + 10; return 1; }",
                    "apply { s.egress_spec = 1; " + body + " }")).replace(
        "struct hs_t { h_t h; }", "struct hs_t { h_t h; h_t[2] st; }")
    assert _run_one(src, bytes([0])) == bytes([out])


@pytest.mark.parametrize("body,out", [
    ("m.x = 1; h.h.a = m.x + f(m.x);", 1 + 11),  # m.x is read before f changes it
    ("m.x = 1; h.h.a = (f(m.x) << 1)[7:0] + m.x;", 22 + 11),  # f first, then m.x
    ("m.x = 1; if (m.x == f(m.x)) { h.h.a = 1; } else { h.h.a = 2; }", 2),
    ("m.x = 1; h.h.a = (8w3 ++ f(m.x))[11:4];", 0x30),  # a constant left operand of ++
])
def test_left_operand_is_read_before_a_call_on_the_right(body, out):
    src = _BASE % ("bit<8> f(inout bit<8> c) { c = c + 10; return c; }",
                   "apply { s.egress_spec = 1; " + body + " }")
    assert _run_one(src, bytes([0])) == bytes([out])
