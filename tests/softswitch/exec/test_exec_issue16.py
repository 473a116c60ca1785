"""Issue 16's silent misruns, through the compiled pipeline: @priority on const entries and exit
inside an action with out/inout arguments."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

PROG = DATA / "exec_issue16.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, op, a=0, b=0, r=0) -> bytes:
    res = rig.pipeline.ingress(ETH + bytes([op, a, b, r]), 0, 0)
    assert not res.dropped, res.drop_reason
    outs = rig.pipeline.egress(res.to_tm[0], 0).frames
    return outs[0].data[14:] if outs else b""


@pytest.mark.parametrize("a,expect", [
    (0x11, 1),   # matches all three: @priority(1) wins although it is written last
    (0x15, 1),   # matches @priority(30) and @priority(1)
    (0x99, 1),
])
def test_priority_annotation_smallest_wins(rig, a, expect):
    assert run(rig, 1, a)[3] == expect


@pytest.mark.parametrize("a,expect", [
    (0x21, 1),   # position 1 beats @priority(5)
    (0x22, 1),   # position 1 beats position 3
    (0x23, 0),   # @priority(0) beats position 1
    (0x2F, 1),
])
def test_priority_mixed_annotated_and_positional(rig, a, expect):
    assert run(rig, 2, a)[3] == expect


def test_priority_textual_order_without_annotations(rig):
    assert run(rig, 3, 0x31)[3] == 0x30


def test_const_entry_p4runtime_priorities_follow_bmv2_order(rig):
    """Read back, the const entries' P4Runtime priorities (higher wins) rank them as bmv2 does."""
    from p4.v1 import p4runtime_pb2
    t = next(x for x in rig.p4info.tables if x.preamble.name == "I.t_prio")
    req = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=t.preamble.id))
    ents = [e.table_entry for e in rig.state.read(req)]
    by_value = {e.action.action.params[0].value[-1]: e.priority for e in ents}
    assert by_value[1] > by_value[20] > by_value[30] > 0


def test_exit_in_action_copies_out_inout_and_out(rig):
    out = run(rig, 4, b=1, r=7)
    assert out[3] == 8        # inout x copied out (7 + 1), the statement after the call skipped
    assert out[2] == 0x55     # out y copied out to meta, seen in egress


def test_exit_not_taken_runs_the_rest(rig):
    out = run(rig, 4, b=0, r=7)
    assert out[3] == 0xEE


def test_exit_in_nested_action_copies_out_through_both(rig):
    out = run(rig, 5, b=1, r=7)
    assert out[3] == 8        # inner copy-out to outer's z, outer's copy-out to h.op.r, no +50


def test_action_without_exit_copies_out_as_before(rig):
    out = run(rig, 6, a=3, b=0)
    assert out[3] == 104 and out[2] == 0x55


def test_resubmitted_pass_reads_ingress_port_and_timestamp_0(rig):
    """bmv2 1.15 builds the resubmitted copy on reset standard_metadata (measured in the PTF run
    of test_replication: ingress_port 0)."""
    res = rig.pipeline.ingress(ETH + bytes([7, 0, 0xAA, 0xAA]), 5, 1000)
    out = rig.pipeline.egress(res.to_tm[0], 1001).frames[0].data[14:]
    assert out[3] == 0 and out[2] == 0
