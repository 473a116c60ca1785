"""``{#}`` (the invalid header / header_union) and ``...`` (default values) through the compiled
pipeline, and the forms still rejected by name (issue 16; P4_16 1.2.5 "Initializing with default
values", "Operations on headers")."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import ir, load_source
from softswitch.frontend.errors import P4Error, P4Unsupported

PKT = [0xA1, 0xA2, 0xB1, 0xB2, 0xC1, 0xC2]  # a.x a.y st[0].x st[0].y st[1].x st[1].y


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_defaults.p4")


def run(rig, op: int, idx: int = 0) -> tuple[bytes, bytes]:
    res = rig.pipeline.ingress(bytes([op, idx] + PKT), 1, 0)
    out = rig.pipeline.egress(res.to_tm[0], 0).frames[0].data
    return out[:11], out[11:]


# the report every packet carries: r4 s.x = 5; r5 0x3A (s.f false, s.e the first member, s.hh
# invalid, s.er NoError, s2 all defaults, s3.hh = {...} valid and zero); r6 the serializable
# enum's default 0 (not a member); r7 {...}, {y = 9, ...}, {7, ...} all valid headers; r8 9 + 7;
# r9 their other fields 0; r10 a default union invalid, us[0] = {#} invalid, us[1] != {#},
# (a_t){#} == (a_t){#}
DEFAULTS = [5, 0x3A, 0, 7, 16, 0, 0x0C]


@pytest.mark.parametrize("op,idx,r0_3,rest", [
    (0, 0, [0, 0, 0, 1], [0, 0, 0xA1, 0xA2, 0xB1, 0xB2, 0xC1, 0xC2]),  # nothing changed
    (1, 0, [1, 0, 1, 1], [1, 0, 0xB1, 0xB2, 0xC1, 0xC2]),              # h.a = {#}
    (2, 0, [0, 0, 0, 1], [2, 0, 0xA1, 0xA2, 0xB1, 0xB2]),              # h.st[1] = {#}
    (3, 0, [0, 0, 0, 1], [3, 0, 0xA1, 0xA2, 0xC1, 0xC2]),              # h.st[idx] = {#}, idx 0
    (3, 1, [0, 0, 0, 1], [3, 1, 0xA1, 0xA2, 0xB1, 0xB2]),              # ... idx 1
    (4, 0, [0, 0, 0, 1], [4, 0, 0xA1, 0xA2]),                          # h.st = ...
    (5, 0, [0, 0, 0, 1], [5, 0, 0x00, 0x44, 0xB1, 0xB2, 0xC1, 0xC2]),  # h.a = {y = 0x44, ...}
    (6, 0, [1, 0, 1, 1], [6, 0, 0xB1, 0xB2, 0xC1, 0xC2]),              # h.a = mk(0) returns {#}
    (7, 0, [0, 0, 0, 1], [7, 0, 0x66, 0x00, 0xB1, 0xB2, 0xC1, 0xC2]),  # mk(0x66): {x = v, ...}
    (8, 0, [0, 1, 0, 1], [8, 0, 0xA1, 0xA2, 0xB1, 0xB2, 0xC1, 0xC2, 0, 0]),  # h.u.a = {...}
    (9, 0, [0, 0, 0, 1], [9, 0, 0xA1, 0xA2, 0xB1, 0xB2, 0xC1, 0xC2]),  # h.u.b valid, then h.u = {#}
    (10, 0, [1, 0, 1, 1], [10, 0, 0xB1, 0xB2, 0xC1, 0xC2]),            # h.a = ...
])
def test_invalid_header_and_default_values(rig, op, idx, r0_3, rest):
    rep, tail = run(rig, op, idx)
    assert list(rep) == r0_3 + DEFAULTS
    assert list(tail) == rest


_HDR = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; }
header v_t { bit<8> n; varbit<16> v; }
header_union ab_t { a_t a; v_t b; }
enum Pick { X, Y }
struct s_t { bit<8> x; bool f; Pick e; }
struct H { a_t a; ab_t u; }
struct M { s_t s; }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(h.a); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
BODY
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _load(body: str):
    return load_source(_HDR.replace("BODY", body), "d.p4")


def test_comparisons_with_invalid_are_validity_tests():
    p = _load("        bool b = h.a == {#};\n        bool c = {#} != h.u;")
    decls = [s for s in p.ingress.body.stmts if isinstance(s, ir.VarDecl)]
    b, c = decls[0].init, decls[1].init
    assert isinstance(b, ir.Unary) and b.op == "!" and isinstance(b.operand, ir.IsValid)
    # a union is valid when one of its members is
    assert isinstance(c, ir.Binary) and c.op == "||"
    assert all(isinstance(x, ir.IsValid) for x in (c.left, c.right))


def test_default_values_per_type():
    p = _load("        s_t s = ...;\n        a_t a = {...};\n        ab_t u = ...;")
    s, a, u = [x.init for x in p.ingress.body.stmts if isinstance(x, ir.VarDecl)][:3]
    assert isinstance(s, ir.StructInit) and [(n, v.value) for n, v in s.fields] == \
        [("x", 0), ("f", False), ("e", 0)]
    assert isinstance(a, ir.StructInit) and isinstance(a.type, ir.HeaderT)  # a valid header
    assert isinstance(u, ir.InvalidHeader) and u.type.union


@pytest.mark.parametrize("body,what,col", [
    ("        bool b = ({#}).isValid();", "unsupported: '{#}' where no header or header_union type is known", 19),
    ("        bool b = ... == h.a;", "unsupported: '...' where no type is known", 18),
    ("        log_msg(\"m\", {x = 1, ...});", "unsupported: '...' in a structure initializer whose type", 22),
    ("        v_t v = {n = 1, ...};", "unsupported: '...' for a value of type", 17),
    ("        ab_t u = {a = {#}, ...};", "unsupported: '...' in a structure initializer of a header_union",
     18),
    ("        bool b = {#} == {#};", "unsupported: '{#}' compared with '{#}'", 18),
])
def test_unsupported_forms_are_rejected_by_name(body, what, col):
    with pytest.raises(P4Unsupported) as ei:
        _load(body)
    msg = str(ei.value)
    assert what in msg, msg
    assert msg.startswith(f"d.p4:17:{col}: error: "), msg


@pytest.mark.parametrize("body,what", [
    ("        s_t s = {..., 1};", "'...' must be the last element of an initializer"),
    ("        s_t s = {#};", "'{#}' is an invalid header or header_union, s_t expected"),
    ("        bit<8> x = 1; bool b = x == {#};", "cannot compare bit<8> with '{#}'"),
    ("        s_t s = {x = 1, x = 2, ...};", "field 'x' initialised twice"),
])
def test_errors(body, what):
    with pytest.raises(P4Error) as ei:
        _load(body)
    assert what in str(ei.value) and "d.p4:17:" in str(ei.value), str(ei.value)


def test_invalid_bound_in_a_tables_actions_list_and_as_a_control_local():
    """``a({#})`` bound in a table's actions list / default action, ``{#}`` initialising a
    control-level local, ``(a_t){...}`` as an action argument, ``...`` in a parser state."""
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState

    src = _HDR.replace("""control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
BODY
    }
}""", """control I(inout H h, inout M m, inout standard_metadata_t sm) {
    a_t keep = {#};
    action take(in a_t x) { h.a = x; }
    table t { actions = { take({#}); } default_action = take({#}); }
    apply {
        sm.egress_spec = 1;
        if (h.a.x == 1) {
            t.apply();
        } else if (h.a.x == 2) {
            take((a_t){...});
        } else if (h.a.x == 3) {
            h.a = keep;
        }
    }
}""").replace("state start { p.extract(h.a);", "state start { a_t z = ...; h.a = z; p.extract(h.a);")
    p = load_source(src, "t.p4")
    pipe = build_pipeline(p, SwitchState(build_p4info(p)), None)

    def out(x: int) -> bytes:
        res = pipe.ingress(bytes([x, 0x55, 0xEE]), 0, 0)
        return pipe.egress(res.to_tm[0], 1).frames[0].data

    assert out(0) == bytes([0, 0x55, 0xEE])
    assert out(1) == bytes([0xEE])        # the table's default action took {#}: a not emitted
    assert out(2) == bytes([0, 0, 0xEE])  # (a_t){...}: valid, zero
    assert out(3) == bytes([0xEE])        # the control-level local initialised with {#}
