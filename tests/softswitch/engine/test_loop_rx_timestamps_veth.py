"""v1model timestamps through real veths (root): ``ingress_global_timestamp`` is when the frame was
received (the rx ring's timestamp), not when the loop got to it; ``enq_timestamp`` is after
ingress; ``deq_timedelta`` ends at the dequeue, before egress starts.  bmv2 takes them in
``receive_``, ``enqueue`` and ``egress_thread`` (targets/simple_switch/simple_switch.cpp)."""
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from polling import started_loop, wait_for

from softswitch.engine.ports import ETH_P_ALL, LinuxPort

pytestmark = [pytest.mark.root]

PROGRAM = Path(__file__).parent / "p4" / "timestamps.p4"
ETH = bytes.fromhex("020000000003") + bytes.fromhex("0a0000000001") + b"\x88\xb5"


def stamps(frame: bytes) -> dict[str, int]:
    s = frame[14:14 + 32]
    return {"ingress": int.from_bytes(s[0:6], "big"), "egress": int.from_bytes(s[6:12], "big"),
            "enq": int.from_bytes(s[12:16], "big"), "deq_timedelta": int.from_bytes(s[16:20], "big"),
            "tag": frame[14 + 28]}  # stamp_t is 28 bytes


def check_order(r: dict[str, int]) -> None:
    assert r["ingress"] <= r["enq"] <= r["egress"], r
    # deq_timedelta is the dequeue minus enq_timestamp; egress starts after the dequeue
    assert 0 <= r["egress"] - (r["enq"] + r["deq_timedelta"]) < 50_000, r


@pytest.fixture
def tx(veth_factory):
    """Frames sent on hrts1 reach the loop's port 1 (hrts1p, an rx ring); port 3 is unbound: its
    frames go to the tx hook."""
    veth_factory("hrts1", "hrts1p")
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind(("hrts1", ETH_P_ALL))
    yield s
    s.close()


@pytest.fixture
def loop(tx):
    lp = started_loop(PROGRAM, [LinuxPort(1, "hrts1p")])
    assert lp.ports[1].ring is not None
    yield lp
    lp.stop()


def test_a_frame_that_waited_in_the_rx_ring_carries_its_receive_time(loop, tx):
    """The loop is kept busy (a call on its thread) while frames arrive and for 60 ms after: they wait
    in the rx ring.  Their ingress timestamp is when they arrived, their enqueue time after the wait."""
    busy, sent = threading.Event(), threading.Event()

    def hold() -> None:
        busy.set()
        # held until the frames are sent, then 60 ms more: with a fixed 60 ms from busy.set(), a
        # loaded machine that descheduled this thread for 30 ms before its sends failed the test
        sent.wait(5.0)
        time.sleep(0.06)

    holder = threading.Thread(target=lambda: loop.call(hold, timeout=10.0))
    holder.start()
    try:
        assert busy.wait(5.0)
        sent_at = loop.now_us()
        for i in range(5):
            tx.send(ETH + bytes([i]) * 40)
        sent_end = loop.now_us()
    finally:
        sent.set()
        holder.join(10.0)
    released = loop.now_us()
    assert released - sent_end >= 30_000  # the frames sat in the ring for a while
    wait_for(lambda: len(loop.got) == 5, what="five frames")
    rows = [stamps(f) for f in loop.got]
    for r in rows:
        check_order(r)
        # received while the loop slept: the ring's time, within a scheduling slack of the send
        assert sent_at - 1000 <= r["ingress"] <= sent_end + 5000, (sent_at, sent_end, r)
        assert r["enq"] >= sent_end + 30_000, (sent_end, r)  # enqueued after the wait
    assert [r["ingress"] for r in rows] == sorted(r["ingress"] for r in rows)


def test_timestamps_keep_their_order_through_a_rate_limited_queue(loop, tx):
    loop.call(lambda: loop.tm.set_queue_rate(500, port=3))  # 2 ms between departures
    # the loop is held (a call on its thread) while the six are sent, so they wait in the rx ring and
    # enter ingress in one read: sent while it ran, a loaded machine that descheduled this thread for
    # 6 ms between two sends let the loop forward the earlier ones first (no queue for the last)
    busy, sent = threading.Event(), threading.Event()
    holder = threading.Thread(target=lambda: loop.call(lambda: (busy.set(), sent.wait(5.0)), timeout=10.0))
    holder.start()
    try:
        assert busy.wait(5.0)
        for i in range(6):  # back to back: they queue behind the 2 ms departure slots
            tx.send(ETH + bytes([i]) * 40)
    finally:
        sent.set()
        holder.join(10.0)
    wait_for(lambda: len(loop.got) == 6, what="six rate-limited frames")
    rows = [stamps(f) for f in loop.got]
    for r in rows:
        check_order(r)
    assert [r["tag"] for r in rows] == list(range(6))
    # the last one waited behind earlier departures: its time queued shows in deq_timedelta
    assert rows[-1]["deq_timedelta"] >= 4000, rows


@pytest.mark.slow
def test_switch_process_stamps_a_burst_when_it_arrives(veth_factory):
    """A switch process, frames over veths: a burst of 150 frames handed to the kernel in one
    system call (a tx ring) arrives within a short time and waits in the switch's rx ring while
    the loop works through it.  The ingress timestamps span the arrival, the enqueue times the
    processing: the later frames' latency includes their wait, as bmv2's input buffer's does."""
    from softswitch.api import SoftSwitch

    veth_factory("hrts1", "hrts1p")
    veth_factory("hrts3", "hrts3p")
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.bind(("hrts3", ETH_P_ALL))
    rx.settimeout(0.2)
    gen = LinuxPort(9, "hrts1")
    try:
        with SoftSwitch(PROGRAM, interfaces={1: "hrts1p", 3: "hrts3p"}, cpu_port=255, subprocess=True):
            assert gen.open() and gen.tx_ring is not None
            n = 150
            gen.send_many([ETH + bytes([i]) * 40 for i in range(n)])
            rows = []
            deadline = time.monotonic() + 10
            while len(rows) < n and time.monotonic() < deadline:
                try:
                    d = rx.recv(4096)
                except TimeoutError:
                    continue
                if d[12:14] == b"\x88\xb5" and len(d) >= 14 + 28 + 40:
                    rows.append(stamps(d))
    finally:
        gen.shutdown()
        rx.close()
    assert len(rows) == n, len(rows)
    for r in rows:
        check_order(r)
    ingress = [r["ingress"] for r in rows]
    enq = [r["enq"] for r in rows]
    assert ingress == sorted(ingress) and enq == sorted(enq)
    assert ingress[-1] - ingress[0] < enq[-1] - enq[0], (ingress[-1] - ingress[0], enq[-1] - enq[0])
    assert enq[-1] - ingress[-1] >= 200, rows[-1]  # the last frame waited behind the burst
