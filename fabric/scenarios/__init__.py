"""Scenarios as code: MRC traffic through the emulated fabric with failures, measured and verified."""
from .report import analyse, late_lines, summary_lines, timeline_lines, verdict_lines
from .run import run_scenario
from .runner import FabricEnv, RunError, flows_for, run_traffic, topology_data
from .spec import (
    FabricSpec,
    FaultSpec,
    MeasureSpec,
    Scenario,
    ScenarioError,
    SimSpec,
    TrafficSpec,
    load_scenario,
    parse_scenario,
)

__all__ = [
    "FabricEnv", "FabricSpec", "FaultSpec", "MeasureSpec", "RunError", "Scenario", "ScenarioError", "SimSpec",
    "TrafficSpec", "analyse", "flows_for", "late_lines", "load_scenario", "parse_scenario", "run_scenario",
    "run_traffic", "summary_lines", "timeline_lines", "topology_data", "verdict_lines",
]
