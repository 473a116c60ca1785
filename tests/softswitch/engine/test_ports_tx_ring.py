"""The tx ring (PACKET_TX_RING, one send per batch) on real veths: every queued frame leaves once,
in order, across ring wrap-around; what the kernel cannot take is counted as a drop and never
sent later; the one-send-per-frame fallback (SOFTSWITCH_TX_RING=0) still works."""
from __future__ import annotations

import socket
import subprocess

import pytest

from softswitch.engine.ports import ETH_P_ALL, TX_SLOTS, LinuxPort

DST, SRC = bytes.fromhex("020000000001"), bytes.fromhex("0a0000000002")
MARK = b"\x88\xb5TXRING"


def frame(i: int, size: int = 64) -> bytes:
    head = DST + SRC + MARK + i.to_bytes(4, "big")
    return head + bytes(size - len(head))


def received(sock: socket.socket, limit: int) -> list[int]:
    """Sequence numbers of the test frames waiting on ``sock`` (bounded by ``limit`` reads)."""
    out = []
    for _ in range(limit):
        try:
            d = sock.recv(65536)
        except (BlockingIOError, TimeoutError):
            break
        if d[12:12 + len(MARK)] == MARK:
            out.append(int.from_bytes(d[12 + len(MARK):16 + len(MARK)], "big"))
    return out


@pytest.fixture
def pair(veth_factory):
    veth_factory("h16ts", "h16th")
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rx.bind(("h16th", ETH_P_ALL))
    rx.settimeout(0.5)
    yield rx
    rx.close()


@pytest.mark.root
def test_batches_leave_in_order_across_wraparound(pair):
    p = LinuxPort(1, "h16ts", use_tx_ring=True)
    assert p.open()
    try:
        assert p.tx_ring is not None and p.tx_slots >= TX_SLOTS
        sent = 0
        for batch in (100, TX_SLOTS, 3, TX_SLOTS + 50):  # the last batch is larger than the ring
            for _ in range(batch):
                p.queue(frame(sent))
                sent += 1
            assert p.flush() == 0
        got = received(pair, 4 * sent)
        assert got == list(range(sent))
        assert p.counters.tx_packets == sent and p.counters.tx_drops == 0
        assert p.counters.tx_bytes == 64 * sent
        assert p.send(frame(sent)), "send() after queued batches goes through the same ring"
        assert received(pair, 10) == [sent]
    finally:
        p.close()


@pytest.mark.root
def test_oversized_frame_is_a_drop_and_the_ring_keeps_working(pair):
    p = LinuxPort(1, "h16ts", use_tx_ring=True)
    assert p.open()
    try:
        p.queue(frame(0))
        p.queue(frame(1, size=p.tx_frame))  # cannot fit a slot (nor the 1500 MTU)
        p.queue(frame(2))
        p.flush()
        assert received(pair, 10) == [0, 2]
        assert p.counters.tx_drops == 1 and p.counters.tx_packets == 2
    finally:
        p.close()


@pytest.mark.root
def test_frames_queued_while_down_are_dropped_not_sent_later(pair):
    p = LinuxPort(1, "h16ts", use_tx_ring=True)
    assert p.open()
    try:
        subprocess.run(["ip", "link", "set", "h16ts", "down"], check=True)
        for i in range(5):
            p.queue(frame(i))
        assert p.flush() == 5
        assert p.counters.tx_drops == 5 and p.counters.tx_packets == 0
        subprocess.run(["ip", "link", "set", "h16ts", "up"], check=True)
        subprocess.run(["ip", "link", "set", "h16th", "up"], check=True)
        received(pair, 50)  # whatever arrived while the link came up
        p.take_error()  # the ENETDOWN the socket kept (the loop reads it when poll says POLLERR)
        for i in range(5, 8):
            p.queue(frame(i))
        assert p.flush() == 0
        assert received(pair, 20) == [5, 6, 7], "only the frames queued after the link came back"
    finally:
        p.close()


@pytest.mark.root
def test_send_per_frame_fallback(pair):
    p = LinuxPort(1, "h16ts", use_tx_ring=False)
    assert p.open()
    try:
        assert p.tx_ring is None
        for i in range(10):
            assert p.queue(frame(i)) is False  # sent at once: nothing to flush
        assert p.flush() == 0
        assert received(pair, 20) == list(range(10))
        assert p.counters.tx_packets == 10
    finally:
        p.close()


@pytest.mark.root
@pytest.mark.parametrize("use_tx_ring", [True, False])
def test_send_many_is_queue_then_flush(pair, use_tx_ring):
    """``send_many`` (the loop's way to send a round's frames for a port) leaves the same frames in
    the same order as ``queue`` + ``flush``: across ring wrap-around, with a batch larger than the
    ring (slots still held by the kernel), with an oversized frame dropped and counted."""
    p = LinuxPort(1, "h16ts", use_tx_ring=use_tx_ring)
    assert p.open()
    try:
        assert (p.tx_ring is not None) == use_tx_ring
        sent = want = 0
        expect = []
        for batch in (100, TX_SLOTS, 3, TX_SLOTS + 50):
            frames = [frame(sent + i) for i in range(batch)]
            if batch == 3:
                frames[1] = frame(sent + 1, size=(p.tx_frame if use_tx_ring else 65536 + 64))
            p.send_many(frames)
            expect += [sent + i for i in range(batch) if not (batch == 3 and i == 1)]
            sent += batch
            want += batch - (batch == 3)
            assert p.tx_pending == 0
        assert received(pair, 4 * sent) == expect
        assert p.counters.tx_packets == want and p.counters.tx_drops == 1
    finally:
        p.close()


@pytest.mark.root
@pytest.mark.parametrize("ring", [True, False])
def test_a_frame_over_the_mtu_is_a_tx_drop_on_both_paths(pair, ring):
    """A frame longer than MTU + 14 that still fits a ring slot (slots are rounded up to a power of
    two): with PACKET_LOSS the kernel skips it and frees its slot as if sent, so the ring counted it
    in tx_packets; one `send` fails with EMSGSIZE.  Both must count a tx drop.  An 802.1Q-tagged
    frame may be 4 bytes longer (the kernel allows it; an 802.1ad tag it refuses)."""
    p = LinuxPort(1, "h16ts", use_tx_ring=ring)
    assert p.open()
    try:
        assert p.mtu == 1500 and (p.tx_ring is not None) == ring
        tagged = DST + SRC + b"\x81\x00\x00\x05" + frame(3)[12:] + bytes(1518 - 68)
        qinq = DST + SRC + b"\x88\xa8\x00\x05" + frame(4)[12:] + bytes(1518 - 68)
        frames = [frame(0, 1514), frame(1, 1515), frame(2, 1600), tagged, qinq, frame(5, 64)]
        assert [len(f) for f in frames] == [1514, 1515, 1600, 1518, 1518, 64]
        p.send_many(frames)
        got = received(pair, 20)
        assert got == [0, 3, 5]
        assert (p.counters.tx_packets, p.counters.tx_drops) == (3, 3)
        assert p.counters.tx_bytes == 1514 + 1518 + 64
    finally:
        p.close()


@pytest.mark.root
def test_rings_work_again_after_a_reopen_and_an_mtu_change(pair):
    """The port reads and writes the slots' status words through a view of the ring mapping
    (``ring_words``); the view is let go before the mapping closes, so a re-open (link re-created,
    MTU changed) maps new rings and both keep working."""
    p = LinuxPort(1, "h16ts", use_tx_ring=True)
    assert p.open()
    peer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    peer.bind(("h16th", 0))
    try:
        sent = 0
        for step in ("first", "reopen", "mtu"):
            if step == "reopen":
                p.close()
                assert p.ring_words is None and p.open()
            elif step == "mtu":
                subprocess.run(["ip", "link", "set", "h16ts", "mtu", "9000"], check=True)
                slot = p.ring_frame
                p.refresh()  # (True only when the descriptor's number changed: it may be reused)
                assert p.mtu == 9000 and p.ring_frame > slot  # re-opened with larger slots
            assert p.ring is not None and p.tx_ring is not None and p.ring_words is not None
            p.send_many([frame(sent + i) for i in range(5)])
            # (``pair`` also sees what ``peer`` sent on its side: numbers from 100)
            assert [i for i in received(pair, 40) if i < 100] == list(range(sent, sent + 5))
            sent += 5
            for i in range(3):
                peer.send(frame(100 + i))
            got = []
            for _ in range(50):  # bounded: the frames are in the ring when send returns, or soon after
                got += p.receive(64)
                if len(got) >= 3:
                    break
            assert [int.from_bytes(d[12 + len(MARK):16 + len(MARK)], "big") for d in got
                    if d[12:12 + len(MARK)] == MARK] == [100, 101, 102]
        assert p.counters.tx_packets == 15 and p.counters.tx_drops == 0
    finally:
        peer.close()
        p.close()
    assert p.ring_words is None
