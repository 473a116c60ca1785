"""Parser forms p4c accepts, through the compiled pipeline: a state without a ``transition``
(P4_16: an implicit ``transition reject``) and ``Sub.apply(...)`` of a parser type."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error
from softswitch.runtime import SwitchState

PROG = DATA / "exec_parser_forms.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(pipeline, data: bytes) -> bytes:
    res = pipeline.ingress(data, 0, 0)
    assert not res.dropped, res.drop_reason
    return pipeline.egress(res.to_tm[0], 0).frames[0].data


def _pipeline(src: str):
    from softswitch.exec import build_pipeline
    from softswitch.p4info import build_p4info
    prog = load_source(src, "pf.p4")
    return build_pipeline(prog, SwitchState(build_p4info(prog)), None)


def test_state_without_transition_ends_parsing_as_transition_reject(rig):
    """The state's statements run (x is extracted), then parsing ends as an explicit
    'transition reject' ends it on bmv2: parser_error NoError, the packet goes on."""
    data = ETH + bytes([1, 0, 0, 0, 0x33, 0x44, 0x55])
    out = run(rig.pipeline, data)
    assert out == ETH + bytes([1, 0xE0, 0, 0, 0x33, 0x44, 0x55])
    explicit = PROG.read_text().replace("pkt.extract(h.x);\n    }", "pkt.extract(h.x);\n        transition reject;\n    }")
    assert explicit != PROG.read_text()
    assert run(_pipeline(explicit), data) == out


def test_state_without_transition_as_the_states_only_content():
    src = PROG.read_text().replace("pkt.extract(h.x);\n    }", "}")
    assert src != PROG.read_text()
    assert run(_pipeline(src), ETH + bytes([1, 0, 0, 0, 0x33])) == ETH + bytes([1, 0xE0, 0, 0, 0x33])


def test_direct_application_of_a_parser_type_twice(rig):
    """Each 'Inner.apply' is an instance of its own: x then y extracted, n = 1 + 5 + 7."""
    out = run(rig.pipeline, ETH + bytes([2, 0, 0, 0, 5, 7, 0x99]))
    assert out == ETH + bytes([2, 0xE0, 1, 13, 5, 7, 0x99])


def test_direct_application_of_a_parser_type_without_data_leaves_out_args(rig):
    """Too short for y: PacketTooShort in the second instance, whose out argument is not
    copied out (y stays invalid), as for a declared instance."""
    out = run(rig.pipeline, ETH + bytes([2, 0, 0, 0, 5]))
    assert out[:18] == ETH + bytes([2, 0xEE, 0, 6])


def test_direct_application_of_a_parser_with_constructor_parameters_is_rejected():
    src = PROG.read_text().replace("parser Inner(packet_in pkt, out x_t x, inout bit<8> n) {",
                                   "parser Inner(packet_in pkt, out x_t x, inout bit<8> n)(bit<8> k) {")
    with pytest.raises(P4Error) as ei:
        load_source(src, "pf.p4")
    assert str(ei.value).startswith("pf.p4:34:") and \
        "unsupported: direct application of parser type 'Inner', which has constructor parameters" in str(ei.value)


def test_a_control_type_applied_in_a_parser_state_is_an_error():
    src = PROG.read_text().replace("Inner.apply(pkt, h.y, m.n);", "VC.apply(h, m);")
    with pytest.raises(P4Error) as ei:
        load_source(src, "pf.p4")
    assert str(ei.value).startswith("pf.p4:35:") and "control 'VC' applied in a parser" in str(ei.value)
