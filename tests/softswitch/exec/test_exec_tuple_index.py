"""``t[i]`` of a tuple with a compile-time constant index (P4_16 spec, operations on tuples: the
element's type, an out-of-range index is a compile-time error) through the compiled pipeline.
Until 2026-12-03 every such index was "cannot index a value of type tuple<...>"."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import P4Error, load_source

PROG = DATA / "exec_tuple_index.p4"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


@pytest.mark.parametrize("a,b", [(0x10, 0x0F), (0xFF, 0x80)])
def test_tuple_elements_read_and_write(rig, a, b):
    _res, egs = rig.run(bytes(12) + b"\x90\x00" + bytes([a, b]) + bytes(7))
    out = egs[0].frames[0].data[14:]
    assert out[2] == (a + 1) & 0xFF
    assert int.from_bytes(out[3:5], "big") == 0x1234
    assert out[5] == 7
    assert out[6] == b ^ 0x35  # t[0] = b, t[1] = 0x1235, low byte 0x35
    assert out[7] == (a + 3 + 1) & 0xFF


def _load(repl: tuple[str, str]):
    return load_source(PROG.read_text().replace(*repl, 1), "x.p4")


def test_index_out_of_range_is_an_error():
    with pytest.raises(P4Error, match=r"x\.p4:23:\d+: .*index 3 out of range for tuple<bit<8>, bit<16>, bool>"):
        _load(("if (t[2])", "if (t[3])"))


def test_index_must_be_a_constant():
    with pytest.raises(P4Error, match=r"x\.p4:21:\d+: .*must be a compile-time constant"):
        _load(("h.op.r0 = t[0] + 1;", "h.op.r0 = t[h.op.a] + 1;"))


def test_element_type_is_checked():
    with pytest.raises(P4Error, match=r"x\.p4:24:\d+: "):
        _load(("t[0] = h.op.b;", "t[0] = h.op.r1;"))  # bit<16> into a bit<8> element
