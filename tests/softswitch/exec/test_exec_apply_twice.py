"""A control instance applied more than once with different out/inout arguments (issue 16).

p4c and bmv2 accept it: each apply copies its own arguments in and out (P4_16 spec 6.8), while
the instance's tables, registers and counters are one object (one P4Info entry each).  Before,
softswitch rejected a second apply whose out/inout arguments were not the same lvalues.
"""
from __future__ import annotations

from exec_rig import Rig

HDRS = """
#include <core.p4>
#include <v1model.p4>
header p_t { bit<8> x; bit<8> y; bit<8> z; }
struct H { p_t a; p_t b; }
struct M { bit<8> i; }
parser P(packet_in k, out H h, inout M m, inout standard_metadata_t s) {
    state start { k.extract(h.a); k.extract(h.b); transition accept; } }
control V(inout H h, inout M m) { apply { } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control CK(inout H h, inout M m) { apply { } }
control D(packet_out k, in H h) { apply { k.emit(h.a); k.emit(h.b); } }
"""
MAIN = "V1Switch(P(), V(), I(), E(), CK(), D()) main;\n"

SHARED_SRC = HDRS + """
control C(inout p_t p) {
    register<bit<8>>(4) seen;
    counter(1, CounterType.packets) hits;
    action set(bit<8> v) { p.y = v; }
    table t { key = { p.x: exact; } actions = { set; NoAction; } default_action = NoAction(); }
    apply {
        t.apply();
        bit<8> n;
        seen.read(n, 0);
        n = n + 1;
        seen.write(0, n);
        p.z = n;
        hits.count(0);
    }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    C() c;
    apply { s.egress_spec = 1; c.apply(h.a); c.apply(h.b); }
}
""" + MAIN


def test_table_and_register_shared_by_two_applies_on_different_headers(tmp_path):
    f = tmp_path / "twice.p4"
    f.write_text(SHARED_SRC)
    rig = Rig(f)
    assert [t.preamble.name for t in rig.p4info.tables] == ["I.c.t"]
    assert [r.preamble.name for r in rig.p4info.registers] == ["I.c.seen"]
    assert [c.preamble.name for c in rig.p4info.counters] == ["I.c.hits"]
    rig.entry("I.c.t", {"p.x": ("exact", 1)}, rig.action("I.c.set", v=0xAA))
    rig.entry("I.c.t", {"p.x": ("exact", 2)}, rig.action("I.c.set", v=0xBB))
    # h.a looks up x=1, h.b x=2; the register counts both applies (1, then 2)
    assert rig.output(bytes([1, 0, 0, 2, 0, 0])) == bytes([1, 0xAA, 1, 2, 0xBB, 2])
    # the other way round: each apply reads its own argument's key; the register goes on (3, 4)
    assert rig.output(bytes([2, 7, 7, 9, 7, 7])) == bytes([2, 0xBB, 3, 9, 7, 4])
    assert rig.state.counter("I.c.hits").packets[0] == 4


GENERIC_SRC = HDRS + """
control G<T>(inout T v, in T step) {
    action add(T d) { v = v + d + step; }
    table t { key = { v: exact; } actions = { add; NoAction; } default_action = NoAction(); }
    apply { t.apply(); }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    G<bit<8>>() g;
    apply { s.egress_spec = 1; g.apply(h.a.x, 1); g.apply(h.b.y, 2); }
}
""" + MAIN


def test_generic_instance_applied_twice(tmp_path):
    f = tmp_path / "gen.p4"
    f.write_text(GENERIC_SRC)
    rig = Rig(f)
    assert [t.preamble.name for t in rig.p4info.tables] == ["I.g.t"]
    rig.entry("I.g.t", {"v": ("exact", 5)}, rig.action("I.g.add", d=0x10))
    rig.entry("I.g.t", {"v": ("exact", 6)}, rig.action("I.g.add", d=0x20))
    # a.x = 5 + 0x10 + 1; b.y = 6 + 0x20 + 2
    assert rig.output(bytes([5, 6, 0, 5, 6, 0])) == bytes([0x16, 6, 0, 5, 0x28, 0])
    # b.y = 5: the second apply uses the entry for 5 with its own step
    assert rig.output(bytes([6, 0, 0, 0, 5, 0])) == bytes([0x27, 0, 0, 0, 0x17, 0])


OUT_SRC = HDRS + """
control O(out p_t o, in bit<8> k) {
    apply { if (k != 0) { o.setValid(); o.x = k; o.y = k; o.z = k; } }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    O() o;
    apply { s.egress_spec = 1; o.apply(h.a, h.a.x); o.apply(h.b, h.b.x); }
}
""" + MAIN


def test_out_argument_starts_invalid_at_each_apply(tmp_path):
    """An ``out`` header parameter starts invalid (p4c resets the temporary it binds it to), so
    an apply that does not make it valid copies an invalid header out."""
    f = tmp_path / "out.p4"
    f.write_text(OUT_SRC)
    rig = Rig(f)
    assert rig.output(bytes([3, 0, 0, 4, 0, 0])) == bytes([3, 3, 3, 4, 4, 4])
    assert rig.output(bytes([0, 9, 9, 4, 0, 0])) == bytes([4, 4, 4])  # h.a copied out invalid


EXIT_SRC = HDRS + """
control X(inout p_t p) {
    apply { p.y = p.y + 1; if (p.x == 0) { exit; } p.z = 1; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    X() x;
    apply { s.egress_spec = 1; x.apply(h.a); x.apply(h.b); h.b.z = 0xEE; }
}
""" + MAIN


def test_exit_in_a_control_applied_twice_copies_its_argument_out(tmp_path):
    """exit still copies out/inout arguments out (P4 spec since p4-spec PR #823): the second
    apply's increment reaches h.b, and nothing after the apply runs."""
    f = tmp_path / "exit.p4"
    f.write_text(EXIT_SRC)
    rig = Rig(f)
    assert rig.output(bytes([1, 1, 0, 1, 1, 0])) == bytes([1, 2, 1, 1, 2, 0xEE])
    assert rig.output(bytes([1, 1, 0, 0, 1, 0])) == bytes([1, 2, 1, 0, 2, 0])
    assert rig.output(bytes([0, 5, 0, 1, 1, 0])) == bytes([0, 6, 0, 1, 1, 0])
    # the packet loop's generated entry points run the same code
    assert rig.loop_output(bytes([1, 1, 0, 0, 1, 0])) == bytes([1, 2, 1, 0, 2, 0])


INDEX_SRC = HDRS.replace("struct H { p_t a; p_t b; }", "struct H { p_t a; p_t b; p_t[2] s; }") \
    .replace("k.extract(h.b);", "k.extract(h.b); k.extract(h.s.next); k.extract(h.s.next);") \
    .replace("k.emit(h.b);", "k.emit(h.b); k.emit(h.s);") + """
control J(inout bit<8> i, inout p_t p) {
    apply { i = i + 1; p.z = 0x99; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    J() j;
    apply { s.egress_spec = 1; j.apply(h.a.x, h.s[h.a.x]); j.apply(h.b.x, h.s[h.b.x]); }
}
""" + MAIN


def test_run_time_index_of_an_argument_is_evaluated_once(tmp_path):
    """``j.apply(h.a.x, h.s[h.a.x])``: the element is the one h.a.x named at the call; the
    copy-out of the first argument changes h.a.x before the second is copied out."""
    f = tmp_path / "idx.p4"
    f.write_text(INDEX_SRC)
    rig = Rig(f)
    pkt = bytes([0, 0, 0, 1, 0, 0]) + bytes([5, 5, 5, 6, 6, 6])
    assert rig.output(pkt) == bytes([1, 0, 0, 2, 0, 0]) + bytes([5, 5, 0x99, 6, 6, 0x99])


PASSED_SRC = HDRS + """
control Step(inout bit<8> v) {
    counter(1, CounterType.packets) n;
    apply { v = v + 1; n.count(0); }
}
control T(inout bit<8> w)(Step s) { apply { s.apply(w); } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    Step() c;
    T(c) t1;
    T(c) t2;
    apply { s.egress_spec = 1; t1.apply(h.a.x); t2.apply(h.b.y); }
}
""" + MAIN


def test_instance_passed_to_two_controls_applies_to_each_ones_argument(tmp_path):
    """One instance ``c`` given to two controls as a constructor argument, each applying it to
    its own argument: both are incremented, the counter is one (before: rejected)."""
    f = tmp_path / "passed.p4"
    f.write_text(PASSED_SRC)
    rig = Rig(f)
    assert [c.preamble.name for c in rig.p4info.counters] == ["I.c.n"]
    assert rig.output(bytes([1, 2, 3, 4, 5, 6])) == bytes([2, 2, 3, 4, 6, 6])
    assert rig.state.counter("I.c.n").packets[0] == 2


STACK_HDRS = HDRS.replace("struct H { p_t a; p_t b; }", "struct H { p_t a; p_t b; p_t[2] s; }") \
    .replace("k.extract(h.b);", "k.extract(h.b); k.extract(h.s.next); k.extract(h.s.next);") \
    .replace("k.emit(h.b);", "k.emit(h.b); k.emit(h.s);")

SHADOW_SRC = STACK_HDRS + """
control Z(inout p_t p) { apply { p.z = p.z + p.x; } }
bit<1> pick(in bit<8> i) { return (bit<1>)i; }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    Z() z;
    Z() y;
    apply {
        s.egress_spec = 1;
        { p_t t = h.a; z.apply(t); h.a = t; }
        { p_t t = h.b; z.apply(t); h.b = t; }
        m.i = 0;
        y.apply(h.s[pick(m.i)]);
        m.i = 1;
        y.apply(h.s[pick(m.i)]);
    }
}
""" + MAIN


def test_same_text_naming_other_storage_is_copied(tmp_path):
    """Equal argument text is bound in place only when it names the same storage at every
    apply: ``t`` is a different local in each block, and ``h.s[pick(m.i)]`` another element at
    each call (the call's value is a variable per call site)."""
    f = tmp_path / "shadow.p4"
    f.write_text(SHADOW_SRC)
    rig = Rig(f)
    pkt = bytes([1, 0, 10, 2, 0, 20, 3, 0, 30, 4, 0, 40])
    assert rig.output(pkt) == bytes([1, 0, 11, 2, 0, 22, 3, 0, 33, 4, 0, 44])


def test_same_arguments_at_every_apply_are_bound_in_place():
    """``c.apply(h.a); c.apply(h.a);``: no copy variable, as p4c substitutes the argument
    directly when every call site is the same and nothing aliases."""
    from softswitch.frontend import ir, load_source

    src = SHARED_SRC.replace("c.apply(h.b);", "c.apply(h.a);")
    prog = load_source(src, "same.p4")
    assigns = [n for n in ir.iter_nodes(prog.ingress.body) if isinstance(n, ir.Assign)
               and isinstance(n.lhs, ir.Var) and n.lhs.name.startswith("c.p")]
    assert assigns == []
    copied = load_source(SHARED_SRC, "twice.p4")
    assert [n for n in ir.iter_nodes(copied.ingress.body) if isinstance(n, ir.Assign)
            and isinstance(n.lhs, ir.Var) and n.lhs.name.startswith("c.p")]


NAMED_SRC = HDRS + """
control N(in bit<8> k, inout p_t p) { apply { p.z = p.z + k; } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    N() n;
    apply { s.egress_spec = 1; n.apply(p = h.a, k = 1); n.apply(p = h.b, k = 1); }
}
""" + MAIN


def test_named_arguments_in_another_order_than_the_parameters(tmp_path):
    f = tmp_path / "named.p4"
    f.write_text(NAMED_SRC)
    assert Rig(f).output(bytes([0, 0, 5, 0, 0, 7])) == bytes([0, 0, 6, 0, 0, 8])
