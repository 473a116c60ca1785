"""Language coverage of issue 16's second round (p4c's v1model STF corpus): each feature runs
as one of this project's small programs with its STF script, on the API's path and on the
packet loop's path, and the forms still outside the subset are rejected by name."""
from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.frontend import load_program
from softswitch.frontend.errors import P4Error
from softswitch.stf import parse_stf, run_stf

DATA = Path(__file__).parent / "data"

# program -> how many expected frames its script checks
PROGRAMS = {
    "arg_lvalues": 1,
    "control_ctor": 2,
    "deprecated_v1": 4,
    "effect_calls": 3,
    "error_key": 3,
    "init_calls": 2,
    "union_stack_ops": 4,
    "varbit_local": 3,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_passes_on_both_paths(name):
    prog = load_program(str(DATA / f"{name}.p4"), {}, [])
    cmds = parse_stf((DATA / f"{name}.stf").read_text())
    api, loop = run_stf(prog, cmds), run_stf(prog, cmds, loop_path=True)
    assert api.passed, [c for c in api.checks if not c.ok]
    assert loop.passed, [c for c in loop.checks if not c.ok]
    assert len(api.checks) == PROGRAMS[name] and loop.outputs == api.outputs


def _load_variant(tmp_path, name: str, old: str, new: str):
    src = (DATA / f"{name}.p4").read_text()
    assert old in src
    (tmp_path / "x.p4").write_text(src.replace(old, new, 1))
    return load_program(str(tmp_path / "x.p4"), {}, [])


def test_deprecated_resubmit_of_a_header_field_is_rejected_by_name(tmp_path):
    """User-metadata fields are preserved (tests/softswitch/exec/test_exec_deprecated_lists.py);
    a header field is not."""
    with pytest.raises(P4Error, match=r"x\.p4:\d+:\d+: .*unsupported: resubmit .*field list element 'h'"):
        _load_variant(tmp_path, "deprecated_v1", "{ resubmit({}); }", "{ resubmit({ h.h.n }); }")


def test_error_key_is_a_32_bit_field_in_p4info():
    """bmv2's width for error fields; p4c's own P4Info leaves it unset (docs/p4_subset.md)."""
    from softswitch.p4info import build_p4info
    info = build_p4info(load_program(str(DATA / "error_key.p4"), {}, []))
    t = next(t for t in info.tables if t.preamble.name == "I.by_meta")
    assert [(f.name, f.bitwidth) for f in t.match_fields] == [("m.e", 32)]


def test_varbit_local_with_an_initialiser_is_rejected_by_name(tmp_path):
    with pytest.raises(P4Error, match=r"x\.p4:\d+:\d+: .*unsupported: an initialiser on a varbit variable"):
        _load_variant(tmp_path, "varbit_local", "varbit<32> u;", "varbit<32> u = h.a.v;")


def test_a_shared_control_instance_is_one_instance_in_p4info():
    from softswitch.p4info import build_p4info
    info = build_p4info(load_program(str(DATA / "control_ctor.p4"), {}, []))
    assert [r.preamble.name for r in info.registers] == ["I.Wrap.k.r"]


def test_control_constructor_parameter_of_a_value_type_runs_the_same(tmp_path):
    """A value constructor parameter (a constant inside the control) next to a control-typed
    one: 0x10 passed in instead of written gives the same run."""
    src = (DATA / "control_ctor.p4").read_text()
    for old, new in [("(Step s)", "(Step s, bit<8> k)"), ("x = x + 0x10;", "x = x + k;"),
                     ("Twice(k) t1;", "Twice(k, 8w0x10) t1;"), ("Twice(k) t2;", "Twice(s = k, k = 0x10) t2;")]:
        assert old in src
        src = src.replace(old, new, 1)
    (tmp_path / "x.p4").write_text(src)
    prog = load_program(str(tmp_path / "x.p4"), {}, [])
    res = run_stf(prog, parse_stf((DATA / "control_ctor.stf").read_text()))
    assert res.passed and len(res.checks) == PROGRAMS["control_ctor"], [c for c in res.checks if not c.ok]


def test_control_constructor_value_argument_must_be_constant(tmp_path):
    src = (DATA / "control_ctor.p4").read_text().replace("(Step s)", "(Step s, bit<8> k)", 1) \
        .replace("Twice(k) t1;", "Twice(k, a) t1;", 1)  # Wrap's apply parameter 'a'
    (tmp_path / "x.p4").write_text(src)
    with pytest.raises(P4Error, match=r"x\.p4:\d+:\d+: .*constructor argument for 'k' of control 'Twice' is "
                                      r"not a compile-time constant"):
        load_program(str(tmp_path / "x.p4"), {}, [])


def test_control_constructor_argument_must_be_an_instance(tmp_path):
    with pytest.raises(P4Error, match=r"unsupported: a control constructor argument that is not a control"):
        _load_variant(tmp_path, "control_ctor", "Twice(k) t2;", "Twice(Count()) t2;")


def test_direct_application_of_a_parser_type_in_a_control_is_an_error(tmp_path):
    """Direct application of a parser type from a parser state is supported (exec tests); from
    a control it is an error, as applying a parser there is."""
    src = (DATA / "control_ctor.p4").read_text().replace(
        "parser P(", "parser Q(packet_in pk, out H h) { state start { transition accept; } }\nparser P(", 1)
    (tmp_path / "x.p4").write_text(src)
    load_program(str(tmp_path / "x.p4"), {}, [])
    src = src.replace("apply {", "apply { Q.apply(pk, h);", 1)
    (tmp_path / "x.p4").write_text(src)
    with pytest.raises(P4Error, match=r"x\.p4:\d+:\d+: .*parser 'Q' applied in a control"):
        load_program(str(tmp_path / "x.p4"), {}, [])


def test_a_used_header_not_a_whole_number_of_bytes_is_rejected_by_name(tmp_path):
    """p4c's bmv2 back end rejects such a header ('Found header with fields totaling 41 bits');
    older p4c versions padded it, which p4c's table-entries-* samples of that time expect."""
    with pytest.raises(P4Error, match=r"x\.p4:6:1: .*unsupported: header h_t with fields totaling 17 bits"):
        _load_variant(tmp_path, "control_ctor", "header h_t { bit<8> a; bit<8> c; }",
                      "header h_t { bit<8> a; bit<8> c; bit<1> f; }")


def test_an_odd_header_in_a_local_is_rejected_and_an_unused_one_is_not(tmp_path):
    with pytest.raises(P4Error, match=r"unsupported: header odd_t with fields totaling 3 bits"):
        _load_variant(tmp_path, "control_ctor", "control Dbl(inout bit<8> x) { apply {",
                      "header odd_t { bit<3> t; }\ncontrol Dbl(inout bit<8> x) { apply { odd_t o; o.setValid();")
    prog = _load_variant(tmp_path, "control_ctor", "control Dbl(", "header odd_t { bit<3> t; }\ncontrol Dbl(")
    cmds = parse_stf((DATA / "control_ctor.stf").read_text())
    assert run_stf(prog, cmds).passed


def test_a_header_without_fields_emits_nothing(tmp_path):
    src = (DATA / "control_ctor.p4").read_text().replace(
        "struct H { h_t h; }", "header e_t { }\nstruct H { h_t h; e_t e; }", 1).replace(
        "sm.egress_spec = 1;", "sm.egress_spec = 1; h.e.setValid();", 1)
    (tmp_path / "x.p4").write_text(src)
    prog = load_program(str(tmp_path / "x.p4"), {}, [])
    cmds = parse_stf("packet 0 00 03\nexpect 1 02 0c$\n")
    assert run_stf(prog, cmds).passed


def test_add_key_named_after_a_slice():
    """``FIELD[7:0]:VALUE``: the key is split at the first ':' outside brackets."""
    from softswitch.stf.script import parse_stf
    cmd = parse_stf("add I.t hdr.eth.dst[7:0]:0x03 x:1 I.a()\n")[0]
    assert cmd.args["keys"] == [("hdr.eth.dst[7:0]", "0x03"), ("x", "1")]


def test_clone_session_to_a_multicast_group():
    """p4c's bmv2 STF runner passes ``mirroring_add_mc``, ``mirroring_get``, ``mirroring_delete`` and
    ``mc_node_update`` to simple_switch_CLI (backends/bmv2/bmv2stf.py); they were an STF error here
    until 2026-12-06.  Each replica of the group gets a clone with its node's rid, the session
    follows the group's changes, and a deleted session clones nothing."""
    prog = load_program(str(DATA / "clone_mcast.p4"), {}, [])
    cmds = parse_stf((DATA / "clone_mcast_mc.stf").read_text())
    api, loop = run_stf(prog, cmds), run_stf(prog, cmds, loop_path=True)
    assert api.passed, [c for c in api.checks if not c.ok]
    assert loop.passed and loop.outputs == api.outputs
    assert len(api.checks) == 6


def test_meter_rates_as_bmv2s_cli_takes_them():
    """``meter_set_rates`` / ``meter_array_set_rates`` (rates per microsecond, committed then peak, as
    p4c's bmv2 runner hands them to simple_switch_CLI) configure the meter: GREEN, YELLOW, RED back to
    back, an unconfigured cell GREEN; they were an STF error until 2026-12-06.  ``meter_get_rates`` is
    listed as not checked."""
    prog = load_program(str(DATA / "meters.p4"), {}, [])
    for stf in ("meters.stf", "meters_yellow.stf"):
        cmds = parse_stf((DATA / stf).read_text())
        api, loop = run_stf(prog, cmds), run_stf(prog, cmds, loop_path=True)
        assert api.passed, (stf, [c for c in api.checks if not c.ok])
        assert loop.passed and loop.outputs == api.outputs
    assert [c.args["rates"] for c in parse_stf("meter_array_set_rates I.m 0.5:10 1.25:0x20\n")] == \
        [[(0.5, 10), (1.25, 32)]]
    assert parse_stf("meter_get_rates m 0\n")[0].kind == "ignored"


@pytest.mark.parametrize("line,words", [
    ("meter_set_rates m 0 0.1:1\n", "two rates"),
    ("meter_set_rates m 0 0.1 0.2:1\n", "not '0.1'"),
    ("meter_array_set_rates m 0 0.1:1 0.2:1\n", "two rates"),
])
def test_malformed_meter_commands_are_stf_errors(line, words):
    from softswitch.stf import StfError

    with pytest.raises(StfError, match=words):
        parse_stf(line)


def test_meter_command_naming_no_meter_or_a_bad_index_is_an_stf_error():
    from softswitch.stf import StfError

    prog = load_program(str(DATA / "meters.p4"), {}, [])
    for line, words in (("meter_set_rates nosuch 0 0.1:1 0.2:1\n", "nosuch"),
                        ("meter_set_rates m 4 0.1:1 0.2:1\n", "index 4 out of range")):
        with pytest.raises(StfError, match=words):
            run_stf(prog, parse_stf(line))
