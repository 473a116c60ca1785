"""Scenario pieces that need no fabric: the switch congestion series, goodput recovery, the measure section."""
from __future__ import annotations

import pytest

from mrc_fabric.scenarios import ScenarioError, parse_scenario
from mrc_fabric.scenarios.report import (
    congestion_series,
    goodput_recovery,
    post_failure_rate,
    pre_failure_mean,
)


def test_congestion_series_sums_switches_per_interval_and_survives_a_restart():
    run = {"congestion_samples": [
        [0.0, {"p1l1": {"trimmed": 10, "ecn_marked": 5}, "p2s2": {"trimmed": 0}}],
        [0.5, {"p1l1": {"trimmed": 14, "ecn_marked": 9}, "p2s2": {"trimmed": 3}}],
        [1.0, {"p1l1": {"trimmed": 14, "ecn_marked": 9}, "p2s2": {"trimmed": 2}}],  # p2s2 restarted: from 0
    ]}
    assert congestion_series(run) == [(0.5, {"trimmed": 7, "ecn_marked": 4}),
                                      (1.0, {"trimmed": 2, "ecn_marked": 0})]
    assert congestion_series({}) == []


def test_measure_congestion_period_is_parsed_and_checked():
    sc = parse_scenario({"measure": {"congestion_ms": 250}})
    assert sc.measure.congestion_ms == 250.0
    with pytest.raises(ScenarioError, match=r"scenario.measure.congestion_ms: expected a number"):
        parse_scenario({"measure": {"congestion_ms": "often"}})
    with pytest.raises(ScenarioError, match="must be positive"):
        parse_scenario({"measure": {"congestion_ms": 0}})


def _bins(rates: list[float], bin_s: float = 0.02) -> list[tuple[float, float]]:
    return [(round(i * bin_s, 3), g) for i, g in enumerate(rates)]


@pytest.mark.parametrize("section, key, value, why", [
    ("sim", "linger_s", "x", "expected a number"),
    ("sim", "shuffle_evs", "false", "expected true or false"),
    ("measure", "switch_counters", "no", "expected true or false"),
])
def test_every_scenario_value_is_checked_and_named(section, key, value, why):
    """A bad value is a ScenarioError naming its key, never a traceback or a string taken as true."""
    with pytest.raises(ScenarioError, match=rf"scenario\.{section}\.{key}: {why}"):
        parse_scenario({section: {key: value}})


def test_goodput_recovery_waits_for_the_dip_that_follows_the_failure():
    # failure at 0.10 s; the first bins after it still carry packets sent before it (above the bar),
    # the dip comes a round trip later; recovery is the end of the first bin back at >= 80%
    bins = _bins([10, 10, 10, 10, 10, 10, 9.5, 2, 3, 7, 8.5, 10, 10])
    r = goodput_recovery(bins, 0.02, 0.10, 0.40, 10.0)
    assert r == {"recovery_s": 0.12, "min_mb_s": 2, "min_at_s": 0.04}


def test_goodput_recovery_is_zero_without_a_dip_and_none_without_a_return():
    assert goodput_recovery(_bins([10, 10, 10, 9, 8.5, 10]), 0.02, 0.04, 0.2, 10.0)["recovery_s"] == 0.0
    # capacity lost for good: never back to 80% within the run
    assert goodput_recovery(_bins([10, 10, 10, 5, 5, 5, 5]), 0.02, 0.04, 0.2, 10.0)["recovery_s"] is None
    assert goodput_recovery(_bins([10, 10]), 0.02, 0.04, 0.2, 0.0)["recovery_s"] is None  # no pre-failure rate


def test_goodput_recovery_ignores_dips_after_the_horizon():
    # a dip 0.5 s later (another cause, or the next failure) is not this failure's
    bins = _bins([10] * 10 + [1] + [10] * 5, bin_s=0.05)
    assert goodput_recovery(bins, 0.05, 0.0, 0.3, 10.0)["recovery_s"] == 0.0


def test_a_failure_that_takes_capacity_is_measured_against_the_rate_after_it():
    # 10 MB/s before a failure at 0.10 s, 7 MB/s once settled (it took 30% of the capacity): 80% of the
    # old rate (8) is never reached, 80% of the new one (5.6) is, at the end of the bin at +0.10 s
    bins = _bins([10] * 5 + [10, 2, 1, 3, 6, 7] + [7] * 60)
    run = {"elapsed_s": 1.44, "faults": [{"t_s": 0.10}]}
    post = post_failure_rate(run, bins, 0.02, 0.10, 0.06)
    assert post == pytest.approx(7.0)
    assert goodput_recovery(bins, 0.02, 0.10, 0.28, 10.0)["recovery_s"] is None
    assert goodput_recovery(bins, 0.02, 0.10, 0.28, min(10.0, post))["recovery_s"] == pytest.approx(0.10)
    # the window after the failure ends at the next fault event (here its undo), and too few bins
    # there give no post-failure rate (the pre-failure rate stays the reference)
    run["faults"].append({"t_s": 0.30})
    assert post_failure_rate(run, bins, 0.02, 0.10, 0.06) is None


def test_the_post_failure_rate_ends_at_the_first_flow_completion():
    # two flows: 10 MB/s together until 0.50 s, when flow 1 completes and the rate halves (fewer flows,
    # not less capacity): the settled rate is the one before that completion, 10, not the mean with
    # the tail, 6.7; with too few bins before the completion the window runs on as before
    def host(fid, total):  # acknowledged bytes at 5 MB/s, every 10 ms, until the flow's total
        samples = [[i * 10_000_000, int(min(total, 5e6 * i / 100))] for i in range(101)]
        return {"flow_order": [fid], "samples": samples, "flows": {str(fid): {"count": 1, "size": total}}}

    run = {"elapsed_s": 1.0, "faults": [{"t_s": 0.10}],
           "hosts": {"a": host(1, int(5e6 * 0.5)), "b": host(2, int(1e9))}}
    from mrc_fabric.scenarios.report import first_flow_done

    assert first_flow_done(run) == pytest.approx(0.5)
    bins = _bins([10] * 25 + [5] * 25)
    assert post_failure_rate(run, bins, 0.02, 0.10, 0.06) == pytest.approx(10.0)
    run["hosts"]["a"]["flows"]["1"]["size"] = int(5e6 * 0.25)  # done at 0.25 s: 2 bins after 0.22 s
    assert first_flow_done(run) == pytest.approx(0.25)
    assert post_failure_rate(run, bins, 0.02, 0.10, 0.06) == pytest.approx((10 * 14 + 5 * 25) / 39)


def test_frames_lost_outside_the_pipeline_are_never_a_zero_nobody_counted():
    """A target without port_stats (bmv2) reports no kernel or traffic-manager drops: the report says they
    are not counted instead of printing the empty sum as 0; a target that counts them gets the figures."""
    from mrc_fabric.scenarios.report import outside_drops_text

    counted = {"outside_drops_reported": True, "kernel_rx_drops": 0, "queue_tail_drops": 3,
               "queue_tail_drops_by_queue": {"p1l1:3/0": 3}, "tx_drops": 2}
    assert outside_drops_text(counted) == \
        "kernel receive drops 0, traffic-manager tail drops 3 (p1l1:3/0 3), transmit drops 2"
    assert outside_drops_text({**counted, "outside_drops_reported": False}) == \
        "not counted by this target (no port_stats)"


def test_pre_failure_rate_starts_at_the_first_acknowledged_bytes():
    """The bins before the first ACK are the transfers not begun yet, not a fabric carrying nothing: a
    simulated failure at 50 us (5 us bins) has two of them, which took the rate and its 80% bar a fifth
    low (examples/sim/small-link-down.yaml: 65,081 instead of 83,675 MB/s)."""
    us = 1e-6
    bins = [(i * 5 * us, g) for i, g in enumerate([0, 0, 80, 90, 80, 90, 80, 90, 80, 85, 20, 10, 85])]
    assert pre_failure_mean(bins, 5 * us, 50 * us) == pytest.approx(590 / 7)  # bins 10..40 us, not 0 and 5
    # a window that begins after the first ACK is unchanged (the emulation's 1 s before a late failure)
    late = _bins([0, 0] + [10] * 100)
    assert pre_failure_mean(late, 0.02, 1.5) == pytest.approx(10.0)
    assert pre_failure_mean(_bins([0, 0, 0]), 0.02, 0.04) == 0.0  # nothing acknowledged: no rate


def test_a_run_without_an_rtt_names_its_dip_window_in_time_not_rtts():
    """The RC baseline keeps no srtt: its dip window is RECOVERY_HORIZON_S (0.3 s), which the summary
    called "3 RTTs" (on a simulated 10 ms run, the whole run)."""
    from mrc_fabric.scenarios.report import _window_text

    assert _window_text({"dip_window_s": 0.3, "dip_window_rtts": None}) == "300 ms (no RTT measured)"
    assert _window_text({"dip_window_s": 4e-5, "dip_window_rtts": 3.0}) == "3 RTTs"
    assert _window_text({}) == "3 RTTs"  # a result analysed before the window was recorded
