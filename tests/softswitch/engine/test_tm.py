"""Traffic manager: strict priority, tail drop, rate limits, queue metadata."""
from __future__ import annotations

import pytest

from softswitch.contract import TmItem
from softswitch.engine.tm import DEFAULT_QUEUE_DEPTH, TrafficManager


def item(port: int, pri: int, tag: int = 0) -> TmItem:
    return TmItem(egress_port=port, priority=pri, length=64, meta=tag)


def drain(tm: TrafficManager, now: int, budget: int = 1000) -> list[TmItem]:
    out: list = []
    tm.dequeue(now, budget, out)
    return [it for _pq, it in out]


def test_bmv2_defaults():
    tm = TrafficManager()
    assert DEFAULT_QUEUE_DEPTH == 64
    stats = tm.stats(1)
    assert len(stats) == 8
    assert all(q["depth"] == 64 and q["rate_pps"] == 0 for q in stats)


def test_strict_priority_order_and_fifo_within_priority():
    """Priority 0 first, as bmv2 since its PR #1276 (priority = queue id, queue 0 the highest)."""
    tm = TrafficManager()
    for tag, pri in enumerate([0, 3, 7, 3, 0, 7, 5]):
        assert tm.enqueue(item(1, pri, tag), now_us=10)
    got = drain(tm, 20)
    assert [(i.priority, i.meta) for i in got] == [(0, 0), (0, 4), (3, 1), (3, 3), (5, 6), (7, 2), (7, 5)]
    assert [i.qid for i in got] == [0, 0, 3, 3, 5, 7, 7]
    assert tm.total == 0


def test_tail_drop_counted_per_port_and_queue():
    tm = TrafficManager()
    tm.set_queue_depth(3, port=2)
    tm.set_queue_depth(1, port=2, priority=0)
    results = [tm.enqueue(item(2, 7, i), 0) for i in range(5)]
    assert results == [True, True, True, False, False]
    assert [tm.enqueue(item(2, 0, i), 0) for i in range(3)] == [True, False, False]
    stats = tm.stats(2)
    assert stats[7]["dropped"] == 2 and stats[0]["dropped"] == 2
    assert sum(q["dropped"] for q in tm.stats(3)) == 0
    # the survivors are the first ones (tail drop keeps the head)
    assert [i.meta for i in drain(tm, 1)] == [0, 0, 1, 2]


def test_depth_metadata():
    tm = TrafficManager()
    for i in range(4):
        tm.enqueue(item(1, 2, i), now_us=100 + i)
    got = drain(tm, 150)
    assert [i.enq_qdepth for i in got] == [0, 1, 2, 3]
    assert [i.deq_qdepth for i in got] == [3, 2, 1, 0]
    assert [i.enq_timestamp_us for i in got] == [100, 101, 102, 103]
    assert [i.deq_timedelta_us for i in got] == [50, 49, 48, 47]


def test_rate_limit_spaces_departures():
    tm = TrafficManager()
    tm.set_queue_rate(1000, port=1)  # one packet per 1000 µs
    for i in range(5):
        tm.enqueue(item(1, 0, i), now_us=0)
    assert [i.meta for i in drain(tm, 0)] == [0]
    out: list = []
    nxt = tm.dequeue(500, 10, out)
    assert out == [] and nxt == 1000
    assert [i.meta for i in drain(tm, 1000)] == [1]
    assert [i.meta for i in drain(tm, 3999)] == [2, 3]  # late wake-up catches up, order kept
    assert [i.meta for i in drain(tm, 4000)] == [4]
    # deq_timedelta includes the time waited for the rate limit
    tm.enqueue(item(1, 0, 9), now_us=4000)
    got = drain(tm, 5000)
    assert got[0].deq_timedelta_us == 1000


def test_rate_limited_high_priority_lets_low_priority_through():
    tm = TrafficManager()
    tm.set_queue_rate(100, port=1, priority=0)  # 10 ms per packet
    tm.enqueue(item(1, 0, "h0"), 0)
    tm.enqueue(item(1, 0, "h1"), 0)
    tm.enqueue(item(1, 7, "l0"), 0)
    assert [i.meta for i in drain(tm, 1)] == ["h0", "l0"]
    assert [i.meta for i in drain(tm, 10_000)] == ["h1"]


def test_round_robin_between_ports_and_budget():
    tm = TrafficManager()
    for i in range(3):
        tm.enqueue(item(1, 0, f"a{i}"), 0)
        tm.enqueue(item(2, 0, f"b{i}"), 0)
    first = drain(tm, 1, budget=4)
    assert len(first) == 4 and {i.egress_port for i in first} == {1, 2}
    assert len(drain(tm, 1)) == 2


def test_settings_apply_to_ports_created_later_and_reject_bad_values():
    tm = TrafficManager()
    tm.set_queue_depth(5)
    tm.set_queue_rate(200)
    assert tm.stats(9)[3]["depth"] == 5 and tm.stats(9)[3]["rate_pps"] == 200
    with pytest.raises(ValueError):
        tm.set_queue_depth(-1)
    with pytest.raises(ValueError):
        tm.set_queue_rate(10, port=1, priority=8)
    with pytest.raises(ValueError):
        tm.set_queue_depth(10, priority=3)


def test_zero_depth_drops_everything():
    tm = TrafficManager()
    tm.set_queue_depth(0, port=4)
    assert not tm.enqueue(item(4, 1), 0)
    assert tm.stats(4)[1]["dropped"] == 1


def test_per_queue_rates_add_up_but_a_link_rate_is_shared_by_all_priorities():
    # bmv2's per-queue rates: two busy priorities of a 1000 pps port send 2 packets per ms
    tm = TrafficManager()
    tm.set_queue_rate(1000, port=1)
    for i in range(3):
        tm.enqueue(item(1, 7, f"d{i}"), 0)
        tm.enqueue(item(1, 1, f"c{i}"), 0)
    assert [i.meta for i in drain(tm, 0)] == ["c0", "d0"]
    # a link rate: one frame per ms whatever its queue, the higher priority first
    tm = TrafficManager()
    tm.set_link_rate(1000, port=1)
    for i in range(3):
        tm.enqueue(item(1, 7, f"d{i}"), 0)
    tm.enqueue(item(1, 1, "c0"), 0)
    assert [i.meta for i in drain(tm, 0)] == ["c0"]
    out: list = []
    assert tm.dequeue(999, 10, out) == 1000 and out == []
    tm.enqueue(item(1, 1, "c1"), 999)  # a control frame overtakes the data backlog, not the link
    assert [i.meta for i in drain(tm, 1000)] == ["c1"]
    assert [i.meta for i in drain(tm, 3500)] == ["d0", "d1"]  # a late wake-up catches up its slots
    assert [i.meta for i in drain(tm, 3999)] == []
    assert [i.meta for i in drain(tm, 4000)] == ["d2"]
    # an idle link banks no slots: the next burst is paced from its first packet
    for i in range(3):
        tm.enqueue(item(1, 0, f"e{i}"), 20_000)
    assert [i.meta for i in drain(tm, 20_500)] == ["e0"]
    assert tm.stats(1)[0]["link_rate_pps"] == 1000 and tm.stats(1)[0]["rate_pps"] == 0
    tm.set_link_rate(0, port=1)
    assert [i.meta for i in drain(tm, 20_500)] == ["e1", "e2"]
    with pytest.raises(ValueError):
        tm.set_link_rate(-1)


def test_link_rate_default_applies_to_ports_created_later():
    tm = TrafficManager()
    tm.set_link_rate(500)
    assert tm.stats(7)[0]["link_rate_pps"] == 500


def test_link_bps_charges_each_frame_its_bytes_on_the_wire():
    """8 Mb/s = 1 byte per us: a 976-byte frame (+ 24 on the wire) holds the link 1000 us, a 76-byte
    ACK 100 us, so an ACK between two data frames costs a tenth of a data slot, not a whole one."""
    tm = TrafficManager()
    tm.set_link_bps(8_000_000, port=1)
    for i in range(2):
        tm.enqueue(TmItem(egress_port=1, priority=7, length=976, meta=f"d{i}"), 0)
    tm.enqueue(TmItem(egress_port=1, priority=0, length=76, meta="ack"), 0)
    assert [i.meta for i in drain(tm, 0)] == ["ack"]  # strict priority, then the link is busy 100 us
    out: list = []
    assert tm.dequeue(99, 10, out) == 100 and out == []
    assert [i.meta for i in drain(tm, 100)] == ["d0"]
    assert [i.meta for i in drain(tm, 1099)] == []
    assert [i.meta for i in drain(tm, 1100)] == ["d1"]
    assert tm.stats(1)[0]["link_bps"] == 8_000_000
    with pytest.raises(ValueError):
        tm.set_link_bps(-1)


def test_link_bps_refund_when_egress_truncates_or_drops():
    """A frame is charged its length at dequeue; a truncated (trimmed) one gets the difference back,
    a dropped one everything, so the next frame may start when the shorter one is done."""
    tm = TrafficManager()
    tm.set_link_bps(8_000_000, port=1)
    tm.enqueue(TmItem(egress_port=1, priority=0, length=976, meta="trimmed"), 0)
    tm.enqueue(TmItem(egress_port=1, priority=0, length=976, meta="next"), 0)
    out: list = []
    tm.dequeue(0, 1, out)
    pq, it = out[0]
    pq.refund(it.length, 76)  # egress truncated it to 76 bytes
    assert [i.meta for i in drain(tm, 100)] == ["next"]
    pq.refund(976, 0)  # egress dropped "next": the link is free again at once
    tm.enqueue(TmItem(egress_port=1, priority=0, length=976, meta="after"), 100)
    assert [i.meta for i in drain(tm, 100)] == ["after"]


def test_link_bps_default_applies_to_ports_created_later():
    tm = TrafficManager()
    tm.set_link_bps(1_000_000)
    assert tm.stats(9)[0]["link_bps"] == 1_000_000


def test_link_delay_default_applies_to_ports_created_later():
    """``--link-delay US`` (no port) is given before any port exists: ports created later take it,
    as with the other all-port settings; a port's own value still wins."""
    tm = TrafficManager()
    tm.set_link_delay(500)
    tm.set_link_delay(20, 4)
    assert tm.port(3).link_delay_us == 500 and tm.port(4).link_delay_us == 20
    tm.set_link_delay(0)
    assert tm.port(3).link_delay_us == 0 and tm.port(8).link_delay_us == 0
