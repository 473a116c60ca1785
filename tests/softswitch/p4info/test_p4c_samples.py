"""P4Info details found by comparing softswitch with p4c's outputs for its v1model samples
(``softswitch p4info-diff``, docs/softswitch.md).  Expected values are written from p4c's
behaviour as its sample outputs show it, for programs written here."""
from __future__ import annotations

from softswitch.frontend import load_source
from softswitch.p4info import build_p4info

_HEAD = """
#include <core.p4>
#include <v1model.p4>
"""
_TAIL = """
control V(inout h_t h, inout m_t m) { apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
_PARSER = """
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { transition accept; }
}
"""

_PROFILES = _HEAD + """
struct h_t { }
struct m_t { bit<32> hash1; }
""" + _PARSER + """
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action drop() { mark_to_drop(s); }
    @name("ap") @max_group_size(200) @selector_size_semantics("sum_of_members") @max_member_weight(4000)
    action_profile(32w128) plain;
    @name("sel") @max_group_size(64) @selector_size_semantics("SEMANTICS") @max_member_weight(4000)
    action_selector(HashAlgorithm.identity, 32w1024, 32w10) sel;
    @name("bare") action_selector(HashAlgorithm.identity, 32w16, 32w10) bare;
    table t1 { key = { } actions = { drop; NoAction; } implementation = plain; }
    table t2 { key = { m.hash1 : selector; } actions = { drop; NoAction; } implementation = sel; }
    table t3 { key = { m.hash1 : exact; m.hash1 : selector; } actions = { drop; } implementation = bare; }
    apply { t1.apply(); t2.apply(); t3.apply(); }
}
""" + _TAIL


def _profiles(semantics: str) -> dict[str, object]:
    p = build_p4info(load_source(_PROFILES.replace("SEMANTICS", semantics), "ap.p4"))
    return {a.preamble.name: a for a in p.action_profiles}


def test_selector_annotations_apply_to_selectors_only() -> None:
    """p4c ignores (with a warning) @max_group_size, @selector_size_semantics and
    @max_member_weight on a plain action_profile: no group size and no size semantics there."""
    ap = _profiles("sum_of_weights")
    plain = ap["I.ap"]
    assert not plain.with_selector and plain.size == 128
    assert plain.max_group_size == 0
    assert plain.WhichOneof("selector_size_semantics") is None
    bare = ap["I.bare"]
    assert bare.with_selector and bare.max_group_size == 0
    assert bare.WhichOneof("selector_size_semantics") is None  # unset unless annotated


def test_selector_size_semantics_sum_of_weights() -> None:
    sel = _profiles("sum_of_weights")["I.sel"]
    assert sel.with_selector and sel.size == 1024 and sel.max_group_size == 64
    assert sel.WhichOneof("selector_size_semantics") == "sum_of_weights"
    assert not sel.HasField("sum_of_members")


def test_selector_size_semantics_sum_of_members_with_max_member_weight() -> None:
    sel = _profiles("sum_of_members")["I.sel"]
    assert sel.WhichOneof("selector_size_semantics") == "sum_of_members"
    assert sel.sum_of_members.max_member_weight == 4000
    assert sel.max_group_size == 64


def test_selector_size_semantics_unknown_value_is_an_error() -> None:
    import pytest

    from softswitch.frontend.errors import P4InfoError
    with pytest.raises(P4InfoError) as ei:
        _profiles("sum_of_bananas")
    assert "ap.p4:" in str(ei.value) and "selector_size_semantics" in str(ei.value)


_SERENUM = _HEAD + """
enum bit<8> Kind { A = 1, B = 0xff }
enum bit<16> Port { P0 = 10, P1 = 0xab00 }
enum bit<4> Unused { U = 3 }
header e_t { Kind k; Port p; }
struct h_t { e_t e; }
struct m_t { }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { pk.extract(h.e); transition accept; }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a() { }
    table t { key = { h.e.k : exact; h.e.p : ternary; } actions = { a; } default_action = a(); }
    apply { t.apply(); }
}
""" + _TAIL


def test_serializable_enum_match_keys_are_in_type_info() -> None:
    """p4c describes a match field's user-defined type in type_info: a table keyed on
    serializable-enum fields lists both enums there (members and big-endian values), and an enum
    used nowhere in P4Info stays out."""
    p = build_p4info(load_source(_SERENUM, "se.p4"))
    enums = p.type_info.serializable_enums
    assert sorted(enums) == ["Kind", "Port"]
    assert enums["Kind"].underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in enums["Kind"].members] == [("A", b"\x01"), ("B", b"\xff")]
    assert [(m.name, m.value) for m in enums["Port"].members] == [("P0", b"\x00\x0a"), ("P1", b"\xab\x00")]
    mf = p.tables[0].match_fields
    assert [(f.name, f.bitwidth) for f in mf] == [("h.e.k", 8), ("h.e.p", 16)]
    assert not mf[0].HasField("type_name")


_DOCS = _HEAD + """
enum bit<8> Kind { A = 1, B = 2 }
struct h_t { }
struct m_t { bit<8> x; }
""" + _PARSER + """
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a(@brief("the port") @description("egress port, 9 bits") bit<9> port, Kind k) { }
    table t {
        key = { m.x : exact @brief("match on x") @format(HEX); }
        actions = { a; }
    }
    apply { t.apply(); }
}
""" + _TAIL


def test_match_field_and_param_docs_and_serenum_params() -> None:
    """p4c writes @brief/@description of match fields and action parameters to their ``doc``
    (not to annotations), and lists a serializable-enum parameter's type in type_info."""
    p = build_p4info(load_source(_DOCS, "doc.p4"))
    mf = p.tables[0].match_fields[0]
    assert mf.doc.brief == "match on x" and not mf.doc.description
    assert list(mf.annotations) == ["@format(HEX)"]
    act = next(a for a in p.actions if a.preamble.name == "I.a")
    port, k = act.params
    assert (port.doc.brief, port.doc.description) == ("the port", "egress port, 9 bits")
    assert list(port.annotations) == []
    assert (k.name, k.bitwidth) == ("k", 8)
    assert list(p.type_info.serializable_enums) == ["Kind"]


_NEWTYPES = _HEAD + """
typedef bit<16> Raw_t;
type Raw_t Plain_t;
type Plain_t Nested_t;
@p4runtime_translation("example.org/Port_t", 32) type bit<9> Port_t;
@p4runtime_translation("example.org/Name_t", string) type bit<8> Name_t;
header e_t { Plain_t a; Nested_t b; Port_t p; Name_t n; bit<7> pad; }
struct h_t { e_t e; }
struct m_t { }
struct d_t { Plain_t a; }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t s) {
    state start { pk.extract(h.e); transition accept; }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    register<Plain_t>(4) r;
    action set(Plain_t v, Port_t port) { h.e.a = v; }
    table t { key = { h.e.a : exact; h.e.b : ternary; h.e.p : exact; h.e.n : exact; } actions = { set; } }
    apply { t.apply(); r.write(0, h.e.a); digest<d_t>(1, { h.e.a }); }
}
""" + _TAIL


def test_newtypes_are_named_and_described() -> None:
    """``type`` declarations: p4c names them in match fields and params (type_name) and describes
    them in type_info.new_types (the bit<W> under a chain of newtypes, or the translation); a
    translated type has the translated width (none for a string); registers and digest structs
    refer to them with new_type."""
    p = build_p4info(load_source(_NEWTYPES, "nt.p4"))
    mf = {f.name: f for f in p.tables[0].match_fields}
    assert [(n, f.bitwidth, f.type_name.name) for n, f in mf.items()] == [
        ("h.e.a", 16, "Plain_t"), ("h.e.b", 16, "Nested_t"), ("h.e.p", 32, "Port_t"), ("h.e.n", 0, "Name_t")]
    nts = p.type_info.new_types
    assert sorted(nts) == ["Name_t", "Nested_t", "Plain_t", "Port_t"]
    assert nts["Plain_t"].original_type.bitstring.bit.bitwidth == 16
    assert nts["Nested_t"].original_type.bitstring.bit.bitwidth == 16
    assert (nts["Port_t"].translated_type.uri, nts["Port_t"].translated_type.sdn_bitwidth) == ("example.org/Port_t", 32)
    assert nts["Name_t"].translated_type.HasField("sdn_string")
    act = next(a for a in p.actions if a.preamble.name == "I.set")
    assert [(x.name, x.bitwidth, x.type_name.name) for x in act.params] == [("v", 16, "Plain_t"), ("port", 32, "Port_t")]
    assert p.registers[0].type_spec.new_type.name == "Plain_t"
    member = p.type_info.structs["d_t"].members[0]
    assert (member.name, member.type_spec.new_type.name) == ("a", "Plain_t")


def test_bad_translation_annotation_is_an_error() -> None:
    import pytest

    from softswitch.frontend.errors import P4Error
    src = _NEWTYPES.replace('("example.org/Port_t", 32)', '("example.org/Port_t", bool)')
    with pytest.raises(P4Error) as ei:
        load_source(src, "nt.p4")
    assert "nt.p4:" in str(ei.value) and "p4runtime_translation" in str(ei.value)


def test_runtime_refuses_translated_types() -> None:
    """softswitch does not translate controller values, so a pipeline with a translated type is
    refused by name instead of matching 32-bit controller values against a 9-bit field."""
    import pytest

    from softswitch.runtime.errors import P4InfoError
    from softswitch.runtime.state import SwitchState
    with pytest.raises(P4InfoError, match="p4runtime_translation.*unsupported"):
        SwitchState(build_p4info(load_source(_NEWTYPES, "nt.p4")))
    plain = _NEWTYPES.replace('@p4runtime_translation("example.org/Port_t", 32) ', "").replace(
        '@p4runtime_translation("example.org/Name_t", string) ', "")
    SwitchState(build_p4info(load_source(plain, "nt.p4")))  # untranslated newtypes run


_ORDER = _HEAD + """
struct h_t { }
struct m_t { bit<8> x; }
""" + _PARSER + """
action alpha() { }
action my_drop() { }
action zeta() { }
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action local() { }
    table t { key = { m.x : exact; } actions = { my_drop; NoAction; local; } }
    apply { t.apply(); if (m.x == 1) { zeta(); } else { alpha(); } }
}
""" + _TAIL


def test_top_level_actions_in_order_of_first_use() -> None:
    """p4c copies the top-level actions a control uses into it in the order of their first use
    (the tables' action lists in source order, then the apply block's direct calls), ahead of
    the control's own actions; not in declaration order (NoAction, from core.p4, is declared
    first of all)."""
    p = build_p4info(load_source(_ORDER, "o.p4"))
    assert [a.preamble.name for a in p.actions] == ["my_drop", "NoAction", "zeta", "alpha", "I.local"]


_PKG = _HEAD + """
struct h_t { }
struct m_t { bit<8> x; }
struct vs_t { @match(ternary) @format(HEX) @brief("first") bit<8> f; bit<8> g; }
parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) {
    value_set<vs_t>(4) pvs;
    state start { transition select(m.x, m.x) { pvs: accept; default: accept; } }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a() { }
    table t { key = { m.x : exact; } actions = { a; } }
    apply { t.apply(); }
}
control V(inout h_t h, inout m_t m) { apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { } }
@pkginfo(name="demo.p4", version="1.2", organization="Org", contact="ops@example.org", url="https://example.org",
         colour="blue")
@brief("a demo") @description("longer text") @custom(7)
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_pkg_info_from_the_main_package() -> None:
    """p4c fills pkg_info from @pkginfo(key="value", ...) on the package instance (unknown keys
    ignored), copies its other annotations and puts @brief/@description in doc."""
    pkg = build_p4info(load_source(_PKG, "pkg.p4")).pkg_info
    assert (pkg.arch, pkg.name, pkg.version, pkg.organization, pkg.contact, pkg.url) == (
        "v1model", "demo.p4", "1.2", "Org", "ops@example.org", "https://example.org")
    assert list(pkg.annotations) == ["@custom(7)"]
    assert (pkg.doc.brief, pkg.doc.description) == ("a demo", "longer text")


def test_pkg_info_value_must_be_a_string() -> None:
    import pytest

    from softswitch.frontend.errors import P4InfoError
    with pytest.raises(P4InfoError, match="'version' is not a string"):
        build_p4info(load_source(_PKG.replace('version="1.2"', "version=12"), "pkg.p4"))


def test_value_set_member_annotations_and_doc() -> None:
    """A struct value set's match fields carry their member's annotations (not @match) and doc."""
    p = build_p4info(load_source(_PKG, "pkg.p4"))
    f, g = p.value_sets[0].match
    assert (f.name, list(f.annotations), f.doc.brief, f.match_type) == ("f", ["@format(HEX)"], "first", f.TERNARY)
    assert (g.name, list(g.annotations), g.HasField("doc")) == ("g", [], False)




_KEYS = _HEAD + """
header e_t { bit<8> a; }
header_union u_t { e_t e; }
struct h_t { e_t e; u_t u; e_t[2] st; }
struct m_t { bit<16> x; bit<8> y; @name("why") bit<8> z; }
""" + _PARSER + """
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a() { }
    table t {
        key = { m.x & 0x0F0F : exact; m.x & 16w0x00_ff : exact; m.y & 0b0011 : ternary; m.x & 0d255 : exact;
                m.y[7:4] : exact; m.z : exact; h.e.isValid() : exact; h.u.e.isValid() : exact;
                h.u.isValid() : exact; h.st[1].a : exact; KEY }
        actions = { a; }
    }
    apply { t.apply(); }
}
""" + _TAIL


def test_key_names_as_p4c_makes_them() -> None:
    """An unnamed key is named as p4c's TableKeyNames does: literals keep their base and lose
    width, '_' and leading zeros (p4c's match-on-exprs2-bmv2 output has
    'hdr.ethernet.dstAddr & 0x10101010101'); a field's own @name replaces its name; isValid()
    becomes '$valid$' (p4c's union-valid-bmv2 and issue561 outputs)."""
    p = build_p4info(load_source(_KEYS.replace("KEY", ""), "k.p4"))
    assert [f.name for f in p.tables[0].match_fields] == [
        "m.x & 0xf0f", "m.x & 0xff", "m.y & 0b11", "m.x & 255", "m.y[7:4]", "m.why", "h.e.$valid$",
        "h.u.e.$valid$", "h.u.$valid$", "h.st[1].a"]


def test_complex_key_without_name_is_an_error() -> None:
    """p4c names only the forms above; any other key expression needs a @name."""
    import pytest

    from softswitch.frontend.errors import P4Error
    for expr in ("m.x + 1", "m.y | 10", "(bit<8>)m.x", "m.x & m.x + 1"):
        with pytest.raises(P4Error, match="complex key expression .* requires a @name"):
            load_source(_KEYS.replace("KEY", f"{expr} : exact;"), "k.p4")
    named = build_p4info(load_source(_KEYS.replace("KEY", '(bit<8>)m.x : exact @name("low");'), "k.p4"))
    assert named.tables[0].match_fields[-1].name == "low"


_NESTED_KEYS = _HEAD + """
header e_t { @name("A") bit<8> a; }
header_union u_t { @name("EE") e_t e; }
struct in_t { @name("deep") bit<8> d; bit<8> plain; }
struct h_t { @name("E") e_t e; u_t u; @name("S") e_t[2] st; }
struct m_t { @name("IN") in_t i; bit<8> x; }
""" + _PARSER + """
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    action a() { }
    table t {
        key = { m.i.d : exact; m.i.plain & 3 : ternary; h.st[1].a : exact; h.e.isValid() : exact;
                h.u.e.a : exact; h.u.e.isValid() : exact; }
        actions = { a; }
    }
    apply { t.apply(); }
}
""" + _TAIL


def test_key_names_take_field_names_at_every_level_and_check_the_key_once(monkeypatch) -> None:
    """A field's @name applies at every member level of an unnamed key (the base's type comes
    from the key's one type check: each subexpression of a key is checked once, not again per
    member to name it)."""
    from collections import Counter

    from softswitch.frontend.check import Checker

    calls: Counter = Counter()
    trees: list = []
    real = Checker.expr

    def counted(self, t, ctx, expected):
        if getattr(t, "data", None) == "member":
            calls[id(t)] += 1
            trees.append(t)  # keeps the id unique
        return real(self, t, ctx, expected)

    monkeypatch.setattr(Checker, "expr", counted)
    p = build_p4info(load_source(_NESTED_KEYS, "k.p4"))
    assert [f.name for f in p.tables[0].match_fields] == [
        "m.IN.deep", "m.IN.plain & 3", "h.S[1].A", "h.E.$valid$", "h.u.EE.A", "h.u.EE.$valid$"]
    assert calls and max(calls.values()) == 1, sorted(calls.values())


_UNUSED_DIRECT = _HEAD + """
struct h_t { }
struct m_t { bit<8> x; bit<8> colour; }
""" + _PARSER + """
control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    direct_counter(CounterType.packets) c;
    direct_counter(CounterType.packets) c1;
    direct_meter<bit<8>>(MeterType.packets) dm;
    action a(bit<9> p) { s.egress_spec = p; }
    table t { key = { m.x : exact; } actions = { a; } counters = c; }
    apply { t.apply(); }
}
""" + _TAIL


def test_direct_resources_no_table_uses_are_left_out() -> None:
    """p4c lists a direct counter or meter only through the table that uses it (its
    unused-counter-bmv2 sample has no entry for the unused 'c1'); softswitch wrote one with
    direct_table_id 0, which its own runtime then refused ("table 0 unknown")."""
    from softswitch.exec import build_pipeline
    from softswitch.runtime.state import SwitchState

    program = load_source(_UNUSED_DIRECT, "uc.p4")
    p4info = build_p4info(program)
    assert [d.preamble.name for d in p4info.direct_counters] == ["I.c"]
    assert not p4info.direct_meters
    (t,) = p4info.tables
    assert list(t.direct_resource_ids) == [p4info.direct_counters[0].preamble.id]
    assert p4info.direct_counters[0].direct_table_id == t.preamble.id
    state = SwitchState(p4info)
    build_pipeline(program, state, None)  # the switch loads it
