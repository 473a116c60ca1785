"""Runs the MRC switch PTF suite (ptf_tests/run.py) against softswitch, or bmv2 with TARGET=bmv2, and checks
that ptf ran every test of the suite (an empty or partial selection is a failure, not a pass)."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "ptf_tests" / "mrc_switch"
TARGET = os.environ.get("TARGET", "softswitch")
# Tests that may skip on a target, with why; any other skip fails this test.
ALLOWED_SKIPS = {
    "softswitch": set(),
    "bmv2": {"test_congestion.TrimFromQueueEstimateTest"},  # bmv2's P4Runtime server cannot write registers
}


def _target_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (veth interfaces)"
    if TARGET == "bmv2":
        if shutil.which("simple_switch_grpc") is None:
            return "simple_switch_grpc is not on PATH"
        if not (ROOT / "build/mrc_switch/bmv2.json").exists():
            return "build/mrc_switch/bmv2.json missing (make build with p4c)"
        return None
    if TARGET != "softswitch":
        return f"unknown TARGET {TARGET!r} (softswitch or bmv2)"
    probe = subprocess.run([sys.executable, "-m", "softswitch", "--version"], check=False, cwd=ROOT,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"softswitch does not run: {probe.stderr.strip()[-200:]}"
    return None


def suite_tests(suite: Path = SUITE) -> set[str]:
    """``module.Class`` of every test in the suite: public classes with a ``runTest`` method, read from
    the source (importing them would need ptf's runtime)."""
    found = set()
    for path in sorted(suite.glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and any(
                    isinstance(f, ast.FunctionDef) and f.name == "runTest" for f in node.body):
                found.add(f"{path.stem}.{node.name}")
    return found


def ran_count(output: str) -> int:
    """N of unittest's "Ran N tests" line in ptf's output (an AssertionError when it is missing)."""
    match = re.search(r"^Ran (\d+) tests? in ", output, re.MULTILINE)
    assert match, f"no 'Ran N tests' line in ptf's output:\n{output[-3000:]}"
    return int(match.group(1))


def skipped_tests(output: str) -> set[str]:
    """``module.Class`` of each test ptf reported as skipped (verbose ``... skipped 'why'`` lines)."""
    return set(re.findall(r"^(\S+) \.\.\. skipped", output, re.MULTILINE))


def assert_complete_run(out: str, expected: set[str], allowed_skips: set[str]) -> None:
    """ptf ran at least every test of ``expected``, each reported ok unless it is an allowed skip."""
    skipped = skipped_tests(out)
    assert skipped <= allowed_skips, f"unexpected skips: {sorted(skipped - allowed_skips)}"
    ran = ran_count(out)
    assert ran >= len(expected), f"ptf ran {ran} tests, the suite has {len(expected)}:\n{out[-3000:]}"
    passed = set(re.findall(r"^(\S+) \.\.\. ok$", out, re.MULTILINE))
    assert passed >= expected - skipped, f"not reported ok: {sorted(expected - skipped - passed)}"


def test_suite_discovery_finds_the_groups() -> None:
    """The AST count sees the suite (a broken count would make the run check below vacuous)."""
    tests = suite_tests()
    assert len(tests) >= 30, sorted(tests)
    for name in ("test_ipv4.Ipv4RouteTest", "test_congestion.TrimTest", "test_srv6.HopLimitTest"):
        assert name in tests
    assert not any(name.split(".")[1].startswith("_") for name in tests)


def test_run_check_rejects_partial_runs() -> None:
    """Canned ptf output: a complete run passes; an empty selection, a missing test or a skip that is
    not allowed fails."""
    rule = "\n" + "-" * 70 + "\n"
    full = f"test_a.X ... ok\ntest_b.Y ... skipped 'no registers'\n{rule}Ran 2 tests in 0.5s\n\nOK (skipped=1)\n"
    assert ran_count(full) == 2
    assert skipped_tests(full) == {"test_b.Y"}
    assert_complete_run(full, {"test_a.X", "test_b.Y"}, {"test_b.Y"})
    bad_runs = [
        (f"{rule}Ran 0 tests in 0.0s\n\nOK\n", set()),  # empty selection
        (f"test_a.X ... ok\n{rule}Ran 1 test in 0.1s\n\nOK\n", set()),  # test_b.Y never ran
        (full, set()),  # test_b.Y skipped where it must not be
        ("ptf: error: no tests\n", {"test_b.Y"}),  # no summary at all
    ]
    for out, allowed in bad_runs:
        with pytest.raises(AssertionError):
            assert_complete_run(out, {"test_a.X", "test_b.Y"}, allowed)


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ptf_mrc_switch(tmp_path: Path) -> None:
    reason = _target_missing()
    if reason:
        pytest.skip(f"{TARGET}: {reason}")
    result = subprocess.run([sys.executable, str(ROOT / "ptf_tests/run.py"), "--target", TARGET,
                             "--log-dir", str(tmp_path)],
                            check=False, cwd=ROOT, capture_output=True, text=True, timeout=880)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert_complete_run(out, suite_tests(), ALLOWED_SKIPS[TARGET])
