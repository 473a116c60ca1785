"""What an ACK of a resent packet says about the path its first copy took (issue 11).

A RACK verdict on a quiet path makes its EV suspect; a delivery of a packet sent on it clears that.  A
resent packet's ACK may report either copy.  The rule was "reported sooner than the QP's min_rtt after
the resend: the first copy arrived".  Learnt under load, min_rtt exceeds the fabric's base RTT, so a
resend made once the fabric had drained came back "too fast" and cleared the suspicion of a dead path:
in simulation, with 512 KiB flows, no dead EV was ever retired (docs/simulation.md).  Now the ACK's
``ev_echo`` decides when the resent packet is its trigger (the copy that arrived is the one on the EV it
names), time only otherwise and with half the min_rtt; and a first copy that arrives after its resend
(the responder echoes it as a duplicate) still vouches for its path.

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


def _sack(p, cum: int, delivered: list[int], trigger: int, echo_ev: int = -1, flags: int = 0,
          trims: tuple[int, ...] = ()) -> bytes:
    """The SACK for: PSNs below ``cum`` and those in ``delivered`` arrived, ``trigger`` last, on the
    requester's EV ``echo_ev`` (its entropy in ``ev_echo``; -1: 0); ``trims``: PSNs reported trimmed."""
    base = cum + 1
    bitmap = 0
    for s in delivered:
        bitmap |= 1 << (s - base)
    echo = p.qa._entropy_of(p.qa.evset.entries[echo_ev].encap) if echo_ev >= 0 else 0
    info = AckInfo(cum & PSN_MASK, base & PSN_MASK, bitmap, trigger, F.SACK_FLAG_MRC | flags, 0, 0, echo, [],
                   list(trims))
    return encode_ack(p.qb.evset.entries[1].encap, p.qa.qpn, trigger, F.AETH_ACK, 0, info)


def _ack(p, pkt_bytes: bytes, at_ns: int) -> None:
    p.net.run(until_ns=at_ns)
    p.a.receive(pkt_bytes, p.qb.evset.entries[1].port, p.net.now)


def _psn0_resent(echo_ev: int = -1):
    """8 packets sent at t=0 over 4 EVs (PSNs 0 and 4 on EV 0); at 1 ms all but those two are reported
    (the SACK's ev_echo naming ``echo_ev``); RACK resends PSN 0 on another EV."""
    p = make_pair([PathSpec(delay_ns=10_000_000_000) for _ in range(4)], attr=QpAttr(mode="mrc", cc="none"),
                  buf_len=1 << 20)
    p.a.post_write(p.qa, 1, random.Random(5).randbytes(8 * 4096), p.mr.base_va, p.mr.rkey, None)
    p.net.run(until_ns=1)
    req = p.qa.requester
    assert sorted(s for s, pk in req.pkts.items() if pk.ev == 0) == [0, 4], "the burst is not what the test needs"
    _ack(p, _sack(p, 0, [1, 2, 3, 5, 6, 7], 7, echo_ev=echo_ev), 1 * MS)
    pkt = req.pkts[0]
    end = p.net.now + 2_000 * MS
    while pkt.xmits == 1:
        assert p.net.now < end, "no verdict on PSN 0"
        p.net.run(until_ns=p.net.now + 10_000)
    assert pkt.first_ev == 0 and pkt.ev != 0 and pkt.first_sent_ns == 0
    return p, req, pkt


def _dead_ev0():
    """``_psn0_resent``: min_rtt 1 ms, and RACK made EV 0 suspect."""
    p, req, pkt = _psn0_resent()
    assert req.min_rtt == 1 * MS and req.evset.entries[0].suspect_ns
    return p, req, pkt


def test_a_resend_acked_within_the_min_rtt_does_not_clear_a_dead_paths_suspicion():
    p, req, pkt = _dead_ev0()
    # the resend (on its own EV, as the echo says) is reported 0.6 min_rtt after it left: a drained
    # fabric's base RTT under a min_rtt learnt under load
    _ack(p, _sack(p, 1, [], 0, echo_ev=pkt.ev), pkt.sent_ns + 600_000)
    assert 0 not in req.pkts  # delivered
    assert req.evset.entries[0].suspect_ns  # before: cleared, and the dead path was never retired


def test_the_echo_naming_the_first_path_clears_its_suspicion():
    p, req, pkt = _dead_ev0()
    first_sent = pkt.first_sent_ns
    _ack(p, _sack(p, 1, [], 0, echo_ev=0), pkt.sent_ns + 600_000)
    e = req.evset.entries[0]
    assert not e.suspect_ns  # the first copy arrived: the path is alive, only slow
    assert e.last_rtt == p.net.now - first_sent  # and its delivery time is a sample of that path


def test_without_the_echo_an_ack_within_half_the_min_rtt_reports_the_first_copy():
    p, req, pkt = _dead_ev0()
    # PSN 0 reported by an ACK triggered by another packet: time decides
    _ack(p, _sack(p, 1, [], 3), pkt.sent_ns + 400_000)
    assert not req.evset.entries[0].suspect_ns


def test_without_the_echo_an_ack_after_half_the_min_rtt_does_not():
    p, req, pkt = _dead_ev0()
    _ack(p, _sack(p, 1, [], 3), pkt.sent_ns + 600_000)
    assert req.evset.entries[0].suspect_ns


def test_a_first_copy_arriving_after_its_resend_clears_the_suspicion_as_a_duplicate():
    """The path is slower than RACK's limit, not dead: the resend is reported first, then the first copy
    arrives and the responder echoes it as a duplicate (RETX_ECHO) on EV 0."""
    p, req, pkt = _dead_ev0()
    _ack(p, _sack(p, 1, [], 0, echo_ev=pkt.ev), pkt.sent_ns + 600_000)
    assert req.evset.entries[0].suspect_ns and 0 not in req.pkts
    _ack(p, _sack(p, 1, [], 0, echo_ev=0, flags=F.SACK_FLAG_RETX_ECHO), p.net.now + 300_000)
    assert not req.evset.entries[0].suspect_ns


def test_a_lost_packet_is_resent_on_a_path_that_delivered_something_sent_after_it():
    """Resend on a path proven alive after the loss: one that delivered a packet sent after the lost
    one.  Any other may have died with the lost packet's path (a spine takes a quarter of a plane's
    EVs), and a resend lost again costs another detection round (in simulation: the worst affected
    flow's extra FCT 6.4 RTTs before, 2.7 after; docs/simulation.md)."""
    p = make_pair([PathSpec(delay_ns=10_000_000_000) for _ in range(4)], attr=QpAttr(mode="mrc", cc="none"),
                  buf_len=1 << 20)
    data = random.Random(6).randbytes(16 * 4096)
    p.a.post_write(p.qa, 1, data[: 8 * 4096], p.mr.base_va, p.mr.rkey, None)
    p.net.run(until_ns=1)
    p.a.post_write(p.qa, 2, data[8 * 4096:], p.mr.base_va + 8 * 4096, p.mr.rkey, None)
    p.net.run(until_ns=MS // 2)
    req = p.qa.requester
    late = {s: pk.ev for s, pk in req.pkts.items() if pk.sent_ns > 0}
    assert sorted(late) == list(range(8, 16)) and req.pkts[0].ev == 0, "the sends are not what the test needs"
    # everything sent at t=0 but EV 0's PSNs 0 and 4 arrived; of the later packets only those on EV 2
    on2 = [s for s, ev in late.items() if ev == 2]
    _ack(p, _sack(p, 0, [1, 2, 3, 5, 6, 7] + on2, max(on2)), 1 * MS)
    pkt = req.pkts[0]
    end = p.net.now + 2_000 * MS
    while pkt.xmits == 1:
        assert p.net.now < end, "no verdict on PSN 0"
        p.net.run(until_ns=p.net.now + 10_000)
    assert pkt.ev == 2  # EVs 1 and 3 delivered nothing sent after PSN 0: the resend avoids them


def test_a_resend_avoids_the_evs_its_earlier_copies_were_lost_on():
    """A packet lost on EV 0 whose loss evidence excused (EV 0 stays GOOD), resent on EV 1 and trimmed
    there: the next resend goes neither to EV 0 (lost there) nor to EV 1 (just trimmed), when another EV
    can take it; a copy that was only trimmed on an EV does not bar that EV (the path was alive)."""
    p = make_pair([PathSpec(delay_ns=10_000_000_000) for _ in range(4)], attr=QpAttr(mode="mrc", cc="none"),
                  buf_len=1 << 20)
    p.a.post_write(p.qa, 1, bytes(8 * 4096), p.mr.base_va, p.mr.rkey, None)
    p.net.run(until_ns=1)
    req = p.qa.requester
    pkt = req.pkts[0]
    pkt.hist, pkt.ev = [[77 * MS, "rack", 0]], 1
    assert req._not_lost_on(pkt, 0, "trim", None) == 2
    assert req._not_lost_on(pkt, 3, "trim", None) == 3
    assert req._not_lost_on(pkt, 0, "rack", None) == 1  # a RACK resend may go back to the path that trimmed it
    assert req._not_lost_on(pkt, 0, "trim", lambda port: port == p.qa.evset.entries[3].port) == 3
    pkt.hist = [[77 * MS, "trim", 0]]
    assert req._not_lost_on(pkt, 0, "trim", None) == 0
    # every other EV barred or unable to send: the spray's pick stands
    pkt.hist = [[10 * MS, "rack", 0], [20 * MS, "rack", 2], [30 * MS, "timeout", 3]]
    assert req._not_lost_on(pkt, 0, "trim", None) == 0


# The RTT sample of a resent packet's first copy (b128961) is taken from its ACK, never from its trim.
# An ACK whose ``ev_echo`` names the first copy's EV (and no later copy took it) is the first copy's: its
# round trip from the first send is a sample.  A *trim* report of that copy is not a delivery: a trimmed
# header skips the queue that trimmed it (it goes out in the top priority queue), so its round trip is
# shorter than the data's -- and a packet sent once gives no sample from its trim either.  Taken as a
# sample, each such trim pulled srtt (and the learning NSCC's delay) toward the header's round trip
# while the network was congested (14-42 such samples a run, 5.3 us against srtt 12-18 us; review h-rev9).

def test_the_first_copys_ack_is_a_sample_from_the_first_send():
    p, req, _pkt = _psn0_resent(echo_ev=1)
    srtt = req.srtt
    _ack(p, _sack(p, 1, [], 0, echo_ev=0), 3 * MS)  # the first copy arrived, 3 ms after it was sent
    assert req.srtt != srtt and req.srtt > srtt  # b128961: a sample of 3 ms


def test_the_first_copys_trim_is_no_sample():
    p, req, _pkt = _psn0_resent(echo_ev=1)
    srtt, rttvar = req.srtt, req.rttvar
    # the first copy's trimmed header comes back (trigger PSN 0, ev_echo EV 0, TRIM): nothing delivered
    _ack(p, _sack(p, 0, [], 0, echo_ev=0, flags=F.SACK_FLAG_TRIM, trims=(0,)), 3 * MS)
    assert req.counters.trims_received == 1
    assert (req.srtt, req.rttvar) == (srtt, rttvar), "a trim report of the first copy was taken as an RTT sample"
