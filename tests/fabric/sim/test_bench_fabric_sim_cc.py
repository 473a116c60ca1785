"""bench/fabric_sim.py's congestion control: every case runs the one --cc names, and its default, auto, is
what the emulation's agent and the NICs run -- NSCC for MRC, DCQCN for the RC baseline.  Until
2026-12-07 the bench left traffic.cc empty, which the simulator reads as no congestion window, so every
simulated headline figure was for senders without one (bench/README.md stop 60)."""
from __future__ import annotations

from pathlib import Path

import pytest

from mrc_fabric.sim.engine import SimRun


def _kinds(sc, mode: str) -> set[str]:
    run = SimRun(sc, mode)
    return {type(qp.cc).__name__ for ep in run.eps for qp in ep.qps.values()}


def test_the_benchs_default_cc_is_nscc_for_mrc_and_dcqcn_for_rc(bench):
    a = bench.parser().parse_args([])
    assert a.cc == "auto" and a.scale_cc is None
    sc = bench.scenario(1, 2, 2, 2, 64 << 10, cc=a.cc)  # the cases' own builder, on 4 hosts
    assert sc.traffic.cc == "auto"
    assert _kinds(sc, "mrc") == {"NsccControl"}
    assert _kinds(sc, "rc") == {"Dcqcn"}


def test_cc_none_is_no_window_for_both_modes(bench):
    a = bench.parser().parse_args(["--cc", "none"])
    sc = bench.scenario(1, 2, 2, 2, 64 << 10, cc=a.cc)
    assert _kinds(sc, "mrc") == _kinds(sc, "rc") == {"NoControl"}


def test_a_scenario_files_own_cc_wins_over_the_benchs(bench):
    from mrc_fabric.scenarios.spec import load_scenario

    incast = load_scenario(str(Path(bench.EXAMPLES) / "incast-63.yaml"))
    demo = load_scenario(str(Path(bench.EXAMPLES) / "demo-timescale.yaml"))
    assert incast.traffic.cc == "nscc" and demo.traffic.cc == ""
    # --cc none keeps the incasts as recorded (NSCC), and fills the demo timescale's empty cc
    assert bench.file_cc(incast.traffic.cc, "none") == "nscc"
    assert bench.file_cc(demo.traffic.cc, "none") == "none"
    assert bench.file_cc(demo.traffic.cc, "auto") == "auto"


def test_an_unknown_cc_is_refused(bench, capsys):
    with pytest.raises(SystemExit):
        bench.parser().parse_args(["--cc", "reno"])
    assert "invalid choice: 'reno'" in capsys.readouterr().err
