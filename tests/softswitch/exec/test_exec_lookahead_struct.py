"""lookahead<T> of a struct of bit/int/bool/serializable-enum fields, as p4c's ExpandLookahead
lowers it for bmv2 (p4c's issue1768-bmv2 sample looks ahead a struct). Refused by name from
2026-12-05 until 2026-12-06 (it had crashed); now the struct is filled from the next bits."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, through_api, through_loop

ETH = bytes(12) + b"\x88\xb5"


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_lookahead_struct.p4")


@pytest.mark.parametrize("through", [through_api, through_loop])
def test_fields_cut_from_the_next_bits(rig, through):
    # first=0xAB | lo=0x3, s=0xF (-1) | flag=1, pad=0b000, k=0b1001 (B) | last=0x6, then 4 bits
    peek = bytes([0xAB, 0x3F, 0b1000_1001, 0x60])
    out = through(rig.pipeline, ETH + peek + b"\x00" * 8)
    # the lookahead consumed nothing: the peeked bytes follow the new header unchanged
    assert out == ETH + bytes([0xAB, 0x31, 0x01, 0x01, 0x06]) + peek + b"\x00" * 8


def test_signed_field_selects_and_values_differ(rig):
    peek = bytes([0x01, 0x25, 0b0000_0001, 0x90])  # lo=2, s=5, flag=0, k=1 (A), last=9
    out = through_api(rig.pipeline, ETH + peek)
    assert out[14:19] == bytes([0x01, 0x20, 0x00, 0x00, 0x09])


def test_too_short_for_the_struct_is_packet_too_short(rig):
    res = rig.pipeline.ingress(ETH + b"\xab\x3f\x89", 0, 0)  # 24 of Peek_t's 32 bits
    assert res.dropped
