"""The simulator's kept QP deadlines (``SimRun._init_timers``) give the run the endpoint's full scans give.

``SimRun`` asks a QP for its deadline again only when a call it made to the endpoint may have changed
it (a frame from the QP's peer, its timer, a send, a message, a port change).  Checked two ways on
small runs that reach every such call -- a 31 -> 1 incast (the receiver holds 31 QPs: trims, resends),
several QPs per host pair sharing one EV profile, a link flap, a spine lost and a NIC port down and up
(suspect and ASSUMED_BAD EVs, probes, PORT_STATUS):

* every ``_next_timer`` answer equals ``Endpoint.get_timer()``'s at that moment, and every QP with data
  to send is among those ``_to_send`` offers ``Endpoint.datagrams_to_send``;
* the whole result (events, FCTs, samples, EV events, counters) equals that of the same run with
  ``SimRun.SCAN_ALL`` (the endpoint's own ``get_timer`` / ``handle_timer`` after every event).

Plus a fixed digest of one small incast, so a change of the simulated figures fails here (the bench's
figures are compared to the digit across stops: bench/README.md).
"""
from __future__ import annotations

import hashlib
import json

import pytest

from mrc_fabric.scenarios.spec import FabricSpec, FaultSpec, MeasureSpec, Scenario, SimSpec, TrafficSpec
from mrc_fabric.sim import run_sim
from mrc_fabric.sim.engine import SimRun


def _scenario(pattern: str, faults: tuple = (), qps: int = 1, size: int = 64 << 10, leaves: int = 2) -> Scenario:
    return Scenario(
        name="timer cache",
        fabric=FabricSpec(topology=None, generate={"planes": 2, "spines": 4, "leaves": leaves, "hosts_per_leaf": 8}),
        traffic=TrafficSpec(pattern=pattern, size=size, count=1, qps=qps, tx_depth=1, rate_gbps=100, shift=8,
                            ack_timeout=8, reorder_ms=0.004, probe_interval_ms=0.05, cc="none"),
        faults=faults, modes=("mrc",), deadline_s=0.003, seed=5,
        measure=MeasureSpec(sample_ms=0.002, bin_ms=0.004, congestion_ms=0.01),
        sim=SimSpec(link_gbps=100, delay_ns=1250, queue_packets=16, linger_s=100e-6 if faults else 0.0)).check()


CASES = {
    "incast-31": _scenario("incast", leaves=4),
    "qps-3-per-pair": _scenario("permutation", qps=3, size=128 << 10),
    "link-flap": _scenario("permutation", (FaultSpec(at=6e-6, kind="flap", a="p1l1", b="p1s1", duration=40e-6),),
                           size=256 << 10),
    "spine-loss-nic-down": _scenario("permutation", (FaultSpec(at=6e-6, kind="spine_loss", spine="p1s1",
                                                               duration=40e-6),
                                                     FaultSpec(at=10e-6, kind="nic_down", host="h2", plane=2,
                                                               duration=30e-6)), size=256 << 10),
}


def _simulated(raw: dict) -> dict:
    """The result without the run's own CPU and wall time."""
    out = dict(raw)
    out["sim"] = {k: v for k, v in raw["sim"].items() if k not in ("wall_s", "cpu_s", "events_per_s")}
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_kept_deadlines_match_the_endpoints_scans(monkeypatch, case):
    sc = CASES[case]
    seen = {"asked": 0, "set": 0, "sends": 0}
    kept = SimRun._next_timer

    def checked(self: SimRun, h: int) -> int | None:
        t = kept(self, h)
        assert t == self.eps[h].get_timer(), (case, h, self.now)
        seen["asked"] += 1
        seen["set"] += t is not None
        return t

    offered = SimRun._to_send

    def offered_checked(self: SimRun, h: int) -> list:
        busy = {i for i, qp in enumerate(self._tqps[h]) if qp.has_work()}
        assert busy <= self._tbusy[h], (case, h, self.now)  # every QP with work is offered
        seen["sends"] += bool(busy)
        return offered(self, h)

    monkeypatch.setattr(SimRun, "_next_timer", checked)
    monkeypatch.setattr(SimRun, "_to_send", offered_checked)
    monkeypatch.setattr(SimRun, "CACHE_MIN_QPS", 0)  # every host keeps its QPs' deadlines, however few
    fast = run_sim(sc, "mrc")
    monkeypatch.setattr(SimRun, "_next_timer", kept)
    monkeypatch.setattr(SimRun, "_to_send", offered)
    assert seen["asked"] > 1000 and seen["set"] > 100 and seen["sends"] > 100, seen  # the checks ran
    monkeypatch.setattr(SimRun, "SCAN_ALL", True)
    slow = run_sim(sc, "mrc")
    assert fast["completed"] and slow["completed"]
    assert _simulated(fast) == _simulated(slow)
    if case == "incast-31":
        assert sum(fast["switch_counters"][s]["congestion"].get("trimmed", 0) for s in fast["switch_counters"]) > 0
    if case != "incast-31" and case != "qps-3-per-pair":
        assert any(h["ev_events"] for h in fast["hosts"].values())


def test_hosts_with_few_qps_ask_the_endpoint_and_the_incast_receiver_keeps_deadlines():
    """Below ``CACHE_MIN_QPS`` QPs a host asks its endpoint's own scans (the bookkeeping cost more than it
    spared on 1-2 QPs a host); the 31 -> 1 incast's receiver keeps its QPs' deadlines."""
    run = SimRun(CASES["incast-31"], "mrc")
    few = [len(q) < SimRun.CACHE_MIN_QPS for q in run._tqps]
    assert run._tscan == few and any(few) and not all(few)


def test_a_small_incasts_simulated_results_are_fixed():
    """The 31 -> 1 incast's simulated results, hashed: a change of the simulator or the transport that
    moves any figure (events, FCTs, samples, EV events, counters) fails here."""
    raw = run_sim(CASES["incast-31"], "mrc")
    keep = {"events": raw["sim"]["events"], "elapsed_s": raw["elapsed_s"], "switch_counters": raw["switch_counters"],
            "hosts": {n: {k: h[k] for k in ("flows", "samples", "ev_events", "retx", "counters", "srtt_ns")}
                      for n, h in raw["hosts"].items()}}
    digest = hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]
    assert (raw["sim"]["events"], digest) == (EXPECTED_EVENTS, EXPECTED_DIGEST)


EXPECTED_EVENTS, EXPECTED_DIGEST = 26124, "fb1afce0b31ae7d5"  # main at d15a2a9, before the kept deadlines
