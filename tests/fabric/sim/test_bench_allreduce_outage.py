"""bench/fabric_sim.py's all-reduce case: a spine lost in the middle of step j stays lost for the reroute
time, which may cover later steps too; the case must report the worst of the steps the outage overlaps,
not step j alone (RC, 2026-12-06: step 4 1.0x, step 5 2.26x, reported as "RC 1.0x")."""
from __future__ import annotations


def test_outage_overlapping_two_steps_names_both(bench):
    us = 1e-6
    # RC's faulted run of 2026-12-06: the spine went at 1282.4 us (mid step 4) for 500 us
    steps = [x * us for x in (365.3, 364.8, 364.8, 375.1, 849.3, 375.1, 383.5, 375.1, 383.5, 375.1)]
    assert bench.outage_steps(steps, 1282.4 * us, 1782.4 * us) == [4, 5]


def test_outage_within_one_step_and_after_the_job(bench):
    steps = [10.0, 10.0, 10.0]
    assert bench.outage_steps(steps, 12.0, 15.0) == [2]
    assert bench.outage_steps(steps, 9.0, 25.0) == [1, 2, 3]
    assert bench.outage_steps(steps, 30.0, 40.0) == []  # after the last step ended
    assert bench.outage_steps(steps, 20.0, 21.0) == [3]  # a step that begins as the outage does
