"""The PASS/FAIL verdicts of bench/fabric_scenarios.py and bench/fabric_sim.py, on results shaped as
``report.analyse`` gives them: a verdict must fail when what it names did not happen, and must not
fail the best outcome.

* fabric_scenarios said "MRC delivered every byte of every run" from the fault-free run alone: an MRC
  link-failure or incast run that left messages undelivered still PASSed it (and the incast p99,
  taken over the delivered messages only, compared with RC's).
* fabric_sim's link-failure floor read ``recovery_rtts or 99``: a recovery of 0 RTTs (goodput never
  fell below the 80% line) FAILed as if it had never recovered.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str):
    sys.path.insert(0, str(_BENCH))  # fabric_recovery imports fabric_scenarios by name; keep it findable
    spec = importlib.util.spec_from_file_location(f"bench_{name}", _BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def scenarios():
    return _load("fabric_scenarios")


@pytest.fixture(scope="module")
def sim():
    return _load("fabric_sim")


def _run(completed: bool = True, p99_us: float = 100_000.0, messages: int = 48) -> dict:
    """The fields of one analysed run that the bench's verdicts read."""
    return {"completed": completed, "data_loss": not completed, "corrupt_messages": 0, "ev_retirements": 0,
            "outside_drops_reported": True, "kernel_rx_drops": 0, "queue_tail_drops": 0, "tx_drops": 0,
            "queue_tail_drops_by_queue": {}, "switch_trims": 2, "switch_ecn_marks": 900,
            "retransmissions": {"rack": 3}, "retransmissions_total": 3,
            "latency_us": {"p99": p99_us, "messages": messages},
            "ev_split": {"retired": 10, "retired_crossing": 10, "retired_healthy": 0, "unknown_path": 0},
            "recovery": [{"fault": "link_down p1l1-p1s1", "goodput_recovery_rtts": 2.4,
                          "goodput_recovery_sliding_rtts": 2.31}]}


def _res(**mrc: dict) -> dict:
    res = {k: {"mrc": _run(), "rc": _run(p99_us=500_000.0)} for k in ("a2a", "a2a_fail", "incast")}
    for k, run in mrc.items():
        res[k]["mrc"] = run
    return res


def _first(checks):
    ok, text = checks[0]
    assert "every byte" in text
    return ok, text


def test_every_run_delivered_passes(scenarios):
    checks = scenarios.acceptance(_res(), "softswitch")
    assert all(ok for ok, _ in checks), checks
    assert _first(checks)[0] is True


@pytest.mark.parametrize("run", ["a2a", "a2a_fail", "incast"])
def test_any_mrc_run_with_undelivered_bytes_fails_the_delivery_line(scenarios, run):
    ok, text = _first(scenarios.acceptance(_res(**{run: _run(completed=False, messages=40)}), "softswitch"))
    assert ok is False
    assert run in text


def test_a_corrupt_message_of_any_run_fails_the_delivery_line(scenarios):
    res = _res()
    res["incast"]["rc"]["corrupt_messages"] = 1
    ok, text = _first(scenarios.acceptance(res, "softswitch"))
    assert ok is False and "1" in text


def test_incast_row_says_when_its_p99_is_over_part_of_the_messages(scenarios):
    assert scenarios._p99_txt(_run(p99_us=158_600.0)) == "158.6 ms"
    assert scenarios._p99_txt(_run(completed=False, p99_us=158_600.0, messages=40)) == \
        "158.6 ms (of 40 delivered; not done)"


@pytest.mark.parametrize("binned, sliding, ok", [(3.1, 2.84, True), (2.9, 3.02, False), (3.1, None, False)])
def test_the_recovery_line_is_decided_on_the_window_at_any_phase(scenarios, binned, sliding, ok):
    """The bins' grid adds 0-20 ms (0-0.3 RTTs) to a figure by the failure's phase against it: the line
    is decided on the 20 ms window at any phase, and prints the bins' figure beside it."""
    run = _run()
    run["recovery"] = [{"fault": "link_down p1l1-p1s1", "goodput_recovery_rtts": binned,
                        "goodput_recovery_sliding_rtts": sliding}]
    line = [c for c in scenarios.acceptance(_res(a2a_fail=run), "softswitch") if "goodput recovery" in c[1]]
    assert len(line) == 1
    assert line[0][0] is ok
    assert f"{sliding} RTTs (20 ms window at any phase, held 20 ms; {binned} RTTs in fixed 20 ms bins, the first at the bar)" in line[0][1]


def test_sim_recovery_floor_takes_no_dip_as_met(sim):
    assert sim.within(0.0, 3) is True  # goodput never fell below 80%: the best outcome
    assert sim.within(2.9, 3) is True
    assert sim.within(3.01, 3) is False
    assert sim.within(None, 3) is False  # never recovered


def test_sim_permutation_floors_need_every_flow_done(sim):
    out = {"max_fct_ratio_rc_over_mrc": 25.0, "mrc_max_over_ideal": 1.08,
           "mrc": {"completed": True}, "rc": {"completed": True}}
    assert all(sim.permutation_floors(out).values())
    out["mrc"]["completed"] = False  # its max FCT is then over the flows that completed only
    assert sim.permutation_floors(out)["completed"] is False


def test_recovery_demo_summary_gives_the_spine_loss_stall_too(capsys):
    """fabric_recovery --demo: each run records both failures' longest stalls; the summary printed the
    first (link) one only, as "after the failure", and left the spine loss's out."""
    rec = _load("fabric_recovery")
    row = {"recovery_rtts": 2.5, "stall_rtts": 2.7, "failure_stall_rtts": 2.0, "spine_recovery_rtts": 2.4,
           "spine_stall_rtts": 4.1, "completion_s": 6.6, "ev_retirements": 20, "healthy_retired": 0, "resent": 200,
           "rack_resent": 150, "trims": 70, "duplicates": 50, "data_packets": 9000, "srtt_ms": 60.0, "complete": True}
    import argparse
    a = argparse.Namespace(runs=2, demo=True, fault_free=False)
    means: dict = {}
    assert rec._summary([row, dict(row, spine_stall_rtts=3.3)], a, means) == 0
    out = capsys.readouterr().out
    assert "longest flow stall after the link failure: median 2.70" in out
    assert "longest flow stall after the spine loss: median 3.70, max 4.1 RTTs" in out
    assert means["spine_stall"] == pytest.approx(3.7)


def test_sim_allreduce_floor_needs_every_run_done(sim):
    out = {m: {"completed": True, "clean_completed": True} for m in ("mrc", "rc")}
    assert sim.allreduce_floors(out) == {"completed": True}
    out["rc"]["completed"] = False  # its job time would then lack the steps it never finished
    assert sim.allreduce_floors(out) == {"completed": False}


def test_receive_ring_errors_count_among_the_frames_lost_outside_the_pipeline(scenarios):
    """Frames a receive ring cut short are never forwarded, and the controller's metric counts them as
    outside drops (rx_error); the run records them (Fabric.outside_drops), but analyse dropped them, the
    report never named them and the fault-free bar '0 frames lost outside the pipeline' passed with them."""
    from mrc_fabric.scenarios.report import analyse, outside_drops_text

    run = {"hosts": {}, "completed": True, "elapsed_s": 1.0, "deadline_s": 2.0, "total_bytes": 0, "flows": [],
           "faults": [], "mode": "mrc", "outside_drops_reported": True, "kernel_rx_drops": {"p1l1": 0},
           "queue_tail_drops": {"p1l1": 0}, "tx_drops": {"p1l1": 0}, "rx_errors": {"p1l1": 5, "p1s1": 0}}
    m = analyse(run)
    assert m["rx_errors"] == 5
    assert outside_drops_text(m) == ("kernel receive drops 0, traffic-manager tail drops 0, transmit drops 0, "
                                     "receive ring errors 5")
    assert outside_drops_text({**m, "rx_errors": 0}).endswith("transmit drops 0")  # named only when there are any
    res = _res()
    res["a2a"]["mrc"]["rx_errors"] = 5
    ok, text = next(c for c in scenarios.acceptance(res, "softswitch") if "outside the pipeline" in c[1])
    assert ok is False and text.startswith("fault-free MRC run: 5 frames lost outside the pipeline"), text


def test_a_switch_nobody_read_is_named_and_fails_the_fault_free_bar(scenarios):
    """A switch whose port statistics could not be read (stopped at the start or the end) is in none of
    the outside-drop sums: they said 0 for what nobody read, and the fault-free bar passed on it (review
    h-bench2).  The run names it (outside_drops_unread), the report says so, and the bar needs every switch."""
    from mrc_fabric.scenarios.report import analyse, outside_drops_text

    run = {"hosts": {}, "completed": True, "elapsed_s": 1.0, "deadline_s": 2.0, "total_bytes": 0, "flows": [],
           "faults": [], "mode": "mrc", "outside_drops_reported": True, "kernel_rx_drops": {"p1l1": 0},
           "queue_tail_drops": {"p1l1": 0}, "tx_drops": {"p1l1": 0}, "rx_errors": {"p1l1": 0},
           "outside_drops_unread": ["p2s2"]}
    m = analyse(run)
    assert m["outside_drops_unread"] == ["p2s2"]
    assert outside_drops_text(m).endswith("transmit drops 0; not read from p2s2")
    res = _res()
    res["a2a"]["mrc"]["outside_drops_unread"] = ["p2s2"]
    ok, text = next(c for c in scenarios.acceptance(res, "softswitch") if "outside the pipeline" in c[1])
    assert ok is False and "not read from p2s2" in text, text
    res["a2a"]["mrc"]["outside_drops_unread"] = []
    ok, _ = next(c for c in scenarios.acceptance(res, "softswitch") if "outside the pipeline" in c[1])
    assert ok is True


def _scale_failure(**failure) -> dict:
    """bench/fabric_sim.py scale-failure's MRC result as the case builds it (the best outcome, then ``failure``)."""
    f = {"affected_flows": 64, "measured_flows": 64, "not_recovered_count": 0, "aggregate_recovery_rtts": 2.3,
         "aggregate_held_recovery_rtts": 2.5, "stall_rtts_max": 2.4, "completed": True,
         "evs": {"retired_healthy": 0, "unknown_path": 0}, "fct_mean_us": 40.0, "fct_p99_us": 45.0, "fct_max_us": 50.0}
    f.update(failure)
    c = {"completed": True, "fct_mean_us": 37.0, "fct_p99_us": 38.0, "fct_max_us": 39.0}
    return {"mrc": {"failure": f, "clean": c}, "floors": {}}


def test_sim_scale_failure_floors_judge_flows_done_without_their_rate_back(sim):
    """Until 2026-12-07 a flow with no bin back at 80% was "recovered" at its completion, and the
    aggregate's completion bins (every byte held behind a hole at once) read as its rate back: 62 of 64
    flows and the aggregate on a 64-host run.  Not recovered now, and the floors say so."""
    best = _scale_failure()
    sim._mrc_floors(best)
    assert all(best["floors"].values())
    for bad in ({"not_recovered_count": 62}, {"aggregate_recovery_rtts": None, "aggregate_held_recovery_rtts": None},
                {"aggregate_held_recovery_rtts": 3.2}):  # back in 2.3, but the rate held only from 3.2
        out = _scale_failure(**bad)
        sim._mrc_floors(out)
        assert not all(out["floors"].values()), bad
    no_dip = _scale_failure(aggregate_recovery_rtts=0.0, aggregate_held_recovery_rtts=0.0)  # never below the bar
    sim._mrc_floors(no_dip)
    assert all(no_dip["floors"].values())


def _congestion_line(checks):
    lines = [(ok, t) for ok, t in checks if t.startswith("fault-free MRC run: congestion seen")]
    assert len(lines) == 1, checks
    return lines[0]


def test_a_pipeline_drop_in_the_fault_free_run_fails_the_congestion_line(scenarios):
    """Congestion must show as trims and ECN marks, not drops: the line passed on any trim or mark, so a run
    whose switches dropped frames in their pipelines (an early drop on the queue estimate) read as PASS."""
    run = _run()
    run["switch_drops"] = {"early_drop": 7}
    ok, text = _congestion_line(scenarios.acceptance(_res(a2a=run), "softswitch"))
    assert ok is False
    assert "7 frames dropped in the switches' pipelines (early_drop 7)" in text


def test_the_congestion_line_names_the_duplicates_beside_the_rack_resends(scenarios):
    run = _run()
    run.update(switch_drops={}, duplicates_received=3)
    ok, text = _congestion_line(scenarios.acceptance(_res(a2a=run), "softswitch"))
    assert ok is True
    assert "0 frames dropped" in text and "3 RACK and 0 timeout resends, 3 duplicates at the receivers" in text
    run.update(switch_trims=0, switch_ecn_marks=0)  # resends with no congestion seen anywhere: not explained
    assert _congestion_line(scenarios.acceptance(_res(a2a=run), "softswitch"))[0] is False
