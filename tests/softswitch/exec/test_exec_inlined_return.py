"""``return`` in a control that another control applies leaves that control only: the caller
goes on after the ``apply`` (the sub-control is inlined, so its returns become a flag that
guards the rest of its body and leaves loops).  Before, the return ended the whole ingress,
silently: SONiC DASH's pipeline lost its encapsulation and routing after do_action_nat46's
early return."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

PROG = DATA / "exec_inlined_return.p4"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, op, a=0, b=0) -> list[int]:
    res, egs = rig.run(bytes([op, a, b, 0, 0]))
    assert not res.dropped, res.drop_reason
    return list(egs[0].frames[0].data)


@pytest.mark.parametrize("a,b", [(1, 0), (0, 0)])
def test_return_leaves_the_sub_control_applied_twice(rig, a, b):
    out = run(rig, 1, a, b)
    assert out[2] == (b if a == 1 else b + 2)  # each apply returns (a == 1) or counts
    assert out[4] == 0xDD  # the caller went on


@pytest.mark.parametrize("a,counted,after", [(0, 0, 0), (2, 2, 0), (9, 4, 0xCC)])
def test_return_inside_a_loop(rig, a, counted, after):
    out = run(rig, 2, a)
    assert out[2] == counted and out[3] == after and out[4] == 0xDD


@pytest.mark.parametrize("a,c", [(5, 0), (6, 0x5C)])
def test_return_inside_a_switch_case(rig, a, c):
    out = run(rig, 3, a)
    assert out[3] == c and out[4] == 0xDD


@pytest.mark.parametrize("a,d", [(1, 0x11), (2, 0x10), (3, 0x11)])
def test_return_in_nested_controls(rig, a, d):
    out = run(rig, 4, a)
    assert out[4] == d  # early's return does not skip outer's +0x10; outer's own skips +1
    assert out[3] == 0xC4  # and I goes on after outer
