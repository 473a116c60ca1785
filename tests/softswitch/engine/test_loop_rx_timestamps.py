"""v1model's timestamps taken where bmv2 takes them (targets/simple_switch/simple_switch.cpp):
``ingress_global_timestamp`` when the frame was received (``receive_``, before the input buffer),
``enq_timestamp`` when the traffic manager takes the packet, after ingress (``enqueue``),
``deq_timedelta`` and ``egress_global_timestamp`` when egress starts (``egress_thread``: one clock read
right after its pop; the deq_timedelta case is in ``test_loop_timestamps.py``).

Here: the rx ring's per-frame timestamp (tp_sec/tp_nsec) read by the port, its conversion to the
switch clock in the loop, the fall-back to the batch's read time, and which programs pay for
which clock reads.  Driven on the test thread (the loop thread is not started); the veth tests
are in ``test_loop_rx_timestamps_veth.py``."""
from __future__ import annotations

import mmap
import struct
import time
from pathlib import Path

from polling import collecting_loop

from softswitch.contract import CLOCK_NOW, CLOCK_RX
from softswitch.engine.ports import TP_STATUS_USER, LinuxPort

HERE = Path(__file__).parent / "p4"
TIMESTAMPS = HERE / "timestamps.p4"
DIRECT = HERE / "direct.p4"
ETH = bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb5"
# struct tpacket2_hdr (linux/if_packet.h): status, len, snaplen, mac, net, sec, nsec, vlan_tci,
# vlan_tpid, padding[4]
TPACKET2_HDR = struct.Struct("=IIIHHIIHH4x")




def stamps(frame: bytes) -> dict[str, int]:
    s = frame[14:14 + 32]
    return {"ingress": int.from_bytes(s[0:6], "big"), "egress": int.from_bytes(s[6:12], "big"),
            "enq": int.from_bytes(s[12:16], "big"), "deq_timedelta": int.from_bytes(s[16:20], "big")}


def _metered(tmp_path: Path) -> Path:
    """timestamps.p4 with a meter in ingress: it sees the time as well as the receive time."""
    p = tmp_path / "ts_meter.p4"
    src = TIMESTAMPS.read_text()
    old = "    apply { sm.egress_spec = 3; }"
    assert old in src
    p.write_text(src.replace(old, "    meter(1, MeterType.packets) m0;\n"
                                  "    apply { sm.egress_spec = 3; bit<2> c; m0.execute_meter(0, c); }"))
    return p


def test_ring_reader_returns_each_frames_tpacket_timestamp():
    """A crafted TPACKET_V2 ring: two frames the kernel handed over, then a slot it still owns."""
    slot, slots, mac = 2048, 4, 80
    mm = mmap.mmap(-1, slot * slots)
    port = LinuxPort(1, "h-ts-none")
    frames = [ETH + bytes([i]) * 40 for i in range(2)]
    when = [(1_765_000_000, 123_456_789), (1_765_000_001, 5)]
    for i, (data, (sec, nsec)) in enumerate(zip(frames, when)):
        TPACKET2_HDR.pack_into(mm, i * slot, TP_STATUS_USER, len(data), len(data), mac, mac + 14, sec, nsec, 0, 0)
        mm[i * slot + mac:i * slot + mac + len(data)] = data
    port.ring, port.ring_frame, port.ring_slots, port.ring_next = mm, slot, slots, 0
    port.ring_words = memoryview(mm).cast("I")
    try:
        got: list[int] = []
        assert port.receive_stamped(64, got, 1_764_999_990_000_000_000) == frames
        # realtime less the offset given, in µs
        assert got == [10_123_456, 11_000_000]
        assert port.ring_next == 2 and TPACKET2_HDR.unpack_from(mm, 0)[0] == 0  # handed back
        # the unstamped reader reads the same ring the same way
        for i, data in enumerate(frames):
            TPACKET2_HDR.pack_into(mm, (2 + i) * slot, TP_STATUS_USER, len(data), len(data), mac, 0, 9, 9, 0, 0)
            mm[(2 + i) * slot + mac:(2 + i) * slot + mac + len(data)] = data
        assert port.receive(64) == frames and port.ring_next == 0
    finally:
        port.ring_words.release()
        port.ring_words = port.ring = None
        mm.close()


def test_ingress_timestamp_is_the_receive_time_and_enqueue_comes_after_ingress():
    lp, sent = collecting_loop(TIMESTAMPS)
    assert lp.pipeline.ingress_clock == CLOCK_RX  # names ingress_global_timestamp, no meter
    now_us = lp.now_us()
    # what the rx ring's reader gives (``receive_stamped``): in the switch clock
    raw = [now_us - 5_000,          # in the ring for 5 ms
           -time.time_ns() // 1000,  # a slot with no timestamp (0): the batch's read time
           now_us + 10**9,          # later than the batch was read (realtime stepped back): the batch's
           now_us - 2_000]
    lp._ingress_batch(1, [ETH + bytes([i]) * 40 for i in range(4)], None, raw)
    after_us = lp.now_us()
    while lp.tm.total:
        lp._service_tm()
    rows = [stamps(d) for _p, d in sent]
    assert len(rows) == 4
    assert abs(rows[0]["ingress"] - (now_us - 5000)) <= 1000, rows
    assert abs(rows[3]["ingress"] - (now_us - 2000)) <= 1000, rows
    assert now_us <= rows[1]["ingress"] == rows[2]["ingress"] <= after_us, rows
    for r in rows:
        assert r["ingress"] <= r["enq"] <= r["egress"], r  # enqueued after ingress
        assert r["enq"] >= now_us
        assert r["enq"] + r["deq_timedelta"] <= r["egress"], r  # dequeued before egress started
    assert rows[0]["enq"] - rows[0]["ingress"] >= 4000  # the ring wait counts in the latency


def test_without_ring_timestamps_the_batch_read_time_is_the_receive_time():
    """Injected frames and the recvmsg path: every frame of a batch gets the time it was read."""
    lp, sent = collecting_loop(TIMESTAMPS)
    before = lp.now_us()
    lp._ingress_batch(1, [ETH + bytes([i]) * 40 for i in range(5)])
    while lp.tm.total:
        lp._service_tm()
    rows = [stamps(d) for _p, d in sent]
    assert len({r["ingress"] for r in rows}) == 1 and rows[0]["ingress"] >= before
    assert all(r["ingress"] <= r["enq"] <= r["egress"] for r in rows), rows


def test_clock_reads_per_program():
    """A program that names the ingress timestamp reads no clock before its ingress (it gets
    the receive time) and one after it (the enqueue); one that reads no time pays nothing new."""
    lp, _ = collecting_loop(TIMESTAMPS)
    reads: list[int] = []

    def mono() -> int:
        reads.append(1)
        return lp._t0 + 1000 * len(reads)

    lp._mono = mono
    lp._ingress_batch(1, [ETH + bytes([i]) * 40 for i in range(4)])
    assert len(reads) == 1 + 4  # the batch's read, then one per enqueue
    items = [it for _d, it in lp.tm.ports[3].queues[0].items]
    assert [it.enq_timestamp_us for it in items] == [2, 3, 4, 5]
    assert [it.meta.S.f_ingress_global_timestamp for it in items] == [1, 1, 1, 1]
    blind = collecting_loop(DIRECT)[0].pipeline
    assert blind.clock_free and blind.ingress_clock == 0


def test_a_metered_program_gets_both_times(tmp_path):
    """Meters read the time ingress runs (bmv2's ``Meter::execute`` reads the clock), the
    timestamp is the receive time: the loop passes both."""
    lp, _ = collecting_loop(_metered(tmp_path))
    pl = lp.pipeline
    assert pl.ingress_clock == CLOCK_RX | CLOCK_NOW
    item = pl.ingress_item(ETH + bytes(40), 1, 700, 500)
    assert item.meta.S.f_ingress_global_timestamp == 500 and pl._ctx_in.now == 700
    item = pl.ingress_item(ETH + bytes(40), 1, 900)  # no receive time: the one time for both
    assert item.meta.S.f_ingress_global_timestamp == 900 and pl._ctx_in.now == 900
    # the general path takes it the same way
    assert pl.ingress(ETH + bytes(40), 1, 700, 400).to_tm[0].meta.S.f_ingress_global_timestamp == 400
    # the loop: a read per packet before ingress for the meter, the receive time for the stamp
    raw = [lp.now_us() - 3_000]
    before = lp.now_us()
    lp._ingress_batch(1, [ETH + bytes(40)], None, raw)
    it = lp.tm.ports[3].queues[0].items[0][1]
    # the ring's time itself (within [0, now]: taken as it is).  Not "before - 3000 within 1 ms": a
    # loaded machine can deschedule the test for more than 1 ms between its two clock reads
    assert it.meta.S.f_ingress_global_timestamp == raw[0]
    assert pl._ctx_in.now >= before and it.enq_timestamp_us >= pl._ctx_in.now


def test_realtime_offset_is_read_between_two_monotonic_reads():
    """The offset that turns ring timestamps into the switch clock: realtime now minus the switch
    clock now, within the few µs the reads take (a preempted try is retried)."""
    lp, _ = collecting_loop(DIRECT)
    for _ in range(5):
        off = lp._realtime_offset_ns()
        m1, expect, m2 = _bracketed(time.time_ns)  # the test's own reads, not split by a preemption
        expect -= (m1 + m2) // 2 - lp._t0
        assert abs(off - expect) < 200_000, off - expect
    # a frame stamped (by the kernel) at realtime R is at R - off in the switch clock: between the
    # switch clock's reads just before and after R was read
    off = lp._realtime_offset_ns()
    m1, rt, m2 = _bracketed(time.time_ns)
    assert (m1 - lp._t0) // 1000 - 200 <= (rt - off) // 1000 <= (m2 - lp._t0) // 1000 + 200


def _bracketed(read) -> tuple[int, int, int]:
    """``read()`` between two monotonic reads (ns) less than 20 µs apart: a loaded machine can
    deschedule the test between two clock reads for milliseconds (1 pair in about 10,000 with two
    CPU burners on two cores), which says nothing about the clock under test.  Bounded tries."""
    for _ in range(1000):
        m1 = time.monotonic_ns()
        v = read()
        m2 = time.monotonic_ns()
        if m2 - m1 < 20_000:
            return m1, v, m2
    raise AssertionError("no two clock reads within 20 us in 1000 tries")
