"""Runs the fabric PTF suite (ptf_tests/run_fabric.py): MRC traffic through a converged 8-switch fabric
on softswitch, or on bmv2 with TARGET=bmv2; every test of the suite must run and pass."""
from __future__ import annotations

from pathlib import Path

import pytest
from ptf_runner import ROOT, TARGET, run_suite, target_missing

PREFIX = "w3bp"  # its own namespaces/interfaces, so it never meets a manual run (prefix w3b)


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ptf_fabric(tmp_path: Path) -> None:
    reason = target_missing(TARGET, "network namespaces, veth interfaces, raw sockets")
    if reason:
        pytest.skip(f"fabric PTF suite on {TARGET}: {reason}")
    run_suite("run_fabric.py", ROOT / "ptf_tests" / "fabric",
              ["--target", TARGET, "--prefix", PREFIX, "--log-dir", str(tmp_path)], set(), timeout=580)
