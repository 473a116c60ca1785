"""Queue-depth metadata counts the packet's own priority queue, as bmv2 does since its PR #1270
(measured on bmv2 1.15.5: a high-priority burst behind a low-priority backlog read enq_qdepth 0)."""
from __future__ import annotations

from softswitch.contract import TmItem
from softswitch.engine.tm import TrafficManager


def _item(port: int, priority: int, tag: int) -> TmItem:
    return TmItem(egress_port=port, priority=priority, length=64, meta=tag)


def _drain(tm: TrafficManager, now_us: int) -> list[TmItem]:
    out: list = []
    tm.dequeue(now_us, 1000, out)
    return [item for _, item in out]


def test_qdepth_counts_the_packets_priority_queue():
    tm = TrafficManager()
    for tag, pri in enumerate([7, 7, 7, 0, 0]):
        assert tm.enqueue(_item(3, pri, tag), now_us=10)
    assert tm.enqueue(_item(4, 0, 99), now_us=10)  # another port does not count
    got = [i for i in _drain(tm, 20) if i.egress_port == 3]
    by_tag = {i.meta: i for i in got}
    # high-priority packets do not count the three low-priority ones queued before them
    assert [by_tag[t].enq_qdepth for t in range(5)] == [0, 1, 2, 0, 1]
    # strict priority: 0s leave first; deq_qdepth is what is left in the packet's queue
    assert [i.meta for i in got] == [3, 4, 0, 1, 2]
    assert [i.deq_qdepth for i in got] == [1, 0, 2, 1, 0]
