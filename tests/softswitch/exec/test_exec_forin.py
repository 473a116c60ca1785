"""for-in loops through the compiled pipeline, against a Python model of P4_16 1.2.5's rule:
``lo .. hi`` runs once for each value from lo to hi, both included (none when lo > hi), with the
bounds read once; a header stack gives every element."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.exec.stmtgen import MAX_LOOP_ITERATIONS

PROG = DATA / "exec_forin.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, op, lo=0, hi=0, extra=b""):
    res = rig.pipeline.ingress(ETH + bytes([op, lo, hi, 0xEE, 0xEE, 0xEE]) + extra, 0, 0)
    if res.dropped:
        return res
    out = rig.pipeline.egress(res.to_tm[0], 0).frames[0].data[14:]
    return out[3], int.from_bytes(out[4:6], "big"), out[6:]


def model(lo, hi, signed):
    vals = [v - 256 if signed and v > 127 else v for v in (lo, hi)]
    rng = range(vals[0], vals[1] + 1)
    return len(rng) & 0xFF, sum(rng) & 0xFFFF


@pytest.mark.parametrize("lo,hi", [(1, 5), (5, 5), (6, 5), (255, 0), (250, 255), (255, 255),
                                   (0, 255), (0, 0), (17, 200)])
def test_bit_range_matches_the_model(rig, lo, hi):
    n, s, _ = run(rig, 1, lo, hi)
    assert (n, s) == model(lo, hi, signed=False)


@pytest.mark.parametrize("lo,hi", [(0xFD, 2), (0x80, 0x7F), (0x7F, 0x80), (0x7A, 0x7F), (2, 0xFD),
                                   (0x80, 0x80)])
def test_int_range_compares_signed_and_ends_at_the_largest_value(rig, lo, hi):
    n, s, _ = run(rig, 2, lo, hi)
    assert (n, s) == model(lo, hi, signed=True)


def test_stack_loop_sees_every_element(rig):
    # e[0] extracted (0x07), e[1] invalid, e[2] made valid in the apply block (0x40)
    n, s, rest = run(rig, 3, extra=b"\x07")
    assert (n, s) == (2, 0x47)
    assert rest == b"\x07\x40"


def test_range_past_the_loop_bound_drops_the_packet(rig):
    res = run(rig, 4)
    assert res.dropped and str(MAX_LOOP_ITERATIONS) in res.drop_reason
