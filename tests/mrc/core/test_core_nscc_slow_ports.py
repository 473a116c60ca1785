"""NSCC on slow NIC ports with short RTTs (issue 11: mrc-perf over veth at --rate-gbps 0.25 took
3-5 s with NSCC against 1.9-2.1 s without congestion control).

The setting of the veth test, simulated: two planes, ports paced at 0.25 Gb/s, 8 KiB packets (262 us
on a port), frames that arrive at once (a ~70 us RTT measured without that transmission time), and the
software endpoint's 100 us ACK coalescing delay.  The learnt base RTT gave max_cwnd = 1.5 packets: one
packet in flight, for two ports, whose ACK the responder held for the coalescing delay.
"""

from __future__ import annotations

import random

from mrc.core import QpAttr
from mrc.core.cc import make_cc
from mrc.core.nscc import NsccConfig
from mrc.sim import PathSpec, make_pair

MTU = 8192
PORT_BPS = 0.25e9


def _write(cc, *, size=8 << 20, cut_at=None, ack_delay_ns=100_000, delay_ns=35_000, paths=2):
    """Time (ns) to write ``size`` bytes over ``paths`` planes; ``cut_at``: the fraction acknowledged
    when plane 2 goes down (its path drops everything and both ends see their port 2 go down)."""
    data = random.Random(3).randbytes(size)
    specs = [PathSpec(delay_ns=delay_ns, rate_bps=100e9) for _ in range(paths)]
    attr = QpAttr(cc=cc, mtu=MTU, ack_delay_ns=ack_delay_ns, reorder_min_ns=10_000_000, ack_timeout=16)
    p = make_pair(specs, attr=attr, buf_len=size, port_rate_bps=PORT_BPS)
    p.a.post_write(p.qa, 1, data, p.mr.base_va, p.mr.rkey, None)
    if cut_at is not None:
        step = 0
        while p.qa.snd_una * MTU < cut_at * size:  # the QP starts at PSN 0 (make_pair)
            step += 1
            p.net.run(until_ns=step * 1_000_000)
        t = p.net.now
        specs[1].down.append((t, None))
        p.a.set_port_state(2, False, t)
        p.b.set_port_state(2, False, t)
        p.net.kick()

    def done() -> bool:
        p.pump()
        return len(p.done) >= 1

    end = p.net.run(stop=done)
    assert bytes(p.mr.buf[:size]) == data
    return end, p


def test_nscc_keeps_up_with_no_cc_on_slow_ports_with_and_without_a_plane_cut():
    # before: 174.7 ms against 135.9 ms without the cut (1.29x), 263 ms against 244 ms with it
    for cut in (None, 0.2):
        t_none, _ = _write("none", cut_at=cut)
        t_nscc, p = _write("nscc", cut_at=cut)
        assert t_nscc <= 1.03 * t_none, (cut, t_nscc / 1e6, t_none / 1e6, p.qa.cc.state())


def test_learnt_base_rtt_window_holds_a_packet_per_port():
    """The learnt RTT lacks a packet's time on the port (UET's base RTT includes it): NSCC's BDP adds
    it back, so max_cwnd covers at least one packet per port; the delay signal keeps the sample."""
    _, p = _write("nscc", size=1 << 20)
    cfg = p.qa.cc.cfg
    tx_ns = MTU * 8e9 / PORT_BPS
    assert cfg.base_rtt < 100_000  # the measured RTT (2 x 35 us + the ACK's turn-around), not + tx
    assert cfg.target_delay == int(0.75 * cfg.base_rtt)
    assert cfg.max_cwnd == int(1.5 * int(2 * PORT_BPS / 8 * (cfg.base_rtt + int(tx_ns)) / 1e9))
    assert cfg.max_cwnd >= 1.5 * 2 * MTU  # before: 1.5 x MTU (12288 B) for two ports


def test_a_configured_base_rtt_is_taken_as_including_the_transmission_time():
    cc = make_cc("nscc", mtu=MTU, rate_bps=2 * PORT_BPS, base_rtt_ns=400_000, tx_ns=262_144)
    assert cc.cfg.max_cwnd == int(1.5 * 2 * PORT_BPS / 8 * 400e-6) and not cc.learn
    learnt = make_cc("nscc", mtu=MTU, rate_bps=2 * PORT_BPS, tx_ns=262_144)
    learnt.on_ack(1_000, MTU, 70_000, False)
    assert learnt.cfg.base_rtt == 70_000
    assert learnt.cfg.max_cwnd == int(1.5 * int(2 * PORT_BPS / 8 * (70_000 + 262_144) / 1e9))


def test_the_packet_that_fills_the_window_asks_for_an_immediate_ack():
    """A window of one packet and a 1 ms ACK coalescing delay: each packet must be acknowledged at once
    (BTH AckReq, as UET's sender flags the packet that fills its window), not after the delay."""
    cfg = NsccConfig.defaults(20_000, 100e9, MTU).replace(max_cwnd=MTU)  # configured: no learning
    n = 64
    end, p = _write(cfg, size=n * MTU, ack_delay_ns=1_000_000, delay_ns=10_000, paths=1)
    assert p.qa.cc.window() == MTU
    # one round trip (~20 us + 8 KiB at 0.25 Gb/s) per packet; before: 1 ms (the coalescing delay) each
    assert end < n * 400_000, end / 1e6
