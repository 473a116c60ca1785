"""RACK's path verdict orders packets sent at the same instant by PSN, as RFC 8985 orders sends (its
RACK_sent_after: send time, then sequence).

The requester hands a QP's packets to its ports in bursts: every packet of one ``fill`` gets the same
send time, and a burst longer than the EV count puts two packets on one EV.  The verdict "a later
packet on this path was delivered and this one was not: the path drops packets" (``MrcRequester._lose``)
compared send times with ``>=``, so the delivery of the *earlier* packet of such a pair condemned the
later one's path when the later one was merely late.  In the fault-free all-to-all of
bench/fabric_scenarios.py this retired a healthy EV in about one run in fifteen (bench/fabric_ev_verdicts.py:
a "fifo" verdict whose evidence was a packet with the very same send time; the "lost" packet then
arrived, its resend a duplicate at the responder).

No network delivers anything here (every path takes 10 s): the test hands the requester the SACK
it would get and lets RACK's time limit run out on the one packet the SACK leaves out.
"""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, encode_ack

PSN_MASK = (1 << 24) - 1


def _burst():
    """A QP that has sent its first 8 packets in one burst at t=0 over 4 EVs (EV 0 carries PSNs 0 and 4),
    none of which can arrive before 10 s."""
    p = make_pair([PathSpec(delay_ns=10_000_000_000) for _ in range(4)], attr=QpAttr(mode="mrc", cc="none"),
                  buf_len=1 << 20)
    p.a.post_write(p.qa, 1, random.Random(5).randbytes(8 * 4096), p.mr.base_va, p.mr.rkey, None)
    p.net.run(until_ns=1)
    req = p.qa.requester
    on0 = sorted(s for s, pk in req.pkts.items() if pk.ev == 0)
    assert on0 == [0, 4] and req.pkts[0].sent_ns == req.pkts[4].sent_ns, "the burst is not what the test needs"
    return p, req


def _sack(p, cum: int, delivered: list[int], trigger: int) -> bytes:
    """The SACK for: every PSN below ``cum`` and those in ``delivered`` arrived, ``trigger`` last."""
    base = cum + 1
    bitmap = 0
    for s in delivered:
        bitmap |= 1 << (s - base)
    info = AckInfo(cum & PSN_MASK, base & PSN_MASK, bitmap, trigger, F.SACK_FLAG_MRC, 0, 0, 0, [], [])
    return encode_ack(p.qb.evset.entries[1].encap, p.qa.qpn, trigger, F.AETH_ACK, 0, info)


def _verdict_on(p, req, seq: int) -> None:
    """Inject nothing more; run until RACK declares ``seq`` lost."""
    pkt = req.pkts[seq]
    end = p.net.now + 2_000_000_000
    while pkt.xmits == 1 and pkt.state == pkt.INFLIGHT:
        assert p.net.now < end, f"no verdict on PSN {seq}"
        p.net.run(until_ns=p.net.now + 100_000)


def test_an_earlier_packet_sent_at_the_same_instant_does_not_condemn_a_late_ones_path():
    p, req = _burst()
    p.net.run(until_ns=1_000_000)
    # PSNs 0-3 and 5-7 arrived, 4 (EV 0, sent with 0 in the same burst) is late
    p.a.receive(_sack(p, 4, [5, 6, 7], 7), p.qb.evset.entries[1].port, p.net.now)
    assert req.ev_rack_ts[0] == req.pkts[4].sent_ns  # what EV 0 delivered was sent at the same instant
    _verdict_on(p, req, 4)
    e = req.evset.entries[0]
    # nothing sent on EV 0 after PSN 4 has been delivered: the path is suspect (a probe decides), not bad
    assert req.evset.prof.states[0] is EvState.GOOD  # before: ASSUMED_BAD (cause rack) at this verdict
    assert e.suspect_ns and req.counters.rack_ev_suspect >= 1
    assert not req.verdicts


def test_a_later_packet_sent_at_the_same_instant_still_shows_the_path_lost_one():
    p, req = _burst()
    p.net.run(until_ns=1_000_000)
    # PSNs 1-7 arrived, 0 did not: PSN 4, sent after it on EV 0 in the same burst, crossed the same path
    p.a.receive(_sack(p, 0, list(range(1, 8)), 7), p.qb.evset.entries[1].port, p.net.now)
    _verdict_on(p, req, 0)
    assert req.evset.prof.states[0] is EvState.ASSUMED_BAD
    [v] = req.verdicts
    assert (v["kind"], v["ev"], v["psn"], v["cause"]) == ("fifo", 0, 0, "rack")
    assert v["ev_rack_ts_ns"] == v["sent_ns"] and v["age_ns"] >= v["late_limit_ns"] > 0
