"""Runs the MRC switch PTF suite (ptf_tests/run.py) against softswitch, or bmv2 with TARGET=bmv2."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = os.environ.get("TARGET", "softswitch")


def _target_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (veth interfaces)"
    if TARGET == "bmv2":
        if shutil.which("simple_switch_grpc") is None:
            return "simple_switch_grpc is not on PATH"
        if not (ROOT / "build/mrc_switch/bmv2.json").exists():
            return "build/mrc_switch/bmv2.json missing (make build with p4c)"
        return None
    probe = subprocess.run([sys.executable, "-m", "softswitch", "--version"], check=False, cwd=ROOT,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"softswitch does not run: {probe.stderr.strip()[-200:]}"
    return None


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ptf_mrc_switch() -> None:
    reason = _target_missing()
    if reason:
        pytest.skip(f"{TARGET}: {reason}")
    result = subprocess.run([sys.executable, str(ROOT / "ptf_tests/run.py"), "--target", TARGET],
                            check=False, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
