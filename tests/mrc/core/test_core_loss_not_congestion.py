"""A loss MRC blames on a failed path is not a congestion signal for NSCC; a loss congestion explains is.

MRC takes a lost packet for a failed path (its EV goes ASSUMED_BAD) and a trimmed one for congestion.
Until 2026-12-07 every RACK loss also reached NSCC as a loss (``Nscc.on_loss``), which sets its
quick-adapt trigger: at a spine's failure the next measurement period then cut the window to what it
had delivered, and the all-reduce of ``bench/fabric_sim.py --cases allreduce`` ran every step of the
outage 1.3-1.44x slow (job 1.278x against 1.064x without congestion control).
"""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, encode_ack

PSN_MASK = (1 << 24) - 1


def _pair_with_two_on_ev0():
    """An NSCC transfer whose EV 0 path drops everything, run until two packets are in flight on EV 0."""
    paths = [PathSpec() for _ in range(4)]
    paths[0].down = [(0, None)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc="nscc"), buf_len=1 << 20)
    data = random.Random(3).randbytes(256 * 1024)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    req = p.qa.requester
    for _ in range(10_000):
        on0 = sorted((pk for pk in req.pkts.values() if pk.ev == 0 and pk.xmits == 1 and pk.state == pk.INFLIGHT),
                     key=lambda pk: pk.sent_ns)
        if len(on0) >= 2:
            return p, req, data, on0[0], on0[-1]
        p.net.run(until_ns=p.net.now + 100)
    raise AssertionError("never two packets in flight on EV 0")


def _run_until(p, cond, limit_ns: int) -> None:
    end = p.net.now + limit_ns
    while not cond():
        assert p.net.now < end, "condition not reached"
        p.net.run(until_ns=p.net.now + 200)
        p.pump()


def _count_losses(req) -> list[int]:
    """The times the requester told its congestion control (NSCC) of a loss."""
    calls: list[int] = []
    orig = req.cc.on_loss
    req.cc.on_loss = lambda now: (calls.append(now), orig(now))[1]
    return calls


def test_a_dead_paths_loss_does_not_set_nsccs_quick_adapt_trigger():
    p, req, data, _, _ = _pair_with_two_on_ev0()
    calls = _count_losses(req)
    _run_until(p, lambda: req.evset.prof.states[0] is EvState.ASSUMED_BAD, 1_000_000)
    _run_until(p, lambda: len(p.done) >= 1, 5_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    assert calls == [], f"NSCC was told of {len(calls)} loss(es) of a dead path"
    assert req.counters.loss_not_congestion >= 1
    assert req.cc.nscc.quick_adapts == 0


def test_a_loss_on_a_path_that_trims_is_congestion_for_nscc():
    p, req, _, first, later = _pair_with_two_on_ev0()
    calls = _count_losses(req)
    # the responder's SACK for the trimmed header of the later packet on EV 0 (the path is alive, congested)
    psn = later.seq & PSN_MASK
    una = req.snd_una & PSN_MASK
    info = AckInfo(una, (una + 1) & PSN_MASK, 0, psn, F.SACK_FLAG_MRC | F.SACK_FLAG_TRIM, 0, 0, 0, [], [psn])
    p.a.receive(encode_ack(p.qb.evset.entries[1].encap, p.qa.qpn, psn, F.AETH_ACK, 0, info),
                p.qb.evset.entries[1].port, p.net.now)
    _run_until(p, lambda: first.xmits > 1 or first.state != first.INFLIGHT, 1_000_000)  # RACK's verdict on it
    assert req.evset.prof.states[0] is EvState.GOOD and req.counters.rack_ev_kept >= 1
    assert calls, "a loss congestion explains did not reach NSCC"
