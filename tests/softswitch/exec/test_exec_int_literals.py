"""Arbitrary-precision integer expressions are folded exactly and cast once, where the value goes:
`1500 / 8` is 187 in a bit<8> field, not 1500 truncated to 8 bits and then divided (which softswitch
did until 2026-12-05: a silent misrun of any program that divides, shifts right or takes the
remainder of a named `int` constant)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend.errors import P4Error

PROG = DATA / "exec_int_literals.p4"


def run(rig: Rig, a: int) -> bytes:
    res = rig.pipeline.ingress(bytes([a]) + bytes(9), 1, 0)
    assert not res.dropped, res.drop_reason
    return rig.pipeline.egress(res.to_tm[0], 0).frames[0].data


def test_folded_exactly_then_cast():
    out = run(Rig(PROG), 0)
    b, c, d, e, f, g, h, i, j = out[1:10]
    assert (b, c, d, e, f, h, i) == (187, 182, 4, 0xFF, 0, 100, 100)
    assert g == 128  # the table missed: default_action set(1024 >> 3)
    assert j == 0  # the select case is 1024 >> 3 = 128, not 0


def test_select_and_const_entries_use_the_exact_values():
    out = run(Rig(PROG), 128)
    assert out[9] == 0xAA  # select(1024 >> 3) matched
    assert out[6] == 6  # const entry 512 >> 2 hit: set(300 % 7)


@pytest.mark.parametrize("expr", ["-7 / 2", "7 % -2"])
def test_division_of_negative_int_is_refused(tmp_path, expr):
    src = PROG.read_text().replace("h.h.h = 2 * 200 / 4;", f"h.h.h = {expr};")
    p = tmp_path / "neg.p4"
    p.write_text(src)
    with pytest.raises(P4Error, match="not defined on negative arbitrary-precision integers"):
        Rig(p)
