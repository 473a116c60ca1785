"""Runs the softswitch acceptance PTF suite (ptf_tests/run_softswitch.py) against softswitch, or
bmv2 with TARGET=bmv2 (skipped, naming the binary, when p4c-bm2-ss or simple_switch_grpc is missing);
every test of the suite must run and pass."""
from __future__ import annotations

from pathlib import Path

import pytest
from ptf_runner import ROOT, TARGET, run_suite, target_missing


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ptf_softswitch_suite(tmp_path: Path) -> None:
    reason = target_missing(TARGET, "veth interfaces", compiles=True)
    if reason:
        pytest.skip(f"{TARGET}: {reason}")
    run_suite("run_softswitch.py", ROOT / "ptf_tests" / "softswitch",
              ["--target", TARGET, "--log-dir", str(tmp_path)], set(), timeout=580)
