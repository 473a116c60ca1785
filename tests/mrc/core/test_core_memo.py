"""The MRC requester's shortcuts past per-EV scans (``_pto_deadline``'s memo, the kept least path
delivery time, ``_watched_evs``, ``EvSet.pick``'s early return) give what the full computation gives.
Checked on every timer query of a simulated run with a link flap and with a spine lost (suspect and
ASSUMED_BAD EVs, resends, probes, EVs back to GOOD), and on a hand-made EV set."""
from __future__ import annotations

import pytest

from mrc.core.ev import EvEntry, EvSet
from mrc.core.mrc_policy import MrcRequester
from mrc.core.psn import unwrap
from mrc.core.requester import _Pkt
from mrc.core.types import EvState
from mrc_fabric.scenarios.spec import FabricSpec, FaultSpec, MeasureSpec, Scenario, SimSpec, TrafficSpec
from mrc_fabric.sim import run_sim


def _scenario(fault: FaultSpec) -> Scenario:
    return Scenario(
        name="memo check",
        fabric=FabricSpec(topology=None, generate={"planes": 2, "spines": 4, "leaves": 4, "hosts_per_leaf": 4}),
        traffic=TrafficSpec(pattern="permutation", size=256 << 10, count=1, qps=1, tx_depth=1, rate_gbps=100,
                            shift=4, ack_timeout=8, reorder_ms=0.004, probe_interval_ms=0.05),
        faults=(fault,), modes=("mrc",), deadline_s=0.003, seed=3,
        measure=MeasureSpec(sample_ms=0.001, bin_ms=0.002, congestion_ms=0.01),
        sim=SimSpec(link_gbps=100, delay_ns=1250, queue_packets=64, linger_s=200e-6)).check()


def _min_late_full(r: MrcRequester, w: int) -> int:
    d = r.srtt
    for e in r.evset.entries:
        if e.srtt and max(e.srtt, e.last_rtt) < d:
            d = max(e.srtt, e.last_rtt)
    return d + w


@pytest.mark.parametrize("fault", [FaultSpec(at=8e-6, kind="flap", a="p1l1", b="p1s1", duration=60e-6),
                                   FaultSpec(at=8e-6, kind="spine_loss", spine="p1s1", duration=60e-6)],
                         ids=["link-flap", "spine-loss"])
def test_shortcuts_match_the_full_scans(monkeypatch, fault):
    seen = {"checks": 0, "scans": 0, "suspect_or_bad": 0}
    memo, scan, timer = MrcRequester._pto_deadline, MrcRequester._pto_scan, MrcRequester.timer

    def counted_scan(self):
        seen["scans"] += 1
        return scan(self)

    def checked_deadline(self):
        got = memo(self)
        want = scan(self)
        assert got == want, f"memoised tail-loss deadline {got} != scan {want}"
        w = self._reorder_window()
        assert self._min_late_ns(w) == _min_late_full(self, w)
        seen["checks"] += 1
        return got

    def checked_timer(self):
        ents, states = self.evset.entries, self.evset.prof.states
        must = {i for i, e in enumerate(ents) if e.suspect_ns or states[i] is EvState.ASSUMED_BAD}
        watched = set(self._watched_evs())
        assert must <= watched, f"EVs with deadlines {sorted(must - watched)} not watched"
        seen["suspect_or_bad"] += bool(must)
        return timer(self)

    monkeypatch.setattr(MrcRequester, "_pto_scan", counted_scan)
    monkeypatch.setattr(MrcRequester, "_pto_deadline", checked_deadline)
    monkeypatch.setattr(MrcRequester, "timer", checked_timer)
    raw = run_sim(_scenario(fault), "mrc")
    assert raw["completed"]
    assert seen["checks"] > 1000 and seen["scans"] < seen["checks"], seen  # the memo answered some
    assert seen["suspect_or_bad"] > 0, "the fault made no EV suspect or ASSUMED_BAD: nothing was checked there"


def _pto_scan_by_methods(r: MrcRequester) -> int | None:
    """_pto_scan as it was before its limits were written out: ``_pkt_pto`` and ``_ev_late_ns`` per EV."""
    w, pto = r._reorder_window(), r._pto()
    first = min(pto, r._min_late_ns(w)) if r.srtt else pto
    heard = max(r.ack_now, r._probe_heard_ns)
    t = None
    for sent, seq, xm in r.sent_log:
        if t is not None and sent + (pto if sent >= r.rack_ts else first) >= t:
            break
        pkt = r.pkts.get(seq)
        if pkt is None or pkt.state != _Pkt.INFLIGHT or pkt.xmits != xm:
            continue
        if xm > 1 and heard < sent and sent >= r.rack_ts:
            continue  # resent into the peer's silence: left to the RTO
        c = sent + r._pkt_pto(pkt.ev, w)
        if r.srtt and sent < r.rack_ts:
            c = min(c, sent + r._ev_late_ns(pkt.ev, w))
        if t is None or c < t:
            t = c
    return t


@pytest.mark.parametrize("fault", [FaultSpec(at=8e-6, kind="flap", a="p1l1", b="p1s1", duration=60e-6)],
                         ids=["link-flap"])
def test_written_out_scan_and_sack_shortcut_match_the_methods(monkeypatch, fault):
    """``_pto_scan``'s written-out limits give ``_pkt_pto``/``_ev_late_ns``'s deadline, and the bits
    ``_on_ack`` skips as already SACKED (``_sacked_bits``) are each a packet SACKED or acknowledged."""
    seen = {"scans": 0, "acks": 0, "skipped": 0}
    scan, on_ack = MrcRequester._pto_scan, MrcRequester._on_ack

    def checked_scan(self):
        got, want = scan(self), _pto_scan_by_methods(self)
        assert got == want, f"written-out scan {got} != per-method scan {want}"
        seen["scans"] += 1
        return got

    def checked_ack(self, fr, now_ns):
        s = fr.sack
        if s is not None and s.bitmap:
            base = unwrap(s.sack_base, self.snd_una)
            d = base - self._sacked_base
            known = (self._sacked_bits >> d if d >= 0 else self._sacked_bits << -d) & s.bitmap
            seen["skipped"] += known.bit_count()
            while known:
                low = known & -known
                known ^= low
                pkt = self.pkts.get(base + low.bit_length() - 1)
                assert pkt is None or pkt.state == _Pkt.SACKED, "a bit skipped for a packet not SACKED"
            seen["acks"] += 1
        return on_ack(self, fr, now_ns)

    monkeypatch.setattr(MrcRequester, "_pto_scan", checked_scan)
    monkeypatch.setattr(MrcRequester, "_on_ack", checked_ack)
    raw = run_sim(_scenario(fault), "mrc")
    assert raw["completed"]
    assert seen["scans"] > 1000 and seen["acks"] > 100, seen
    assert seen["skipped"] > seen["acks"], seen  # SACKs repeat their predecessors' bits: skipped


def test_pick_returns_at_once_when_no_port_can_send():
    ents = [EvEntry(i, 1 + i % 2) for i in range(6)]
    es = EvSet(7, ents)
    for e in ents:
        e.penalty = 2
    rr = es.rr
    assert es.pick(lambda p: False) == -1
    assert es.rr == rr and [e.penalty for e in ents] == [2] * 6
    # a port that can send: the walk runs, spends penalties and finds an EV on that port
    i = es.pick(lambda p: p == 2)
    assert i >= 0 and ents[i].port == 2
