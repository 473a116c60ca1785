"""The simulator itself: determinism, and each impairment doing what it says."""

from __future__ import annotations

import random

from mrc.core import NsccConfig, QpAttr
from mrc.core.nscc import Nscc
from mrc.sim import PathSpec, make_pair, transfer


def _run(seed: int, **spec):
    p = make_pair([PathSpec(**spec) for _ in range(3)], seed=seed, buf_len=1 << 20)
    data = random.Random(seed).randbytes(600_000)
    end = transfer(p, [(1, data, p.mr.base_va, 1)])
    assert bytes(p.mr.buf[: len(data)]) == data
    return end, [(s[0].delivered, s[0].dropped_loss, s[1].delivered) for s in p.net.stats()], p


def test_same_seed_same_run_other_seed_other_run():
    a = _run(5, loss=0.02, reorder=0.2, reorder_ns=3000, dup=0.01)
    b = _run(5, loss=0.02, reorder=0.2, reorder_ns=3000, dup=0.01)
    c = _run(6, loss=0.02, reorder=0.2, reorder_ns=3000, dup=0.01)
    assert a[:2] == b[:2]
    assert a[:2] != c[:2]


def test_serialisation_rate_and_delay_bound_the_completion_time():
    end, _stats, p = _run(1)
    ideal_ns = 600_000 * 8 / (3 * 100e9) * 1e9 + 2_000
    assert ideal_ns < end < 1.3 * ideal_ns
    assert p.net.unrouted == 0


def test_down_interval_drops_and_loss_drops():
    _end, stats, _p = _run(2, loss=0.05)
    assert sum(s[1] for s in stats) > 0
    paths = [PathSpec(down=[(0, None)]), PathSpec()]
    q = make_pair(paths, buf_len=1 << 16)
    transfer(q, [(1, b"x" * 20_000, q.mr.base_va, None)])
    assert q.net.stats()[0][0].dropped_down > 0 and bytes(q.mr.buf[:20_000]) == b"x" * 20_000


def test_nscc_decreases_once_per_base_rtt_on_ecn_with_delay_and_grows_without():
    cfg = NsccConfig.defaults(10_000, 100e9, 4096)
    cc = Nscc(cfg, 4096, 0, initial_cwnd=cfg.max_cwnd // 2)
    w0 = cc.cwnd
    cc.on_ack(1_000, 4096, cfg.target_delay * 2, ecn=True)
    w1 = cc.cwnd
    cc.on_ack(2_000, 4096, cfg.target_delay * 2, ecn=True)  # same base RTT: no second decrease
    assert w1 < w0 and cc.cwnd == w1 and cc.decreases == 1
    assert w1 >= w0 * cfg.max_md_jump
    t = 20_000
    for _ in range(200):
        t += 500
        cc.on_ack(t, 4096, 0, ecn=False)
    assert cc.cwnd > w1 and cc.cwnd <= cfg.max_cwnd


def test_nscc_quick_adapt_on_trim_when_little_was_delivered():
    cfg = NsccConfig.defaults(10_000, 100e9, 4096)
    cc = Nscc(cfg, 4096, 0)
    cc.on_ack(100_000, 4096, 0, ecn=False)  # the first signal starts QA's measurement (htsim: _qa_endtime)
    cc.on_trim(100_001)  # within its first period: no verdict yet, the trim shrinks by a packet
    assert cc.quick_adapts == 0 and cc.cwnd == cfg.max_cwnd - 4096
    cc.on_trim(100_001 + cfg.base_rtt + cfg.target_delay)  # the period is over, nothing was delivered in it
    assert cc.quick_adapts == 1 and cc.cwnd == 4096
    cfg.disable_qa = True
    cc2 = Nscc(cfg, 4096, 0)
    w = cc2.cwnd
    cc2.on_trim(100_000)
    assert cc2.quick_adapts == 0 and cc2.cwnd == w - 4096


def test_nscc_on_a_bottleneck_keeps_queues_short_and_delivers():
    # a window of 1.5 x 50 Gb/s x 8 us over 2 x 10 Gb/s: what does not fit queues well past target, so
    # the average delay passes target and ECN echoes cut the window.  (Over 2 x 25 Gb/s, until
    # 2026-12-06, the queue stayed below target and the one decrease expected here came from a single
    # sample past target; the reference decreases only when the average delay is past it.)
    paths = [PathSpec(rate_bps=10e9, ecn_bytes=20_000, trim_bytes=200_000, queue_bytes=1 << 20)
             for _ in range(2)]
    cc = NsccConfig.defaults(8_000, 50e9, 4096)
    p = make_pair(paths, attr=QpAttr(cc=cc), port_rate_bps=100e9, buf_len=4 << 20)
    data = random.Random(3).randbytes(3 << 20)
    transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[: len(data)]) == data
    assert p.qa.cc.decreases > 0
    assert sum(s[0].dropped_queue for s in p.net.stats()) == 0
