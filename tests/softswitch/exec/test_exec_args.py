"""Issue 16: named arguments of built-in functions/methods and constructor parameters of
parsers and controls, run through the compiled pipeline; and what stays rejected by name."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig, v1_template
from p4.v1 import p4runtime_pb2

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error


# ---------------------------------------------------------------- named built-in arguments
@pytest.fixture(scope="module")
def named():
    return Rig(DATA / "exec_builtin_named.p4")


def _frame(op: int, a: int = 1, b: int = 2, ck: int = 0) -> bytes:
    return bytes([op, a, b, 0, 0, 0]) + ck.to_bytes(2, "big")


def _out(rig, data: bytes) -> list[list[int]]:
    _res, eg = rig.run(data)
    return [list(e.frames[0].data) for e in eg if e.frames]


def test_hash_binds_by_name_not_position(named):
    # base = 3, max = 1000: identity of {1, 2} is 0x0102 = 258, so x = 3 + 258 % 1000 = 261
    (out,) = _out(named, _frame(0))
    assert out[3:5] == [1, 5]


def test_register_counter_random_named(named):
    before = named.state.counter("I.c").packets[3]
    (out,) = _out(named, _frame(1, b=77))
    assert out[5] == 77  # rg.write(value = b, index = 2), then rg.read(index = 2, result = r)
    assert named.state.register("I.rg").values[2] == 77
    assert named.state.counter("I.c").packets[3] == before + 1  # c.count(index = 3)
    (out,) = _out(named, _frame(4))
    assert out[5] == 4  # random(lo = 4, hi = 4, result = r)


def test_mark_to_drop_and_truncate_named(named):
    res, eg = named.run(_frame(2))
    assert res.dropped and not eg  # mark_to_drop(standard_metadata = s)
    assert _out(named, _frame(6)) == [[6, 1, 2]]  # truncate(length = 3)


def test_checksums_named(named):
    (out,) = _out(named, _frame(5))  # update_checksum: csum16 of {1, 2} = ~0x0102
    assert out[6:8] == [0xFE, 0xFD]
    assert _out(named, _frame(7, ck=0))[0][5] == 1  # verify_checksum flags a wrong one
    assert _out(named, _frame(7, ck=0xFEFD))[0][5] == 0


def test_clone_preserving_field_list_named(named):
    cs = p4runtime_pb2.CloneSessionEntry(session_id=5)
    cs.replicas.add(egress_port=6, instance=1)
    named.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs))
    _res, eg = named.run(_frame(3))
    assert sorted(e.frames[0].port for e in eg) == [1, 6]


_BASE = v1_template("bit<8> a; bit<8> b;", "%s")


def _calls(src: str) -> list[str]:
    from softswitch.frontend.checkbase import _print_expr
    prog = load_source(src, "n.p4")
    return [_print_expr(s.expr) for s in prog.ingress.body.stmts if hasattr(s, "expr")]


@pytest.mark.parametrize("named_call,positional", [
    ("hash(result = h.h.a, algo = HashAlgorithm.crc16, base = 8w0, data = {h.h.b}, max = 8w64)",
     "hash(h.h.a, HashAlgorithm.crc16, 8w0, {h.h.b}, 8w64)"),
    ("clone(session = 7, type = CloneType.I2E)", "clone(CloneType.I2E, 7)"),
    ("clone_preserving_field_list(type = CloneType.I2E, session = 5, index = 1)",
     "clone_preserving_field_list(CloneType.I2E, 5, 1)"),
    ("digest(data = m, receiver = 1)", "digest(1, m)"),
    ("log_msg(data = {h.h.a}, msg = \"a={}\")", "log_msg(\"a={}\", {h.h.a})"),
    ("log_msg(msg = \"hi\")", "log_msg(\"hi\")"),
    ("mark_to_drop(standard_metadata = s)", "mark_to_drop(s)"),
    ("resubmit_preserving_field_list(index = 2)", "resubmit_preserving_field_list(2)"),
])
def test_named_is_the_positional_call(named_call, positional):
    body = "apply { %s; }"
    assert _calls(_BASE % ("", body % named_call, "I()")) == _calls(_BASE % ("", body % positional, "I()"))


def test_two_argument_extract_by_name():
    src = """
#include <core.p4>
#include <v1model.p4>
header v_t { bit<8> n; varbit<16> opt; } header w_t { bit<8> z; }
struct hs_t { v_t v; w_t w; } struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(variableFieldSizeInBits = 32w8, variableSizeHeader = h.v);
        p.extract(hdr = h.w);
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { s.egress_spec = 1; h.w.z = 0x55; } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.v); p.emit(h.w); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState
    prog = load_source(src, "x.p4")
    pl = build_pipeline(prog, SwitchState(build_p4info(prog)), None)
    # the varbit takes 8 bits (0xAB), so w is the next byte
    res = pl.ingress(bytes([8, 0xAB, 0xCD, 0xEF]), 1, 0)
    assert pl.egress(res.to_tm[0], 0).frames[0].data == bytes([8, 0xAB, 0x55, 0xEF])


@pytest.mark.parametrize("top,body,main_arg,words", [
    ("", "apply { hash(reslt = h.h.a, algo = HashAlgorithm.crc16, base = 8w0, data = {h.h.a}, max = 8w4); }",
     "I()", "no parameter named 'reslt'"),
    ("", "apply { hash(h.h.a, algo = HashAlgorithm.crc16, base = 8w0, data = {h.h.a}, max = 8w4); }",
     "I()", "either all arguments are named or none"),
    ("", "register<bit<8>>(4) r; apply { r.read(result = h.h.a, idx = 1); }", "I()", "no parameter named 'idx'"),
    ("", "apply { mark_to_drop(sm = s); }", "I()", "no parameter named 'sm'"),
    ("", "apply { clone(type = CloneType.I2E); }", "I()", "argument for 'session' missing"),
    ("", "counter(4, CounterType.packets) c; apply { c.count(idx = 1); }", "I()", "no parameter named 'idx'"),
    # an argument with effects could see the others evaluated in another order: rejected when named
    # out of parameter order (in order it runs: tests/softswitch/stf/data/effect_calls.p4)
    ("bit<8> f(inout bit<8> c) { c = c + 1; return c; }",
     "apply { hash(max = 8w4, data = {f(h.h.b)}, base = 8w0, algo = HashAlgorithm.crc16, result = h.h.a); }",
     "I()", "named arguments written out of parameter order"),
    # written out of parameter order with a table apply in one: evaluated in parameter order here,
    # in written order by the spec -- rejected by name, not run in another order
    ("bit<8> two(in bit<8> x, in bit<8> y) { return x + y; }",
     ("action seta() { h.h.a = 7; } table t { actions = { seta; } default_action = seta(); } "
     "apply { h.h.b = two(y = (t.apply().hit ? 8w1 : 8w2), x = h.h.a); }"),
     "I()", "named arguments written out of parameter order"),
])
def test_bad_named_arguments_are_errors(top, body, main_arg, words):
    with pytest.raises(P4Error) as ei:
        load_source(_BASE % (top, body, main_arg), "n.p4")
    assert words in str(ei.value) and "n.p4:9:" in str(ei.value), str(ei.value)


# ---------------------------------------------------------------- constructor parameters
@pytest.fixture(scope="module")
def ctor():
    return Rig(DATA / "exec_ctor_params.p4")


def test_constructor_parameters_are_the_constants_given(ctor):
    res, eg = ctor.run(bytes([0, 10, 20, 0, 0, 0]))
    assert res.to_tm[0].egress_port == 3  # I(9w3, ...) ig: port
    a, b, c, d, e, f = eg[0].frames[0].data
    assert a == 40  # a + k
    assert b == 12  # P(8w2): b + add
    assert c == 20 + (5 + 2) + (2 * 2 + 1)  # Sub(5, TWO) sp; Nest(add) np -> Sub(add * 2, ONE)
    assert d == 41 + 100  # in1 = Inner(k + 1, true); in2 (named arguments) through Twice; off not
    assert e == 1  # const entry keyed on k hits
    assert f == 40  # Twice(in2, k): w
    assert ctor.state.counter("I_0.hits").packets[0] == 1  # index k - 40
    _res, eg = ctor.run(bytes([216, 10, 20, 0, 0, 0]))
    assert eg[0].frames[0].data[4] == 0  # a = 256 -> 0: no hit


def test_constructor_parameters_p4info_names(ctor):
    """The top-level ingress ``I(9w3, ...) ig`` is specialised by p4c's SpecializeAll into a new
    control ``I_0``, whose name prefixes its objects (p4c's issue1333 sample: ``top(c())`` of
    ``control c()(bit<32> binit = 4)`` names its extern ``c_0.e``); they were named ``I.``
    until 2026-12-03. Sub-control instances keep their instance names. ``off``'s ``put`` is
    called only under ``if (flag)`` with the constant ``flag = false``: p4c's SpecializeAll
    substitutes the constructor argument, folds the ``if`` away (ConstantFolding) and removes the
    action nothing calls then (RemoveUnusedDeclarations), so its P4Info has no ``I_0.off.put``
    (listed until 2026-12-06)."""
    assert [t.preamble.name for t in ctor.p4info.tables] == ["I_0.t"]
    assert [a.preamble.name for a in ctor.p4info.actions] == ["NoAction", "I_0.in1.put", "I_0.in2.put"]
    assert [c.preamble.name for c in ctor.p4info.counters] == ["I_0.hits"]


@pytest.mark.parametrize("top,body,main_arg,words", [
    ("struct st { bit<8> f; } control X(inout hs_t h)(st v) { apply { } }", "X({8w1}) x; apply { x.apply(h); }",
     "I()", "unsupported: control constructor parameter 'v' of type st"),
    ("control X(inout hs_t h)(bit<8> v) { apply { h.h.a = v; } }", "X(h.h.b) x; apply { x.apply(h); }",
     "I()", "constructor argument for 'v' of control 'X' is not a compile-time constant"),
    ("control X(inout hs_t h)(bit<8> v) { apply { h.h.a = v; } }", "apply { X.apply(h); }",
     "I()", "unsupported: direct application of a control with constructor parameters"),
    ("control X(inout hs_t h)(bit<8> v = 3) { apply { h.h.a = v; } }", "X() x; apply { x.apply(h); }",
     "I()", "unsupported: a default value for constructor parameter 'v'"),
    ("", "apply { }", "I(5)", "control 'I' takes 0 constructor arguments, 1 given"),
    ("control X(inout hs_t h)(bit<8> v) { apply { h.h.a = v; } }", "X() x; apply { x.apply(h); }",
     "I()", "control 'X' takes 1 constructor arguments, 0 given"),
    ("control X(inout hs_t h)(bit<8> v) { apply { h.h.a = v; } }", "X(w = 1) x; apply { x.apply(h); }",
     "I()", "no parameter named 'w'"),
    ("control X(inout hs_t h)(in bit<8> v) { apply { h.h.a = v; } }", "X(1) x; apply { x.apply(h); }",
     "I()", "constructor parameter 'v' of control 'X' cannot have a direction"),
    ("control X(inout hs_t h) { apply { } } parser Q(packet_in p, inout hs_t h)(X v) { state start { transition accept; } }",
     "apply { }",
     "I()", "unsupported: parser constructor parameter 'v' of a control type"),
    ("control X<T>(inout T h)(hs_t v) { apply { } }", "X<hs_t>({8w1}) x; apply { x.apply(h); }",
     "I()", "unsupported: control constructor parameter 'v' of type hs_t"),
])
def test_constructor_parameters_rejected_by_name(top, body, main_arg, words):
    with pytest.raises(P4Error) as ei:
        load_source(_BASE % (top, body, main_arg), "c.p4")
    assert words in str(ei.value) and "c.p4:" in str(ei.value), str(ei.value)


def test_parser_constructor_argument_must_be_constant():
    src = _BASE.replace("parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {",
                        "parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {"
                        " Q(s.egress_spec) q;")
    with pytest.raises(P4Error) as ei:
        load_source(src % ("parser Q(packet_in p, inout hs_t h)(bit<9> v) { state start { transition accept; } }",
                           "apply { }", "I()"), "c.p4")
    assert "constructor argument for 'v' of parser 'Q' is not a compile-time constant" in str(ei.value)
