"""A serializable enum value in arithmetic, ``++``, ordering, shifts and slices is its
underlying-type value, as p4c's type inference casts it there (binaryArith, Concat, relations,
shift, Slice); softswitch refused these by name until 2026-12-05 -- valid programs it could not
run.  A value that is no member (bmv2 holds any value of the underlying type) works the same."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_serenum_operands.p4")


@pytest.mark.parametrize("a, want", [
    # a, then r = k + 1, w = k ++ a, c = k < K.B, s = k << 1, t = k[3:0]
    (3, [3, 4, 0x03, 0x03, 1, 6, 3]),
    (200, [200, 201, 0xC8, 0xC8, 0, 0x90, 8]),
    (7, [7, 8, 0x07, 0x07, 1, 0x0E, 7]),
])
@pytest.mark.parametrize("path", ["api", "loop"])
def test_serializable_enum_operands(rig, a, want, path):
    data = bytes([a, 0, 0, 0, 0, 0, 0])
    out = rig.output(data) if path == "api" else rig.loop_output(data)
    assert list(out) == want, out.hex()
