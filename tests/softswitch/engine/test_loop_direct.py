"""The packet loop's straight path (issue 16): a plain unicast packet for an idle port whose queue
models no rate or delay goes from ingress straight to egress and the port, without the traffic
manager, when the program reads none of the queue figures.  Every other case still queues: a
program that reads enq_qdepth/deq_qdepth gets the real depths, a port with a link rate, a queue
rate, a link delay or a zero depth queues (or drops) as before, and a port with a backlog keeps its
order.  Driven on the test thread (the loop thread is not started) so that "sent before the
traffic manager ran" can be checked exactly."""
from __future__ import annotations

from pathlib import Path

import pytest
from polling import collecting_loop

from softswitch.engine.loop import PacketLoop

PROGRAM = Path(__file__).parent / "p4" / "direct.p4"
QUEUE_READ = ("h.q.setValid(); h.q.enq_qdepth = (bit<32>) sm.enq_qdepth; "
              "h.q.deq_qdepth = (bit<32>) sm.deq_qdepth;")




@pytest.fixture
def blind():
    return collecting_loop(PROGRAM)


@pytest.fixture
def reader(tmp_path):
    p = tmp_path / "direct_qdepth.p4"
    p.write_text(PROGRAM.read_text().replace("/* QUEUE_READ */", QUEUE_READ))
    return collecting_loop(p)


def frame(port: int, pri: int = 0, tag: int = 0, ether_type: int = 0x88B5) -> bytes:
    return bytes(5) + bytes([port]) + bytes(5) + bytes([pri]) + ether_type.to_bytes(2, "big") + bytes([tag]) * 50


def drain(lp: PacketLoop) -> None:
    while lp.tm.total:
        lp._service_tm()


def test_idle_port_without_rate_is_passed_straight_to_egress(blind):
    lp, sent = blind
    assert lp.pipeline.queue_blind
    frames = [frame(3, pri=i % 3, tag=i) for i in range(6)]
    lp._ingress_batch(1, frames)
    # out before the traffic manager ran, in arrival order, byte for byte what the program emits
    assert sent == [(3, f) for f in frames]
    assert lp.tm.total == 0
    st = lp.tm.stats(3)
    assert [(r["enqueued"], r["dequeued"], r["dropped"]) for r in st[:3]] == [(2, 2, 0)] * 3
    # an egress drop on the straight path is counted as one, and nothing leaves
    lp._ingress_batch(1, [frame(3, ether_type=0xDEAD)])
    assert len(sent) == 6 and lp.counters.egress_drops == 1


def test_program_reading_qdepth_gets_the_real_depth(reader):
    lp, sent = reader
    assert not lp.pipeline.queue_blind
    lp._ingress_batch(1, [frame(3, tag=i) for i in range(4)])
    assert sent == [] and lp.tm.total == 4  # queued, not passed straight
    drain(lp)
    # the trailer the egress control filled in sits between the Ethernet header and the payload
    depths = [(int.from_bytes(d[14:18], "big"), int.from_bytes(d[18:22], "big")) for _p, d in sent]
    assert [d[22] for _p, d in sent] == [0, 1, 2, 3]
    assert depths == [(0, 3), (1, 2), (2, 1), (3, 0)]


# each setting of port 4 that makes its packets queue: (how to set it, the value that does, the value that
# undoes); the rates leave 100 ms between departures, so a stall of the test thread (a GC, a busy
# machine) between the enqueue and the service does not make the next packet due already
_SETTINGS = {
    "link_rate": (lambda tm, v: tm.set_link_rate(v, port=4), 10, 0),
    "queue_rate": (lambda tm, v: tm.set_queue_rate(v, port=4, priority=0), 10, 0),
    "link_delay": (lambda tm, v: tm.set_link_delay(v, port=4), 50_000, 0),
    "depth0": (lambda tm, v: tm.set_queue_depth(v, port=4, priority=0), 0, None),
}


@pytest.mark.parametrize("setting", sorted(_SETTINGS))
def test_port_with_a_rate_delay_or_no_room_still_queues(blind, setting):
    lp, sent = blind
    tm = lp.tm
    apply, on, off = _SETTINGS[setting]
    apply(tm, on)
    lp._ingress_batch(1, [frame(4, tag=i) for i in range(3)] + [frame(5, tag=9)])
    assert sent[:1] == [(5, frame(5, tag=9))]  # the other port is idle and unlimited: straight out
    if setting == "depth0":
        assert tm.total == 0 and tm.stats(4)[0]["dropped"] == 3  # tail-dropped, as before
        return
    assert tm.total == 3 and len(sent) == 1
    lp._service_tm()
    if setting == "link_delay":
        assert len(sent) == 1 and len(lp._delay[4]) == 3  # on the delay line, not sent yet
    else:
        assert len(sent) == 2 and tm.total == 2  # the first leaves, the next two wait for the rate
    # the setting taken back: the port is straight again once its queue is empty
    apply(tm, off)
    drain(lp)
    n = len(sent)
    lp._ingress_batch(1, [frame(4, tag=7)])
    assert len(sent) == n + 1 and tm.total == 0


def test_port_with_a_backlog_keeps_its_order(blind):
    lp, sent = blind
    tm = lp.tm
    tm.set_queue_rate(10, port=4, priority=0)  # priority 0 waits 100 ms between packets
    lp._ingress_batch(1, [frame(4, pri=0, tag=1), frame(4, pri=0, tag=2)])
    lp._service_tm()
    assert [d[14] for _p, d in sent] == [1] and tm.depth(4) == 1
    # priority 1 has no rate, but the port is not idle: the packet queues and strict priority
    # serves it next, ahead of the rate-limited priority-0 packet
    lp._ingress_batch(1, [frame(4, pri=1, tag=3)])
    assert len(sent) == 1 and tm.depth(4) == 2
    lp._service_tm()
    assert [d[14] for _p, d in sent] == [1, 3] and tm.depth(4) == 1


def _counting_clock(lp: PacketLoop) -> list[int]:
    """Replace the loop's clock with one that advances 1 µs per read; returns the reads."""
    reads: list[int] = []

    def mono() -> int:
        reads.append(len(reads) + 1)
        return lp._t0 + 1000 * len(reads)

    lp._mono = mono
    return reads


def test_clock_free_program_reads_the_clock_only_for_what_the_queue_holds(blind, reader):
    lp, sent = blind
    assert lp.pipeline.clock_free  # no timestamp named, no meter
    reads = _counting_clock(lp)
    lp.tm.set_queue_rate(100, port=4, priority=0)
    lp.tm.set_queue_rate(100, port=6, priority=0)
    lp._ingress_batch(1, [frame(5, tag=i) for i in range(5)] + [frame(4, tag=9)] + [frame(5)] * 2
                      + [frame(6)])
    # one read for the batch, a fresh one for each packet the traffic manager takes (its enqueue
    # time and departure are real times)
    assert len(sent) == 7 and len(reads) == 3
    assert lp.tm.ports[4].queues[0].items[0][1].enq_timestamp_us == 2
    assert lp.tm.ports[6].queues[0].items[0][1].enq_timestamp_us == 3
    # a program that reads the queue figures: a read per packet at ingress, as before
    lp2, _sent2 = reader
    assert not lp2.pipeline.clock_free
    reads2 = _counting_clock(lp2)
    lp2._ingress_batch(1, [frame(3, tag=i) for i in range(4)])
    assert len(reads2) == 5
    assert [it.enq_timestamp_us for _d, it in lp2.tm.ports[3].queues[0].items] == [2, 3, 4, 5]


def test_clock_free_needs_no_timestamp_named(tmp_path):
    ts = collecting_loop(Path(__file__).parent / "p4" / "timestamps.p4")[0].pipeline
    assert not ts.queue_blind and not ts.clock_free  # reads enq_timestamp / deq_timedelta
    p = tmp_path / "igts.p4"
    p.write_text(PROGRAM.read_text().replace("/* QUEUE_READ */",
                                             "h.eth.src = (bit<48>) sm.ingress_global_timestamp;"))
    pl = collecting_loop(p)[0].pipeline
    assert pl.queue_blind and not pl.clock_free


def test_frames_of_several_ports_enter_a_frame_per_port_in_turn(tmp_path):
    """Frames read from several ports in one wake-up enter one from each port in turn, as bmv2's
    select thread reads one frame per ready port per round: a backlog on port 1 does not enter
    ahead of port 2's frame in one run. Each frame keeps its own input port (the program writes
    it into the source MAC)."""
    p = tmp_path / "direct_inport.p4"
    p.write_text(PROGRAM.read_text().replace("/* QUEUE_READ */", "h.eth.src = (bit<48>) sm.ingress_port;"))
    lp, sent = collecting_loop(p)
    assert lp.pipeline.queue_blind
    a = [frame(3, tag=i) for i in range(3)]
    b = [frame(3, tag=10 + i) for i in range(2)]
    lp._ingress_interleaved([(1, a, None), (2, b, None), (5, [frame(3, tag=20)], None)])
    got = [(int.from_bytes(d[6:12], "big"), d[14]) for _p, d in sent]
    assert got == [(1, 0), (2, 10), (5, 20), (1, 1), (2, 11), (1, 2)]
    assert {port for port, _d in sent} == {3}


class _BoundPort:
    """A bound port as the loop sees one (``ports[n].send_many``), recording what it is given."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.rounds: list[list[bytes]] = []

    def send_many(self, frames: list[bytes]) -> None:
        self.rounds.append(list(frames))


def test_a_service_round_sends_each_ports_frames_in_order_with_one_send_many(reader):
    """``_service_tm`` appends a frame to its port's frames of the round; the next frames of the
    same port (the traffic manager hands a port's packets out together) join that list directly.
    Several ports, one with a bit-rate link (charged per byte, so each frame is looked at), one
    unbound (the tx hook), priorities mixed: every frame leaves once, in its port's queue order,
    with one ``send_many`` per bound port and round."""
    lp, sent = reader
    bound = {3: _BoundPort(3), 4: _BoundPort(4)}
    lp.ports.update(bound)
    lp.tm.set_link_bps(10**12, port=4)  # a link so fast nothing waits, but each frame is charged
    frames = [frame(3, tag=0), frame(4, tag=1), frame(3, tag=2), frame(7, tag=3), frame(3, pri=1, tag=4),
              frame(4, tag=5), frame(3, tag=6), frame(7, tag=7)]
    lp._ingress_batch(1, frames)
    lp._service_tm()
    assert lp.tm.total == 0
    tags = {n: [[d[22] for d in r] for r in p.rounds] for n, p in bound.items()}
    assert tags == {3: [[0, 2, 6, 4]], 4: [[1, 5]]}  # priority 0 ahead of priority 1 on port 3
    assert [(p, d[22]) for p, d in sent] == [(7, 3), (7, 7)]
    lp._ingress_batch(1, [frame(4, tag=8), frame(3, tag=9)])
    lp._service_tm()
    assert [[d[22] for d in r] for r in bound[3].rounds] == [[0, 2, 6, 4], [9]]
    assert [[d[22] for d in r] for r in bound[4].rounds] == [[1, 5], [8]]
