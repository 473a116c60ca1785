"""Constructs of SONiC DASH's pipeline through the compiled pipeline and in P4Info: structured
annotations ``@Name[...]``, parameters with default values left out of a call, direct
application of two control types, serializable-enum keys and parameters.  The expected P4Info
follows p4c's output for the dash-pipeline sample (``structured_annotations`` with ``kv_pair_list`` /
``expression_list``, integers as ``int64_value``; tables of a directly applied control named
after its type; each serializable enum a key or parameter uses described in ``type_info``)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import P4Error, load_source

PROG = DATA / "exec_sai_style.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, op: int, a: int = 0) -> bytes:
    res, egs = rig.run(ETH + bytes([op, a, 0, 0]))
    assert not res.dropped, res.drop_reason
    return egs[0].frames[0].data[14:]


def _table(rig, name):
    return next(t for t in rig.p4info.tables if t.preamble.name == name)


def _action(rig, name):
    return next(a for a in rig.p4info.actions if a.preamble.name == name)


def _kv(sa) -> dict:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in sa.kv_pair_list.kv_pairs}


# ---------------------------------------------------------------- default parameter values

def test_named_call_leaves_out_two_defaults(rig):
    assert run(rig, 1)[3] == 0x10 | 4


@pytest.mark.parametrize("a", [0x21, 0x80])
def test_positional_call_leaves_out_a_trailing_default(rig, a):
    assert run(rig, 2, a)[3] == a | 4


def test_named_call_gives_a_later_parameter_and_leaves_out_an_earlier_one(rig):
    assert run(rig, 3)[3] == 0x10 | 1


@pytest.mark.parametrize("a", [7, 0xFE])
def test_function_parameter_default(rig, a):
    out = run(rig, 4, a)
    assert out[3] == (a + 3) & 0xFF and out[2] == (a + 1) & 0xFF


@pytest.mark.parametrize("call,msg", [
    ("or_mode();", "argument for 'r' missing|takes 3 arguments, 0 given"),
    ("or_mode(v = 1);", "argument for 'r' missing"),
])
def test_a_parameter_without_default_must_be_given(call, msg):
    src = PROG.read_text().replace("or_mode(r = h.op.r);", call, 1)
    with pytest.raises(P4Error, match=rf"x\.p4:\d+:\d+: .*({msg})"):
        load_source(src, "x.p4")


@pytest.mark.parametrize("old,new,msg", [
    ("action or_mode(inout bit<8> r,", "action or_mode(inout bit<8> r = 1,",
     "inout parameter 'r' cannot have a default value"),
    ("in bit<8> y = 3)", "in bit<8> y = x)", "'x' is not declared|compile-time known"),
])
def test_bad_default_values_are_errors(old, new, msg):
    src = PROG.read_text().replace(old, new, 1)
    with pytest.raises(P4Error, match=rf"x\.p4:\d+:\d+: .*({msg})"):
        load_source(src, "x.p4")


# ---------------------------------------------------------------- structured annotations

def test_table_with_structured_annotations_runs(rig):
    assert run(rig, 5, 1)[3] == 0xEE  # default action
    rig.entry("I.t_sa", {"h.op.a": ("exact", 1)}, rig.action("I.set_r", v=0x42))
    assert run(rig, 5, 1)[3] == 0x42


def test_structured_annotations_in_p4info(rig):
    t = _table(rig, "I.t_sa")
    (sa,) = t.preamble.structured_annotations
    assert sa.name == "SaiTable" and sa.WhichOneof("body") == "kv_pair_list"
    assert [kv.key for kv in sa.kv_pair_list.kv_pairs] == ["name", "order", "shift", "isobject", "api"]
    assert [kv.value.WhichOneof("value") for kv in sa.kv_pair_list.kv_pairs] == \
        ["string_value", "int64_value", "int64_value", "bool_value", "string_value"]
    assert _kv(sa) == {"name": "sa_rule", "order": 1, "shift": -2, "isobject": True, "api": "dash_acl"}
    assert list(t.preamble.annotations) == []  # structured ones never appear as text
    (mf,) = t.match_fields
    assert [(s.name, _kv(s)) for s in mf.structured_annotations] == \
        [("SaiVal", {"name": "a", "type": "sai_uint8_t"})]
    ref = next(r for r in t.action_refs if r.id == _action(rig, "I.set_mode").preamble.id)
    assert [(s.name, [e.string_value for e in s.expression_list.expressions])
            for s in ref.structured_annotations] == [("Tags", ["ref"])]
    assert list(ref.annotations) == []


def test_structured_annotations_on_actions_params_and_counters(rig):
    a = _action(rig, "I.set_r")
    (tags,) = a.preamble.structured_annotations
    assert tags.name == "Tags" and tags.WhichOneof("body") == "expression_list"
    assert [e.WhichOneof("value") for e in tags.expression_list.expressions] == \
        ["string_value", "int64_value", "bool_value"]
    assert [e.string_value for e in tags.expression_list.expressions][:1] == ["x"]
    assert tags.expression_list.expressions[1].int64_value == 2
    assert tags.expression_list.expressions[2].bool_value is False
    (p,) = a.params
    assert [(s.name, _kv(s)) for s in p.structured_annotations] == \
        [("SaiVal", {"type": "sai_uint8_t", "default_value": "SAI_ZERO"})]
    c = next(c for c in rig.p4info.counters if c.preamble.name == "I.hits")
    assert [s.name for s in c.preamble.structured_annotations] == ["SaiCounter", "Empty"]
    assert c.preamble.structured_annotations[1].WhichOneof("body") is None  # p4c: a name only
    assert _kv(c.preamble.structured_annotations[0]) == {"name": "hits", "attr_type": "stats"}


@pytest.mark.parametrize("ann,msg", [
    ('@A[k="v", k="w"]', "structured annotation @A: duplicate key 'k'"),
    ('@A[k="v", "w"]', "structured annotation @A mixes key=value pairs and plain expressions"),
    ("@A[k=some_name]", r"unsupported: structured annotation @A: the value 'some_name'"),
    ("@A[k=1+2]", r"unsupported: structured annotation @A: the value '\+2'"),
    ('@A[1] @A[2]', "annotation @A is structured and appears more than once"),
    ('@A[1] @A(2)', "annotation @A is structured and appears more than once"),
])
def test_bad_structured_annotations_are_located_errors(ann, msg):
    src = PROG.read_text().replace("@SaiTable[name=\"sa_rule\"", ann + " @SaiTable[name=\"sa_rule\"", 1)
    with pytest.raises(P4Error, match=rf"x\.p4:6\d:\d+: .*{msg}"):
        load_source(src, "x.p4")


# ---------------------------------------------------------------- serializable enums

def test_serializable_enum_key_and_parameter(rig):
    assert run(rig, 6, 2)[3] == 0
    rig.entry("I.t_mode", {"m.mode": ("exact", 2)}, rig.action("I.set_r", v=0x77))
    assert run(rig, 6, 2)[3] == 0x77
    assert run(rig, 6, 4)[3] == 0


def test_serializable_enums_used_by_keys_and_parameters_are_in_type_info(rig):
    se = rig.p4info.type_info.serializable_enums
    assert list(se) == ["mode_t"]
    assert se["mode_t"].underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in se["mode_t"].members] == [("A", b"\x01"), ("B", b"\x02"), ("C", b"\x04")]
    (mf,) = _table(rig, "I.t_mode").match_fields
    assert mf.bitwidth == 8 and mf.type_name.name == ""


# ---------------------------------------------------------------- direct application

def test_directly_applied_controls_are_named_after_their_types(rig):
    names = [t.preamble.name for t in rig.p4info.tables]
    assert "I.stage_a.ta" in names and "I.stage_b.tb" in names
    assert [a.preamble.name for a in rig.p4info.actions if "stage" in a.preamble.name] == \
        ["I.stage_a.set_a", "I.stage_b.set_b"]


def test_directly_applied_controls_come_after_the_controls_own_in_p4info(rig):
    """p4c's front end inlines a directly applied control where InstantiateDirectCalls put its
    instance: after the control's own locals (it appends it), so its tables and actions come
    last (p4c's actions-almost-duplicate-names1 sample: ingressImpl.t1 before the directly
    applied ingressImpl.c1.t2).  Older p4c releases put the instance first (the P4Info ONOS
    ships for fabric.p4 lists process_set_source_sink's table and direct counter first)."""
    tables = [t.preamble.name for t in rig.p4info.tables if t.preamble.name.startswith("I.")]
    assert tables == ["I.t_sa", "I.t_mode", "I.t_order", "I.stage_a.ta", "I.stage_b.tb"]
    acts = [a.preamble.name for a in rig.p4info.actions if a.preamble.name.startswith("I.")]
    assert acts == ["I.set_r", "I.set_mode", "I.stage_a.set_a", "I.stage_b.set_b"]


def test_directly_applied_controls_run_their_own_tables(rig):
    rig.entry("I.stage_a.ta", {"h.op.a": ("exact", 3)}, rig.action("I.stage_a.set_a", v=0x5A))
    rig.entry("I.stage_b.tb", {"h.op.a": ("exact", 3)}, rig.action("I.stage_b.set_b", v=0xA5))
    out = run(rig, 7, 3)
    assert out[2] == 0x5A and out[3] == 0xA5


# ---------------------------------------------------------------- order of top-level actions

def test_top_level_actions_are_listed_in_the_order_of_use(rig):
    """p4c lists a control's top-level actions by its tables (table order, then actions-list
    order), then those its apply block calls directly, in the order of their first call --
    not in declaration order (its P4Info for the DASH sample: tunnel_decap, route_vnet, ...,
    route_service_tunnel, drop, ...; drop is declared before route_vnet)."""
    names = [a.preamble.name for a in rig.p4info.actions if "." not in a.preamble.name]
    assert names == ["NoAction", "g_nop1", "g_nop2", "or_mode", "g_z", "g_y"]
