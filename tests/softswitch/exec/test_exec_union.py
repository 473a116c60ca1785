"""header_union through the compiled pipeline (issue 16: 14 of p4c's v1model STF programs)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_union.p4")


def run(rig, data: bytes) -> bytes:
    res = rig.pipeline.ingress(data, 1, 0)
    return rig.pipeline.egress(res.to_tm[0], 0).frames[0].data


@pytest.mark.parametrize("data,out", [
    (bytes([1, 5, 6, 0xEE]), bytes([0x0A, 5, 6, 0xEE])),            # a parsed, emitted, unchanged
    (bytes([2, 0, 1, 2]), bytes([0xB0, 0, 1, 2])),                  # b parsed
    (bytes([3, 0xEE]), bytes([0x0A, 0xAA, 0xBB, 0xEE])),            # none: a made valid
    (bytes([1, 9, 6]), bytes([0xB0, 0x12, 0x34, 0x56])),            # setValid(b) dropped a
    (bytes([2, 0, 1, 7]), bytes([0x0A, 1, 2])),                     # a = n dropped b
])
def test_union_members_stay_exclusive(rig, data, out):
    assert run(rig, data) == out


def test_extract_of_a_whole_union_from_next_is_an_error():
    """``next`` of a stack of header_unions runs (tests/softswitch/stf/data/union_stack_ops.p4)
    when a member is extracted; the union itself is not a header."""
    src = (DATA / "exec_union.p4").read_text().replace(
        "struct hs_t { kind_t kind; ab_t u; }", "struct hs_t { kind_t kind; ab_t u; ab_t[2] us; }").replace(
        "state pa { p.extract(h.u.a);", "state pa { p.extract(h.us.next);")
    with pytest.raises(P4Error) as ei:
        load_source(src, "u.p4")
    assert "extract needs a header" in str(ei.value) and "u.p4:" in str(ei.value)
