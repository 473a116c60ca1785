"""Queue-depth metadata counts the whole port, all priorities, as bmv2's egress_buffers.size(port)."""
from __future__ import annotations

from softswitch.contract import TmItem
from softswitch.engine.tm import TrafficManager


def _item(port: int, priority: int, tag: int) -> TmItem:
    return TmItem(egress_port=port, priority=priority, length=64, meta=tag)


def _drain(tm: TrafficManager, now_us: int) -> list[TmItem]:
    out: list = []
    tm.dequeue(now_us, 1000, out)
    return [item for _, item in out]


def test_qdepth_counts_every_priority_of_the_port():
    tm = TrafficManager()
    for tag, pri in enumerate([0, 0, 0, 7, 7]):
        assert tm.enqueue(_item(3, pri, tag), now_us=10)
    assert tm.enqueue(_item(4, 7, 99), now_us=10)  # another port does not count
    got = [i for i in _drain(tm, 20) if i.egress_port == 3]
    by_tag = {i.meta: i for i in got}
    # high-priority packets see the three low-priority ones queued before them
    assert [by_tag[t].enq_qdepth for t in range(5)] == [0, 1, 2, 3, 4]
    # strict priority: 7s leave first; deq_qdepth is what is left on the port
    assert [i.meta for i in got] == [3, 4, 0, 1, 2]
    assert [i.deq_qdepth for i in got] == [4, 3, 2, 1, 0]
