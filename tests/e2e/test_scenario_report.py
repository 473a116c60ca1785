"""Scenario pieces that need no fabric: the switch congestion series and the measure section."""
from __future__ import annotations

import pytest

from fabric.scenarios import ScenarioError, parse_scenario
from fabric.scenarios.report import congestion_series


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
