"""The cyclic collector during the simulator's event loop (``engine.loop_gc``).

A full collection walks every tracked object the process holds; a run at 1,024 hosts holds 4.6 M
from its set-up (plan, routes, endpoints, QPs), and with the collector's default young threshold
(700) its frames and events in flight outlived the young generations often enough to set off a full
collection every few hundred thousand events: ~15% of the loop's CPU at 1,024 hosts (bench/README.md
"Stop 60").  During the loop the set-up is frozen and the young threshold is ``LOOP_GC_GEN0``; after
it, the process's settings are back.  Collection never changes a result."""
from __future__ import annotations

import gc

import pytest

from mrc_fabric.scenarios.spec import FabricSpec, MeasureSpec, Scenario, SimSpec, TrafficSpec
from mrc_fabric.sim import engine, run_sim
from mrc_fabric.sim.engine import LOOP_GC_GEN0, SimRun


def _scenario() -> Scenario:
    return Scenario(
        name="loop gc",
        fabric=FabricSpec(topology=None, generate={"planes": 2, "spines": 4, "leaves": 2, "hosts_per_leaf": 4}),
        traffic=TrafficSpec(pattern="permutation", size=256 << 10, count=1, qps=1, tx_depth=1, rate_gbps=100,
                            shift=4, ack_timeout=8, reorder_ms=0.004, probe_interval_ms=0.05),
        modes=("mrc",), deadline_s=0.003, seed=3,
        measure=MeasureSpec(sample_ms=0.002, bin_ms=0.004, congestion_ms=0.01),
        sim=SimSpec(link_gbps=100, delay_ns=1250, queue_packets=16)).check()


def _simulated(raw: dict) -> dict:
    out = dict(raw)
    out["sim"] = {k: v for k, v in raw["sim"].items() if k not in ("wall_s", "cpu_s", "events_per_s")}
    return out


@pytest.fixture
def gc_state():
    thr, enabled = gc.get_threshold(), gc.isenabled()
    assert gc.get_freeze_count() == 0
    yield
    gc.unfreeze()
    gc.set_threshold(*thr)
    (gc.enable if enabled else gc.disable)()


def test_the_set_up_is_frozen_and_the_young_threshold_raised_during_the_loop(gc_state):
    gc.set_threshold(700, 10, 10)
    sim = SimRun(_scenario(), "mrc")
    seen = []

    def look() -> None:  # an event of the loop itself
        ep, mine = sim.eps[0], [object()]
        walked = gc.get_objects()
        seen.append((gc.get_threshold(), gc.get_freeze_count(), any(o is ep for o in walked),
                     any(o is mine for o in walked)))
    sim.at(2_000, look)
    raw = sim.run()
    assert raw["completed"] and len(seen) == 1
    thr, frozen, ep_walked, mine_walked = seen[0]
    # the endpoints (made at set-up) are out of every collection; what the loop makes is not
    assert thr == (LOOP_GC_GEN0, 10, 10) and frozen > 0 and not ep_walked and mine_walked
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0  # as before, after the loop


def test_a_higher_threshold_of_the_caller_is_kept(gc_state):
    gc.set_threshold(50_000, 5, 5)
    seen = []
    sim = SimRun(_scenario(), "mrc")
    sim.at(2_000, lambda: seen.append(gc.get_threshold()))
    sim.run()
    assert seen == [(50_000, 5, 5)] and gc.get_threshold() == (50_000, 5, 5)


def test_a_callers_frozen_objects_stay_frozen(gc_state):
    gc.freeze()
    frozen = gc.get_freeze_count()
    seen = []
    sim = SimRun(_scenario(), "mrc")
    sim.at(2_000, lambda: seen.append(gc.get_freeze_count()))
    sim.run()
    # the loop neither froze the set-up on top (it could not thaw it alone) nor thawed the caller's
    assert seen == [frozen] and gc.get_freeze_count() == frozen


def test_the_collector_changes_no_result(gc_state, monkeypatch):
    """The same run with the collector off, and collecting after every 10 allocations with nothing
    frozen (a collection at a different place of nearly every event)."""
    a = run_sim(_scenario(), "mrc")
    gc.disable()
    b = run_sim(_scenario(), "mrc")
    gc.enable()
    monkeypatch.setattr(engine, "LOOP_GC_GEN0", 1)  # the loop keeps the caller's threshold...
    gc.freeze()  # ...and freezes nothing on top of the caller's
    gc.set_threshold(10, 2, 2)
    c = run_sim(_scenario(), "mrc")
    assert a["sim"]["events"] > 1000
    assert _simulated(a) == _simulated(b) == _simulated(c)


def test_no_collection_during_the_set_up(gc_state):
    """SimRun's set-up makes its live objects with the collector paused (at 1,024 hosts it ran 14 full
    collections there that found nothing: 3.0 s of 25.5 s), and leaves it as it found it."""
    gc.set_threshold(100, 2, 2)
    starts = []

    def cb(phase, info):
        if phase == "start":
            starts.append(info["generation"])
    gc.callbacks.append(cb)
    try:
        sim = SimRun(_scenario(), "mrc")
    finally:
        gc.callbacks.remove(cb)
    assert starts == [] and gc.isenabled() and gc.get_threshold() == (100, 2, 2)
    gc.disable()
    SimRun(_scenario(), "mrc")
    assert not gc.isenabled()  # a caller's disabled collector stays disabled
    gc.enable()
    assert _simulated(sim.run()) == _simulated(run_sim(_scenario(), "mrc"))
