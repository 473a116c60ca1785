"""``tuple<...>`` locals through the compiled pipeline: a list initialiser is typed by the
declared tuple type (P4_16 spec: a list expression takes its type from the context), so
``tuple<bit<4>, bit<4>> q = {1, 2}`` needs no widths; tuples are copied, assigned, compared and
used as data (p4c's issue2201 samples)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import P4Error, load_source

PROG = DATA / "exec_tuple_local.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, a: int) -> bytes:
    res, egs = rig.run(ETH + bytes([1, a, 0, 0, 0, 0, 0]))
    assert not res.dropped, res.drop_reason
    return egs[0].frames[0].data[14:]


@pytest.mark.parametrize("a", [9, 8])
def test_list_initialisers_take_the_tuple_element_widths(rig, a):
    out = run(rig, a)
    assert out[2] == 0x12  # identity hash of the 8 bits 0001 0010
    # 3 ++ true ++ 7s-1 = 00000011 1 1111111 (16 bits)
    assert int.from_bytes(out[4:6], "big") == 0b0000001111111111


@pytest.mark.parametrize("a,same", [(9, True), (8, False)])
def test_tuples_are_copied_and_compared(rig, a, same):
    out = run(rig, a)
    assert out[3] == (0xAA if same else 0xBB)
    assert out[6] == (0 if same else 1)  # u != {9, 2}


def test_a_list_of_the_wrong_length_is_an_error():
    src = PROG.read_text().replace("q = {1, 2};", "q = {1, 2, 3};", 1)
    with pytest.raises(P4Error, match=r"x\.p4:\d+:\d+: .*tuple<bit<4>, bit<4>> has 2 elements, the list 3"):
        load_source(src, "x.p4")


def test_an_element_too_wide_for_its_tuple_type_is_an_error():
    src = PROG.read_text().replace("q = {1, 2};", "q = {1, 8w2};", 1)
    with pytest.raises(P4Error, match=r"x\.p4:25:39: .*expected bit<4>, got bit<8>"):
        load_source(src, "x.p4")
