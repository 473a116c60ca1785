"""P4Info: exact equality with p4c's output for the conformance programs; ids, @id, aliases."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from softswitch.compile_cmd import main as compile_main
from softswitch.devconfig import DeviceConfigError, load_device_config, make_device_config
from softswitch.frontend import load_program, load_source
from softswitch.frontend.errors import P4InfoError
from softswitch.p4info import _aliases, build_p4info, jenkins_hash

CONF = str(Path(__file__).resolve().parents[1] / "data" / "conformance")
DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def _ref(name: str) -> p4info_pb2.P4Info:
    with open(os.path.join(CONF, name)) as f:
        return text_format.Parse(f.read(), p4info_pb2.P4Info())


@pytest.mark.parametrize("prog", ["p4info_features", "bench4"])
def test_matches_p4c_exactly(prog: str) -> None:
    mine = build_p4info(load_program(os.path.join(CONF, prog + ".p4")))
    ref = _ref(prog + ".p4info.txtpb")
    assert text_format.MessageToString(mine) == text_format.MessageToString(ref)
    assert mine == ref


def test_hash_is_jenkins_one_at_a_time() -> None:
    assert (0x02 << 24) | (jenkins_hash("MyIngress.l2") & 0xFFFFFF) == 45204825
    assert (0x01 << 24) | (jenkins_hash("NoAction") & 0xFFFFFF) == 21257015


def test_aliases_shortest_unique_suffix() -> None:
    a = _aliases(["MyIngress.nexthop", "MyIngress.ingress.nexthop", "MyIngress.acl"])
    assert a == {"MyIngress.nexthop": "MyIngress.nexthop", "MyIngress.ingress.nexthop": "ingress.nexthop",
                 "MyIngress.acl": "acl"}


def test_bad_id_prefix_is_an_error() -> None:
    with open(os.path.join(CONF, "bench4.p4")) as f:
        src = f.read()
    src = src.replace(
        "    table my_mac", "    @id(0x01000001) table my_mac")
    with pytest.raises(P4InfoError) as ei:
        build_p4info(load_source(src, "b.p4"))
    assert "b.p4:" in str(ei.value) and "wrong 8-bit prefix" in str(ei.value)


def test_an_id_without_a_prefix_gets_its_kinds() -> None:
    """p4c puts the kind's 8-bit prefix on an @id given without one (P4RuntimeSymbolTable's
    externalId): @id(1) on a table is 0x02000001, on an action 0x01000007 for @id(7)."""
    with open(os.path.join(CONF, "bench4.p4")) as f:
        src = f.read()
    src = src.replace("    table my_mac", "    @id(1) table my_mac")
    p = build_p4info(load_source(src, "b.p4"))
    (t,) = [t for t in p.tables if t.preamble.name.endswith("my_mac")]
    assert t.preamble.id == 0x02000001


def test_fabric_program_p4info() -> None:
    p = build_p4info(load_program(os.path.join(DATA, "srv6_fabric.p4")))
    tables = {t.preamble.name: t for t in p.tables}
    st = tables["FabricIngress.routing.my_station"]
    assert st.is_const_table and st.has_initial_entries and st.const_default_action_id
    ru = tables["FabricIngress.routing.route_usid"]
    assert [m.name for m in ru.match_fields] == ["hdr.ipv6.dst"] and ru.size == 4096
    assert ru.implementation_id >> 24 == 0x11
    sid = tables["FabricIngress.srv6.my_sid"]
    assert sid.match_fields[0].name == "ipv6_dst"
    assert list(sid.match_fields[0].annotations) == ["@format(IPV6_ADDRESS)"]
    assert [c.preamble.name for c in p.controller_packet_metadata] == ["packet_in", "packet_out"]
    for ent in list(p.tables) + list(p.actions):
        assert ent.preamble.id >> 24 in (1, 2)


def test_device_config_round_trip_and_bmv2_rejected(tmp_path) -> None:
    blob = make_device_config(os.path.join(DATA, "srv6_fabric.p4"))
    prog = load_device_config(blob)
    assert prog.ingress.name == "FabricIngress"
    with pytest.raises(DeviceConfigError) as ei:
        load_device_config(json.dumps({"header_types": [], "pipelines": []}).encode())
    assert "this is a bmv2 JSON" in str(ei.value)
    with pytest.raises(DeviceConfigError):
        load_device_config(blob[: len(blob) // 2])


def test_compile_command(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert compile_main([os.path.join(CONF, "bench4.p4"), "-o", str(out)]) == 0
    text = (out / "p4info.txtpb").read_text()
    assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n")
    assert text_format.Parse(text, p4info_pb2.P4Info()) == _ref("bench4.p4info.txtpb")
    assert load_device_config((out / "softswitch.json").read_bytes()).ingress.name == "I"
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\nheader h_t { bit<8> a }\n")
    assert compile_main([str(bad), "--p4runtime-files", str(tmp_path / "x.txtpb")]) == 1
    assert f"{bad}:2:23: error: syntax error: unexpected '}}'" in capsys.readouterr().err


def test_compile_defines() -> None:
    src = "#include <v1model.p4>\n#ifndef OK\n#error need OK\n#endif\n"
    with pytest.raises(Exception) as ei:
        load_source(src, "d.p4")
    assert "d.p4:3:1: error: #error need OK" in str(ei.value)


_DIRECT_CALLS = """
#include <core.p4>
#include <v1model.p4>
struct h_t { } struct m_t { bit<8> x; }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) { state start { transition accept; } }
control V(inout h_t h, inout m_t m) { apply { } }
action top_direct(bit<8> v) { }
action top_unused() { }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action helper(bit<8> v) { m.x = v; }
    action direct(bit<8> v) { m.x = v; }
    action via_action() { helper(3); }
    action unused() { }
    table t { key = { m.x: exact; } actions = { via_action; NoAction; } default_action = NoAction(); }
    apply { t.apply(); if (m.x == 1) { direct(2); } top_direct(1); }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_actions_called_from_apply_are_listed_as_p4c_does() -> None:
    """p4c lists an action called directly from an apply block (its mid end wraps the call in a
    hidden table); one called only from another action is inlined and left out, as is an unused
    one.  mrc_switch.p4's ingress.routing.drop_with is such an action (BMV2_FACTS.md)."""
    names = [a.preamble.name for a in build_p4info(load_source(_DIRECT_CALLS, "d.p4")).actions]
    assert "I.direct" in names and "top_direct" in names and "I.via_action" in names
    assert "I.helper" not in names and "I.unused" not in names and "top_unused" not in names
    root = Path(__file__).resolve().parents[3]
    mrc = build_p4info(load_program(str(root / "p4src" / "mrc_switch.p4")))
    acts = [a.preamble.name for a in mrc.actions]
    assert acts.index("ingress.routing.drop_with") == acts.index("ingress.srv6.srv6_end") + 1


_CALLED_FROM_ACTIONS = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct H { h_t h; }
struct M { }
action top_inner(inout bit<8> v) { v = v + 1; }
action top_outer(inout bit<8> v) { top_inner(v); }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control V(inout H h, inout M m) { apply { } }
control Sub(inout H h) {
    action local_inner() { h.h.x = 9; }
    action local_outer() { local_inner(); }
    table t { key = { h.h.x : exact; } actions = { local_outer; top_outer(h.h.x); }
              default_action = local_outer; }
    apply { t.apply(); } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    Sub() s1;
    Sub() s2;
    action only_from_a() { h.h.x = 1; }
    action both() { h.h.x = 2; }
    action only_from_unused() { h.h.x = 3; }
    action unused() { only_from_unused(); }
    action a() { top_inner(h.h.x); only_from_a(); both(); }
    action direct_inner(out bit<8> u, out bit<8> w) { u = 3; w = 4; }
    action direct_outer(out bit<8> v) { direct_inner(v, v); }
    table ta { key = { h.h.x : exact; } actions = { a; } }
    apply { ta.apply(); both(); direct_outer(h.h.x); s1.apply(h); s2.apply(h); } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_actions_only_called_from_actions_are_left_out_as_p4c_front_end_removes_them() -> None:
    """p4c's front end inlines an action's calls of other actions (InlineActions) and then runs
    LocalizeAllActions, whose last pass is RemoveAllUnusedDeclarations
    (frontends/p4/localizeActions.h, in old and current releases), so an action -- local or
    top-level -- that only other actions call is gone before the P4Info serializer looks at the
    control's locals; p4c's issue4507_2-frontend.p4 output keeps only the table's action `foo`
    of `foo -> baz -> bar`.  An action also called from apply or listed by a table stays; the
    order is p4c's inlined one (top-level actions first, then the flattened locals)."""
    names = [a.preamble.name for a in build_p4info(load_source(_CALLED_FROM_ACTIONS, "c.p4")).actions]
    assert names == ["top_outer", "NoAction", "I.s1.local_outer", "I.s2.local_outer",
                     "I.both", "I.a", "I.direct_outer"]


HDR_STRUCT = """
#include <core.p4>
#include <v1model.p4>
struct pt_t { bit<8> a; int<8> b; }
struct s_t { pt_t pt; bool f; }
@controller_header("packet_in") header pin_t { bit<9> port; s_t s; bit<6> pad; }
header h_t { bit<8> x; pt_t p; }
struct dg_t { h_t h; }
struct hs_t { pin_t pin; h_t h; }
struct m_t { dg_t d; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { m.d.h = h.h; digest<dg_t>(1, m.d); } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.pin); p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_header_with_struct_fields_is_flattened_as_p4c_does() -> None:
    """p4c's control-plane flattening of a header with struct-typed fields: one entry per leaf,
    named by its path (p4c's FlattenHeader keeps the original path as the leaf's name), for
    controller packet metadata and for type_info headers (int<W> leaves as int)."""
    info = build_p4info(load_source(HDR_STRUCT, "hs.p4"))
    (cpm,) = info.controller_packet_metadata
    assert [(m.id, m.name, m.bitwidth) for m in cpm.metadata] == [
        (1, "port", 9), (2, "s.pt.a", 8), (3, "s.pt.b", 8), (4, "s.f", 1), (5, "pad", 6)]
    h = info.type_info.headers["h_t"]
    assert [(m.name, m.type_spec.WhichOneof("type_spec"), getattr(m.type_spec, m.type_spec.WhichOneof("type_spec")).bitwidth)
            for m in h.members] == [("x", "bit", 8), ("p.a", "bit", 8), ("p.b", "int", 8)]


def _colliding(prefix: str) -> tuple[str, str]:
    """The first two names ``prefix<i>`` whose 24-bit hashes are equal (a birthday search)."""
    seen: dict[int, str] = {}
    i = 0
    while True:
        name = f"{prefix}{i}"
        low = jenkins_hash(name) & 0xFFFFFF
        if low in seen:
            return seen[low], name
        seen[low] = name
        i += 1


def test_hash_collisions_resolve_in_p4cs_sorted_order() -> None:
    """p4c (control-plane/p4RuntimeSymbolTable.cpp, computeIdsForSymbols) hands out ids per kind
    over a std::map of the names, i.e. in sorted order, probing to the next id on a taken one:
    of two names with one 24-bit hash the one that sorts first gets it. softswitch handed them
    out in P4Info order, so declaring the later name first swapped the two ids."""
    t_lo, t_hi = sorted(_colliding("Ig.t"))
    a_lo, a_hi = sorted(_colliding("Ig.a"))
    assert jenkins_hash(t_lo) & 0xFFFFFF == jenkins_hash(t_hi) & 0xFFFFFF
    src = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; }
struct H { h_t h; }
struct M { }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; } }
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    action AHI() { sm.egress_spec = 2; }
    action ALO() { sm.egress_spec = 1; }
    table THI { key = { h.h.k: exact; } actions = { AHI; NoAction; } default_action = NoAction(); }
    table TLO { key = { h.h.k: exact; } actions = { ALO; NoAction; } default_action = NoAction(); }
    apply { THI.apply(); TLO.apply(); }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out b, in H h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""
    for old, new in (("THI", t_hi[3:]), ("TLO", t_lo[3:]), ("AHI", a_hi[3:]), ("ALO", a_lo[3:])):
        src = src.replace(old, new)
    info = build_p4info(load_source(src, "c.p4"))
    # the higher name comes first in P4Info: the order softswitch used to hand ids out in
    assert [t.preamble.name for t in info.tables] == [t_hi, t_lo]
    names = [a.preamble.name for a in info.actions]
    assert names.index(a_hi) < names.index(a_lo)

    def p4c_ids(prefix: int, names: list[str]) -> dict[str, int]:
        taken: set[int] = set()
        out = {}
        for n in sorted(names):
            low = jenkins_hash(n)
            while (prefix << 24) | (low & 0xFFFFFF) in taken:
                low += 1
            out[n] = (prefix << 24) | (low & 0xFFFFFF)
            taken.add(out[n])
        return out

    want_t = p4c_ids(0x02, [t_hi, t_lo])
    want_a = p4c_ids(0x01, [a_hi, a_lo, "NoAction"])
    assert want_t[t_hi] == want_t[t_lo] + 1
    assert {t.preamble.name: t.preamble.id for t in info.tables} == want_t
    assert {a.preamble.name: a.preamble.id for a in info.actions} == want_a
