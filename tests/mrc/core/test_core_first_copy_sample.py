"""The RTT sample of a resent packet's first copy (b128961) is taken from its ACK, never from its trim.

An ACK whose ``ev_echo`` names the first copy's EV (and no later copy took it) is the first copy's: its
round trip from the first send is a sample.  A *trim* report of that copy is not a delivery: a trimmed
header skips the queue that trimmed it (it goes out in the top priority queue), so its round trip is
shorter than the data's -- and a packet sent once gives no sample from its trim either (the trim makes
it LOST before the sample rule, which wants it in flight).  Taken as a sample, each such trim pulled
srtt (and the learning NSCC's delay) toward the header's round trip while the network was congested:
repro/trim_first_copy_sample.py counts 14-42 such samples a run (5.3 us against srtt 12-18 us).

No network delivers anything here (every path takes 10 s): the tests hand the requester the ACKs.
"""

from __future__ import annotations

import random

from mrc.core import QpAttr
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, encode_ack

PSN_MASK = (1 << 24) - 1
MS = 1_000_000


def _sack(p, cum: int, delivered: list[int], trigger: int, echo_ev: int, flags: int = 0,
          trims: tuple[int, ...] = ()) -> bytes:
    base = cum + 1
    bitmap = 0
    for s in delivered:
        bitmap |= 1 << (s - base)
    echo = p.qa._entropy_of(p.qa.evset.entries[echo_ev].encap)
    info = AckInfo(cum & PSN_MASK, base & PSN_MASK, bitmap, trigger, F.SACK_FLAG_MRC | flags, 0, 0, echo, [],
                   list(trims))
    return encode_ack(p.qb.evset.entries[1].encap, p.qa.qpn, trigger, F.AETH_ACK, 0, info)


def _ack(p, frame: bytes, at_ns: int) -> None:
    p.net.run(until_ns=at_ns)
    p.a.receive(frame, p.qb.evset.entries[1].port, p.net.now)


def _resent_psn0():
    """8 packets at t=0 over 4 EVs; at 1 ms all but PSNs 0 and 4 (EV 0) are reported (srtt 1 ms); RACK
    resends PSN 0 on another EV."""
    p = make_pair([PathSpec(delay_ns=10_000_000_000) for _ in range(4)], attr=QpAttr(mode="mrc", cc="none"),
                  buf_len=1 << 20)
    p.a.post_write(p.qa, 1, random.Random(5).randbytes(8 * 4096), p.mr.base_va, p.mr.rkey, None)
    p.net.run(until_ns=1)
    req = p.qa.requester
    assert sorted(s for s, pk in req.pkts.items() if pk.ev == 0) == [0, 4], "the burst is not what the test needs"
    _ack(p, _sack(p, 0, [1, 2, 3, 5, 6, 7], 7, echo_ev=1), 1 * MS)
    pkt = req.pkts[0]
    end = p.net.now + 2_000 * MS
    while pkt.xmits == 1:
        assert p.net.now < end, "no verdict on PSN 0"
        p.net.run(until_ns=p.net.now + 10_000)
    assert pkt.first_ev == 0 and pkt.ev != 0 and pkt.first_sent_ns == 0
    return p, req, pkt


def test_the_first_copys_ack_is_a_sample_from_the_first_send():
    p, req, _pkt = _resent_psn0()
    srtt = req.srtt
    _ack(p, _sack(p, 1, [], 0, echo_ev=0), 3 * MS)  # the first copy arrived, 3 ms after it was sent
    assert req.srtt != srtt and req.srtt > srtt  # b128961: a sample of 3 ms


def test_the_first_copys_trim_is_no_sample():
    p, req, _pkt = _resent_psn0()
    srtt, rttvar = req.srtt, req.rttvar
    # the first copy's trimmed header comes back (trigger PSN 0, ev_echo EV 0, TRIM): nothing delivered
    _ack(p, _sack(p, 0, [], 0, echo_ev=0, flags=F.SACK_FLAG_TRIM, trims=(0,)), 3 * MS)
    assert req.counters.trims_received == 1
    assert (req.srtt, req.rttvar) == (srtt, rttvar), "a trim report of the first copy was taken as an RTT sample"
