"""Runs the MRC switch PTF suite (ptf_tests/run.py) against softswitch, or bmv2 with TARGET=bmv2, and checks
that ptf ran every test of the suite (an empty or partial selection is a failure, not a pass)."""
from __future__ import annotations

from pathlib import Path

import pytest
from ptf_runner import (
    ROOT,
    TARGET,
    assert_complete_run,
    ran_count,
    run_suite,
    skipped_tests,
    suite_tests,
    target_missing,
)

from mrc_fabric.targets import get_target

SUITE = ROOT / "ptf_tests" / "mrc_switch"
# Tests that may skip on a target lacking a capability (fabric/targets), with why; any other skip fails.
NEEDS_REGISTER_WRITES = {"test_congestion.TrimFromQueueEstimateTest"}


def allowed_skips(target: str) -> set[str]:
    """The tests the target's declared capabilities let skip."""
    return set() if get_target(target).can_write_registers else set(NEEDS_REGISTER_WRITES)


def test_suite_discovery_finds_the_groups() -> None:
    """The AST count sees the suite (a broken count would make the run check below vacuous)."""
    tests = suite_tests(SUITE)
    assert len(tests) >= 30, sorted(tests)
    for name in ("test_ipv4.Ipv4RouteTest", "test_congestion.TrimTest", "test_srv6.HopLimitTest"):
        assert name in tests
    assert not any(name.split(".")[1].startswith("_") for name in tests)


def test_other_suites_are_discovered() -> None:
    """The fabric and softswitch wrappers use the same AST count; it must see their suites too."""
    fabric = suite_tests(ROOT / "ptf_tests" / "fabric")
    softswitch = suite_tests(ROOT / "ptf_tests" / "softswitch")
    assert len(fabric) >= 10 and "test_srv6_paths.EvPathsSameLeafTest" in fabric, sorted(fabric)
    assert len(softswitch) >= 25, sorted(softswitch)


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
    reason = target_missing(TARGET, "veth interfaces")
    if reason:
        pytest.skip(f"{TARGET}: {reason}")
    run_suite("run.py", SUITE, ["--target", TARGET, "--log-dir", str(tmp_path)], allowed_skips(TARGET), timeout=880)
