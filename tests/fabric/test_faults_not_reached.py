"""A fault due after a run has completed is named in the report, not silently dropped.

Found running docs/demo.md's scenario example: its incast completed in 0.15 s and its flap at 1 s
never happened, yet the report, the comparison (``faults: []``) and the timeline said nothing of it.
Run here on the simulated fabric (the same runner report as the emulated one; no root needed).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from mrc_fabric.scenarios import FaultSpec, load_scenario, run_scenario
from mrc_fabric.scenarios.report import summary_lines

ROOT = Path(__file__).resolve().parents[2]


def _small(faults: tuple[FaultSpec, ...]):
    sc = load_scenario(ROOT / "examples/sim/small-link-down.yaml")  # done in well under its 10 ms deadline
    return dataclasses.replace(sc, faults=faults, modes=("mrc",))


def test_a_fault_due_after_the_end_is_reported_not_reached(tmp_path):
    early = FaultSpec(at=0.00005, kind="link_down", a="p1l1", b="p1s1")
    late = FaultSpec(at=0.5, kind="flap", a="p1l2", b="p1s2", duration=0.1)
    res = run_scenario(_small((early, late)), workdir=tmp_path, engine="sim")
    m = res["metrics"]["mrc"]
    assert m["completed"] and m["elapsed_s"] < 0.5
    assert [f["fault"] for f in m["faults"] if not f.get("undo")] == [early.label()]
    assert m["faults_not_reached"] == [{"fault": late.label(), "at_s": 0.5}]
    line = next(x for x in summary_lines(m) if "NOT REACHED" in x)
    assert late.label() in line and early.label() not in line


def test_no_line_when_every_fault_was_applied(tmp_path):
    early = FaultSpec(at=0.00005, kind="link_down", a="p1l1", b="p1s1")
    m = run_scenario(_small((early,)), workdir=tmp_path, engine="sim")["metrics"]["mrc"]
    assert m["faults_not_reached"] == []
    assert not any("NOT REACHED" in x for x in summary_lines(m))
