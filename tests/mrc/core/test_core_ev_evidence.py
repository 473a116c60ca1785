"""Every EV state change carries the evidence of the rule that made it (``EvEvent.evidence``), so a user
can tell a dead link from a stalled receiver or a slow switch after the fact (docs/protocol.md, "Evidence
of an EV change").  Real endpoint pairs over the simulated network; the values are checked against what
the run itself shows (other events' times, the requester's verdict log, the paths' settings)."""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr, evidence_text
from mrc.core.ev import EvEntry, EvSet
from mrc.ctl import EvOp, EvOpArgs, EvOpEntry, EvProfileAttr, EvProfileAttrMask
from mrc.endpoint.perf import ev_timeline
from mrc.sim import PathSpec, make_pair

LOSS_KEYS = {"rule", "psn", "xmits", "sent_ago_ns", "later_on_ev_sent_after_ns", "later_acked", "later_acked_evs",
             "ev_delivered_ago_ns", "congestion_signal_ago_ns", "late_limit_ns", "pto_ns", "reorder_ns",
             "ev_reorder_ns", "quiet_ns", "srtt_ns", "rttvar_ns", "min_rtt_ns", "ev_srtt_ns", "ev_rttvar_ns",
             "ev_last_rtt_ns", "peer_heard_ago_ns", "in_flight_pkts", "by_time"}


def _run(paths, *, seed=1, size=1 << 22, stall=None, until_ns=200_000_000, attr=None):
    """One WRITE of ``size`` bytes from a to b; ``stall``: (start ns, length ns) during which b neither
    takes frames in nor runs timers (a descheduled process; it takes them all at the end).  Returns the
    pair, a's requester and every EV event of a, in order."""
    p = make_pair(paths, attr=attr or QpAttr(mode="mrc", cc="none", ev_min_active=1), buf_len=size, seed=seed)
    data = random.Random(seed).randbytes(size)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    events = []
    if stall is not None:
        p.net.run(until_ns=stall[0])
        held: list[tuple[bytes, int]] = []
        b = p.b
        b.receive = lambda d, port, now_ns: held.append((d, port))  # type: ignore[method-assign]
        b.handle_timer = lambda now_ns: None  # type: ignore[method-assign]
        try:
            p.net.run(until_ns=p.net.now + stall[1])
        finally:
            del b.receive
            del b.handle_timer
        for d, port in held:
            b.receive(d, port, p.net.now)
        p.net.kick()
    while len(p.done) < 1:
        assert p.net.now < until_ns, "the write did not complete"
        p.net.run(until_ns=p.net.now + 10_000)
        p.pump()
        events += p.a.poll_events()
    assert bytes(p.mr.buf[:size]) == data
    return p, p.qa.requester, events


def test_a_fifo_loss_verdict_names_the_lost_packet_and_what_was_delivered_after_it():
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9) for _ in range(4)]
    paths[2].loss = 0.02
    _, req, events = _run(paths, seed=3)
    bad = [e for e in events if e.new_state is EvState.ASSUMED_BAD]
    assert bad and {e.ev_index for e in bad} == {2} and all(e.cause == "rack" for e in bad)
    fifo = [v for v in req.verdicts if v["kind"] == "fifo"]
    assert len(fifo) == len(bad)
    for e, v in zip(bad, fifo):
        ev = e.evidence
        assert ev is not None and set(ev) == LOSS_KEYS and ev["rule"] == "fifo"
        # the same verdict as the requester's own log, as durations before the event
        assert ev["psn"] == v["psn"] and ev["sent_ago_ns"] == e.time_ns - v["sent_ns"] == v["age_ns"]
        assert ev["xmits"] == 1
        # the FIFO proof: a packet sent on this EV no earlier than the lost one was delivered
        assert ev["later_on_ev_sent_after_ns"] is not None and ev["later_on_ev_sent_after_ns"] >= 0
        # every other path delivers (only path 2 loses): each delivered a packet sent after it
        assert ev["later_acked_evs"] == 3 and ev["later_acked"] >= 1 and ev["by_time"] is False
        assert ev["congestion_signal_ago_ns"] is None  # no ECN, no trims on this network
        assert ev["sent_ago_ns"] >= min(ev["late_limit_ns"], ev["pto_ns"])  # the limit it was judged by
        assert ev["srtt_ns"] > 0 and ev["rttvar_ns"] >= 0 and ev["min_rtt_ns"] >= 2 * 20_000
        assert ev["ev_srtt_ns"] > 0 and ev["reorder_ns"] <= ev["ev_reorder_ns"]
        assert 0 <= ev["peer_heard_ago_ns"] < ev["srtt_ns"]  # the peer is answering
        assert "fifo: PSN" in evidence_text(ev)
    # the timeline mrc-perf --json writes carries it as it is
    rec = ev_timeline(events, 0)
    assert [r["evidence"] for r in rec] == [e.evidence for e in events]


def test_a_dead_path_is_retired_quiet_with_its_probe_unanswered_and_the_peer_heard_on_others():
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9) for _ in range(4)]
    paths[2].down = [(300_000, None)]
    _, req, events = _run(paths)
    bad = [e for e in events if e.new_state is EvState.ASSUMED_BAD]
    assert [e.ev_index for e in bad] == [2]
    ev = bad[0].evidence
    assert ev["rule"] == "quiet" and ev["peer_silent_holds"] == 0
    assert ev["probe_unanswered"] is True and ev["probe_sent_ago_ns"] is not None
    assert ev["suspect_for_ns"] >= ev["confirm_ns"] > 0  # held its whole time to show life
    assert ev["ev_delivered_ago_ns"] >= ev["suspect_for_ns"]  # nothing delivered on it since
    # the path died at 300 us: the last ACK reporting a delivery on it came within a round trip
    assert 300_000 < bad[0].time_ns - ev["ev_delivered_ago_ns"] <= 300_000 + ev["suspicion"]["srtt_ns"]
    assert ev["peer_heard_ago_ns"] is not None and ev["peer_heard_ago_ns"] < ev["confirm_ns"] // 2
    assert ev["peer_heard_after_suspect_ns"] is not None
    sus = ev["suspicion"]
    assert set(sus) == LOSS_KEYS and sus["rule"] == "loss"
    assert sus["later_on_ev_sent_after_ns"] is None  # nothing sent after it on the path arrived
    v = req.verdicts[0]
    assert v["kind"] == "quiet" and sus["psn"] == v["psn"]
    assert bad[0].time_ns - ev["suspect_for_ns"] == v["t_ns"]  # suspected at the verdict on that PSN
    assert "quiet: suspect" in evidence_text(ev)


def test_a_dead_path_while_the_peer_was_silent_shows_the_holds_and_when_the_peer_answered_again():
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9) for _ in range(4)]
    paths[2].down = [(300_000, None)]
    # the receiver stalls 2 ms from just before the dead EV's suspicion (~510 us, the test above): nothing
    # answers on any path, so the suspect EV is held, then retired once the peer has answered for a while
    stall = (440_000, 2_000_000)
    _, req, events = _run(paths, stall=stall)
    bad = [e for e in events if e.new_state is EvState.ASSUMED_BAD]
    assert [e.ev_index for e in bad] == [2], [(e.ev_index, e.evidence) for e in bad]
    ev = bad[0].evidence
    assert ev["rule"] == "quiet" and ev["peer_silent_holds"] >= 1
    assert req.counters.rack_ev_peer_silent >= ev["peer_silent_holds"]
    suspected = bad[0].time_ns - ev["suspect_for_ns"]
    assert stall[0] < suspected < sum(stall)  # suspected during the stall...
    # ...the peer first heard again only after it, and for at least half the time to show life at the end
    assert suspected + ev["peer_heard_after_suspect_ns"] >= sum(stall)
    assert bad[0].time_ns - (suspected + ev["peer_heard_after_suspect_ns"]) >= ev["confirm_ns"] // 2
    assert ev["suspect_for_ns"] > ev["confirm_ns"]  # held beyond its time to show life
    assert f"held {ev['peer_silent_holds']}x for a silent peer" in evidence_text(ev)
    # its probe sent at the suspicion went into the stall; a new one went once the peer answered again,
    # and that one the dead path left unanswered (review h-rev5: a probe sent in the silence proves nothing)
    assert ev["probe_unanswered"]
    assert bad[0].time_ns - ev["probe_sent_ago_ns"] >= suspected + ev["peer_heard_after_suspect_ns"]
    # retired in the suspicion made during the stall, soon after the peer answered again: a resent packet
    # whose earlier copies the stalled receiver held no longer vouches for its first copy's dead path
    # (MrcRequester._first_copy_arrived: retired at 14.3 ms, the suspicion lifted at the stall's end, before)
    assert bad[0].time_ns - sum(stall) < 2 * ev["confirm_ns"]


def test_a_probe_recovery_says_how_many_probes_answered_and_how_long_the_ev_was_bad():
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9) for _ in range(4)]
    paths[2].down = [(300_000, 3_000_000)]
    attr = QpAttr(mode="mrc", cc="none", ev_min_active=1)
    _, _, events = _run(paths, size=1 << 23, attr=attr)
    ch = [(e.ev_index, e.new_state) for e in events]
    assert ch == [(2, EvState.ASSUMED_BAD), (2, EvState.GOOD)]
    bad, good = events
    ev = good.evidence
    assert good.cause == "probe" and ev["rule"] == "probe"
    assert ev["answers_in_a_row"] == ev["probe_good_count"] == attr.probe_good_count
    assert ev["bad_for_ns"] == good.time_ns - bad.time_ns
    # answered ones are the streak; the others were sent while the path was down and given up
    assert ev["probes_sent"] == ev["probes_lost"] + attr.probe_good_count
    assert ev["probes_lost"] >= 1
    assert ev["last_probe_padded"] is True
    assert 2 * 20_000 <= ev["probe_rtt_ns"] < 200_000  # one round trip of the revived path
    # the probe answering came after the path was back
    assert good.time_ns - ev["probe_rtt_ns"] >= 3_000_000 - 20_000
    assert "probe: 3 answers in a row" in evidence_text(ev)


def test_port_events_and_the_controller_carry_their_evidence():
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9) for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc="none", ev_min_active=1))
    p.net.run(until_ns=100_000)
    p.a.set_port_state(2, False, p.net.now)
    p.net.run(until_ns=p.net.now + 200_000)
    (e,) = p.a.poll_events()
    assert (e.ev_index, e.cause, e.qpn) == (1, "port_down", 0)
    assert e.evidence == {"rule": "port_down", "port": 2, "ports_down": [2]}
    (e,) = p.b.poll_events()  # the PORT_STATUS reached b on a port still up
    assert (e.ev_index, e.cause) == (1, "peer_port_down")
    assert e.evidence["rule"] == "peer_port_down" and e.evidence["peer_ports_down"] == [2]
    assert e.evidence["rx_port"] != 2
    # the controller: DENIED is no event, back to GOOD is, with the operation that made it
    prof = p.qa.evset.prof
    for st in (EvState.DENIED, EvState.GOOD):
        prof.modify(EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(ev=prof.evs[0], state=st)])),
                    EvProfileAttrMask.EV_OP)
    (e,) = p.a.poll_events()
    assert (e.ev_index, e.new_state, e.cause) == (0, EvState.GOOD, "controller")
    assert e.evidence == {"rule": "controller", "op": "MODIFY_EV_STATE", "from": "DENIED"}
    assert evidence_text(e.evidence) == "controller: MODIFY_EV_STATE from DENIED"


def test_a_swap_for_ev_min_active_names_the_ev_it_replaces():
    ents = [EvEntry(0x100 + i, 1) for i in range(3)]
    es = EvSet(7, ents, min_active=2)
    assert es.mark_bad(0, 1_000, "rack", evidence={"rule": "fifo"})
    ents[0].probe_streak = 2  # two answers in a row so far
    assert es.mark_bad(1, 5_000, "rack", evidence={"rule": "quiet"})  # would leave 1 GOOD: EV 0 comes back
    evs = es.prof.events
    assert [(e.ev_index, e.new_state, e.cause) for e in evs] == [
        (0, EvState.ASSUMED_BAD, "rack"), (0, EvState.GOOD, "min_active"), (1, EvState.ASSUMED_BAD, "rack")]
    assert evs[0].evidence == {"rule": "fifo"} and evs[2].evidence == {"rule": "quiet"}
    assert evs[1].evidence == {"rule": "min_active", "instead_of_ev": 1, "verdict": "rack", "ev_min_active": 2,
                               "answers_in_a_row": 2, "bad_for_ns": 4_000}
    assert evs[1] == evs[1].__class__(**{**{f: getattr(evs[1], f) for f in evs[1].__dataclass_fields__},
                                         "evidence": None})  # not part of equality (nor of the hash)
    hash(evs[1])


def test_the_control_apis_own_changes_are_stamped_on_the_endpoints_clock():
    """A MODIFY_EV_STATE has no transport time of its own: stamped 0, it sorted before every change the
    transport had made earlier, so poll_events() returned a profile's changes out of order and an
    application replaying them ended with the wrong state.  The context's clock (the simulator's here,
    time.monotonic_ns in the driver) stamps it."""
    paths = [PathSpec(delay_ns=20_000, rate_bps=1e9) for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc="none", ev_min_active=1), buf_len=1 << 20)
    p.a.post_write(p.qa, 1, bytes(1 << 20), p.mr.base_va, p.mr.rkey, None)  # traffic: the clock runs
    p.net.run(until_ns=100_000)
    assert p.net.now == 100_000
    p.a.set_port_state(2, False, p.net.now)  # the transport's change: EV 1 ASSUMED_BAD
    p.net.run(until_ns=p.net.now + 200_000)
    prof = p.qa.evset.prof
    t_ctl = p.net.now
    assert t_ctl == 300_000
    for st in (EvState.DENIED, EvState.GOOD):  # then the controller's: EV 1 GOOD again
        prof.modify(EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(ev=prof.evs[1], state=st)])),
                    EvProfileAttrMask.EV_OP)
    evs = [e for e in p.a.poll_events() if e.ev_index == 1]
    assert [(e.new_state, e.cause) for e in evs] == [(EvState.ASSUMED_BAD, "port_down"), (EvState.GOOD, "controller")]
    assert evs[0].time_ns == 100_000 and evs[1].time_ns == t_ctl
    # MrcCtlContext.port_down (the control API told of a port) is stamped too
    p.a.ctl.port_down(3)
    (e,) = [e for e in p.a.poll_events() if e.ev_index == 2]
    assert (e.cause, e.time_ns, e.evidence["rule"]) == ("port_down", t_ctl, "port_down")


def test_unpolled_events_stay_bounded_and_say_how_many_went():
    """A profile keeps its EV state changes for ``Endpoint.poll_events``; a user who never polls must not
    grow the process without bound.  Past ``EV_EVENT_BACKLOG`` the older half goes, counted, and the first
    event kept carries the count in ``drop_count`` (as an mrc_ctl event queue reports an overflow); the
    controller's profiles (mrc.ctl) keep theirs the same way (tests/mrc/ctl/test_ctl_drives_transport.py)."""
    from mrc.core.ev import LocalEvProfile
    from mrc.core.types import EV_EVENT_BACKLOG

    prof = LocalEvProfile([b"a", b"b"], [1, 1], [EvState.GOOD, EvState.GOOD], min_active=0)
    flips = 3 * EV_EVENT_BACKLOG
    for t in range(flips):
        prof.endpoint_set_state(0, EvState.ASSUMED_BAD if t % 2 == 0 else EvState.GOOD, now_ns=t)
    assert len(prof.events) <= EV_EVENT_BACKLOG
    assert prof.events_dropped + len(prof.events) == flips
    assert prof.events[-1].time_ns == flips - 1  # the newest are kept, in order
    assert [e.time_ns for e in prof.events] == sorted(e.time_ns for e in prof.events)
    assert prof.events[0].drop_count > 0 and sum(e.drop_count for e in prof.events) <= prof.events_dropped
