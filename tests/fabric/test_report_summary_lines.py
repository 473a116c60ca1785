"""The per-run summary's recovery line: where the lowest goodput bin lies relative to the failure.  The
bin holding the failure begins before it, so the offset can be negative; it printed as "at +-3500.0 us"
in a demo on 2026-12-07."""
from __future__ import annotations

from mrc_fabric.scenarios.report import summary_lines


def _run(min_at_s: float) -> dict:
    """A run's analysed metrics with one recovery entry whose lowest bin is ``min_at_s`` from the failure."""
    rec = {"fault": "link_down p1l1-p1s1", "t_s": 1.5035, "pre_mb_s": 3.53, "post_mb_s": 3.98, "ref_mb_s": 3.53,
           "min_mb_s_after": 0.82, "min_at_s": min_at_s, "goodput_recovery_s": 0.036, "goodput_recovery_rtts": 0.5,
           "max_flow_stall_s": 1.281, "max_flow_stall_rtts": 17.2, "stalled_until_end": []}
    return {"mode": "mrc", "completed": True, "completion_s": 15.03, "elapsed_s": 15.03, "delivered_bytes": 75_497_472,
            "total_bytes": 75_497_472, "verified_bytes": 75_497_472, "corrupt_messages": 0, "failed_messages": 0,
            "goodput_mb_s": 5.02, "latency_us": {"p50": 982_000, "p99": 3_913_000}, "srtt_ms_median": 74.4,
            "bin_ms": 20.0, "recovery": [rec]}


def test_lowest_bin_before_the_failure_has_a_minus_sign():
    line = next(ln for ln in summary_lines(_run(-0.0035)) if "after link_down" in ln)
    assert "min 0.82 MB/s at -3500.0 us (20 ms bins)" in line and "+-" not in line


def test_lowest_bin_after_the_failure_keeps_its_plus_sign():
    line = next(ln for ln in summary_lines(_run(0.099)) if "after link_down" in ln)
    assert "min 0.82 MB/s at +99 ms (20 ms bins)" in line
