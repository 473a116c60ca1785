"""A trimmed packet is congestion on a live path: it clears a RACK suspicion and keeps the EV GOOD.

On the emulated fabric (bench/mrc_perf_defaults.py) a queue above its trim threshold trims every data
packet of a path and sends the trimmed headers ahead at high priority; no packet of that path is
delivered for a while, its one probe (never trimmed) is likely dropped in the same full queue, and RACK used
to retire the healthy path for want of deliveries (cause ``rack``).  The network here cannot put a
trimmed header ahead of queued data, so the test drops the path's packets (path down) and hands the
requester the SACK the responder sends for a trimmed packet of that path.
"""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import AckInfo, encode_ack

PSN_MASK = (1 << 24) - 1


def _pair_with_two_on_ev0(cc: str = "none"):
    """A transfer whose EV 0 path drops everything, run until two packets are in flight on EV 0."""
    paths = [PathSpec() for _ in range(4)]
    paths[0].down = [(0, None)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc=cc), buf_len=1 << 20)
    data = random.Random(3).randbytes(256 * 1024)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    req = p.qa.requester
    while True:
        on0 = sorted((pk for pk in req.pkts.values() if pk.ev == 0 and pk.xmits == 1 and pk.state == pk.INFLIGHT),
                     key=lambda pk: pk.sent_ns)
        if len(on0) >= 2:
            return p, req, data, on0[0], on0[-1]
        assert p.net.now < 1_000_000, "never two packets in flight on EV 0"
        p.net.run(until_ns=p.net.now + 100)


def _run_until(p, cond, limit_ns: int) -> None:
    end = p.net.now + limit_ns
    while not cond():
        assert p.net.now < end, "condition not reached"
        p.net.run(until_ns=p.net.now + 200)
        p.pump()


def _trim_sack(p, req, pkt) -> bytes:
    """The SACK the responder sends when the trimmed header of ``pkt`` arrives (on a live EV's path)."""
    psn = pkt.seq & PSN_MASK
    una = req.snd_una & PSN_MASK
    info = AckInfo(una, (una + 1) & PSN_MASK, 0, psn, F.SACK_FLAG_MRC | F.SACK_FLAG_TRIM, 0, 0, 0, [], [psn])
    return encode_ack(p.qb.evset.entries[1].encap, p.qa.qpn, psn, F.AETH_ACK, 0, info)


def test_a_trim_from_a_later_packet_makes_the_loss_congestion_not_a_suspect_path():
    p, req, _, first, later = _pair_with_two_on_ev0()
    p.a.receive(_trim_sack(p, req, later), p.qb.evset.entries[1].port, p.net.now)
    assert req.counters.trims_received == 1
    _run_until(p, lambda: first.xmits > 1 or first.state != first.INFLIGHT, 1_000_000)  # RACK's verdict on the first one
    e = req.evset.entries[0]
    # a packet sent on the path after the lost one crossed it (trimmed): the path is alive and congested
    assert req.counters.rack_ev_suspect == 0 and e.suspect_ns == 0  # before: suspect at this verdict
    assert req.evset.prof.states[0] is EvState.GOOD and req.counters.rack_ev_kept >= 1


def test_without_trims_the_dead_path_is_suspected_retired_and_the_data_arrives():
    p, req, data, first, _ = _pair_with_two_on_ev0()
    _run_until(p, lambda: first.xmits > 1 or first.state != first.INFLIGHT, 1_000_000)
    assert req.counters.rack_ev_suspect >= 1
    _run_until(p, lambda: req.evset.prof.states[0] is EvState.ASSUMED_BAD, 1_000_000)
    _run_until(p, lambda: len(p.done) >= 1, 5_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data


def _resent_copy(p, req, pkt, limit_ns: int = 1_000_000) -> None:
    _run_until(p, lambda: pkt.xmits > 1, limit_ns)


def test_a_trimmed_packet_is_resent_on_another_path_than_the_one_that_trimmed_it():
    """A trim says the path's queue is at its trim threshold: the resend goes on another GOOD EV and the
    spray skips the trimmed one once (as for an ECN echo).  Before, the resend took the spray's next EV,
    often the same path: in the fabric bench one PSN was trimmed 4 times in a row on one EV, holding
    its flow's cumulative ACK for 4 srtts."""
    p, req, _, _, later = _pair_with_two_on_ev0()
    # the spray's next pick is EV 0, the path of the trimmed packet
    req.evset.rr = 0
    for e in req.evset.entries:
        e.penalty = 0
    p.a.receive(_trim_sack(p, req, later), p.qb.evset.entries[1].port, p.net.now)
    assert req.counters.trims_received == 1 and later.state == later.LOST
    assert req.evset.entries[0].penalty == 1
    _resent_copy(p, req, later)
    assert later.ev != 0
    assert later.hist == [[later.hist[0][0], "trim", 0]] and later.hist[0][0] > 0


def test_a_trimmed_packet_waits_for_another_paths_port_rather_than_go_back_on_its_own():
    """When the other paths' ports are busy just then, the spray falls back to the penalized path that
    trimmed the packet; the resend waits for another port instead (a frame's time, where a second trim
    costs a round trip)."""
    p, req, _, _, later = _pair_with_two_on_ev0()
    req.evset.rr = 0
    for e in req.evset.entries:
        e.penalty = 0
    now = p.net.now
    busy_until = now + 20_000
    for e in req.evset.entries[1:]:
        p.a.port_free[e.port] = busy_until  # EVs 1-3 each on their own NIC port, all busy for 20 us
    p.a.receive(_trim_sack(p, req, later), p.qb.evset.entries[1].port, p.net.now)
    assert later.state == later.LOST and later.xmits == 1  # not resent on EV 0's free port
    _resent_copy(p, req, later)
    assert later.ev != 0 and later.sent_ns >= busy_until - p.a.slack_ns


def test_a_packet_that_held_the_cumulative_ack_is_kept_with_its_resends():
    """``Requester.late``: a packet first delivered LATE_SRTTS srtts or more after its first send, with
    each resend's cause and the EV of the copy it replaced (the agent logs those that held a flow)."""
    p, req, data, first, _ = _pair_with_two_on_ev0()
    req.LATE_SRTTS = 1  # the lost packet's resend arrives ~2 srtts after its first send here
    _run_until(p, lambda: len(p.done) >= 1, 5_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    held = [v for v in req.late if v["psn"] == first.seq & PSN_MASK]
    assert len(held) == 1, req.late
    v = held[0]
    assert v["held_cum_ack"] and v["first_ev"] == 0 and v["last_ev"] != 0 and v["xmits"] >= 2
    assert v["resends"][0][1:] == ["rack", 0] and v["delivery_ns"] >= v["srtt_ns"]
    # every packet kept was delivered late, and none on time was kept
    assert all(x["delivery_ns"] >= x["srtt_ns"] for x in req.late)


def test_a_path_not_used_for_a_while_starts_its_delivery_time_again():
    """A path's delivery-time record from before a pause (here: the QP idle between two writes) is
    forgotten at the next packet on it: RACK waits a path's own delivery time, and a stale slow record
    made a dead path found 4-5 srtts after the QP came back to it (the fabric bench)."""
    paths = [PathSpec() for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc="none"), buf_len=1 << 20)
    req = p.qa.requester
    data = random.Random(5).randbytes(64 * 1024)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    _run_until(p, lambda: len(p.done) >= 1, 5_000_000)
    e0 = req.evset.entries[0]
    assert e0.srtt and req.srtt
    stale = 50 * req.srtt
    e0.srtt = e0.last_rtt = stale  # what a queue on that path long ago left behind
    e0.rttvar = stale // 2
    p.net.run(until_ns=p.net.now + 5 * req.srtt)  # idle for more than 4 srtts
    p.a.post_write(p.qa, 2, data, p.mr.base_va, p.mr.rkey, None)
    _run_until(p, lambda: len(p.done) >= 2, 5_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    assert 0 < e0.srtt < 2 * req.srtt and e0.last_rtt < stale  # before: still ~44 srtts (7/8 of the stale record)


def _trim_sack_echo(p, req, pkt, echo_ev: int) -> bytes:
    """The SACK for ``pkt``'s trimmed header as its trigger, ``ev_echo`` naming the EV it arrived on."""
    psn = pkt.seq & PSN_MASK
    una = req.snd_una & PSN_MASK
    echo = p.qa._entropy_of(req.evset.entries[echo_ev].encap)
    info = AckInfo(una, (una + 1) & PSN_MASK, 0, psn, F.SACK_FLAG_MRC | F.SACK_FLAG_TRIM, 0, 0, echo, [], [psn])
    return encode_ack(p.qb.evset.entries[1].encap, p.qa.qpn, psn, F.AETH_ACK, 0, info)


def _trimmed_then_resent(p, req, pkt) -> int:
    """Trim ``pkt`` (on EV 0), let it be resent on another EV; returns that EV."""
    p.a.receive(_trim_sack_echo(p, req, pkt, 0), p.qb.evset.entries[1].port, p.net.now)
    _resent_copy(p, req, pkt)
    assert pkt.xmits == 2 and pkt.ev != 0 and pkt.state == pkt.INFLIGHT
    return pkt.ev


def test_a_resent_copys_own_trim_counts_however_soon_it_comes_back():
    """The resend of a trimmed packet is trimmed too, and its trim comes back sooner than half the
    minimum RTT after the send (and after the first trim): the ACK's trigger is that packet and its
    ev_echo names the EV the resend took, not the first copy's, so it is this copy's trim and the packet
    is resent again at once.  Before, the time rule alone ignored it, RACK found the packet lost later
    and retired the healthy EV (the simulated 63 -> 1 incast: every retirement left after 2026-12-05)."""
    p, req, _, _, later = _pair_with_two_on_ev0()
    ev = _trimmed_then_resent(p, req, later)
    req.min_rtt = 10 * (p.net.now - later.trim_ns + 1_000)  # the trim comes back well within min_rtt / 2
    p.a.receive(_trim_sack_echo(p, req, later, ev), p.qb.evset.entries[1].port, p.net.now)
    assert req.counters.trims_received == 2 and later.state == later.LOST
    assert req.counters.rack_ev_suspect == 0


def test_a_late_repeat_of_the_first_copys_trim_is_not_taken_for_the_resends():
    """The same quick trim report naming the first copy's EV (its late header, or a repeat): ignored, the
    resend stays in flight."""
    p, req, _, _, later = _pair_with_two_on_ev0()
    _trimmed_then_resent(p, req, later)
    req.min_rtt = 10 * (p.net.now - later.trim_ns + 1_000)
    p.a.receive(_trim_sack_echo(p, req, later, 0), p.qb.evset.entries[1].port, p.net.now)
    assert req.counters.trims_received == 1 and later.state == later.INFLIGHT


# A loss MRC blames on a failed path is not a congestion signal for NSCC; a loss congestion explains is.
# Until 2026-12-07 every RACK loss also reached NSCC (``on_loss``), which sets its quick-adapt trigger:
# at a spine's failure the next measurement period cut the window to what it had delivered, and the
# all-reduce of ``bench/fabric_sim.py --cases allreduce`` ran every step of the outage 1.3-1.44x slow
# (job 1.278x against 1.064x without congestion control).


def _count_losses(req) -> list[int]:
    """The times the requester told its congestion control (NSCC) of a loss."""
    calls: list[int] = []
    orig = req.cc.on_loss
    req.cc.on_loss = lambda now: (calls.append(now), orig(now))[1]
    return calls


def test_a_dead_paths_loss_does_not_set_nsccs_quick_adapt_trigger():
    p, req, data, _, _ = _pair_with_two_on_ev0("nscc")
    calls = _count_losses(req)
    _run_until(p, lambda: req.evset.prof.states[0] is EvState.ASSUMED_BAD, 1_000_000)
    _run_until(p, lambda: len(p.done) >= 1, 5_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    assert calls == [], f"NSCC was told of {len(calls)} loss(es) of a dead path"
    assert req.counters.loss_not_congestion >= 1
    assert req.cc.nscc.quick_adapts == 0


def test_a_loss_on_a_path_that_trims_is_congestion_for_nscc():
    p, req, _, first, later = _pair_with_two_on_ev0("nscc")
    calls = _count_losses(req)
    p.a.receive(_trim_sack(p, req, later), p.qb.evset.entries[1].port, p.net.now)  # the path is alive, congested
    _run_until(p, lambda: first.xmits > 1 or first.state != first.INFLIGHT, 1_000_000)  # RACK's verdict on it
    assert req.evset.prof.states[0] is EvState.GOOD and req.counters.rack_ev_kept >= 1
    assert calls, "a loss congestion explains did not reach NSCC"
