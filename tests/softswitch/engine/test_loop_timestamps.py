"""v1model timestamps through the real packet loop and a compiled P4 program: the egress global
timestamp is when egress starts, so ingress→egress is the real queueing delay (telemetry's hop
latency), not 0."""
from __future__ import annotations

from pathlib import Path

import pytest
from polling import started_loop, wait_for

PROGRAM = Path(__file__).parent / "p4" / "timestamps.p4"


@pytest.fixture
def loop():
    lp = started_loop(PROGRAM, [])
    yield lp
    lp.stop()


def stamps(frame: bytes) -> dict[str, int]:
    s = frame[14:14 + 32]
    return {"ingress": int.from_bytes(s[0:6], "big"), "egress": int.from_bytes(s[6:12], "big"),
            "enq": int.from_bytes(s[12:16], "big"), "deq_timedelta": int.from_bytes(s[16:20], "big"),
            "hop_latency": int.from_bytes(s[20:24], "big")}


def test_hop_latency_is_the_queueing_delay(loop):
    loop.call(lambda: loop.tm.set_queue_rate(250, port=3))  # 4 ms between departures
    eth = bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb5"
    # injected from the loop's own thread, so the four enter ingress in one drain: from another
    # thread, a loaded machine could let the loop forward each before the next came (no queue)
    loop.call(lambda: [loop.inject(1, eth + bytes([i]) * 50) for i in range(4)])
    wait_for(lambda: len(loop.got) == 4, what="four rate-limited frames")
    rows = [stamps(f) for f in loop.got]
    for r in rows:
        assert r["egress"] > r["ingress"], r
        assert r["hop_latency"] == r["egress"] - r["ingress"]
        # egress starts after the packet left its queue: latency covers the time queued
        assert r["hop_latency"] >= r["deq_timedelta"], r
        assert r["enq"] >= r["ingress"] & 0xFFFFFFFF, r
    # the last of four packets waited behind three 4 ms departure slots
    assert rows[-1]["deq_timedelta"] >= 11_000, rows
    assert rows[-1]["hop_latency"] >= 11_000, rows
    assert [r["egress"] for r in rows] == sorted(r["egress"] for r in rows)


def test_egress_timestamp_differs_from_ingress_without_rate_limit(loop):
    eth = bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb5"
    for i in range(20):
        loop.inject(1, eth + bytes([i]) * 50)
    wait_for(lambda: len(loop.got) == 20, what="twenty frames")
    rows = [stamps(f) for f in loop.got]
    assert all(r["egress"] >= r["ingress"] and r["hop_latency"] == r["egress"] - r["ingress"] for r in rows)
    # the compiled pipeline takes microseconds per packet: some egress starts a tick later
    assert any(r["egress"] > r["ingress"] for r in rows), rows


def test_deq_timedelta_ends_when_egress_starts(loop):
    """bmv2's egress thread pops a packet and reads its clock once for both ``deq_timedelta`` and
    ``egress_global_timestamp``: the time queued runs until that packet's egress starts.  softswitch
    hands out up to 256 packets a round; the last of a burst waits for the egress of every one before
    it, and that wait is queueing (until 2026-12-06 the whole round had the round's dequeue time:
    ``egress - enq`` grew through the round while ``deq_timedelta`` stayed put)."""
    eth = bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb5"
    n = 60  # within the default queue depth (64 packets, as bmv2)
    loop.call(lambda: [loop.inject(1, eth + bytes([i % 256]) * 50) for i in range(n)])
    wait_for(lambda: len(loop.got) == n, what=f"{n} frames of one burst")
    rows = [stamps(f) for f in loop.got]
    for r in rows:
        assert r["deq_timedelta"] == (r["egress"] - r["enq"]) & 0xFFFFFFFF, r
    # the burst's egress took time: with the round's dequeue time the equality above breaks
    assert rows[-1]["egress"] > rows[0]["egress"], (rows[0], rows[-1])
