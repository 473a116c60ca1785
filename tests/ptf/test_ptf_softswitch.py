"""Runs the softswitch acceptance PTF suite (ptf_tests/run_softswitch.py) against softswitch, or
bmv2 with TARGET=bmv2 (skipped, naming the binary, when p4c-bm2-ss or simple_switch_grpc is missing);
every test of the suite must run and pass."""
from __future__ import annotations

from pathlib import Path

import pytest
from ptf_runner import ROOT, TARGET, run_suite, suite_tests, target_missing

from mrc_fabric.targets import get_target

SUITE = ROOT / "ptf_tests" / "softswitch"
# tests that skip, saying why, on a target without the capability they need
NEEDS_CLONE_TRUNCATION = {"test_replication.CloneSessionTruncationTest"}


def allowed_skips(target: str) -> set[str]:
    """The suite's tests that may skip on ``target``: none on softswitch; on bmv2 the one its
    P4Runtime server cannot serve (a clone session with ``packet_length_bytes``)."""
    return set() if get_target(target).can_truncate_clones else set(NEEDS_CLONE_TRUNCATION)


def test_allowed_skips_follow_the_target_plugins() -> None:
    assert allowed_skips("softswitch") == set()
    assert allowed_skips("bmv2") == NEEDS_CLONE_TRUNCATION
    assert NEEDS_CLONE_TRUNCATION <= suite_tests(SUITE)  # still the suite's test names


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ptf_softswitch_suite(tmp_path: Path) -> None:
    reason = target_missing(TARGET, "veth interfaces", compiles=True)
    if reason:
        pytest.skip(f"{TARGET}: {reason}")
    run_suite("run_softswitch.py", SUITE, ["--target", TARGET, "--log-dir", str(tmp_path)], allowed_skips(TARGET),
              timeout=580)
