"""P4Info of declarations nothing uses, as p4c's front end leaves them before its P4Runtime
serializer runs (frontends/p4/unusedDeclarations.cpp, frontends/common/constantFolding.cpp,
control-plane/p4RuntimeSerializer.cpp and p4RuntimeArchStandard.cpp):

* a table nothing applies is removed with "[--Wwarn=unused] warning: Table t is not used;
  removing", so are the actions only it listed, and its direct counter and meter are then
  attached to no table and left out; an ``if`` on a constant is folded first, so a table applied
  (or an action called) only under ``if (false)`` goes too;
* extern instances stay, used or not (counters, meters, registers, action profiles -- one whose
  only table was removed is listed with no table; p4c's action_selector_unused-bmv2 sample);
* a value set no reachable parser state names is removed, silently;
* a digest is listed from the calls in the actions kept, not from one only a removed action makes;
* a ``@controller_header`` header is listed whether used or not (types are never removed);
* removed entities take no id and count for no alias (the symbol table is made after removal).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.exec import build_pipeline
from softswitch.frontend import load_program, load_source
from softswitch.frontend.errors import P4Error
from softswitch.p4info import build_p4info
from softswitch.runtime.state import SwitchState

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def prog():
    return load_program(str(DATA / "unused_decls.p4"))


@pytest.fixture(scope="module")
def p4info(prog):
    return build_p4info(prog)


def _names(repeated) -> list[str]:
    return [x.preamble.name for x in repeated]


def test_unused_tables_and_their_actions_are_removed(p4info) -> None:
    assert _names(p4info.tables) == ["I.used"]
    # top-level actions first (as p4c's LocalizeAllActions copies them in), then the control's
    assert _names(p4info.actions) == ["top_used", "NoAction", "I.a_used", "I.a_direct"]


def test_direct_resources_of_a_removed_table_are_left_out(p4info) -> None:
    assert not p4info.direct_counters and not p4info.direct_meters
    assert list(p4info.tables[0].direct_resource_ids) == []


def test_extern_instances_stay_and_a_profile_loses_its_removed_table(p4info) -> None:
    assert _names(p4info.action_profiles) == ["I.ap_gone_table", "I.ap_never"]
    assert all(not ap.table_ids for ap in p4info.action_profiles)
    assert _names(p4info.counters) == ["I.c_never"]
    assert _names(p4info.meters) == ["I.m_never"]
    assert _names(p4info.registers) == ["I.r_never"]


def test_value_sets_digests_and_controller_headers(p4info) -> None:
    assert _names(p4info.value_sets) == ["P.used_vs"]
    assert _names(p4info.digests) == ["learn_t"]
    assert list(p4info.type_info.structs) == ["learn_t"]
    assert _names(p4info.controller_packet_metadata) == ["packet_in"]


def test_removed_entities_count_for_no_alias(p4info) -> None:
    """E.used is removed, so I.used is the only 'used' left: its alias is 'used'."""
    assert p4info.tables[0].preamble.alias == "used"


def test_p4c_like_warnings(prog) -> None:
    f = str(DATA / "unused_decls.p4")
    assert [w for w in prog.warnings if "not used" in w] == [
        f"{f}:44:5: [--Wwarn=unused] warning: Table unused is not used; removing",
        f"{f}:46:5: [--Wwarn=unused] warning: Table unused_ap is not used; removing",
        f"{f}:47:5: [--Wwarn=unused] warning: Table debug is not used; removing",
        f"{f}:58:5: [--Wwarn=unused] warning: Table used is not used; removing",
    ]


def test_the_switch_loads_it(prog, p4info) -> None:
    """The generated code still holds the removed digest's and value set's calls (in an action
    and a parser state that never run): the switch's private description supplies them."""
    state = SwitchState(p4info)
    build_pipeline(prog, state, None)
    assert state.table("I.used") is not None
    with pytest.raises(KeyError):
        state.table("I.unused")


def test_private_description_keeps_ids_of_the_published(prog, p4info) -> None:
    full = build_p4info(prog, private=True)
    pub = {(k, x.preamble.name): x.preamble.id for k in ("value_sets", "digests")
           for x in getattr(p4info, k)}
    priv = {(k, x.preamble.name): x.preamble.id for k in ("value_sets", "digests") for x in getattr(full, k)}
    assert all(priv[k] == v for k, v in pub.items())
    assert ("digests", "gone_t") in priv and ("value_sets", "P.unreachable_vs") in priv


_KEYED = """
#include <core.p4>
#include <v1model.p4>
struct h_t { }
struct m_t { bit<8> x; }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) { state start { transition accept; } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a() { }
    table inner { key = { m.x : exact; } actions = { a; } }
    table outer { key = { inner.apply().hit : exact @name("inner_hit"); } actions = { a; } }
    table lonely_inner { key = { m.x : exact; } actions = { a; } }
    table lonely_outer { key = { lonely_inner.apply().hit : exact @name("h"); } actions = { a; } }
    apply { outer.apply(); }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control V(inout h_t h, inout m_t m) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_a_table_applied_in_an_applied_tables_key_is_used() -> None:
    """p4c removes declarations until nothing changes: a table applied only in the key of a
    removed table goes in the next round."""
    p = load_source(_KEYED, "k.p4")
    assert _names(build_p4info(p).tables) == ["I.inner", "I.outer"]
    assert sum("not used" in w for w in p.warnings) == 2


def test_no_warn_unused_silences_the_warning() -> None:
    """As p4c: the warning is not given when the table or a node around it carries
    @noWarn("unused"); the table is removed all the same."""
    src = _KEYED.replace("    table lonely_inner", '    @noWarn("unused") table lonely_inner')
    p = load_source(src, "k.p4")
    assert [w.split("warning: ")[1] for w in p.warnings if "not used" in w] == \
        ["Table lonely_outer is not used; removing"]
    assert _names(build_p4info(p).tables) == ["I.inner", "I.outer"]
    p = load_source(src.replace("control I(", '@noWarn("unused") control I('), "k.p4")
    assert not [w for w in p.warnings if "not used" in w]


def test_unused_instance_warnings(prog) -> None:
    """p4c warns about an extern instance nothing left refers to (one only a removed table or
    action named too) and keeps it: "[--Wwarn=unused] warning: c: unused instance"."""
    f = str(DATA / "unused_decls.p4")
    assert [w for w in prog.warnings if "unused instance" in w] == [
        f"{f}:{line}:5: [--Wwarn=unused] warning: {n}: unused instance"
        for line, n in ((30, "dc_gone"), (31, "dm_gone"), (32, "c_never"), (33, "m_never"), (34, "r_never"),
                        (35, "ap_gone_table"), (36, "ap_never"))]


def test_instances_in_use_give_no_warning() -> None:
    for path in ("subset_all.p4", "conformance/p4info_features.p4", "conformance/bench4.p4"):
        p = load_program(str(DATA / path))
        assert not [w for w in p.warnings if "unused" in w], path


_SHARED = """
#include <core.p4>
#include <v1model.p4>
struct h_t { }
struct m_t { bit<8> x; bit<32> h1; bit<32> h2; }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) { state start { transition accept; } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    direct_counter(CounterType.packets) dc;
    action_selector(HashAlgorithm.identity, 32w16, 32w10) sel;
    action a() { }
    table t1 { key = { m.x : exact; } actions = { a; } counters = dc; }
    table t_old { key = { m.x : exact; } actions = { a; } counters = dc; }
    table s1 { key = { m.x : exact; m.h1 : selector; } actions = { a; } implementation = sel; }
    table s_old { key = { m.x : exact; m.h2 : selector; } actions = { a; } implementation = sel; }
    apply { t1.apply(); s1.apply(); EXTRA }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control V(inout h_t h, inout m_t m) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_an_unused_table_sharing_a_direct_counter_or_selector_is_no_conflict() -> None:
    """p4c's back end (which refuses a direct counter on two tables, and a selector shared with
    other selector inputs) sees the program after its front end removed the unused tables:
    leftover copies of a table, never applied, are no error (they were until 2026-12-06)."""
    from softswitch.frontend.errors import P4Error

    p4info = build_p4info(load_source(_SHARED.replace("EXTRA", ""), "s.p4"))
    assert _names(p4info.tables) == ["I.t1", "I.s1"]
    assert p4info.direct_counters[0].direct_table_id == p4info.tables[0].preamble.id
    for extra, words in (("t_old.apply();", "direct counter 'I.dc' is already attached to table 'I.t1'"),
                         ("s_old.apply();", "action selector 'I.sel' is shared by tables with different")):
        with pytest.raises(P4Error) as ei:
            load_source(_SHARED.replace("EXTRA", extra), "s.p4")
        assert words in str(ei.value)


def test_controller_header_aliases_count_the_header_type_name() -> None:
    """p4c's symbol table holds a controller header under its type's name (its id is that
    name's hash), and every alias is the shortest suffix unique among the symbol table's names;
    the packet metadata's own alias is the @controller_header string. So a table 'I.packet_in'
    has the alias 'packet_in', and a table 'I.cpu_in_t' beside 'header cpu_in_t' the alias
    'I.cpu_in_t' (control-plane/p4RuntimeSymbolTable.cpp, p4RuntimeSerializer.cpp)."""
    src = (Path(__file__).resolve().parents[1] / "data" / "unused_decls.p4").read_text()
    src = src.replace("table used {", "table packet_in {").replace("used.apply();", "packet_in.apply();")
    src = src.replace("table debug {", "table pin_t {").replace("debug.apply();", "pin_t.apply();")
    src = src.replace("#define DEBUG 0", "#define DEBUG 1")
    p4info = build_p4info(load_source(src, "a.p4"))
    aliases = {t.preamble.name: t.preamble.alias for t in p4info.tables}
    assert aliases == {"I.packet_in": "packet_in", "I.pin_t": "I.pin_t"}
    (cm,) = p4info.controller_packet_metadata
    assert (cm.preamble.name, cm.preamble.alias) == ("packet_in", "packet_in")


def test_a_sub_control_table_is_reported_once() -> None:
    """An unused table of a control instantiated twice: removed from both instances, one
    warning (p4c warns on the declaration, before it inlines the instances)."""
    p = load_source(_KEYED.replace("control I(", """control Sub(inout m_t m) {
    action a() { }
    table used_t { key = { m.x : exact; } actions = { a; } }
    table spare { key = { m.x : exact; } actions = { a; } }
    apply { used_t.apply(); }
}
control I(""").replace("apply { outer.apply(); }", "Sub() s1; Sub() s2; apply { outer.apply(); s1.apply(m); s2.apply(m); }"),
                    "s.p4")
    assert [t for t in _names(build_p4info(p).tables) if ".s" in t] == ["I.s1.used_t", "I.s2.used_t"]
    assert sum("Table spare is not used" in w for w in p.warnings) == 1


_VARIANTS = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; bit<8> z; bit<8> y; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    direct_counter(CounterType.packets) hits;
    action set(bit<8> v) { h.h.y = v; s.egress_spec = 1; }
    @name("fwd") table fwd_v1 { key = { h.h.x : exact; } actions = { set; } }
    @name("fwd") table fwd_v2 { key = { h.h.x : exact; h.h.z : exact; } actions = { set; } counters = hits; }
    apply { if (VERSION == 2) { fwd_v2.apply(); } else { fwd_v1.apply(); } }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control V(inout hs_t h, inout m_t m) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("version", ["1", "2"])
def test_variants_of_a_table_under_one_name(version) -> None:
    """Two tables with one ``@name``, a constant choosing the one applied: p4c removes the other
    before it checks names and writes P4Info, so the program has one table ``I.fwd`` (refused
    as two tables with one control-plane name until 2026-12-06)."""
    from softswitch.stf import parse_stf, run_stf
    p = load_source(_VARIANTS, "v.p4", defines={"VERSION": version})
    info = build_p4info(p)
    assert _names(info.tables) == ["I.fwd"]
    keys = [m.name for m in info.tables[0].match_fields]
    assert keys == (["h.h.x", "h.h.z"] if version == "2" else ["h.h.x"])
    assert list(info.tables[0].direct_resource_ids) == ([info.direct_counters[0].preamble.id]
                                                         if version == "2" else [])
    gone = "fwd_v1" if version == "2" else "fwd_v2"
    assert [w.split("warning: ")[1] for w in p.warnings if "not used" in w] == \
        [f"Table {gone} is not used; removing"]
    match = " ".join(f"{k}:0x05" for k in keys)
    res = run_stf(p, parse_stf(f"add I.fwd {match} I.set(v:0x77)\npacket 0 05 05 00\nexpect 1 05 05 77$\n"))
    assert res.passed and len(res.checks) == 1


def test_two_applied_tables_under_one_name_are_refused() -> None:
    src = _VARIANTS.replace("if (VERSION == 2) { fwd_v2.apply(); } else { fwd_v1.apply(); }",
                            "fwd_v1.apply(); fwd_v2.apply();")
    with pytest.raises(P4Error, match="two tables with the control-plane name 'I.fwd'"):
        load_source(src, "v.p4", defines={"VERSION": "1"})
