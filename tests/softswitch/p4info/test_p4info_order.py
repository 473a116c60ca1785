"""P4Info entity order and kept annotations, as p4c writes them.

p4c-bm2-ss writes P4Info after its front end (serializeP4RuntimeIfRequired before the mid end,
backends/bmv2/simple_switch/main.cpp), and the front end has by then inlined every control
instance (``Inline``, then ``InlineActions`` and ``LocalizeAllActions``, frontends/p4/frontend.cpp):
no nested control block is left.  So the serializer's walk of the evaluated blocks meets each
V1Switch control's tables and externs in the order of its flattened locals -- a declared
instance's in its place (GeneralInliner), a directly applied control's last (DoInstantiateCalls
appends the instance; p4c's sample ``actions-almost-duplicate-names1``: ``ingressImpl.t1`` before
``ingressImpl.c1.t2``, the sub-control's action last) -- and all of one control's before the
next control's.  A control's actions are its locals: the top-level ones it uses first
(LocalizeAllActions puts their copies in front), then its own.  A direct counter or meter is
added with its table (``addTableProperties``).  ``addAnnotations`` drops only @name, @id, @brief
and @description, so ``@hidden`` on a key (p4c's sample ``graph-annotationless-key``) or a
parameter stays."""
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


def test_inlined_order() -> None:
    p = build_p4info(load_program(str(DATA / "p4info_order.p4")))
    # I's tables, its declared instance's (declared before t1) in place, the directly applied
    # control's last; then E's
    assert _names(p.tables) == ["I.sub.st", "I.t1", "I.t2", "I.Direct.dt", "E.et"]
    # per control: the top-level actions it (or a control inlined into it) uses, then its own
    assert _names(p.actions) == ["top_only_in_sub", "NoAction", "I.sub.sa", "I.a1", "I.a2", "I.Direct.da",
                                 "E.ea"]
    assert _names(p.counters) == ["I.ic", "I.sub.sc", "E.ec"]
    # with their tables, not in declaration order (dc2 is declared before dc1)
    assert _names(p.direct_counters) == ["I.sub.sdc", "I.dc1", "I.dc2"]


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


_NESTED_DIRECT = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct H { h_t h; }
struct M { }
action top_direct(inout bit<8> v) { v = v + 1; }
action top_tbl(bit<8> a) { }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control Inner(inout H h) {
    action inner_a() { }
    table it { key = { h.h.x : exact; } actions = { inner_a; } }
    apply { it.apply(); top_direct(h.h.x); }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action outer_a() { }
    table t { key = { h.h.x : exact; } actions = { outer_a; top_tbl; } }
    Inner() c1;
    apply { t.apply(); c1.apply(h); }
}
control E(inout H h, inout M m, inout standard_metadata_t s) {
    action ea() { }
    table et { key = { h.h.x : exact; } actions = { ea; } }
    apply { et.apply(); }
}
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_nested_control_is_flattened_into_its_control() -> None:
    """A declared instance (after t here) inlined in its place, before E's table; a top-level
    action its body calls directly is one of I's top-level actions, listed before I's own
    (LocalizeAllActions runs on the flattened control)."""
    p = build_p4info(load_source(_NESTED_DIRECT, "nested.p4"))
    assert _names(p.tables) == ["I.t", "I.c1.it", "E.et"]
    assert _names(p.actions) == ["top_tbl", "NoAction", "top_direct", "I.outer_a", "I.c1.inner_a", "E.ea"]
