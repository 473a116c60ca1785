"""Probe period floor, probes padded to the data frame size, fair QP scheduling, RC with CE marks."""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr, WcStatus
from mrc.core.endpoint import Endpoint
from mrc.core.ev import PROBE_LATE_KEEP
from mrc.sim import PathSpec, make_pair, transfer
from mrc.sim.scenario import GID_A, GID_B, srv6_carrier
from mrc.wire import formats as F
from mrc.wire.codec import decode_frame


def _dead_ev_probes(attr: QpAttr, window_ns: int) -> int:
    """Probes sent to an EV whose path is down for the whole run, over ``window_ns`` after the data."""
    paths = [PathSpec() for _ in range(4)]
    paths[2].down = [(0, None)]
    p = make_pair(paths, attr=attr, buf_len=1 << 20)
    transfer(p, [(1, random.Random(5).randbytes(200_000), p.mr.base_va, None)])
    # the data may be done while the dead EV is still suspect (its probe unanswered): a few RTTs more
    p.net.run(until_ns=p.net.now + 200_000)
    assert p.qa.evset.entries[2].state is EvState.ASSUMED_BAD
    before = p.qa.counters.probes_sent
    p.net.run(until_ns=p.net.now + window_ns)
    return p.qa.counters.probes_sent - before


def test_probe_period_has_a_floor_with_a_tiny_srtt():
    # the simulated RTT is a few us: 4 x srtt would probe every ~20 us (~500 probes in 10 ms)
    n = _dead_ev_probes(QpAttr(), 10_000_000)
    assert 5 <= n <= 11, n  # one probe per ms (probe_min_ns default 1 ms)


def test_probe_period_attribute_overrides_the_floor():
    assert _dead_ev_probes(QpAttr(probe_interval_ns=100_000), 2_000_000) >= 15
    assert _dead_ev_probes(QpAttr(probe_min_ns=4_000_000), 10_000_000) <= 3


def test_probe_period_without_rtt_sample_is_the_ack_timeout():
    ep = Endpoint(GID_A, [1])
    qp = ep.create_qp([(srv6_carrier(1, 2, 3, 4), 1)], QpAttr(ack_timeout=14))
    assert qp.srtt == 0
    assert qp._probe_interval() == 1024 << 14  # 16.8 ms
    qp.srtt = 3_000
    assert qp._probe_interval() == 1_000_000
    qp.srtt = 2_000_000
    assert qp._probe_interval() == 8_000_000



def test_a_probe_waits_the_ack_timeout_for_its_answer_before_the_first_rtt_sample():
    """A QP that only receives has no RTT sample, but bound to a profile shared with sending QPs it probes
    the same ASSUMED_BAD EVs.  With a set period (the scenarios' 20 ms) it gave up on each probe after that
    period, where QPs with an RTT wait 2 srtt: ~55 probes a second into each dead path of the demo from one
    receiving QP (review h-new2).  Before a sample a probe has the ACK timeout, as the period has."""
    ep = Endpoint(GID_A, [1])
    qp = ep.create_qp([(srv6_carrier(1, 2, 3, 4), 1)], QpAttr(ack_timeout=18, probe_interval_ns=20_000_000))
    r = qp.requester
    assert qp.srtt == 0 and r._probe_interval() == 20_000_000
    assert r._probe_wait() == 1024 << 18  # 268 ms, not the 20 ms period
    qp.srtt = 57_000_000
    assert r._probe_wait() == 114_000_000
    qp.srtt = 3_000_000
    assert r._probe_wait() == 20_000_000


def test_a_suspect_ev_has_the_ack_timeout_to_answer_before_the_first_rtt_sample():
    """Before any RTT sample (in an incast the first ACKs all report trims and carry none), a suspect EV
    gets the ACK timeout to show life, not the 4 us reordering floor that retired healthy EVs in the
    first 40 us of a simulated 63 -> 1 incast; an EV without a sample of its own, four of the QP's RTTs,
    or the QP's timeout while the QP is acting on trims (the 127 -> 1 incast); with samples, its RTTs
    decide."""
    ep = Endpoint(GID_A, [1])
    qp = ep.create_qp([(srv6_carrier(1, 2, 3, 4), 1)], QpAttr(ack_timeout=8, reorder_min_ns=4_000))
    r = qp.requester
    e = qp.evset.entries[0]
    assert r.srtt == 0 and r._confirm_ns(e) == 1024 << 8  # 262 us
    r.srtt = 30_000  # the QP has a sample, this EV none: four of the QP's RTTs
    assert r._confirm_ns(e) == 120_000
    # ... and the QP's retransmission timeout while it acts on trims (a queue its paths share is
    # full; the probe waits behind its headers): within an srtt of the suspicion or since
    e.suspect_ns = 500_000
    r._trim_seen_ns = 500_000 - 40_000
    assert r._confirm_ns(e) == 120_000
    r._trim_seen_ns = 500_000 - 20_000
    assert r._confirm_ns(e) == r.timeout_ns == 1024 << 8
    e.suspect_ns = 0
    e.rtt_sample(20_000)
    assert r._confirm_ns(e) == max(2 * (e.srtt + 4 * e.rttvar), 60_000)

def _pump(a: Endpoint, b: Endpoint, until_ns: int, drop) -> None:
    """A tiny lossless network with a 5 us hop and a drop predicate (port, frame) for a -> b."""
    t = 0
    while t < until_ns:
        t += 5_000
        for src, dst, filt in ((a, b, drop), (b, a, lambda _p, _f: False)):
            tm = src.get_timer()
            if tm is not None and tm <= t:
                src.handle_timer(t)
            for port, fr in src.datagrams_to_send(t):
                if not filt(port, fr):
                    dst.receive(fr, port, t)


def _probe_path_drops_large_frames(pad: bool) -> tuple[EvState, list[int]]:
    paths = [PathSpec() for _ in range(2)]
    attr = QpAttr(mtu=4096, probe_interval_ns=200_000, probe_pad_to_mtu=pad)
    p = make_pair(paths, attr=attr)
    p.qa.evset.mark_bad(1, 0, "test")  # EV 1's path drops every frame larger than 1500 bytes
    sizes: list[int] = []

    def drop(port: int, fr: bytes) -> bool:
        if port == 2:
            sizes.append(len(fr))
            return len(fr) > 1500
        return False
    _pump(p.a, p.b, 5_000_000, drop)
    return p.qa.evset.entries[1].state, sizes


def test_padded_probes_keep_a_large_frame_dropping_path_assumed_bad():
    state, sizes = _probe_path_drops_large_frames(pad=True)
    big = [n for n in sizes if n > 4096]  # the streak's last probe: as large as a full-MTU data frame
    small = [n for n in sizes if n < 200]
    assert big and small and len(big) + len(small) == len(sizes)
    assert len(small) >= 2 * len(big)  # k = 3: two small probes answered, the padded third lost
    assert state is EvState.ASSUMED_BAD


def test_a_dead_paths_probes_are_not_padded():
    paths = [PathSpec() for _ in range(2)]
    # no RTT sample here: a probe has the ACK timeout (131 us at 7) or the 200 us period to be answered
    p = make_pair(paths, attr=QpAttr(mtu=4096, probe_interval_ns=200_000, ack_timeout=7))
    p.qa.evset.mark_bad(1, 0, "test")
    sizes: list[int] = []

    def drop(port: int, fr: bytes) -> bool:
        if port == 2:
            sizes.append(len(fr))
            return True
        return False
    _pump(p.a, p.b, 3_000_000, drop)
    assert len(sizes) >= 10 and max(sizes) < 200  # never answered: the streak never reaches k - 1


def test_unpadded_probes_pass_such_a_path_and_flip_it_back_to_good():
    state, sizes = _probe_path_drops_large_frames(pad=False)
    assert sizes and max(sizes) < 200
    assert state is EvState.GOOD  # the flap probe_pad_to_mtu avoids


def test_padded_probe_is_a_data_frame_long_and_decodes_as_the_probe():
    p = make_pair([PathSpec(), PathSpec()], attr=QpAttr(mtu=2048, probe_interval_ns=1_000, probe_good_count=1))
    p.qa.evset.mark_bad(0, 0, "test")
    p.a.handle_timer(10_000)
    probes = [fr for _port, fr in p.a.datagrams_to_send(10_000)]
    assert len(probes) == 1
    e = p.qa.evset.entries[0]
    from mrc.wire.codec import encode_data
    assert len(probes[0]) == len(encode_data(e.encap, F.OP_WRITE_MIDDLE, 1, 0, 0, 0, 2048, bytes(2048)))
    fr = decode_frame(probes[0])
    assert fr.opcode == F.OP_PROBE_REQ and fr.probe.req_id == e.probe_req_id


def test_qps_share_the_ports_round_robin():
    """Three QPs with plenty to send on paced ports: each gets a third of the packets."""
    a = Endpoint(GID_A, [1, 2], port_rate_bps=1e9)
    evs = [(srv6_carrier(1, 0x100 + i, 2, 0x12), i + 1) for i in range(2)]
    qps = [a.create_qp(evs, QpAttr(mtu=1024)) for _ in range(3)]
    for i, qp in enumerate(qps):
        a.connect(qp, 0x200 + i, GID_B, rq_psn=0, sq_psn=0)
        a.post_write(qp, 1, bytes(100 * 1024), 0x1000, 0x1234)
    t = 0
    for _ in range(300):
        t += 1_000
        a.datagrams_to_send(t)
    sent = [qp.counters.data_packets_sent for qp in qps]
    assert sum(sent) > 60
    assert max(sent) - min(sent) <= 2, sent


def test_rc_receiver_with_ce_marked_packets_completes():
    """Classic RC has no ECN echo; CE marks must not loop the ACK path (RecursionError before)."""
    paths = [PathSpec(rate_bps=25e9, ecn_bytes=8_000, queue_bytes=4 << 20)]
    p = make_pair(paths, mode="rc", port_rate_bps=100e9, buf_len=2 << 20)
    msgs = [(1, random.Random(9).randbytes(1 << 20), p.mr.base_va, None)]
    transfer(p, msgs)
    assert sum(s[0].ecn_marked for s in p.net.stats()) > 0
    assert [c.status for c in p.done] == [WcStatus.SUCCESS]
    assert p.mr.buf[: 1 << 20] == msgs[0][1]


def test_an_ev_comes_back_when_the_rtt_is_longer_than_the_probe_period():
    # 10 ms RTT, probes every 2 ms: a probe must not count as lost before its answer can arrive
    # (it used to: every probe was given up 2 ms after it left, and the EV stayed ASSUMED_BAD for ever)
    p = make_pair([PathSpec(delay_ns=5_000_000) for _ in range(2)], attr=QpAttr(probe_interval_ns=2_000_000, ack_timeout=16))
    transfer(p, [(1, random.Random(1).randbytes(100_000), p.mr.base_va, None)])
    assert p.qa.srtt >= 9_000_000
    p.qa.evset.mark_bad(1, p.net.now, "test")
    sent = p.qa.counters.probes_sent
    p.net.run(until_ns=p.net.now + 100_000_000)
    assert p.qa.evset.entries[1].state is EvState.GOOD
    assert p.qa.counters.probes_sent - sent == 3  # one in flight at a time: k = 3 answers, no extra probes


def test_a_dead_evs_packets_are_all_resent_and_it_gets_no_new_ones_after_the_first_verdict():
    """4 paths with 1 ms one-way delay; path 2 dies at 0.3 ms.  The first RACK verdict on EV 1 (nothing
    sent on it since was delivered) makes it suspect: no new packet goes on it after that, and every
    packet that was sent on it after the failure is resent on another EV."""
    paths = [PathSpec(delay_ns=1_000_000, rate_bps=10e9) for _ in range(4)]
    paths[1].down = [(300_000, None)]
    p = make_pair(paths, attr=QpAttr(ack_timeout=16, mpr=8), buf_len=16 << 20)
    q = p.qa.requester
    first_verdict: list[int] = []
    doomed: set[int] = set()  # PSNs first sent on EV 1 after the failure
    resent_elsewhere: set[int] = set()
    new_on_ev1_after: list[int] = []
    lose, transmit = q._lose, q._transmit

    def spy_lose(pkt, now_ns, cause):
        if pkt.ev == 1 and not first_verdict:
            first_verdict.append(now_ns)
        lose(pkt, now_ns, cause)

    def spy_transmit(pkt, ev_i, now_ns, dscp=None):
        if pkt.xmits == 0 and ev_i == 1:
            if now_ns >= 300_000:
                doomed.add(pkt.seq)
            if first_verdict:
                new_on_ev1_after.append(pkt.seq)
        elif pkt.xmits and pkt.ev == 1 and ev_i != 1:
            resent_elsewhere.add(pkt.seq)
        transmit(pkt, ev_i, now_ns, dscp)
    q._lose, q._transmit = spy_lose, spy_transmit
    data = random.Random(3).randbytes(16 << 20)  # still sending when the first verdict comes (~2.8 ms)
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[: 16 << 20]) == data
    assert first_verdict and len(doomed) >= 2  # several packets had followed the lost one onto the dead path
    assert doomed <= resent_elsewhere  # every one resent, none on the dead path again
    assert not new_on_ev1_after
    e = q.evset.entries[1]
    assert e.state is EvState.ASSUMED_BAD or e.suspect_ns


def test_a_path_that_dropped_one_packet_keeps_its_other_packets():
    # one random loss on a live path: later packets on the same EV are delivered, nothing is retired
    paths = [PathSpec(delay_ns=1_000_000, rate_bps=10e9) for _ in range(4)]
    paths[1].loss = 0.02
    p = make_pair(paths, attr=QpAttr(ack_timeout=16, mpr=8), buf_len=4 << 20)
    retired: list[int] = []
    orig = p.qa._retire_ev
    p.qa._retire_ev = lambda ev_i, now_ns: (retired.append(ev_i), orig(ev_i, now_ns))
    transfer(p, [(1, random.Random(4).randbytes(3 << 20), p.mr.base_va, None)])
    assert p.qa.counters.retx_rack >= 1 and not retired


def test_a_suspect_ev_that_delivered_since_is_not_retired():
    # two EVs suspected at the same time; when their time to show life is up, the one an ACK reported
    # a new delivery on since is alive and goes back to the spray, the silent one is retired
    p = make_pair([PathSpec(delay_ns=1_000_000) for _ in range(4)], attr=QpAttr(ack_timeout=16))
    transfer(p, [(1, random.Random(5).randbytes(200_000), p.mr.base_va, None)])
    q = p.qa.requester
    now = p.net.now
    for ev in (1, 2):
        assert q._suspect(ev, now - 1, now)
    q.ev_ack_ns[1] = now + 10  # a delivery on EV 1 reported after the suspicion
    q.ev_ack_ns[2] = now - 10
    q._peer_heard(now + 10)  # ...by an ACK: the peer answers (test_core_peer_silent.py: a silent peer retires nothing)
    late = now + max(q._confirm_ns(q.evset.entries[i]) for i in (1, 2))
    q._check_suspects(late)
    e1, e2 = q.evset.entries[1], q.evset.entries[2]
    assert e1.state is EvState.GOOD and not e1.suspect_ns and e1.probe_req_id < 0
    assert e2.state is EvState.ASSUMED_BAD


def test_min_active_swaps_in_the_ev_with_answered_probes():
    from mrc.core.ev import EvEntry, EvSet
    evs = EvSet(1, [EvEntry(b"a", 1), EvEntry(b"b", 2)], min_active=1)
    assert evs.mark_bad(1, 10, "rack")
    assert not evs.mark_bad(0, 20, "rack") and evs.holds == 1  # EV 1 never answered a probe: hold
    evs.entries[1].probe_streak = 1  # EV 1 answered one probe: it is alive
    assert evs.mark_bad(0, 30, "rack")
    assert [e.state for e in evs.entries] == [EvState.ASSUMED_BAD, EvState.GOOD]
    assert [(ev.ev_index, ev.new_state, ev.cause) for ev in evs.events[-2:]] == \
        [(1, EvState.GOOD, "min_active"), (0, EvState.ASSUMED_BAD, "rack")]


def test_with_every_ev_suspect_the_spray_takes_the_one_whose_missing_packet_left_last():
    """All GOOD EVs on trial: the spray uses the one whose missing packet was sent last (it delivered
    longest), not the first in round-robin order -- that was a dead path's, suspected since it died."""
    from mrc.core.ev import EvEntry, EvSet
    evs = EvSet(1, [EvEntry(b"a", 1), EvEntry(b"b", 1), EvEntry(b"c", 1)], min_active=1)
    for e, sent in zip(evs.entries, (1_000, 5_000, 3_000), strict=True):
        e.suspect_ns, e.suspect_sent_ns = sent + 100, sent
    assert [evs.pick() for _ in range(3)] == [1, 1, 1]  # before: whichever the round robin met first
    evs.entries[1].suspect_ns = 0  # EV 1 is cleared: it is trusted again
    assert evs.pick() == 1


def _reordering_run(adapt: bool):
    # every path holds 2% of its packets back by 3 us: beyond min_rtt / 4 (~1 us), within srtt (~5 us)
    paths = [PathSpec(reorder=0.02, reorder_ns=3_000) for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(reorder_adapt=adapt), buf_len=8 << 20)
    data = random.Random(9).randbytes(6 << 20)
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[: len(data)]) == data
    return p


def test_duplicate_echoes_widen_the_reordering_window():
    fixed, adaptive = _reordering_run(False), _reordering_run(True)
    assert fixed.qa.reo_mult == 1 and fixed.qa.counters.reorder_widened == 0
    assert adaptive.qa.counters.reorder_widened >= 1
    # fewer spurious loss verdicts: fewer retransmissions and fewer duplicates at the responder
    assert adaptive.qa.counters.retx_rack < fixed.qa.counters.retx_rack
    assert adaptive.qb.counters.duplicates_received < fixed.qb.counters.duplicates_received


def test_a_good_path_that_drops_large_frames_goes_assumed_bad_at_its_second_suspicion():
    """An EV in the spray whose path passes small frames and drops large ones (an MTU mismatch): the
    first suspicion's probe is small and its answer lifts the suspicion; no data sent on the EV since
    is delivered, so a later suspicion's probe is padded to a full data frame, is lost, and the EV goes
    ASSUMED_BAD.  The messages are delivered intact over the other EVs."""
    paths = [PathSpec() for _ in range(3)]
    paths[1].max_frame = 1500
    p = make_pair(paths, attr=QpAttr(mtu=4096))
    suspect_probes: list[int] = []  # sizes of the PROBE_REQs sent on EV 1 while it was GOOD

    real = p.a.send_frame

    def spy(port: int, fr: bytes, now_ns: int) -> None:
        if port == 2 and decode_frame(fr).opcode == F.OP_PROBE_REQ and p.qa.evset.entries[1].state is EvState.GOOD:
            suspect_probes.append(len(fr))
        real(port, fr, now_ns)

    p.a.send_frame = spy
    msgs = [(i, random.Random(i).randbytes(200_000), p.mr.base_va + i * 200_000, None) for i in range(4)]
    transfer(p, msgs)
    p.net.run(until_ns=p.net.now + 200_000)  # the last suspicion may still be waiting for its probe
    assert p.qa.evset.entries[1].state is EvState.ASSUMED_BAD
    assert len(suspect_probes) >= 2 and suspect_probes[0] < 200 and max(suspect_probes) > 4096, suspect_probes
    assert [c.status for c in p.done] == [WcStatus.SUCCESS] * 4
    for _i, data, va, _imm in msgs:
        assert bytes(p.mr.buf[va - p.mr.base_va:va - p.mr.base_va + len(data)]) == data


def _slow_path_pair(slow_delay_ns: int, down_until_ns: int = 5_000_000):
    """Two paths: path 0 with a ~0.2 ms round trip, path 1 with ``2 x slow_delay_ns``, down at first (so
    it goes ASSUMED_BAD on a real loss) and then working; 200 writes of 8 KiB keep the QP busy."""
    paths = [PathSpec(delay_ns=100_000), PathSpec(delay_ns=slow_delay_ns, down=[(0, down_until_ns)])]
    p = make_pair(paths, attr=QpAttr(mtu=1024), buf_len=1 << 22)
    for i in range(200):
        p.a.post_write(p.qa, i, b"x" * 8192, p.mr.base_va + 8192 * i, p.mr.rkey)
    return p


def _run_until_back(p, e, until_ns: int) -> tuple[list[int], list[int]]:
    """Run until EV ``e``, once ASSUMED_BAD, is back: the times it was seen ASSUMED_BAD, and back."""
    bad: list[int] = []
    back: list[int] = []

    def watch() -> bool:
        p.pump()
        if e.state is EvState.ASSUMED_BAD:
            bad.append(p.net.now)
        elif bad:
            back.append(p.net.now)
        return bool(back)

    p.net.run(until_ns=until_ns, stop=watch)
    return bad, back


def test_a_working_path_slower_than_the_probe_wait_comes_back():
    # h-fuzz8 (2026-12-07): path 1's 2.4 ms round trip exceeds the QP's probe wait (1 ms: 4 srtt of path 0
    # is below probe_min_ns); every answer came after the QP gave up on its probe and was dropped as
    # unknown (293 of 300), so the EV stayed ASSUMED_BAD for good while the path answered every probe.
    p = _slow_path_pair(1_200_000)
    e = p.qa.evset.entries[1]
    bad, back = _run_until_back(p, e, 100_000_000)
    assert bad and bad[0] < 5_000_000
    assert back, (e.state, p.qa.counters)
    assert p.qa.counters.probe_late_answers >= 1
    assert 4_800_000 <= e.probe_wait_ns <= 5_500_000  # twice the late answer's round trip
    assert back[0] < 30_000_000, back[0]  # a few probes after the path came back at 5 ms


def test_a_working_path_up_to_the_longest_learnable_wait_comes_back():
    # A round trip of about 8 of the QP's probe waits (1 ms here): the answer to the first probe came back
    # after 7 more had been given up, and the EV kept only its last 4 given-up probes, so every answer was
    # dropped as unknown and the working path stayed ASSUMED_BAD for good (the "about five waits" limit of
    # 2026-12-07).  An EV now takes the late answers of as many given-up probes as the longest wait it
    # can learn (PROBE_WAIT_MAX_X waits), so any round trip up to that cap is learned.
    p = _slow_path_pair(4_000_000)
    e = p.qa.evset.entries[1]
    bad, back = _run_until_back(p, e, 150_000_000)
    assert bad and bad[0] < 5_000_000
    assert back, (e.state, p.qa.counters)
    assert p.qa.counters.probe_late_answers >= 1
    assert 15_000_000 <= e.probe_wait_ns <= 17_000_000  # 2 x 8 ms, at the cap of 16 waits
    assert len(p.a._probes) <= 1 + PROBE_LATE_KEEP


def test_a_dead_path_keeps_the_qps_probe_cadence():
    # no late answer ever comes from a dead path: its wait stays the QP's (one probe per ms here)
    p = _slow_path_pair(1_200_000, down_until_ns=1 << 60)
    p.net.run(until_ns=40_000_000, stop=lambda: (p.pump(), False)[1])
    e = p.qa.evset.entries[1]
    assert e.state is EvState.ASSUMED_BAD and e.probe_wait_ns == 0
    assert p.qa.counters.probe_late_answers == 0
    before = p.qa.counters.probes_sent
    p.net.run(until_ns=p.net.now + 10_000_000, stop=lambda: (p.pump(), False)[1])
    assert 8 <= p.qa.counters.probes_sent - before <= 11
    assert len(p.a._probes) <= 1 + PROBE_LATE_KEEP  # the current probe and the given-up ones kept: no growth


def test_a_replaced_ev_forgets_the_old_paths_probe_wait():
    # REPLACE_EV puts a new path into the slot: the old path's late answers and learned wait are not its
    p = _slow_path_pair(1_200_000, down_until_ns=1 << 60)
    e = p.qa.evset.entries[1]
    p.net.run(until_ns=20_000_000, stop=lambda: (p.pump(), False)[1])
    assert e.probe_late  # given-up probes whose answers would still be taken
    e.probe_wait_ns = 7_000_000
    late = [rid for rid, _ in e.probe_late]
    p.qa.requester.paths_replaced([1])
    assert e.probe_late == [] and e.probe_wait_ns == 0
    assert not set(late) & set(p.a._probes)  # the host no longer routes them


def test_a_wait_learned_from_a_late_answer_does_not_slow_the_probes_of_a_path_that_died_since():
    # review h-rev10: the slow path comes back GOOD with its wait learned (4.8 ms), gets fast (its queue
    # drained: 0.2 ms), then dies and comes back 30 ms later.  Only a probe answered in time lowered the
    # learned wait, and a dead path answers none: it was probed once per 4.8 ms instead of once per ms
    # (3 probes in 10 ms), and went GOOD 5.3 ms after it came back instead of ~1 ms.  Each probe given up
    # now halves the learned wait.
    p = _slow_path_pair(1_200_000)
    e = p.qa.evset.entries[1]
    spec = p.net.paths[1]

    def step(until: int) -> None:
        p.net.run(until_ns=until, stop=lambda: (p.pump(), False)[1])

    def post(first: int, n: int) -> None:
        for i in range(first, first + n):
            p.a.post_write(p.qa, i, b"y" * 8192, p.mr.base_va + 8192 * (i % 500), p.mr.rkey)

    step(30_000_000)
    assert e.state is EvState.GOOD and e.probe_wait_ns >= 4_800_000
    spec.delay_ns = 100_000  # fast now
    post(500, 200)
    step(40_000_000)
    t_dead = p.net.now
    spec.down.append((t_dead, t_dead + 30_000_000))
    post(1000, 300)
    step(t_dead + 20_000_000)
    assert e.state is EvState.ASSUMED_BAD
    before = p.qa.counters.probes_sent
    step(t_dead + 30_000_000)
    assert p.qa.counters.probes_sent - before >= 8  # the QP's cadence: one probe per ms
    back: list[int] = []

    def watch() -> bool:
        p.pump()
        if e.state is EvState.GOOD:
            back.append(p.net.now)
        return bool(back)

    p.net.run(until_ns=t_dead + 90_000_000, stop=watch)
    assert back and back[0] - (t_dead + 30_000_000) < 2_500_000, back
