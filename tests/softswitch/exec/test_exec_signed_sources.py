"""Signed values (int<W>, and a serializable enum over one) wherever they come from, found by a
differential fuzzer against a reference evaluator written from the P4_16 spec (2026-12-05); each
case computed a wrong value before, silently, except the last two, which did not load:
- nested signed arithmetic: ``(b + 1) * 2`` with b = 3 gave -124 (the wrap-around's code lacked its
  outer parentheses, so ``- 0x80 * 2`` bound first);
- a direct action call with a negative argument: the parameter was re-signed as if it held a
  table's unsigned bits (-1 became -257);
- a signed enum's value held unsigned in a header field, a metadata field copied from one, an action
  parameter a table supplies, and a register read (0xfd compared unequal to ``S8.X = -3``);
- a negative constant default argument of an int<5> parameter: the P4Info carried 0xf0 (a whole
  byte's pattern) and the switch refused its own program, OUT_OF_RANGE;
- a signed constant shift amount (``b << 8s1``): refused, while p4c takes a non-negative one as
  unsigned."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error


@pytest.fixture(scope="module")
def rig():
    r = Rig(DATA / "exec_signed_sources.p4")
    r.entry("Ig.tr", {"h.i.k": ("exact", 1)}, r.action("Ig.ar", x=0xFD))  # S8.X's bits
    return r


def _fields(out: bytes) -> dict:
    o = out[3:]
    s8 = lambda v: v - 256 if v >= 128 else v
    flags = o[2]
    d5 = o[3] >> 3
    return {"w": s8(o[0]), "sat": s8(o[1]), "e_rt": flags >> 7 & 1, "e_const": flags >> 6 & 1,
            "f_s": flags >> 5 & 1, "f_m": flags >> 4 & 1, "t_def": flags >> 3 & 1, "t_rt": flags >> 2 & 1,
            "r_s": flags >> 1 & 1, "d5": d5 - 32 if d5 >= 16 else d5, "shl": s8(o[4]), "shr": s8(o[5])}


@pytest.mark.parametrize("path", ["api", "loop"])
@pytest.mark.parametrize("b, s, k, want", [
    (3, 0xFD, 1, {"w": 8, "sat": -97, "e_rt": 0, "e_const": 1, "f_s": 1, "f_m": 1, "t_def": 1, "t_rt": 1,
                  "r_s": 1, "d5": -16, "shl": 6, "shr": 1}),
    (-1, 100, 0, {"w": 0, "sat": -101, "e_rt": 1, "e_const": 1, "f_s": 0, "f_m": 0, "t_def": 1, "t_rt": 0,
                  "r_s": 0, "d5": -16, "shl": -2, "shr": -1}),
    (-100, 0xFD, 0, {"w": 58, "sat": -128, "e_rt": 0, "e_const": 1, "f_s": 1, "f_m": 1, "t_def": 1,
                     "t_rt": 0, "r_s": 1, "d5": -16, "shl": 56, "shr": -50}),
])
def test_signed_values(rig, path, b, s, k, want):
    data = bytes([b & 0xFF, s, k])
    out = rig.output(data) if path == "api" else rig.loop_output(data)
    assert out[:3] == data
    assert _fields(out) == want, out.hex()


def test_negative_constant_shift_amount_is_refused():
    src = (DATA / "exec_signed_sources.p4").read_text().replace("h.i.b << 8s1", "h.i.b << -8s1")
    with pytest.raises(P4Error, match="negative shift amount"):
        load_source(src, "neg_shift.p4")


def test_run_time_signed_shift_amount_is_refused():
    src = (DATA / "exec_signed_sources.p4").read_text().replace("h.i.b << 8s1", "h.i.b << h.i.b")
    with pytest.raises(P4Error, match="shift amount must be unsigned"):
        load_source(src, "signed_shift.p4")
