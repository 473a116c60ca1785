"""Ids and names of the fields inside P4Info objects as p4c's serializer gives them (read from
p4c's control-plane/p4RuntimeSerializer.cpp; each differed until 2026-12-05): ``@id`` on match
fields, action parameters, packet metadata and value-set fields (FieldIdAllocator: every ``@id``
first, then each other field its position or the next free id), selector keys counted as
positions, ``@name`` on parameters and fields, an action profile's tables in name order; and a
P4Runtime client uses those ids (the runtime reads them from the same P4Info)."""
from __future__ import annotations

from p4.v1 import p4runtime_pb2

from softswitch.frontend import load_source
from softswitch.p4info import build_p4info, field_ids

SRC = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
@controller_header("packet_in") header pin_t { @id(2) bit<16> port; @id(1) bit<16> pad; }
struct vs_t { bit<8> x; @id(5) @name("why") bit<8> y; }
struct hs_t { pin_t pin; h_t h; }
struct m_t { bit<16> sel; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    value_set<vs_t>(4) pvs;
    state start { p.extract(h.h); transition select(h.h.a, h.h.b) { pvs: accept; default: accept; } }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action fwd(@id(5) bit<9> port, @name("tag") bit<8> x, bit<8> y) { s.egress_spec = port; h.h.c = x ^ y; }
    action_selector(HashAlgorithm.identity, 16, 16) sel;
    table zt { key = { m.sel: selector; h.h.a: exact; } actions = { fwd; } implementation = sel; }
    table at { key = { h.h.b: exact @id(7); h.h.c: ternary; m.sel: selector; } actions = { fwd; } implementation = sel; }
    table plain { key = { h.h.a: exact; } actions = { fwd; } default_action = fwd(1, 2, 3); }
    apply { m.sel = (bit<16>)h.h.a; zt.apply(); at.apply(); plain.apply(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.pin); p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _info():
    return build_p4info(load_source(SRC, "ids.p4"))


def test_the_allocator_as_p4cs():
    from softswitch.frontend import ir

    def ann(i):
        return (ir.Annotation("id", f"({i})", (i,), ir.NO_LOC),) if i is not None else ()

    assert field_ids([ann(None), ann(None), ann(None)]) == [1, 2, 3]
    assert field_ids([ann(7), ann(None)]) == [7, 2]
    assert field_ids([ann(2), ann(1)]) == [2, 1]
    assert field_ids([ann(None), ann(1), ann(None)]) == [2, 1, 3]  # the first takes 1's slot: 2


def test_field_ids_names_and_table_order():
    p = _info()
    tables = {t.preamble.name: t for t in p.tables}
    # a selector key takes a position: zt's exact key is the second element
    assert [(f.name, f.id) for f in tables["I.zt"].match_fields] == [("h.h.a", 2)]
    assert [(f.name, f.id) for f in tables["I.at"].match_fields] == [("h.h.b", 7), ("h.h.c", 2)]
    (fwd,) = [a for a in p.actions if a.preamble.name == "I.fwd"]
    assert [(q.name, q.id) for q in fwd.params] == [("port", 5), ("tag", 2), ("y", 3)]
    # the default action's arguments name the parameters by those ids
    assert [a.param_id for a in tables["I.plain"].initial_default_action.arguments] == [5, 2, 3]
    (pin,) = p.controller_packet_metadata
    assert [(m.name, m.id) for m in pin.metadata] == [("port", 2), ("pad", 1)]
    (pvs,) = p.value_sets
    assert [(m.name, m.id) for m in pvs.match] == [("x", 1), ("why", 5)]
    (prof,) = p.action_profiles
    assert list(prof.table_ids) == [tables["I.at"].preamble.id, tables["I.zt"].preamble.id]  # by name


def test_the_runtime_takes_the_p4info_ids():
    """A P4Runtime write naming the fields and parameters by those ids installs and matches."""
    from softswitch.runtime import SwitchState

    p = _info()
    s = SwitchState(p)
    t = next(t for t in p.tables if t.preamble.name == "I.plain")
    fwd = next(a for a in p.actions if a.preamble.name == "I.fwd")
    te = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
    te.match.add(field_id=1, exact=p4runtime_pb2.FieldMatch.Exact(value=b"\x07"))
    te.action.action.action_id = fwd.preamble.id
    for pid, v in ((5, b"\x02"), (2, b"\x09"), (3, b"\x01")):
        te.action.action.params.add(param_id=pid, value=v)
    s.write(p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=p4runtime_pb2.Entity(table_entry=te)))
    assert s.table("I.plain").lookup((7,))[1] == (2, 9, 1)


def test_annotation_text_as_p4c_prints_it():
    """An annotation p4c keeps unparsed is printed token by token, one space apart (p4c's ToP4;
    the SAI P4 programs' P4Info shows ``@sai_field(SAI_ACL_TABLE_ATTR_FIELD_ACL_IP_TYPE / IPV4ANY)``
    for ``.../IPV4ANY``); an empty body loses its parentheses; a table's action references keep
    their annotations in source order."""
    src = SRC.replace("table plain { key = { h.h.a: exact; } actions = { fwd; }",
                      "@refers_to(tbl,fld) @sai_field(X/IPV4ANY) @e() @sp( a ,  b ) "
                      "table plain { key = { h.h.a: exact; } actions = { fwd; @foo @defaultonly NoAction; }")
    p = build_p4info(load_source(src, "ids.p4"))
    (t,) = [t for t in p.tables if t.preamble.name == "I.plain"]
    assert list(t.preamble.annotations) == ["@refers_to(tbl , fld)", "@sai_field(X / IPV4ANY)", "@e", "@sp(a , b)"]
    (ref,) = [r for r in t.action_refs if r.scope]
    assert list(ref.annotations) == ["@foo", "@defaultonly"]


def test_a_plain_enum_action_parameter_is_refused_by_name():
    """p4c lists such a parameter by type name only; neither bmv2's P4Runtime server nor
    softswitch's runtime can carry a value without a width: refused at the parameter (it crashed
    with a Python TypeError until 2026-12-05)."""
    import pytest

    from softswitch.frontend.errors import P4InfoError

    src = SRC.replace("header h_t {", "enum Color { RED, GREEN }\nheader h_t {").replace(
        "    table plain", "    action paint(Color c) { if (c == Color.RED) { h.h.a = 1; } }\n    table plain").replace(
        "actions = { fwd; } default_action = fwd(1, 2, 3); }", "actions = { fwd; paint; } default_action = fwd(1, 2, 3); }")
    with pytest.raises(P4InfoError, match=r"ids\.p4:\d+:\d+: .*plain enum type 'Color'"):
        build_p4info(load_source(src, "ids.p4"))


def test_a_table_of_size_0_has_p4cs_default_size():
    """p4c reads ``size = 0`` as its default, 1024, in the bmv2 JSON (max_size) and in P4Info
    (getTableSize) alike; softswitch refused it until 2026-12-05."""
    p = build_p4info(load_source(SRC.replace("table plain { key", "table plain { size = 0; key"), "ids.p4"))
    (t,) = [t for t in p.tables if t.preamble.name == "I.plain"]
    assert t.size == 1024
