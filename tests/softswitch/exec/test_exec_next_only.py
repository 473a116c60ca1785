"""Header stacks whose elements only ``extract(stack.next)`` makes valid (``usage.next_only_stacks``):
the valid elements are those below nextIndex, so the recycled packet's reset and the deparser skip
the whole stack on one test while nextIndex is 0 (mrc_switch.p4 carries four such stacks: the
SRH's segments and TLVs, and the units of two options headers).  A stack also made valid another
way (``setValid`` of an element, an extract by index) is looked at element by element."""
from __future__ import annotations

from pathlib import Path

import pytest
from exec_rig import DATA, Rig, through_api, through_loop

from softswitch.exec.recycle import Mismatch, make_reset
from softswitch.exec.usage import next_only_stacks
from softswitch.frontend import load_program

REPO = Path(__file__).resolve().parents[3]
PROG = DATA / "exec_next_only.p4"


def test_which_stacks_are_next_only():
    assert next_only_stacks(load_program(str(PROG))) == {"s"}  # t: setValid by index; u: extract u[1]
    mrc = load_program(str(REPO / "p4src" / "mrc_switch.p4"), {}, [str(REPO / "p4src")])
    assert next_only_stacks(mrc) == {"srh_segments", "hbh_units", "dest_units", "srh_tlv_units"}


def test_generated_code_tests_next_index_once():
    rig = Rig(PROG)
    deparse = rig.pipeline.blocks.source.split("def blk_deparse")[1]
    assert deparse.count(".nxt:") == 1 and "H.f_s.nxt" in deparse


def _frame(n: int, m: int) -> bytes:
    return bytes([n, m]) + b"".join(bytes([0xA0 + i, i]) for i in range(n)) + b"\xbb\x01\xcc\x02" + bytes(8)


def test_recycled_packets_with_and_without_stack_elements():
    """Packets with 3, 0, 2, 0, 1 elements (and t/u variants) through the loop's path, whose header
    objects are recycled and reset with the guard, give the frames of the API's path."""
    rig = Rig(PROG)
    frames = [_frame(n, m) for n, m in ((3, 0), (0, 0), (2, 1), (0, 2), (1, 3), (0, 0), (3, 2), (0, 1), (0, 3))]
    loop = [through_loop(rig.pipeline, f) for f in frames]
    assert loop == [through_api(rig.pipeline, f) for f in frames]
    # by hand: 2 elements, then t.next = bbcc... t[0]; emitted h, s[0..1], t[0]
    assert loop[2] == bytes([2, 1, 0xA0, 0, 0xA1, 1, 0xBB, 0x01]) + b"\xcc\x02" + bytes(8)
    # nothing extracted into s: the one before left none behind
    assert loop[3] == bytes([0, 2, 0xBB, 0x01]) + b"\xcc\x02" + bytes(8)  # u[1] = bb01
    assert loop[4] == bytes([1, 3, 0xA0, 0, 0x77, 0x77, 0xBB, 0x01]) + b"\xcc\x02" + bytes(8)


def test_reset_of_a_next_only_stack_reads_only_next_index_while_it_is_0():
    """While nextIndex is 0 the reset tests it and nothing else (neither the element list nor its
    length: a packet without elements pays one test a stack); with elements it resets them, puts
    nextIndex back and still refuses a list that lost its shape."""
    pl = Rig(PROG).pipeline
    reset = make_reset(pl._H, pl._M, pl._S, lazy=pl._lazy, tracked=pl._tracked, next_only=pl._next_only)
    assert reset is not None
    H, M, S = pl._H(), pl._M(), pl._S()
    arr = H.f_s.arr
    H.f_s.arr = None  # would fail any look at the list
    reset(H, M, S)
    H.f_s.arr = arr
    arr[0].valid = arr[0].dirty = True
    arr[0].f_v = 7
    H.f_s.nxt = 1
    reset(H, M, S)
    assert H.f_s.nxt == 0 and not arr[0].valid and arr[0].f_v == 0
    H.f_s.arr = arr + [pl._H().f_s.arr[0]]
    H.f_s.nxt = 1
    with pytest.raises(Mismatch):
        reset(H, M, S)
