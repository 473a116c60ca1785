"""A PORT_STATUS that says a port is back may be lost: probes must still bring the plane back."""

from __future__ import annotations

import pytest

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair
from mrc.wire import formats as F
from mrc.wire.codec import decode_frame


@pytest.mark.parametrize("lose_up", [True, False])
def test_plane_returns_when_the_port_up_status_is_lost(lose_up):
    # A's port 2 goes down and back up; B learns "down" from A's PORT_STATUS, and the copies saying
    # "up" are lost (sent once per change, never repeated or acknowledged).  Before: B neither sprayed
    # nor probed plane 2 again (its EVs there stayed ASSUMED_BAD, ports_down {2}, 0 probes).
    p = make_pair([PathSpec() for _ in range(2)], attr=QpAttr(probe_min_ns=20_000), buf_len=1 << 16)
    mr_a = p.a.reg_mr(bytearray(4 << 20), base_va=0x2000_0000)
    net, send, after_up = p.net, p.net._send, [False]

    def lossy(side, port, data):
        if side == 0 and after_up[0] and lose_up and decode_frame(data).opcode == F.OP_PORT_STATUS:
            return
        send(side, port, data)

    net._send = lossy
    net.run(until_ns=100_000)
    p.a.set_port_state(2, False, net.now)
    net.run(until_ns=net.now + 1_000_000)
    assert p.qb.evset.prof.states[1] is EvState.ASSUMED_BAD and p.qb.evset.ports_down == {2}
    after_up[0] = True
    p.a.set_port_state(2, True, net.now)
    net.run(until_ns=net.now + 1_000_000)
    done = []
    p.b.post_write(p.qb, 1, bytes(4 << 20), mr_a.base_va, mr_a.rkey)
    net.run(until_ns=net.now + 1_000_000_000, stop=lambda: (done.extend(p.b.poll_completions()), bool(done))[1])
    assert done and p.qb.evset.ports_down == set() and p.qb.peer_down == set()
    assert p.qb.evset.prof.states == [EvState.GOOD, EvState.GOOD]
    on_plane2 = net.stats()[1][1].delivered
    assert on_plane2 > 400  # about half of the 1,024 data packets (and ACKs from A) took plane 2


def test_peer_port_down_ev_is_not_sprayed_while_unanswered():
    # the probes do not bring back a port that really is down at the peer: its frames are dropped there
    paths = [PathSpec(), PathSpec(down=[(200_000, None)])]
    p = make_pair(paths, attr=QpAttr(probe_min_ns=20_000), buf_len=1 << 16)
    mr_a = p.a.reg_mr(bytearray(1 << 20), base_va=0x2000_0000)
    p.net.run(until_ns=100_000)
    p.a.set_port_state(2, False, p.net.now)
    p.net.run(until_ns=p.net.now + 5_000_000)
    p.b.post_write(p.qb, 1, bytes(1 << 20), mr_a.base_va, mr_a.rkey)
    done = []
    p.net.run(until_ns=p.net.now + 500_000_000, stop=lambda: (done.extend(p.b.poll_completions()), bool(done))[1])
    assert done and p.qb.evset.ports_down == {2} and p.qb.evset.prof.states[1] is EvState.ASSUMED_BAD
    assert p.qb.counters.probes_sent > 0 and p.qb.counters.retx_rack + p.qb.counters.retx_timeout == 0
