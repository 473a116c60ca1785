"""Runs the softswitch acceptance PTF suite (ptf_tests/run_softswitch.py) against softswitch, or
bmv2 with TARGET=bmv2 (skipped, naming the binary, when p4c-bm2-ss or simple_switch_grpc is missing)."""
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
        for binary in ("p4c-bm2-ss", "simple_switch_grpc", "simple_switch_CLI"):
            if shutil.which(binary) is None:
                return f"{binary} is not on PATH"
    return None


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ptf_softswitch_suite(tmp_path: Path) -> None:
    reason = _target_missing()
    if reason:
        pytest.skip(f"{TARGET}: {reason}")
    result = subprocess.run([sys.executable, str(ROOT / "ptf_tests/run_softswitch.py"), "--target", TARGET,
                             "--log-dir", str(tmp_path)], check=False, cwd=ROOT, capture_output=True, text=True)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert " ... ok" in out, out[-6000:]  # ptf ran tests, not an empty selection
