"""Runs the fabric PTF suite (ptf_tests/run_fabric.py): MRC traffic through a converged 8-switch fabric
on softswitch, or on bmv2 with TARGET=bmv2."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = os.environ.get("TARGET", "softswitch")
PREFIX = "w3bp"  # its own namespaces/interfaces, so it never meets a manual run (prefix w3b)


def _target_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth interfaces, raw sockets)"
    if TARGET == "bmv2":
        if shutil.which("simple_switch_grpc") is None:
            return "simple_switch_grpc is not on PATH"
        if not (ROOT / "build/mrc_switch/bmv2.json").exists():
            return "build/mrc_switch/bmv2.json missing (make build with p4c)"
        return None
    if TARGET != "softswitch":
        return f"unknown TARGET {TARGET!r} (softswitch or bmv2)"
    return None


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ptf_fabric(tmp_path: Path) -> None:
    reason = _target_missing()
    if reason:
        pytest.skip(f"fabric PTF suite on {TARGET}: {reason}")
    result = subprocess.run([sys.executable, str(ROOT / "ptf_tests/run_fabric.py"), "--target", TARGET,
                             "--prefix", PREFIX, "--log-dir", str(tmp_path)],
                            check=False, cwd=ROOT, capture_output=True, text=True, timeout=580)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert "\nOK" in out and "FAILED" not in out, out[-3000:]
