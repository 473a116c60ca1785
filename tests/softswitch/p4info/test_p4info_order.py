"""P4Info entity order and kept annotations, as p4c's P4RuntimeSerializer writes them.

p4c walks the evaluated blocks breadth-first (``Helpers::forAllEvaluatedBlocks`` in
control-plane/p4RuntimeSerializer.h, an ordered frontier): tables, extern instances and each
control block's actions are listed as the walk meets them, so everything of the V1Switch
controls comes before what belongs to a control instantiated in one (p4c's sample
``actions-almost-duplicate-names1``: ``ingressImpl.t1`` before ``ingressImpl.c1.t2``, the
sub-control's action last).  A direct counter or meter is added with its table
(``addTableProperties``).  ``addAnnotations`` drops only @name, @id, @brief and @description,
so ``@hidden`` on a key (p4c's sample ``graph-annotationless-key``) or a parameter stays."""
from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from softswitch.frontend import load_program, load_source
from softswitch.p4info import build_p4info

DATA = Path(__file__).resolve().parents[1] / "data"


def _names(msgs) -> list[str]:
    return [m.preamble.name for m in msgs]


def test_order_fixture_matches_exactly() -> None:
    mine = build_p4info(load_program(str(DATA / "p4info_order.p4")))
    ref = text_format.Parse((DATA / "p4info_order.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    assert text_format.MessageToString(mine) == text_format.MessageToString(ref)


def test_breadth_first_order() -> None:
    p = build_p4info(load_program(str(DATA / "p4info_order.p4")))
    # the V1Switch controls' own tables first; then the directly applied control (declared first
    # by InstantiateDirectCalls), then the declared instance
    assert _names(p.tables) == ["I.t1", "I.t2", "E.et", "I.Direct.dt", "I.sub.st"]
    # a control block's actions: the top-level actions it uses, then its own
    assert _names(p.actions) == ["NoAction", "I.a1", "I.a2", "E.ea", "I.Direct.da", "top_only_in_sub",
                                 "I.sub.sa"]
    assert _names(p.counters) == ["I.ic", "E.ec", "I.sub.sc"]
    # with their tables, not in declaration order (dc2 is declared before dc1)
    assert _names(p.direct_counters) == ["I.dc1", "I.dc2", "I.sub.sdc"]


def test_hidden_kept_on_keys_and_parameters() -> None:
    p = build_p4info(load_program(str(DATA / "p4info_order.p4")))
    dt = next(t for t in p.tables if t.preamble.name == "I.Direct.dt")
    assert list(dt.match_fields[0].annotations) == ["@hidden"]
    da = next(a for a in p.actions if a.preamble.name == "I.Direct.da")
    assert list(da.params[0].annotations) == ["@hidden"]


def test_sub_control_declared_first_still_comes_after() -> None:
    """The shape of p4c's actions-almost-duplicate-names1 sample: a directly applied control
    with a table, then the control's own table; p4c lists the control's table first."""
    src = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct H { h_t h; }
struct M { }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control Inner(inout H h) {
    @name("bar") action b(bit<8> v) { h.h.x = v; }
    table t2 { key = { h.h.x : exact; } actions = { b; } }
    apply { t2.apply(); }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    @name("bar") action a(bit<8> v) { h.h.x = v; }
    table t1 { key = { h.h.x : exact; } actions = { a; NoAction; } default_action = NoAction(); }
    apply { Inner.apply(h); t1.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
    p = build_p4info(load_source(src, "order.p4"))
    assert _names(p.tables) == ["I.t1", "I.Inner.t2"]
    assert _names(p.actions) == ["NoAction", "I.bar", "I.Inner.bar"]


def test_no_type_info_when_p4c_makes_none() -> None:
    """p4c creates type_info only on the way to a table, an extern instance, an action parameter
    or an extern function call in a control (mutable_type_info() in addTableProperties,
    addExternInstance, addAction, addExternFunction); with none of them its P4Info has none."""
    mine = build_p4info(load_program(str(DATA / "p4info_no_type_info.p4")))
    ref = text_format.Parse((DATA / "p4info_no_type_info.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    assert not mine.HasField("type_info")
    assert text_format.MessageToString(mine) == text_format.MessageToString(ref)


def test_type_info_present_with_any_trigger() -> None:
    src = (DATA / "p4info_no_type_info.p4").read_text()
    body = "apply { set_low(h.h.a[0:0]); s.egress_spec = 9w1; }"
    variants = {
        "extern call": body.replace("s.egress_spec = 9w1;", "mark_to_drop(s);"),
        "extern call in an action": body.replace("set_low(h.h.a[0:0]);", "drop_it();"),
        "register": "register<bit<8>>(32w4) r; " + body,
        "action parameter": "action p(bit<8> v) { h.h.a = v; } " + body.replace("set_low(h.h.a[0:0]);", "p(8w1);"),
        "table": "table t { actions = { NoAction; } } " + body.replace("set_low(h.h.a[0:0]);", "t.apply();"),
    }
    for what, new in variants.items():
        prog = src.replace(body, new).replace(
            "action set_low", "action drop_it() { mark_to_drop(s); }\n    action set_low")
        p = build_p4info(load_source(prog, "ti.p4"))
        assert p.HasField("type_info"), what
