"""The goodput recovery measured on a window at any phase (report.goodput_recovery_sliding) against runs
whose crossing time is known, beside the fixed 20 ms bins' figure for the same runs."""
from __future__ import annotations

import pytest

from mrc_fabric.scenarios.report import (
    RECOVERED_FRACTION,
    goodput_bins,
    goodput_recovery,
    goodput_recovery_sliding,
)

W = 0.02  # the benches' window (bin) width
R = 10e6  # bytes/s before the failure and after the recovery


def _run(rate, end_s: float, sample_s: float, flows: int = 2) -> dict:
    """A run of one host with ``flows`` flows sharing the goodput ``rate(t)`` (bytes/s), sampled every
    ``sample_s`` from 0: the acknowledged bytes integrated numerically at 0.1 ms."""
    step, acked, t, samples = 1e-4, 0.0, 0.0, []
    n = round(end_s / sample_s)
    for k in range(n + 1):
        ts = k * sample_s
        while t < ts - 1e-12:
            acked += rate(t + step / 2) * step
            t += step
        samples.append([round(ts * 1e9)] + [int(acked / flows)] * flows)
    return {"elapsed_s": end_s, "faults": [], "hosts": {"h": {"flow_order": list(range(flows)), "samples": samples}}}


@pytest.mark.parametrize("phase_ms", [0, 3, 7, 11, 16])
def test_a_step_back_is_found_where_the_trailing_window_reaches_the_bar_whatever_the_grid_phase(phase_ms):
    """Goodput stops at the failure and comes back whole 100 ms later (at ``back``): the trailing window
    reaches 80% of the rate 0.8 windows after ``back``, at +116 ms.  The sliding measure says so for every
    phase of the failure against the bins' grid; the bins' figure is that plus 0-20 ms of grid phase."""
    tf = 0.5 + phase_ms / 1000
    back = tf + 0.1

    def rate(t):
        return 0.0 if tf <= t < back else R

    run = _run(rate, 1.2, 0.001)
    want = back + RECOVERED_FRACTION * W - tf  # 0.116 s
    got = goodput_recovery_sliding(run, W, tf, tf + 0.18, R / 1e6)
    assert got["recovery_s"] == pytest.approx(want, abs=0.0005)
    assert got["min_mb_s"] == 0.0
    binned = goodput_recovery(goodput_bins(run, W), W, tf, tf + 0.18, R / 1e6)["recovery_s"]
    assert want - 0.0005 <= binned <= want + W + 0.0005  # the grid only ever adds, up to one bin


def test_the_bins_figure_moves_by_up_to_a_bin_with_the_phase_and_the_sliding_one_does_not():
    """The same failure and recovery, shifted against the grid in 1 ms steps: the bins' figures spread
    over most of a bin (the quantisation), the sliding figures over less than a millisecond."""
    binned, sliding = [], []
    for phase_ms in range(20):
        tf = 0.5 + phase_ms / 1000
        back = tf + 0.1

        def rate(t, tf=tf, back=back):
            return 0.0 if tf <= t < back else R

        run = _run(rate, 0.9, 0.001)
        binned.append(goodput_recovery(goodput_bins(run, W), W, tf, tf + 0.18, R / 1e6)["recovery_s"])
        sliding.append(goodput_recovery_sliding(run, W, tf, tf + 0.18, R / 1e6)["recovery_s"])
    assert max(binned) - min(binned) >= 0.015
    assert max(sliding) - min(sliding) < 0.001
    assert sum(binned) / 20 - sum(sliding) / 20 == pytest.approx(W / 2, abs=0.003)  # half a bin on average


def test_a_ramp_back_at_the_hosts_5_ms_samples():
    """Goodput climbs linearly from 0 to the old rate over 100 ms: the trailing 20 ms window's mean is
    the rate at its middle, so it reaches 80% at 80 ms + half a window after the climb begins (+190 ms
    from the failure), also between the 5 ms samples."""
    tf, start = 0.5, 0.6

    def rate(t):
        return 0.0 if tf <= t < start else R * min(1.0, (t - start) / 0.1) if t >= start else R

    run = _run(rate, 1.2, 0.005)
    got = goodput_recovery_sliding(run, W, tf, tf + 0.18, R / 1e6)
    assert got["recovery_s"] == pytest.approx(start + 0.08 + W / 2 - tf, abs=0.001)


def test_no_dip_is_zero_and_no_return_is_none():
    assert goodput_recovery_sliding(_run(lambda t: R, 1.0, 0.005), W, 0.5, 0.7, R / 1e6)["recovery_s"] == 0.0
    half = _run(lambda t: R if t < 0.5 else R / 2, 1.0, 0.005)
    r = goodput_recovery_sliding(half, W, 0.5, 0.7, R / 1e6)
    assert r["recovery_s"] is None and r["min_mb_s"] == pytest.approx(5.0, abs=0.01)
    assert goodput_recovery_sliding(half, W, 0.5, 0.7, 0.0)["recovery_s"] is None  # no reference rate
    assert goodput_recovery_sliding({"hosts": {}}, W, 0.5, 0.7, 10.0)["recovery_s"] is None  # no samples


def test_two_stalls_with_a_burst_between_them_are_one_dip():
    """Nothing arrives for 30 ms, then an 18 ms burst at the full rate (data a resend releases: a window
    reaches 90% at its end), then nothing for 82 ms more, then the full rate: recovery is counted from
    the second stall (16 ms after its end at +150 ms), not from the burst that followed the first."""
    tf = 0.5

    def rate(t):
        if tf + 0.02 <= t < tf + 0.05 or tf + 0.068 <= t < tf + 0.15:
            return 0.0
        return R

    run = _run(rate, 1.0, 0.001)
    got = goodput_recovery_sliding(run, W, tf, tf + 0.18, R / 1e6)
    assert got["min_mb_s"] == 0.0
    assert got["recovery_s"] == pytest.approx(0.15 + RECOVERED_FRACTION * W, abs=0.0005)
