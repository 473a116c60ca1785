"""Header and stack copies as bmv2 runs them (each differed on softswitch until 2026-12-05, read
from bmv2's and p4c's source): ``push_front``/``pop_front`` move elements by swapping (bmv2's
``StackP4_16``) and the freed elements keep what they held, invalid; a header assigned from an
invalid header (or ``{#}``) becomes invalid and keeps its own fields (bmv2's ``assign_header``).
(A stack's nextIndex is seen only through ``next``/``last``/``lastIndex``, which p4c allows only
in parsers: what push/pop or an assignment in a control does to it no valid program can tell.)  P4 leaves the values of invalid headers unspecified; bmv2's are what a
program that reads them anyway sees, through table keys, digests or copies."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

STACK = bytes([0xA0, 0xA1, 0xA2])


@pytest.fixture(scope="module")
def copies():
    return Rig(DATA / "exec_bmv2_header_copies.p4")


# out: x (mode), o = {a, b, c, d, n}, then the stack's valid elements, then the payload
@pytest.mark.parametrize("mode, o, stack", [
    (1, [0xA2, 0, 0, 0, 0], [0xA0, 0xA1]),  # push_front(1): st[0] is the old st[2], invalid
    (2, [0xA0, 0, 0, 0, 0], [0xA1, 0xA2]),  # pop_front(1): st[2] is the old st[0], invalid
    (3, [0x03, 0, 0, 0, 0], list(STACK)),  # x = y (y invalid): x keeps its 3
    (4, [0x04, 0, 0, 0, 0], list(STACK)),  # x = {#}: x keeps its 4
    (5, [0xA2, 0xA1, 0xA0, 0, 0], [0xA0]),  # push_front(2): swaps 2<->0 only
    (7, [0, 0, 0, 0, 0], [0xA1, 0xA2, 0]),  # pop_front(1), then setValid: zeroed (add_header)
])
@pytest.mark.parametrize("path", ["api", "loop"])
def test_header_and_stack_copies(copies, mode, o, stack, path):
    data = bytes([mode]) + STACK + b"PL"
    out = copies.output(data) if path == "api" else copies.loop_output(data)
    assert out == bytes([mode] + o + stack) + b"PL", out.hex()
