"""Programs a mutation fuzzer of the front end found (2026-12-05): each got past the checker and
then crashed with a Python exception -- building the P4Info, the runtime state or the pipeline,
or on every packet (dropped as "internal error") -- or loaded with one meaning p4c refuses.
Each is now a diagnostic at the offending construct, or (the last) runs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from softswitch.frontend import load_program
from softswitch.frontend.errors import P4Error
from softswitch.p4info import build_p4info

FUZZ = Path(__file__).parent / "data" / "fuzz"


@pytest.mark.parametrize("name, why", [
    ("parser_meta_not_struct", "its metadata parameter 'm' is a bit<8>, not a struct"),
    ("parser_three_params", "does not match V1Switch's Parser(packet_in, out H, inout M, inout standard_metadata_t)"),
    ("parser_std_wrong_type", "parameter 4 's' has type m_t"),
    ("ingress_two_params", "does not match V1Switch's Ingress"),
    ("deparser_as_egress", "'D' does not match V1Switch's Egress"),
    ("deparser_header_param", "parameter 2 'h' has type h_t, the other blocks' H is hs_t"),
    ("deparser_return", "'return' in a deparser"),
    ("deparser_exit", "'exit' in a deparser"),
    ("function_returns_int", "function 'f' returns int"),
    ("tuple_of_packet_in", "a tuple cannot hold a packet_in"),
    ("subparser_no_start", "parser 'Sub' has no 'start' state"),
    ("zero_width_key", "a table key of width 0"),
    ("register_size_2_31", "register of size 2147483648"),
    ("action_profile_size_2_64", "action_profile of size 18446744073709551616"),
    ("counter_huge", "counter of size 4294967295"),
    ("max_group_size_2_32", "@max_group_size(4294967296) of 'I.sel' does not fit P4Info's 32-bit field"),
    # the second round
    ("hash_plain_enum", "hash writes its result into a bit<W>, not a P"),
    ("random_plain_enum", "random writes a bit<W>, not a P"),
    ("random_header", "random writes a bit<W>, not a h_t"),
    ("meter_result_header", "a meter writes its colour into a bit<W>, not a h_t"),
    ("hash_dst_header", "hash writes its result into a bit<W>, not a h_t"),
    ("hash_base_header", "hash's base is a bit<W>, not a h_t"),
    ("hash_max_header", "hash's max is a bit<W>, not a h_t"),
    ("select_plain_enum", "select on a P"),
    ("entry_priority_2_31", "entry priority 2147483648 does not fit P4Runtime's 32-bit priority"),
    # a table-matching differential fuzzer: these stopped the load with a runtime error, no position
    ("range_signed_across_zero", "a signed range across zero"),
    ("range_empty", "an empty range"),
])
def test_a_diagnostic_not_a_crash(name: str, why: str) -> None:
    path = FUZZ / f"{name}.p4"
    with pytest.raises(P4Error) as ei:
        build_p4info(load_program(str(path), {}, []))
    assert why in str(ei.value) and f"{name}.p4:" in str(ei.value), str(ei.value)


def test_an_uninitialised_tuple_local_runs() -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "exec"))
    from exec_rig import Rig
    rig = Rig(FUZZ / "uninit_tuple_local.p4")
    res, _ = rig.run(bytes(64), port=0)
    assert "internal error" not in (res.drop_reason or ""), res.drop_reason


def test_a_lookahead_of_a_struct_runs() -> None:
    """``lookahead<M>()`` of a struct of bit fields crashed on every packet; it was then refused
    by name, which also refused p4c's issue1768-bmv2 sample. It now fills the struct, as p4c's
    ExpandLookahead does (test_exec_lookahead_struct.py has the field-by-field checks)."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "exec"))
    from exec_rig import Rig
    rig = Rig(FUZZ / "lookahead_struct.p4")
    res, _ = rig.run(bytes([0x5A]) + bytes(63), port=0)
    assert not res.dropped, res.drop_reason


def test_a_failed_assume_in_compute_checksum_drops_the_packet_by_name() -> None:
    """An assert/assume failing in computeChecksum (or the deparser) drops the packet as a failed
    assertion, as in the other controls (it was an "internal error")."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "exec"))
    from exec_rig import Rig
    rig = Rig(FUZZ / "assume_in_compute_checksum.p4")
    res, eg = rig.run(bytes(64), port=0)
    assert not res.dropped and len(eg) == 1
    assert eg[0].dropped and eg[0].drop_reason.startswith("assertion failed"), eg[0].drop_reason
    out = rig.pipeline.egress_frame(rig.pipeline.ingress_item(bytes(64), 0, 0), 1)  # the loop's fast path
    assert out.dropped and out.drop_reason.startswith("assertion failed"), out


def test_a_parser_whose_start_state_loops_to_itself_runs() -> None:
    """``start`` on a loop of its own (its select goes back to start) was generated without the
    state loop: a Python SyntaxError when the pipeline was built."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "exec"))
    from exec_rig import Rig
    rig = Rig(FUZZ / "transition_to_start.p4")
    res, _ = rig.run(bytes(64), port=0)
    assert "internal error" not in (res.drop_reason or ""), res.drop_reason
