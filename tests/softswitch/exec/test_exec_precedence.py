"""P4_16 operator precedence where it is not C's: ``++`` binds like ``+`` (tighter than shifts) and
``&``/``^``/``|`` bind tighter than comparisons (the spec's grammar; p4c's p4parser.ypp).  With C's
order ``a ++ b << 1`` ran as ``a ++ (b << 1)``: a different value, silently."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_precedence.p4")


def model(a: int, b: int, f: int) -> bytes:
    ab = a << 8 | b
    c = (ab << 1) & 0xFFFF
    d = (ab + 1) & 0xFFFF
    e = 0x0F00 | (ab & 0xFF)
    z = (f & 1) == 0
    y = (f ^ 3) != (f | 1)
    x = (f & 0xF0) < 0x10
    g = int(z) << 7 | int(y) << 6 | int(x) << 5
    k = ((a + b) & 0xFF) >> 1
    return bytes([a, b]) + c.to_bytes(2, "big") + d.to_bytes(2, "big") + e.to_bytes(2, "big") + bytes([f, g, k])


@pytest.mark.parametrize("a,b,f", [(0x81, 0xFF, 0x02), (0x00, 0x7F, 0x01), (0xFF, 0xFF, 0x13), (0x12, 0x80, 0xF0)])
def test_precedence_is_p4s(rig, a, b, f):
    data = bytes([a, b]) + bytes(6) + bytes([f, 0, 0]) + b"\xee"
    res = rig.pipeline.ingress(data, 1, 0)
    out = rig.pipeline.egress(res.to_tm[0], 0).frames[0].data
    assert out == model(a, b, f) + b"\xee"
