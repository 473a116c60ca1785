"""A silence of the peer is no path's fault: it must not retire EVs (issue 11: never retire a healthy path).

When the receiving host stops answering for a while (its process descheduled, as the Python endpoints on
the emulated fabric are: repro/evbad_row.py --stall server:30:4:1:0.5 of the h-evbad review retired 11
EVs in 4 stalls of 30 ms, every packet arriving and every probe answered right after), every EV with a
packet in flight goes quiet at once.  Nothing then tells one path from another -- the ACK timeout's rule
(docs/protocol.md: nothing acknowledged on any path, which path failed is unknown) -- so a suspect EV is
held suspect (out of the spray, as before) until the peer has been answering on other paths for half its
time to show life, and retired only if it is still quiet then.  A dead path among live ones is still retired (test_core_trim_alive.py).
"""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair


def _stall_receiver(p, for_ns: int) -> None:
    """Run the network while endpoint b does nothing for ``for_ns``: frames that reach it wait (in its
    socket), its timers do not run; then it takes them all, as a process that was not scheduled."""
    held: list[tuple[bytes, int]] = []
    b = p.b
    b.receive = lambda data, port, now_ns: held.append((data, port))  # type: ignore[method-assign]
    b.handle_timer = lambda now_ns: None  # type: ignore[method-assign]
    try:
        p.net.run(until_ns=p.net.now + for_ns)
    finally:
        del b.receive
        del b.handle_timer
    for data, port in held:
        b.receive(data, port, p.net.now)
    p.net.kick()


def _transfer_with_stall(stall_srtts: int):
    p, data = _four_paths_writing(5, 1 << 20)
    req = p.qa.requester
    p.net.run(until_ns=400_000)  # RTT samples on every path, packets in flight on every path
    assert req.srtt and all(e.srtt for e in req.evset.entries)
    assert {pk.ev for pk in req.pkts.values() if pk.state == pk.INFLIGHT} == {0, 1, 2, 3}
    _stall_receiver(p, stall_srtts * req.srtt)
    _until_done(p, 50_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    return p, req


def _four_paths_writing(seed: int, size: int, dead_from_ns: int | None = None, dark: tuple[int, int] | None = None):
    """Four 1 Gb/s paths of 20 us (path 2 dead from ``dead_from_ns``; every path dark over ``dark``), and one
    ``size``-byte write of seeded data posted: (pair, data)."""
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9, down=[dark] if dark else []) for _ in range(4)]
    if dead_from_ns is not None:
        paths[2].down = [(dead_from_ns, None)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc="none", ev_min_active=1), buf_len=max(1 << 21, size))
    data = random.Random(seed).randbytes(size)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    return p, data


def _until_done(p, budget_ns: int, each=None) -> None:
    """Run the pair in 10 us steps until its one write completes, within ``budget_ns`` of now; ``each``
    is called after every step."""
    end = p.net.now + budget_ns
    while len(p.done) < 1:
        assert p.net.now < end, "the write did not complete"
        p.net.run(until_ns=p.net.now + 10_000)
        p.pump()
        if each is not None:
            each()


def test_a_receiver_that_stops_answering_retires_no_ev():
    p, req = _transfer_with_stall(30)  # far beyond every EV's late limit and time to show life
    assert req.counters.rack_ev_suspect >= 1  # the EVs did go quiet...
    bad = [e for e in p.a.poll_events() if e.new_state is EvState.ASSUMED_BAD]
    assert bad == [] and req.verdicts == []  # ...but nothing said which path, if any, had failed
    assert all(s is EvState.GOOD for s in req.evset.prof.states)


def test_a_receiver_that_answers_once_and_stalls_again_retires_no_ev():
    """Two stalls an RTT apart: the EVs went suspect in the first, the peer answered once between them,
    and the second lasted most of their time to show life.  The hold for a silent peer looked only at
    its first answer since the suspicion -- long enough ago -- and retired 3 healthy EVs; the peer
    silent now, while it owed an answer, is a hold too (in the demo through the bmv2 stand-ins: one EV
    retired, its peer silent 182 ms of its 282 ms)."""
    for second in (8, 12):
        p, data = _four_paths_writing(5, 1 << 20)
        req = p.qa.requester
        p.net.run(until_ns=400_000)
        _stall_receiver(p, 3 * req.srtt)
        p.net.run(until_ns=p.net.now + req.srtt)  # the peer answers
        _stall_receiver(p, second * req.srtt)
        _until_done(p, 50_000_000)
        assert bytes(p.mr.buf[: len(data)]) == data
        assert req.counters.rack_ev_suspect >= 1 and req.counters.rack_ev_peer_silent >= 1
        assert [e.ev_index for e in req.evset.prof.events if e.state is EvState.ASSUMED_BAD] == [], second
        assert all(st is EvState.GOOD for st in req.evset.prof.states)


def test_a_path_that_stays_quiet_while_the_peer_answers_on_others_is_still_retired():
    p, data = _four_paths_writing(6, 1 << 20, dead_from_ns=300_000)
    req = p.qa.requester
    _until_done(p, 50_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    assert req.evset.prof.states[2] is EvState.ASSUMED_BAD
    assert [v["ev"] for v in req.verdicts] == [2]


def test_a_dead_path_suspected_while_the_receiver_stalls_is_retired_soon_after_the_stall():
    """A resent packet whose earlier copies the stalled receiver held is acknowledged right after its
    latest copy left: that proves *an* earlier copy arrived, not the first.  Crediting the first copy's
    path (dead here) lifted its suspicion, and it was retired 12 ms after the stall instead of within one
    time to show life (``MrcRequester._first_copy_arrived``; found from the retirement's evidence)."""
    p, data = _four_paths_writing(1, 1 << 22, dead_from_ns=300_000)
    p.net.run(until_ns=440_000)  # the dead path's first verdict comes at ~510 us, during the stall
    _stall_receiver(p, 2_000_000)
    stall_end = p.net.now
    bad = []
    _until_done(p, 50_000_000, lambda: bad.extend(e for e in p.a.poll_events() if e.new_state is EvState.ASSUMED_BAD))
    assert bytes(p.mr.buf[: len(data)]) == data
    assert [e.ev_index for e in bad] == [2]
    assert bad[0].time_ns - stall_end < 1_000_000  # 0.54 ms; 11.9 ms (after the write) before


def test_an_outage_of_every_path_retires_no_ev_although_the_probes_sent_in_it_were_lost():
    """Every path dark for 1-10 ms, then all healthy: the peer was silent on every path, so no EV may be
    retired (the rule above).  The suspect EVs' one probe each went into the outage and was lost; a hold
    that waited for it alone retired 3 of 4 healthy EVs right after the paths came back (review h-rev5,
    repro/silent_all_paths_outage.py).  A held EV whose probe left before the peer answered again is
    probed again."""
    for outage in (1_000_000, 3_000_000, 10_000_000):
        p, data = _four_paths_writing(5, 1 << 23, dark=(400_000, 400_000 + outage))
        req = p.qa.requester
        _until_done(p, 200_000_000)
        assert bytes(p.mr.buf[: len(data)]) == data
        assert req.counters.rack_ev_peer_silent >= 1  # the EVs were held for the silence...
        bad = [e for e in p.a.poll_events() if e.new_state is EvState.ASSUMED_BAD]
        assert bad == [], (outage, [(e.time_ns, e.ev_index, e.evidence) for e in bad])  # ...and none retired
        assert all(s is EvState.GOOD for s in req.evset.prof.states)


def test_packets_resent_into_an_outage_of_every_path_wait_for_the_timeout():
    """Every path dark for 5 ms on 2 us paths: each packet in flight gets one tail-loss resend in the
    silence, then waits for the retransmission timeout (RFC 8985 7: one tail-loss probe, then the RTO).
    Until 2026-12-07 every copy was resent again one tail-loss limit (a few us) after it left, and a
    fresh loss flushed every copy on its quiet EV: 14,576 RACK resends in the 5 ms here, and in fuzzer
    seed 161564 (mix all_out) ~25,000 per QP and 190 us of CPU per simulated event."""
    start, outage = 100_000, 5_000_000
    paths = [PathSpec(delay_ns=2_000, rate_bps=25e9, down=[(start, start + outage)]) for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", ev_min_active=1), buf_len=1 << 23)
    data = random.Random(3).randbytes(1 << 22)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    req = p.qa.requester
    p.net.run(until_ns=start)
    rack0, rto0 = req.counters.retx_rack, req.counters.timeouts
    p.net.run(until_ns=start + outage)
    in_flight = [pk for pk in req.pkts.values() if pk.hist]
    assert in_flight
    for pk in in_flight:
        silent_rack = [h for h in pk.hist if h[1] == "rack" and pk.first_sent_ns + h[0] >= start + 50_000]
        assert len(silent_rack) <= 1, (pk.seq, pk.hist)
    assert req.counters.retx_rack - rack0 <= req.snd_nxt - req.snd_una  # 736 (14,576 before)
    assert req.counters.timeouts - rto0 >= 3  # the RTO resends meanwhile (1 ms)
    _until_done(p, 20_000_000)
    assert bytes(p.mr.buf[: len(data)]) == data
    assert all(s is EvState.GOOD for s in req.evset.prof.states)
