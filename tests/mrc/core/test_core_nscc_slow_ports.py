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
        while (p.qa.snd_una - 0) * MTU < cut_at * size:
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


def test_the_packet_that_fills_the_window_asks_for_an_immediate_ack():
    """A window of one packet and a 1 ms ACK coalescing delay: each packet must be acknowledged at once
    (BTH AckReq, as UET's sender flags the packet that fills its window), not after the delay."""
    cfg = NsccConfig.defaults(20_000, 100e9, MTU).replace(max_cwnd=MTU)  # configured: no learning
    n = 64
    end, p = _write(cfg, size=n * MTU, ack_delay_ns=1_000_000, delay_ns=10_000, paths=1)
    assert p.qa.cc.window() == MTU
    # one round trip (~20 us + 8 KiB at 0.25 Gb/s) per packet; before: 1 ms (the coalescing delay) each
    assert end < n * 400_000, end / 1e6
