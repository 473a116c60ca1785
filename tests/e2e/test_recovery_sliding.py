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


# The return must hold: recovery is the end of the first window at the bar such that every window ending
# in the next window width is at the bar too.  The first touch (hold_s=0, the rule before) is a minimum
# over phases and reads early where goodput hovers near the bar (a kept run: 1.01 RTTs for a return
# that held from ~4.9).  Rates change on whole milliseconds and the hosts sample every 1 ms, so the
# curve is exact and the answers are known.

TF = 0.5


def _held(run, horizon=TF + 0.18, hold_s=None):
    return goodput_recovery_sliding(run, W, TF, horizon, R / 1e6, hold_s=hold_s)["recovery_s"]


def test_a_clean_step_back_holds_at_once():
    """A full stall, then the whole rate from +100 ms on: the window reaches the bar 0.8 windows after the
    step and never leaves it, so the held figure is the first touch, +116 ms."""
    run = _run(lambda t: 0.0 if TF <= t < TF + 0.1 else R, 1.2, 0.001)
    want = 0.1 + RECOVERED_FRACTION * W
    assert _held(run) == pytest.approx(want, abs=2e-4)
    assert _held(run, hold_s=0.0) == pytest.approx(want, abs=2e-4)


def test_a_touch_and_go_is_not_the_recovery_the_later_held_return_is():
    """A stall to +40 ms, then 70% of the rate with a 10 ms burst at the whole rate at +80 ms, and the
    whole rate from +200 ms.  The burst lifts the window to the bar from +86.7 to +103.3 ms (16.7 ms,
    less than a window); the return at +200 ms reaches the bar a third of a window later (+206.7 ms)
    and stays."""
    def rate(t):
        if t < TF:
            return R
        d = t - TF
        if d < 0.04:
            return 0.0
        if 0.08 <= d < 0.09 or d >= 0.2:
            return R
        return 0.7 * R

    run = _run(rate, 1.2, 0.001)
    assert _held(run, hold_s=0.0) == pytest.approx(0.08 + W / 3, abs=2e-4)  # the first touch
    assert _held(run) == pytest.approx(0.2 + W / 3, abs=2e-4)


def test_a_return_shorter_than_the_hold_that_never_comes_back_is_not_a_recovery():
    """A full stall, the whole rate for 18 ms from +100 ms, then half the rate to the end: the window is
    at the bar from +116 to +126 ms only, and never again."""
    def rate(t):
        d = t - TF
        return R if d < 0 or 0.1 <= d < 0.118 else 0.0 if d < 0.1 else 0.5 * R

    run = _run(rate, 1.2, 0.001)
    assert _held(run, hold_s=0.0) == pytest.approx(0.116, abs=2e-4)
    assert _held(run) is None


@pytest.mark.parametrize(("end_s", "want"), [(TF + 0.134, None), (TF + 0.14, 0.116)])
def test_a_run_that_ends_during_the_hold_has_not_recovered(end_s, want):
    """Back to the whole rate at +100 ms: the window is at the bar from +116 ms, and the hold lasts to
    +136 ms.  A run whose last sample is at +134 ms ended during it (not recovered, though the curve,
    flat after its last sample, would keep the window at the bar to +138 ms); one that runs to +140 ms
    saw it held."""
    run = _run(lambda t: 0.0 if TF <= t < TF + 0.1 else R, end_s, 0.001)
    got = _held(run)
    assert got is None if want is None else got == pytest.approx(want, abs=2e-4)
    assert _held(run, hold_s=0.0) == pytest.approx(0.116, abs=2e-4)


@pytest.mark.parametrize(("burst_ms", "held"), [(31, False), (33, True)])
def test_the_hold_is_one_window_width_exactly(burst_ms, held):
    """A full stall, then the whole rate for ``burst_ms`` from +100 ms, then nothing to the end: the
    window is at the bar from 0.8 windows after the burst begins to 0.2 windows after it ends, for
    ``burst_ms`` - 12 ms.  33 ms holds 21 ms, a window and more (recovered at +116 ms); 31 ms holds
    19 ms (never recovered)."""
    def rate(t):
        d = t - TF
        return R if d < 0 or 0.1 <= d < 0.1 + burst_ms / 1000 else 0.0

    run = _run(rate, 1.0, 0.001)
    got = _held(run, horizon=TF + 0.08)
    assert got == pytest.approx(0.116, abs=2e-4) if held else got is None


@pytest.mark.parametrize("first_s", [0.49, 0.5, 0.51])
def test_a_window_reaching_back_before_the_first_sample_is_no_dip(first_s):
    """The hosts' samples begin at ``first_s``, within a window of the failure at +0.5 s, and the rate is
    steady throughout: no window between the samples dips, so there is no dip (recovery 0, as the bins
    say).  The curve is flat before its first sample, and a window reaching back before it read 0 MB/s:
    a dip, and a "recovery" 0.8 windows later."""
    base = _run(lambda t: R, 1.0, 0.001)
    host = base["hosts"]["h"]
    host["samples"] = [s for s in host["samples"] if s[0] >= round(first_s * 1e9)]
    got = goodput_recovery_sliding(base, W, 0.5, 0.7, R / 1e6)
    assert got["recovery_s"] == 0.0 and got["min_mb_s"] == pytest.approx(R / 1e6, rel=0.01)
    assert goodput_recovery(goodput_bins(base, W), W, 0.5, 0.7, R / 1e6)["recovery_s"] == 0.0
