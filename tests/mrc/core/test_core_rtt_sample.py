"""An ACK whose service time is as long as the round trip gives no RTT sample (not a 0).

The responder reports how long it held an ACK; the requester takes ``now - sent - service time``.
When the two ends stamp frames at different points of a long receive batch, the reported service
time can exceed the round trip the requester measured; clamped to 0, that sample became the learning
NSCC's base RTT (1 ns: the QP's window sat at its minimum for the rest of the run) and the QP's
min_rtt (RACK's reordering window).
"""

from __future__ import annotations

import random

from mrc.core import QpAttr
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, encode_ack

PSN_MASK = (1 << 24) - 1


def _in_flight_after_first_sample():
    p = make_pair([PathSpec() for _ in range(4)], attr=QpAttr(mode="mrc", cc="nscc"), buf_len=1 << 20)
    data = random.Random(5).randbytes(512 * 1024)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    req = p.qa.requester
    for _ in range(100_000):
        fresh = [pk for pk in req.pkts.values() if pk.xmits == 1 and pk.state == pk.INFLIGHT]
        if req.srtt and fresh:
            return p, req, max(fresh, key=lambda pk: pk.sent_ns)
        p.net.run(until_ns=p.net.now + 200)
        p.pump()
    raise AssertionError("no RTT sample with a packet in flight")


def _sack(p, req, pkt, service_ns: int) -> bytes:
    psn, una = pkt.seq & PSN_MASK, req.snd_una & PSN_MASK
    info = AckInfo(una, (una + 1) & PSN_MASK, 1 << ((pkt.seq - req.snd_una - 1) % 64), psn, F.SACK_FLAG_MRC,
                   service_ns, 0, 0, [], [])
    return encode_ack(p.qb.evset.entries[pkt.ev].encap, p.qa.qpn, psn, F.AETH_ACK, 0, info)


def test_a_service_time_longer_than_the_round_trip_is_no_sample():
    p, req, pkt = _in_flight_after_first_sample()
    min_rtt, base = req.min_rtt, req.cc.state()["base_rtt_ns"]
    assert min_rtt > 0 and base > 1
    rtt = p.net.now + 1000 - pkt.sent_ns
    p.a.receive(_sack(p, req, pkt, rtt + 5_000_000), p.qb.evset.entries[pkt.ev].port, p.net.now + 1000)
    assert req.min_rtt == min_rtt and req.cc.state()["base_rtt_ns"] == base  # before: both 0 / 1 ns


def test_a_service_time_within_the_round_trip_is_taken_off():
    p, req, pkt = _in_flight_after_first_sample()
    rtt = p.net.now + 1000 - pkt.sent_ns
    p.a.receive(_sack(p, req, pkt, rtt - 300), p.qb.evset.entries[pkt.ev].port, p.net.now + 1000)
    assert req.min_rtt == 300 and req.cc.state()["base_rtt_ns"] == 300
