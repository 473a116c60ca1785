"""Fixtures shared by the simulator's tests."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[3] / "bench" / "fabric_sim.py"


@pytest.fixture(scope="module")
def bench():
    """bench/fabric_sim.py loaded as a module (the bench is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_fabric_sim", _BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
