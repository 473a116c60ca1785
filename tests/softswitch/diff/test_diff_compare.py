"""How the differential harness compares a port's frames with bmv2's pcap output, and what it
refuses in a script (pure logic; the runs themselves are in test_diff.py).  bmv2 writes a port's
frames in departure order, and its priority queues interleave them by real arrival times that a
pcap replay and softswitch's virtual clock do not share: frames are matched as a multiset, and in
order within each queue (a FIFO on both targets)."""
from __future__ import annotations

import pytest

from softswitch.diff.__main__ import port_differences
from softswitch.diff.bmv2side import queue_commands
from softswitch.diff.script import Packet, Script, ScriptError, check_order, parse_script
from softswitch.diff.softside import run_softswitch

A, B, C, D = b"data-0", b"ack-1", b"data-2", b"ack-3"
# softswitch's departures on port 3: data on queue 7, ACKs on queue 0, alternating
SOFT = [(3, 7, 0, A), (3, 0, 1, B), (3, 7, 2, C), (3, 0, 3, D)]


def test_queues_may_interleave_differently():
    assert port_differences(SOFT, {3: [B, D, A, C]}) == []
    assert port_differences(SOFT, {3: [A, B, C, D]}) == []


def test_order_within_a_queue_is_compared():
    diffs = port_differences(SOFT, {3: [C, B, A, D]})
    assert len(diffs) == 1 and "queue 7" in diffs[0] and "input #0" in diffs[0]


def test_missing_and_extra_frames_are_reported():
    assert port_differences(SOFT, {3: [A, B, C]}) == \
        [f"port 3: softswitch frame 3 (input #3, queue 0) has no equal bmv2 frame: {D.hex()}"]
    diffs = port_differences(SOFT, {3: [A, B, C, D, D]})
    assert diffs == [f"port 3: bmv2 frame 4 has no equal softswitch frame: {D.hex()}"]
    assert len(port_differences(SOFT, {})) == 4  # nothing from bmv2 at all
    assert port_differences([], {5: [A]}) == [f"port 5: bmv2 frame 0 has no equal softswitch frame: {A.hex()}"]


def test_normaliser_applies_to_both_sides():
    assert port_differences([(1, 7, 0, b"x1")], {1: [b"x2"]}, normalise=lambda d: d[:1]) == []


def test_script_order_is_bmv2s_reading_order():
    ok = Script(packets=[Packet(1, b"a", 0), Packet(1, b"b", 0), Packet(2, b"c", 0), Packet(1, b"d", 5)])
    check_order(ok)
    with pytest.raises(ScriptError, match=r"packets\[1\].*time_us 4"):
        check_order(Script(packets=[Packet(1, b"a", 5), Packet(1, b"b", 4)]))
    with pytest.raises(ScriptError, match=r"packets\[2\] \(port 1"):  # bmv2 would take port 1 first
        parse_script({"packets": [{"port": 1, "data": "00", "time_us": 0}, {"port": 2, "data": "00", "time_us": 0},
                                  {"port": 1, "data": "00", "time_us": 0}]})


def test_queue_commands_name_the_priority():
    assert queue_commands([{"port": 3, "rate_pps": 5, "depth": 16}, {"port": 3, "priority": 0, "depth": 64}]) == \
        ["set_queue_rate 5 3", "set_queue_depth 16 3", "set_queue_depth 64 3 0"]


def test_departures_log_every_frame_in_departure_order():
    """mrc_switch.p4's random script: the departure log holds each frame softswitch sent once, with the
    queue it left from; on the bursts' port data (queue 7) and trimmed headers (queue 0) both occur."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mrc_script import BURST_PORT, build

    program, script, _ = build(600)
    dep: list = []
    outs = run_softswitch(program, script, None, dep)
    assert sorted((p, i, d) for p, _q, i, d in dep) == sorted((p, i, d) for i, o in enumerate(outs) for p, d in o)
    assert {q for p, q, _i, _d in dep if p == BURST_PORT} >= {0, 7}
    assert port_differences(dep, {}) and not port_differences(dep, _by_port(dep))


def _by_port(dep: list) -> dict[int, list[bytes]]:
    out: dict[int, list[bytes]] = {}
    for p, _q, _i, d in dep:
        out.setdefault(p, []).append(d)
    return out


def test_packet_ins_become_the_cpu_ports_frames():
    """bmv2 sends what a program sends to the CPU port as PacketIns; the harness rebuilds the frame
    softswitch's run gives for that port -- the packet_in header packed from the metadata (P4Info
    order, MSB first, padded to whole bytes), then the payload."""
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2

    from softswitch.diff.bmv2side import packet_in_frames

    info = p4info_pb2.P4Info()
    cpm = info.controller_packet_metadata.add()
    cpm.preamble.name = "packet_in"
    for i, (name, w) in enumerate((("ingress_port", 9), ("reason", 8), ("_pad", 7)), start=1):
        cpm.metadata.add(id=i, name=name, bitwidth=w)
    pi = p4runtime_pb2.PacketIn(payload=b"frame")
    pi.metadata.add(metadata_id=1, value=b"\x01\x03")  # port 259
    pi.metadata.add(metadata_id=2, value=b"\x05")
    # 9 bits 259 | 8 bits 5 | 7 bits 0 = 0b100000011 00000101 0000000
    assert packet_in_frames(info, [pi]) == [((259 << 15) | (5 << 7)).to_bytes(3, "big") + b"frame"]
    assert packet_in_frames(p4info_pb2.P4Info(), [p4runtime_pb2.PacketIn(payload=b"x")]) == [b"x"]
