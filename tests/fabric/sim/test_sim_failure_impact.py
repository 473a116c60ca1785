"""A leaf-spine link lost mid-transfer on a small multi-plane fabric, measured by the code the
datacenter-scale bench uses (``report.failure_impact``, bench/fabric_sim.py scale-failure): the flows
that had packets on the dead link recover, no EV on a healthy path is retired, the EVs on the dead
link come back after it returns, and the run is the same for the same seed."""
from __future__ import annotations

import dataclasses

import pytest

from mrc_fabric.scenarios.report import analyse, down_intervals, failure_impact, path_crosses
from mrc_fabric.scenarios.spec import (
    FabricSpec,
    FaultSpec,
    MeasureSpec,
    Scenario,
    ScenarioError,
    SimSpec,
    TrafficSpec,
)
from mrc_fabric.sim import run_sim

AT = 20e-6  # the failure: half-way through sending, every flow in flight
SIZE = 1 << 20  # 42 us at the hosts' 2 x 100 Gb/s


def _sc(fault: FaultSpec | None, mode: str = "mrc") -> Scenario:
    """2 planes x 4 spines x 4 leaves x 4 hosts (16 hosts, 8 paths per pair), a permutation across leaves,
    datacenter timers and link speeds (the bench's), simulated on for 300 us after the traffic."""
    return Scenario(
        name="small failure",
        fabric=FabricSpec(topology=None, generate={"planes": 2, "spines": 4, "leaves": 4, "hosts_per_leaf": 4}),
        traffic=TrafficSpec(pattern="permutation", size=SIZE, count=1, qps=1, tx_depth=1, rate_gbps=100, shift=4,
                            ack_timeout=8, reorder_ms=0.004, probe_interval_ms=0.05),
        faults=(fault,) if fault else (), modes=(mode,), deadline_s=0.005, seed=1,
        measure=MeasureSpec(sample_ms=0.001, bin_ms=0.002, congestion_ms=0.01),
        sim=SimSpec(link_gbps=100, delay_ns=1250, queue_packets=64, linger_s=300e-6)).check()


LINK = FaultSpec(at=AT, kind="flap", a="p1l1", b="p1s1", duration=100e-6)


@pytest.fixture(scope="module")
def clean_run() -> dict:
    return run_sim(_sc(None), "mrc")


@pytest.fixture(scope="module")
def link_run() -> dict:
    return run_sim(_sc(LINK), "mrc")


def test_link_failure_affected_flows_recover_and_no_healthy_ev_is_retired(link_run, clean_run):
    raw = link_run
    assert analyse(raw)["completed"]
    assert down_intervals(raw) == [("p1l1", "p1s1", pytest.approx(AT), pytest.approx(AT + 100e-6))]
    imp = failure_impact(raw, AT, 2e-6, reference=clean_run)
    rtt = imp["base_rtt_s"]
    assert 10e-6 < rtt < 13e-6  # 8 x 1.25 us + 4 frames at 100 Gb/s
    # the flows with packets on the dead link: from or to the hosts of leaf p1l1 (h1-h4), no others
    leaf1 = {"h1", "h2", "h3", "h4"}
    flows = {f["fid"]: f for f in raw["flows"]}
    assert imp["affected_flows"] > 0 and imp["affected_packets_lost"] > 0
    assert all(flows[f]["src"] in leaf1 or flows[f]["dst"] in leaf1 for f in imp["affected"])
    rec = imp["recovery"]
    assert rec["measured"] > 0 and rec["not_recovered"] == []
    # together they are back to 80% of their rate (in 3.7 base RTTs here, on 8 paths per pair whose
    # queues stay full: the bench prints it for 256 paths); each one's cost against its clean run
    assert rec["aggregate_recovery_s"] is not None and rec["aggregate_recovery_s"] > 0
    assert imp["extra_fct_s_max"] > 0
    ev = imp["evs"]
    assert ev["retired_crossing"] > 0  # the dead link's EVs were taken out of use...
    assert ev["retired_healthy"] == 0 and ev["unknown_path"] == 0  # ...and no other
    assert ev["back_good_crossing_after_return"] == ev["retired_crossing"]  # all back once it returned
    assert ev["crossing_still_bad_at_end"] == ev["healthy_still_bad_at_end"] == 0


def test_every_retired_ev_path_crosses_the_link(link_run):
    """The EV events' paths (the simulator's 8th field) name the plan's nodes, host to host."""
    bad = [e for h in link_run["hosts"].values() for e in h["ev_events"] if e[5] == "ASSUMED_BAD"]
    assert bad and all(path_crosses(e[7], "p1l1", "p1s1") and e[7][0].startswith("h") and len(e[7]) == 5
                       for e in bad)


def test_grey_loss_is_no_failed_link_and_its_retirements_are_counted_apart():
    """A link that silently drops everything (link_loss) is not down: its retirements are not credited
    to a failed link, and not to healthy paths either (before 2026-12-06 every one was reported "on a
    healthy path") -- they have their own count, and a grey fault that crosses nothing leaves them 0."""
    raw = run_sim(_sc(FaultSpec(at=AT, kind="link_loss", a="p1l1", b="p1s1", loss=1.0, duration=100e-6)), "mrc")
    imp = failure_impact(raw, AT, 2e-6)
    assert imp["affected_flows"] == 0  # nothing offered to a down link
    ev = imp["evs"]
    assert ev["retired_grey"] > 0 and ev["retired_crossing"] == 0 and ev["retired_healthy"] == 0
    # the same run with the grey entries left out of its fault log: the retirements read as healthy
    bare = {**raw, "faults": [{k: v for k, v in f.items() if k != "grey"} for f in raw["faults"]]}
    sp = failure_impact(bare, AT, 2e-6)["evs"]
    assert sp["retired_healthy"] == ev["retired_grey"] and sp["retired_grey"] == 0


def test_rc_flows_pinned_to_the_link_stall_until_it_returns():
    raw = run_sim(_sc(LINK, "rc"), "rc")
    imp = failure_impact(raw, AT, 2e-6)
    assert imp["affected_flows"] > 0  # seed 1 pins pairs to p1s1 on plane 1
    assert imp["recovery"]["stall_s_max"] >= 90e-6  # until the link is back


def test_same_seed_same_failure_run(link_run):
    again = run_sim(_sc(LINK), "mrc")
    for k in ("elapsed_s", "faults", "switch_counters", "dead_link_drops", "flows"):
        assert again[k] == link_run[k]
    assert again["sim"]["events"] == link_run["sim"]["events"]
    assert {n: (h["samples"], h["ev_events"], h["flows"]) for n, h in again["hosts"].items()} == \
        {n: (h["samples"], h["ev_events"], h["flows"]) for n, h in link_run["hosts"].items()}


def test_linger_runs_on_after_the_traffic_and_must_not_be_negative(link_run):
    """sim.linger_s: the run goes on past the traffic's completion (done_s) for that long."""
    assert link_run["done_s"] is not None
    assert link_run["elapsed_s"] == pytest.approx(link_run["done_s"] + 300e-6, abs=1e-9)
    sc = _sc(LINK)
    with pytest.raises(ScenarioError, match="linger_s"):
        dataclasses.replace(sc, sim=dataclasses.replace(sc.sim, linger_s=-1.0)).check()


def test_short_flows_retire_the_dead_links_evs_too():
    """512 KiB flows: the resends of the packets lost on the link are made as the fabric drains, and come
    back in its base RTT, below the min_rtt the QPs learnt under load.  Taken as proof that the first
    copies had arrived, they cleared the dead EVs' suspicion and no dead EV was ever retired
    (docs/simulation.md); the ACK's ev_echo now tells which copy arrived."""
    sc = _sc(LINK)
    raw = run_sim(dataclasses.replace(sc, traffic=dataclasses.replace(sc.traffic, size=SIZE // 2)), "mrc")
    assert analyse(raw)["completed"]
    ev = failure_impact(raw, AT, 2e-6)["evs"]
    assert ev["retired_crossing"] > 0 and ev["retired_healthy"] == 0  # before: 0 and 0
