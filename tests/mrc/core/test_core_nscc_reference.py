"""NSCC against the UEC reference simulator's rules (htsim ``uec.cpp``), on synthetic event sequences.

Each test names the reference function whose rule it checks: ``proportional_increase`` /
``fulfill_adjustment`` (an additive increase, in bytes per window of ACKed bytes), ``quick_adapt``
(a verdict per base_rtt + target period, sticky trim/loss trigger, ECN ignored for the bytes that were
in flight at the cut), ``fast_increase`` and ``multiplicative_decrease``.
"""

from __future__ import annotations

import random

import pytest

from mrc.core import QpAttr
from mrc.core.nscc import REFERENCE_RTT_NS, Nscc, NsccConfig
from mrc.sim import PathSpec, make_pair, transfer

MTU = 4096


def _cfg(**kw) -> NsccConfig:
    return NsccConfig.defaults(12_000, 100e9, MTU).replace(**kw)


def _ack_one_window(s: Nscc, t: int, d: int) -> int:
    """ACK one window's worth of bytes, MTU by MTU, at queueing delay ``d``, no ECN; the adjustment
    (bytes threshold one byte below the window) applies the increase with the last ACK."""
    n = int(s.cwnd) // MTU
    for _ in range(n):
        t += 100
        s.on_ack(t, MTU, d, False)
    return t


@pytest.mark.parametrize("d", [0.2, 0.5, 0.9])
def test_proportional_increase_is_additive_per_window_of_acked_bytes(d):
    # reference: inc += alpha * acked * (target - delay), cwnd += inc / cwnd; alpha = 4 MSS a b / target,
    # b = target / 12 us, fi = 5 MSS a: one window ACKed adds 0.8 fi (target - d) / 12 us, whatever the window
    grown = []
    for pkts in (8, 32):
        cfg = _cfg(adjust_bytes_threshold=pkts * MTU - 1, adjust_period_threshold=1 << 31)
        s = Nscc(cfg, MTU, 0, initial_cwnd=pkts * MTU)
        delay = int(d * cfg.target_delay)
        _ack_one_window(s, 1_000, delay)
        grown.append(s.cwnd - pkts * MTU)
        assert s.cwnd - pkts * MTU == pytest.approx(0.8 * cfg.fi * (cfg.target_delay - delay) / REFERENCE_RTT_NS)
    assert grown[0] == pytest.approx(grown[1])  # until 2026-12-06: 0.25 (1 - d/target) x the window


def test_proportional_increase_on_the_reference_network_is_3_mss_per_rtt_at_zero_delay_before_fast_increase():
    # 100 Gb/s x 12 us, target 9 us: 4 MSS a (target - 0) / 12 us = 3 MSS a per window of ACKed bytes
    # (delay 1 us keeps fast increase out: 0.1 x target = 0.9 us)
    cfg = _cfg(adjust_bytes_threshold=16 * MTU - 1, adjust_period_threshold=1 << 31)
    s = Nscc(cfg, MTU, 0, initial_cwnd=16 * MTU)
    _ack_one_window(s, 1_000, 1_000)
    a_mss = cfg.fi / 5
    assert s.cwnd - 16 * MTU == pytest.approx(4 * a_mss * 8_000 / 12_000)


def test_fair_increase_is_fi_per_window_of_acked_bytes():
    cfg = _cfg(adjust_bytes_threshold=20 * MTU - 1, adjust_period_threshold=1 << 31)
    s = Nscc(cfg, MTU, 0, initial_cwnd=20 * MTU)
    _ack_one_window(s, 1_000, cfg.target_delay + 1_000)  # past target, no ECN
    assert s.cwnd - 20 * MTU == pytest.approx(cfg.fi)


def test_fast_increase_grows_by_fi_scale_per_acked_byte_after_a_window_of_near_zero_delay():
    cfg = _cfg(adjust_bytes_threshold=1 << 30, adjust_period_threshold=1 << 31)
    s = Nscc(cfg, MTU, 0, initial_cwnd=10 * MTU)
    t = _ack_one_window(s, 1_000, 0)  # fi_count reaches the window, not past it
    assert s.cwnd == 10 * MTU and not s.fast
    s.on_ack(t + 100, MTU, 0, False)  # past it: fast increase, at once
    assert s.fast and s.cwnd == pytest.approx(10 * MTU + cfg.fi_scale * MTU)
    s.on_ack(t + 200, MTU, cfg.target_delay // 2, False)  # the delay rises: off, and counting restarts
    assert not s.fast and s.fi_count == 0


def test_multiplicative_decrease_needs_the_average_delay_past_target_and_comes_once_per_base_rtt():
    cfg = _cfg(disable_qa=True, adjust_bytes_threshold=1 << 30, adjust_period_threshold=1 << 31)
    s = Nscc(cfg, MTU, 0)
    w0 = s.cwnd
    for i in range(4):  # average 1 us: a single CE-marked sample past target does not cut
        s.on_ack(1_000 + i, MTU, 1_000, False)
    s.on_ack(2_000, MTU, 4 * cfg.target_delay, True)
    assert s.cwnd == w0 and s.decreases == 0  # (until 2026-12-06 it cut by the sample alone)
    t = 3_000
    for _ in range(40):  # the average passes target
        t += 10
        s.on_ack(t, 0, 3 * cfg.target_delay, True)
    assert s.decreases == 1  # once per base RTT
    t += cfg.base_rtt + 1
    w1 = s.cwnd
    s.on_ack(t, 0, 3 * cfg.target_delay, True)
    avg = s.avg_delay
    assert s.decreases == 2
    assert s.cwnd == pytest.approx(w1 * max(1 - cfg.gamma * (avg - cfg.target_delay) / avg, cfg.max_md_jump))


def test_quick_adapt_judges_a_whole_period_at_its_end_not_one_sample():
    cfg = _cfg()
    period = cfg.base_rtt + cfg.target_delay
    gate = cfg.max_cwnd >> cfg.qa_gate
    s = Nscc(cfg, MTU, 0)
    s.on_ack(1_000, MTU, 0, False)  # the first signal starts the measurement
    s.on_ack(2_000, MTU, cfg.qa_threshold + 1, False)  # one sample past qa_threshold, within the period
    assert s.quick_adapts == 0
    # a busy period: more than the gate delivered; its end judged by a sample below qa_threshold
    t = 2_000
    while s.qa_acked <= gate:
        t += 500
        s.on_ack(t, MTU, 0, False)
    t = max(t, 1_000 + period) + 1
    s.on_ack(t, MTU, 0, False)
    assert s.quick_adapts == 0 and s.qa_acked == 0  # a new period started, with nothing carried over
    # a starved period (2 packets delivered) ended by a sample past qa_threshold: the window is cut to it.
    # (Until 2026-12-06 the measurement ran from the QP's start without restarting, so what the busy
    # period delivered kept it above the gate and this never fired.)
    s.on_ack(t + 5_000, MTU, 0, False)
    s.on_ack(t + 10_000, MTU, 0, False)
    s.on_ack(t + period + 1, 0, cfg.qa_threshold + 1, False)
    assert s.quick_adapts == 1 and s.cwnd == 2 * MTU


def test_quick_adapt_trim_within_a_period_is_remembered_for_its_end():
    cfg = _cfg()
    period = cfg.base_rtt + cfg.target_delay
    s = Nscc(cfg, MTU, 0)
    s.on_ack(1_000, MTU, 0, False)
    s.on_trim(3_000)  # within the period: no verdict yet, the trim takes one packet off
    assert s.quick_adapts == 0 and s.cwnd == cfg.max_cwnd - MTU
    s.on_ack(5_000, MTU, 0, False)
    s.on_ack(1_000 + period + 1, MTU, 0, False)  # the period's end, judged by an ordinary ACK: the trim counts
    assert s.quick_adapts == 1 and s.cwnd == 2 * MTU


def test_quick_adapt_does_not_fire_without_a_trigger_however_little_was_delivered():
    cfg = _cfg()
    s = Nscc(cfg, MTU, 0)
    s.on_ack(1_000, MTU, 0, False)
    s.on_ack(100_000, MTU, 0, False)  # idle, then an ACK without delay, trim or loss
    assert s.quick_adapts == 0


def test_after_quick_adapt_the_congestion_signals_of_the_bytes_then_in_flight_are_ignored():
    cfg = _cfg()
    period = cfg.base_rtt + cfg.target_delay
    s = Nscc(cfg, MTU, 0)
    s.on_ack(1_000, MTU, 0, False)
    t = 1_000 + period + 1
    inflight = 20 * MTU
    s.on_trim(t, inflight=inflight)  # a starved period and a trim: cut
    assert s.quick_adapts == 1 and s.cwnd == MTU
    s.avg_delay = 3.0 * cfg.target_delay
    w = s.cwnd
    for i in range(15):  # the old window's packets come back CE-marked with delay, some trimmed
        s.on_ack(t + 100 * (i + 1), MTU, 3 * cfg.target_delay, True)
        if i % 5 == 0:
            s.on_trim(t + 100 * (i + 1) + 50, inflight=inflight)
    # 15 ACKed + 3 trimmed of the 20 packets in flight at the cut: nothing was cut again
    assert s.cwnd == w and s.decreases == 0 and s.quick_adapts == 1 and s.ignore_bytes == 2 * MTU
    s.on_ack(t + 3_000, MTU, 3 * cfg.target_delay, True)
    assert s.decreases == 0
    s.on_ack(t + 3_100, MTU, 3 * cfg.target_delay, True)  # the last of them: signals count again
    assert s.decreases == 1
    assert s.ignore_bytes == 0


def test_unmarked_acks_still_grow_the_window_while_signals_are_ignored():
    cfg = _cfg()
    period = cfg.base_rtt + cfg.target_delay
    s = Nscc(cfg, MTU, 0)
    s.on_ack(1_000, MTU, 0, False)
    t = 1_000 + period + 1
    s.on_loss(t, inflight=50 * MTU)
    assert s.quick_adapts == 1 and s.ignore_bytes == 50 * MTU
    w = s.cwnd
    for i in range(20):
        s.on_ack(t + 1_000 * (i + 1), MTU, cfg.target_delay // 2, False)
    assert s.cwnd > w


def test_the_qp_tells_nscc_its_bytes_in_flight():
    paths = [PathSpec(delay_ns=2_000, rate_bps=25e9, queue_bytes=1 << 20) for _ in range(2)]
    cfg = NsccConfig.defaults(8_000, 50e9, MTU)
    p = make_pair(paths, attr=QpAttr(cc=cfg), port_rate_bps=100e9, buf_len=1 << 20)
    data = random.Random(5).randbytes(1 << 20)
    seen = []
    cc = p.qa.cc
    fn = cc.inflight_fn
    assert fn is not None

    def spy() -> int:
        seen.append(fn())
        return seen[-1]

    cc.inflight_fn = spy
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[: len(data)]) == data
    assert seen and max(seen) > 0 and all(0 <= v <= cfg.max_cwnd + MTU for v in seen)


def test_the_reference_network_gets_the_reference_gains():
    # htsim initNsccParams: scaling_factor_a = BDP / (100 Gb/s x 12 us) -- 1 on its own network, where
    # eta = 0.15 MSS, fi = 5 MSS, fi_scale = 0.25 (until 2026-12-06 the reference BDP here was 100 Gb/s
    # x 8 us, and a was 1.5)
    cfg = NsccConfig.defaults(12_000, 100e9, MTU)
    assert (cfg.eta, cfg.fi, cfg.fi_scale) == pytest.approx((0.15 * MTU, 5 * MTU, 0.25))
    assert cfg == NsccConfig()
    big = NsccConfig.defaults(12_000, 400e9, MTU)  # 4 x the BDP: 4 x the gains
    assert (big.eta, big.fi, big.fi_scale) == pytest.approx((0.6 * MTU, 20 * MTU, 1.0))
