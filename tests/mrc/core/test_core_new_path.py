"""A path without an RTT sample of its own, judged by the tail-loss limit alone (docs/protocol.md,
"EV states").

The QP's srtt is its other paths'; a new path's first packets that nothing sent later overtook (the
tail of a write) are found missing by time alone.  Such a suspicion has the ACK timeout to show life,
so a working path of 20 us one way beside 0.5 us ones is not retired before its first round trip, and
a dead one is still retired, later, while its data is resent at once.
"""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair, transfer


def _run(size: int, slow_down: bool):
    paths = [PathSpec(delay_ns=500) for _ in range(3)] + [PathSpec(delay_ns=20_000, rate_bps=10e9)]
    if slow_down:
        paths[3].down = [(0, None)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", ack_timeout=8), buf_len=1 << 20)  # ACK timeout 262 us
    data = random.Random(size).randbytes(size)
    done = transfer(p, [(1, data, p.mr.base_va, None)])
    assert bytes(p.mr.buf[:size]) == data
    return p, done


def test_a_slow_new_paths_tail_is_not_taken_for_a_dead_path():
    for size in (16384, 32768):  # the slow path carries the last packets of the write
        p, _ = _run(size, slow_down=False)
        q = p.qa
        assert q.counters.rack_ev_suspect >= 1, size  # found missing by time: suspect, out of the spray
        p.net.run(until_ns=p.net.now + 2_000_000)
        bad = [e for e in q.evset.prof.events if e.state is EvState.ASSUMED_BAD]
        assert not bad, (size, bad)  # before: ASSUMED_BAD ~34 us after the suspicion, 4 x the QP's srtt
        assert q.evset.prof.states[3] is EvState.GOOD


def test_a_dead_new_path_judged_by_time_alone_is_retired_at_the_ack_timeout():
    p, done = _run(16384, slow_down=True)
    q = p.qa
    assert done < 100_000  # its packets were resent on the other paths well before the ACK timeout
    assert q.evset.prof.states[3] is not EvState.ASSUMED_BAD
    p.net.run(until_ns=p.net.now + 1_000_000)
    ev = [e for e in q.evset.prof.events if e.state is EvState.ASSUMED_BAD]
    assert [e.ev_index for e in ev] == [3]
    assert ev[0].evidence["confirm_ns"] >= q.requester.base_timeout_ns
