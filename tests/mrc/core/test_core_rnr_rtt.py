"""An RNR NAK for a resent copy gives its path a delivery-time sample only when it can be that copy's.

The responder refuses an immediate (``max_wimm_dest`` reached) and the requester sends it again, on
the one EV it may use, before the earlier copy on that EV has arrived (the ACK timeout is shorter than
the path).  An RNR NAK whose ``ev_echo`` names that EV may then be the earlier copy's refusal.  Until
2026-12-08 it was taken for the latest copy's, and that copy's send time gave the path a delivery-time
sample: a path of 20 us one way was sampled at 16 ns - 4 us.  In the fuzzer (seeds 510251 and 217982,
ECN-marked ACKs, paths of 0.5-20 us, a slow poller, nothing lost) such samples retired a healthy
20 us path (docs/protocol.md, receiver not ready; the fix is 491cfbe, this test a direct one for it).
"""

from __future__ import annotations

from mrc.core import EvState, QpAttr, QpState, WcStatus
from mrc.ctl import EvOp, EvOpArgs, EvOpEntry, EvProfileAttr, EvProfileAttrMask
from mrc.sim import PathSpec, make_pair

FAST_NS, SLOW_NS = 500, 20_000


def _deny(ep, qp, i: int) -> None:
    pid = qp.attr.ev_profile_id
    prof = ep.ctl.ev_profile(pid)
    ep.ctl.modify_ev_profile(pid, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [
        EvOpEntry(ev=prof.evs[i], state=EvState.DENIED)])), EvProfileAttrMask.EV_OP)


def test_an_rnr_nak_of_an_earlier_copy_gives_the_path_no_sample_shorter_than_its_round_trip():
    # EV 0 a path of 0.5 us, EV 1 one of 20 us; an ACK timeout of 8 us (ack_timeout 3)
    p = make_pair([PathSpec(delay_ns=FAST_NS), PathSpec(delay_ns=SLOW_NS)],
                  attr=QpAttr(max_wimm_dest=1, min_rnr_timer=1, cc="none", ack_timeout=3), buf_len=1 << 16)
    for ep in (p.a, p.b):
        ep.ctl.clock = lambda: p.net.now
    done: list = []
    for i in range(4):  # the QP learns its minimum RTT (1 us) on the fast path
        p.a.post_write(p.qa, i + 1, b"w" * 64, p.mr.base_va + 64 * i, p.mr.rkey)
    p.net.run(until_ns=500_000, stop=lambda: (done.extend(p.a.poll_completions()), len(done) == 4)[1])
    assert len(done) == 4 and p.qa.requester.min_rtt < 2 * FAST_NS + 1_000
    # data only on the slow path, its answers back on the fast one (the responder's slow EV DENIED)
    _deny(p.a, p.qa, 0)
    _deny(p.b, p.qb, 1)
    for i in range(3):  # the first is placed and not polled: the other two are refused, again and again
        p.a.post_write(p.qa, 10 + i, b"m" * 64, p.mr.base_va + 1024 + 64 * i, p.mr.rkey, imm=i)
    slow = p.qa.evset.entries[1]
    samples: list[int] = []
    seen = [0]

    def watch() -> bool:  # every delivery-time sample of the slow path as it is taken
        if slow.last_rtt and slow.last_rtt != seen[0]:
            samples.append(slow.last_rtt)
        seen[0] = slow.last_rtt
        done.extend(p.a.poll_completions())
        return False

    p.net.run(until_ns=p.net.now + 1_000_000, stop=watch, max_events=200_000)  # the application polls nothing
    c = p.qa.counters
    assert c.rnr_naks_received >= 50 and c.timeouts >= 1  # refused, and resent into the slow path's flight
    # the quickest true round trip through the slow path: 20 us there, the answer back on the fast path
    assert samples and min(samples) >= SLOW_NS + FAST_NS, sorted(samples)[:5]
    rx: list = []

    def step() -> bool:
        done.extend(p.a.poll_completions())
        rx.extend(p.b.poll_completions())
        return len(done) >= 7 and len(rx) >= 3

    p.net.run(until_ns=p.net.now + 50_000_000, stop=step, max_events=400_000)
    assert p.qa.state is QpState.RTS
    assert [c.status for c in done] == [WcStatus.SUCCESS] * 7 and [c.imm for c in rx] == [0, 1, 2]
