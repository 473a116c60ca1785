"""The per-flow recovery the scale bench prints (``report.failure_impact``), on simulated runs whose answer
is known: two hosts whose every path crosses one leaf-spine link (1 plane, 1 spine).  Down for 100 us,
no path is left to spray over, so each flow stands still until the link is back and recovers about a
base RTT after that; down for good, the failure is never routed around and no flow recovers -- both
must be reported as not recovered, neither as recovered at some completion."""
from __future__ import annotations

import pytest

from mrc_fabric.scenarios.report import analyse, failure_impact
from mrc_fabric.scenarios.spec import FabricSpec, FaultSpec, MeasureSpec, Scenario, SimSpec, TrafficSpec
from mrc_fabric.sim import run_sim

AT = 20e-6


def _sc(fault: FaultSpec | None) -> Scenario:
    """h1 <-> h2 over leaf p1l1 - spine p1s1 - leaf p1l2, 1 MiB each way at 100 Gb/s (~99 us)."""
    return Scenario(
        name="one path", fabric=FabricSpec(topology=None, generate={"planes": 1, "spines": 1, "leaves": 2,
                                                                      "hosts_per_leaf": 1}),
        traffic=TrafficSpec(pattern="permutation", size=1 << 20, count=1, qps=1, tx_depth=1, rate_gbps=100, shift=1,
                            ack_timeout=8, reorder_ms=0.004, probe_interval_ms=0.05),
        faults=(fault,) if fault else (), modes=("mrc",), deadline_s=0.002, seed=1,
        measure=MeasureSpec(sample_ms=0.001, bin_ms=0.002, congestion_ms=0.01),
        sim=SimSpec(link_gbps=100, delay_ns=1250, queue_packets=64)).check()


@pytest.fixture(scope="module")
def clean() -> dict:
    return run_sim(_sc(None), "mrc")


def test_a_flow_recovers_once_its_only_link_is_back(clean):
    raw = run_sim(_sc(FaultSpec(at=AT, kind="flap", a="p1l1", b="p1s1", duration=100e-6)), "mrc")
    assert analyse(raw)["completed"]
    imp = failure_impact(raw, AT, 2e-6, reference=clean)
    rec, rtt = imp["recovery"], imp["base_rtt_s"]
    assert imp["affected_flows"] == rec["measured"] == rec["recovered_count"] == 2
    for f in rec["flows"].values():
        # not before the link is back, and within two base RTTs of it (measured: 110 and 112 us)
        assert f["outcome"] == "recovered" and 100e-6 <= f["recovery_s"] <= 100e-6 + 2 * rtt
        assert f["done_s"] - AT > f["recovery_s"]  # back before its completion, not at it
    assert rec["not_recovered"] == [] and 100e-6 <= rec["aggregate_recovery_s"] <= 100e-6 + 2 * rtt


def test_a_failure_never_routed_around_recovers_no_flow(clean):
    raw = run_sim(_sc(FaultSpec(at=AT, kind="flap", a="p1l1", b="p1s1", duration=1.0)), "mrc")
    assert not analyse(raw)["completed"]
    rec = failure_impact(raw, AT, 2e-6, reference=clean)["recovery"]
    assert rec["running_at_end"] == rec["not_recovered"] == [1, 2] and rec["recovered_count"] == 0
    assert rec["recovery_s_max"] is None and rec["aggregate_recovery_s"] is None
    assert rec["stall_s_max"] > 1.9e-3  # from the failure to the end of the 2 ms run
