"""Constructs real-world v1model programs use (issue 16's survey of the P4 tutorials, p4-guide and
SAI P4, docs/p4_subset.md "Real-world programs"), through the compiled pipeline: a program's own
``typedef bit<9> PortId_t`` (p4c's v1model.p4 declares it only for ``V1MODEL_VERSION >= 20200408``;
its default version is 20180101)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source

PROG = DATA / "exec_realworld.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def test_program_declares_its_own_port_id_type(rig):
    rig.entry("Ing.t", {"h.op.a": ("exact", 7)}, rig.action("Ing.fwd", port=5))
    res, _egs = rig.run(ETH + bytes([1, 7]) + bytes(4))
    assert not res.dropped, res.drop_reason
    assert [it.egress_port for it in res.to_tm] == [5]
    param = next(a for a in rig.p4info.actions if a.preamble.name == "Ing.fwd").params[0]
    assert param.bitwidth == 9


def test_default_v1model_version_is_p4cs(rig):
    _res, egs = rig.run(ETH + bytes([2, 0]) + bytes(4))
    assert int.from_bytes(egs[0].frames[0].data[16:20], "big") == 20180101


SRC = """
#define V1MODEL_VERSION 20200408
#include <v1model.p4>
header h_t { bit<16> x; }
struct H { h_t h; }
struct M { PortId_t p; }
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.h); transition accept; } }
control C(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    apply { m.p = s.ingress_port; h.h.x = (bit<16>)__v1model_version[15:0]; } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control D(packet_out k, in H h) { apply { k.emit(h.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_version_20200408_declares_port_id():
    prog = load_source(SRC, "x.p4")
    assert prog is not None


def test_default_version_has_no_port_id():
    from softswitch.frontend import P4Error
    with pytest.raises(P4Error, match="PortId_t"):
        load_source(SRC.replace("#define V1MODEL_VERSION 20200408\n", ""), "x.p4")


FL_SRC = """
#include <v1model.p4>
const bit<8> FL_COPY = 3;
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M {
    @field_list(FL_COPY) bit<8> kept;
    @field_list(1) bit<8> other;
}
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.h); transition accept; } }
control C(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    apply {
        if (s.instance_type == 0) {
            clone_preserving_field_list(CloneType.I2E, 5, FL_COPY);
            m.kept = h.h.a;   // after the call: the value at the end of ingress is preserved
            m.other = h.h.a;
            s.egress_spec = 1;
        }
    } }
control E(inout H h, inout M m, inout standard_metadata_t s) {
    apply { if (s.instance_type == 1) { h.h.a = m.kept; h.h.b = m.other; } } }
control D(packet_out k, in H h) { apply { k.emit(h.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_field_list_index_named_by_a_constant(tmp_path):
    """``@field_list(NAME)`` with NAME a constant marks the fields of index NAME's value: a clone
    preserving that list carries them (before, the name matched no index and nothing was kept)."""
    f = tmp_path / "fl.p4"
    f.write_text(FL_SRC)
    rig = Rig(f)
    rig.clone_session(5, port=9, instance=0)
    _res, egs = rig.run(bytes([0x42, 0x00]))
    out = {e.frames[0].port: e.frames[0].data for e in egs if e.frames}
    assert out[1] == bytes([0x42, 0x00])
    assert out[9] == bytes([0x42, 0x00])   # kept preserved, other (list 1) reset to 0


def test_field_list_argument_not_a_constant_is_an_error():
    from softswitch.frontend import P4Error
    with pytest.raises(P4Error, match=r"x.p4:7:5: .*@field_list argument 'NOPE' is not an integer constant"):
        load_source(FL_SRC.replace("@field_list(FL_COPY) bit<8> kept", "@field_list(NOPE) bit<8> kept"), "x.p4")


ENUM_FL_SRC = FL_SRC.replace("const bit<8> FL_COPY = 3;", "enum bit<8> Lists { COPY = 8w3, OTHER = 8w1 };") \
    .replace("@field_list(FL_COPY)", "@field_list(Lists.COPY)") \
    .replace("clone_preserving_field_list(CloneType.I2E, 5, FL_COPY)",
             "clone_preserving_field_list(CloneType.I2E, 5, (bit<8>)Lists.COPY)")


def test_field_list_index_named_by_a_serializable_enum_member(tmp_path):
    """``@field_list(E.M)`` with E a serializable enum, as SAI P4 marks its preserved fields."""
    f = tmp_path / "fl.p4"
    f.write_text(ENUM_FL_SRC)
    rig = Rig(f)
    rig.clone_session(5, port=9, instance=0)
    _res, egs = rig.run(bytes([0x42, 0x00]))
    out = {e.frames[0].port: e.frames[0].data for e in egs if e.frames}
    assert out[9] == bytes([0x42, 0x00])


ML_SRC = """
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.h); transition accept; } }
control C(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action set(bit<8> v) { h.h.a = v; s.egress_spec = 2; }
    @entry_restriction("
      // a comment line: the C preprocessor removes it, as it does for p4c
      a::mask != 0 -> a == 1;
      a != 7;
    ")
    table t { key = { h.h.a : ternary @name("a"); } actions = { set; NoAction; } }
    apply { t.apply(); } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control D(packet_out k, in H h) { apply { k.emit(h.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_string_literal_spanning_lines_in_an_annotation(tmp_path):
    """SAI P4 writes ``@entry_restriction("...")`` over several lines: the string is one token
    (before, a syntax error at its opening quote); P4Info keeps its lines, comments removed."""
    f = tmp_path / "ml.p4"
    f.write_text(ML_SRC)
    rig = Rig(f)
    t = next(x for x in rig.p4info.tables if x.preamble.name == "I.t")
    ann = next(a for a in t.preamble.annotations if a.startswith("@entry_restriction("))
    assert "a::mask != 0 -> a == 1;\n      a != 7;\n" in ann and "comment" not in ann
    assert ann.endswith('")')
    rig.entry("I.t", {"a": ("ternary", 1, 0xFF)}, rig.action("I.set", v=9), priority=1)
    _res, egs = rig.run(bytes([1]))
    assert egs[0].frames[0].port == 2 and egs[0].frames[0].data == bytes([9])


SLICE_SRC = """
#include <v1model.p4>
header h_t { bit<16> v; bit<8> w; int<8> i; }
struct H { h_t h; }
struct M { }
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.h); transition accept; } }
control C(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action a() { h.h.v[7:0] = 1; h.h.i[3:0] = 4w0xf; }
    action b() { h.h.v[7:0] = 2; exit; }
    table t { key = { h.h.w : exact; } actions = { a; b; } default_action = a; }
    apply {
        s.egress_spec = 1;
        h.h.v[15:8] = 5 + (bit<8>)(bit<1>)t.apply().hit;
    } }
control E(inout H h, inout M m, inout standard_metadata_t s) {
    apply { h.h.i[7:4] = (bit<4>)h.h.v[15:12] + 1; } }
control D(packet_out k, in H h) { apply { k.emit(h.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_slice_assignment_keeps_bits_the_right_hand_side_writes(tmp_path):
    """``x[15:8] = e`` where evaluating ``e`` applies a table whose action writes ``x[7:0]`` (as
    p4-guide's exit-3 demo does): the action's write survives (before, the old ``x`` was read
    before ``e`` ran and written back over it, a silent misrun); an action that exits leaves the
    slice unassigned."""
    f = tmp_path / "sl.p4"
    f.write_text(SLICE_SRC)
    rig = Rig(f)
    rig.entry("I.t", {"h.h.w": ("exact", 9)}, rig.action("I.b"))
    _res, egs = rig.run(bytes([0, 0, 0, 0]))
    assert egs[0].frames[0].data == bytes([0x05, 0x01, 0x00, 0x1F])   # miss: 5 + 0, a() wrote v[7:0], i[3:0]
    _res, egs = rig.run(bytes([0xAA, 0x00, 9, 0]))
    assert egs[0].frames[0].data == bytes([0xAA, 0x02, 9, 0xB0])      # b() exits: v[15:8] kept


ALIAS_SRC = """
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; }
header b_t { bit<8> z; }
struct H { a_t a; b_t b; }
struct M { }
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.a); k.extract(h.b); transition accept; } }
control C(inout H h, inout M m) { apply { } }
control first(inout H hdr, inout a_t a) {
    apply { hdr.a.x = hdr.a.x + 1; hdr.b.z = hdr.b.z + 1; a.x = a.x + 2; a.y = 9; } }
control second(inout a_t a, inout H hdr) {
    apply { hdr.a.x = hdr.a.x + 1; hdr.b.z = hdr.b.z + 1; a.x = a.x + 2; a.y = 9; } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    first() f;
    second() g;
    apply {
        s.egress_spec = 1;
        if (h.b.z == 0) { f.apply(h, h.a); } else { g.apply(h.a, h); }
    } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control D(packet_out k, in H h) { apply { k.emit(h.a); k.emit(h.b); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_overlapping_control_arguments_copy_in_and_out_in_parameter_order(tmp_path):
    """A control applied with ``(hdr, hdr.a)`` (p4-guide's calling-convention demo): each
    argument is copied in, and copied out in parameter order, so the later parameter's value
    wins (before, both were bound in place and every write landed: a silent misrun)."""
    f = tmp_path / "al.p4"
    f.write_text(ALIAS_SRC)
    rig = Rig(f)
    _res, egs = rig.run(bytes([10, 0, 0]))     # first(hdr, a): a copied out last
    assert egs[0].frames[0].data == bytes([12, 9, 1])
    _res, egs = rig.run(bytes([10, 0, 5]))     # second(a, hdr): hdr copied out last
    assert egs[0].frames[0].data == bytes([11, 0, 6])


def test_exit_in_a_control_applied_with_overlapping_arguments_still_copies_out(tmp_path):
    """An exit in a control whose overlapping arguments are bound to copies: the copies are
    still written back, in parameter order (P4 spec since p4-spec PR #823), and nothing after
    the apply runs.  Before, the program was rejected (the copy-out on exit was not modelled)."""
    src = ALIAS_SRC.replace("a.x = a.x + 2; a.y = 9; } }\ncontrol second",
                            "a.x = a.x + 2; a.y = 9; exit; } }\ncontrol second")
    src = src.replace("f.apply(h, h.a); }", "f.apply(h, h.a); h.b.z = 77; }")
    assert src.count("exit;") == 1 and "h.b.z = 77" in src
    f = tmp_path / "ex.p4"
    f.write_text(src)
    rig = Rig(f)
    _res, egs = rig.run(bytes([10, 0, 0]))
    assert egs[0].frames[0].data == bytes([12, 9, 1])


OVERLAP_SRC = """
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; }
header e_t { bit<8> v; }
struct H { a_t a; e_t[2] s; }
struct M { }
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.a); k.extract(h.s.next); k.extract(h.s.next); transition accept; } }
control C(inout H h, inout M m) { apply { } }
control bits(inout bit<4> p, inout bit<4> q) { apply { p = 0xF; q = q + 1; } }
control elems(inout e_t p, inout e_t q) { apply { p.v = 1; q.v = q.v + 1; } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    bits() b;
    elems() e;
    apply {
        s.egress_spec = 1;
        if (h.a.x == 0) { b.apply(h.a.y[7:4], h.a.y[5:2]); } else { e.apply(h.s[h.a.y], h.s[0]); }
    } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control D(packet_out k, in H h) { apply { k.emit(h.a); k.emit(h.s); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def test_overlapping_slices_and_maybe_equal_stack_elements_are_copied_in_and_out(tmp_path):
    """Arguments that overlap without one being the other's prefix in text: two slices of one
    field sharing bits 5:4, and a stack element with a run-time index next to element 0. Each
    is copied in, then out in parameter order (bound in place, the second parameter read the
    first one's write)."""
    f = tmp_path / "ov.p4"
    f.write_text(OVERLAP_SRC)
    rig = Rig(f)
    # y[7:4] = 0xF, then y[5:2] = (0 + 1): 0b1111_0000 with bits 5:2 = 0001 -> 0b1100_0100
    _res, egs = rig.run(bytes([0, 0, 7, 7]))
    assert egs[0].frames[0].data == bytes([0, 0xC4, 7, 7])
    # h.s[y] with y = 0 is h.s[0]: p.v = 1 copied out first, then q.v = 5 + 1
    _res, egs = rig.run(bytes([1, 0, 5, 9]))
    assert egs[0].frames[0].data == bytes([1, 0, 6, 9])
    # y = 1: different elements, each written once
    _res, egs = rig.run(bytes([1, 1, 5, 9]))
    assert egs[0].frames[0].data == bytes([1, 1, 6, 1])


def test_aliasing_is_decided_on_lvalue_structure():
    """What the printed text of two lvalues got wrong: a variable whose name has a dot is not a
    member of another; members of a header_union overlap; disjoint slices and distinct constant
    indices do not; a field and a longer-named sibling do not, a field and its own member do."""
    from softswitch.frontend import ir
    from softswitch.frontend.check_blocks import _aliased_args
    from softswitch.frontend.ir import NO_LOC as L

    b8 = ir.BitT(8)
    e_t = ir.HeaderT("e_t", (ir.Field("v", b8),))
    u_t = ir.StructT("u_t", (ir.Field("p", e_t), ir.Field("q", e_t)), union=True)
    st = ir.StackT(e_t, 2)
    h_t = ir.StructT("h_t", (ir.Field("a", e_t), ir.Field("ab", e_t), ir.Field("u", u_t), ir.Field("s", st)))
    h = ir.Var(h_t, L, "h")

    def m(base, f, t):
        return ir.Member(t, L, base, f)

    def idx(k):
        return ir.StackIndex(e_t, L, m(h, "s", st), k if isinstance(k, ir.Expr) else ir.Const(ir.BitT(32), L, k))

    def aliased(x, y):
        return _aliased_args([(0, x), (1, y)]) == {0, 1}

    dotted = ir.Var(e_t, L, "h.a")  # a local of an inlined instance 'h': not h's field a
    assert not aliased(dotted, m(h, "a", e_t))
    assert aliased(m(h, "a", e_t), m(m(h, "a", e_t), "v", b8))
    assert not aliased(m(h, "a", e_t), m(h, "ab", e_t))
    hu = m(h, "u", u_t)
    assert aliased(m(hu, "p", e_t), m(hu, "q", e_t))
    av = m(m(h, "a", e_t), "v", b8)
    assert not aliased(ir.Slice(ir.BitT(4), L, av, 7, 4), ir.Slice(ir.BitT(4), L, av, 3, 0))
    assert aliased(ir.Slice(ir.BitT(4), L, av, 7, 4), ir.Slice(ir.BitT(4), L, av, 4, 1))
    # x[7:2][1:0] is x[3:2]
    inner = ir.Slice(ir.BitT(6), L, av, 7, 2)
    assert not aliased(ir.Slice(ir.BitT(2), L, inner, 1, 0), ir.Slice(ir.BitT(2), L, av, 1, 0))
    assert aliased(ir.Slice(ir.BitT(2), L, inner, 1, 0), ir.Slice(ir.BitT(1), L, av, 2, 2))
    assert not aliased(idx(0), idx(1))
    assert aliased(idx(1), idx(1))
    assert aliased(idx(m(m(h, "a", e_t), "v", b8)), idx(1))  # a run-time index may be any element
    assert aliased(ir.StackLast(e_t, L, m(h, "s", st)), m(idx(0), "v", b8))
    assert aliased(m(h, "s", st), idx(1))
    assert not aliased(m(h, "a", e_t), idx(0))
