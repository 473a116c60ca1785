"""A packet softswitch's own code raises on is a ``pipeline_errors`` count, not a program drop, and
its traceback is not logged once per packet."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from softswitch.api import SoftSwitch
from softswitch.switch import Switch

ROOT = Path(__file__).resolve().parents[3]
IPV4_P4 = ROOT / "ptf_tests" / "softswitch" / "p4" / "ipv4.p4"
MRC_P4 = ROOT / "p4src" / "mrc_switch.p4"


def _ipv4_frame() -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
                 / IP(src="192.0.2.1", dst="198.51.100.9") / UDP(sport=7, dport=9) / b"payload")


@pytest.mark.timeout(300)
def test_packets_queued_across_a_pipeline_swap_count_as_pipeline_errors(caplog):
    """ipv4.p4 queues 6 packets for port 2 (1 packet/s), then mrc_switch.p4 replaces it: their
    egress runs mrc_switch.p4's code on ipv4.p4's objects and raises.  Each is counted once, in
    ``pipeline_errors`` (it was an egress drop), and one traceback is logged, not six."""
    sent = []
    with SoftSwitch(IPV4_P4, cpu_port=255) as sw:
        loop, tm = sw.switch.loop, sw.switch.tm
        loop.set_tx_hook(lambda port, data: sent.append(port))
        loaded = sw.switch.load_pipeline(*_compile(sw.switch))  # built now, committed below
        loop.call(lambda: tm.set_queue_rate(1, 2))
        frames = [_ipv4_frame()] * 7
        loop.call(lambda: loop._ingress_batch(1, frames))
        deadline = time.monotonic() + 10
        while not sent and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sent == [2], "the first packet leaves at once, 6 wait in port 2's queue"
        assert tm.total == 6
        with caplog.at_level(logging.ERROR, logger="softswitch.p4"):
            sw.switch.commit_pipeline(loaded)
            loop.call(lambda: tm.set_queue_rate(0, 2))
            deadline = time.monotonic() + 10
            while tm.total and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.1)
        c = loop.counters
        assert (c.pipeline_errors, c.egress_drops, len(sent)) == (6, 0, 1), c
        tracebacks = [r for r in caplog.records if "internal error" in r.getMessage()]
        assert len(tracebacks) == 1, [r.getMessage() for r in tracebacks]
        assert loaded.pipeline.internal_errors == 6


def _compile(switch: Switch):
    cfg = switch.config
    saved = cfg.include_dirs
    cfg.include_dirs = [str(MRC_P4.parent / "include")]
    try:
        return switch.compile_source(str(MRC_P4))
    finally:
        cfg.include_dirs = saved


CPU_P4 = ROOT / "ptf_tests" / "softswitch" / "p4" / "cpu.p4"
PUNT = bytes(6) + bytes.fromhex("020000000001") + bytes.fromhex("88b5") + bytes([1, 0, 0, 0]) + bytes(46)


@pytest.mark.timeout(120)
def test_packet_ins_no_controller_got_are_counted_in_switch_stats():
    """cpu.p4 punts the frame to the CPU port.  With no primary the PacketIn is lost, and with a
    primary that never reads its stream everything past the 1,024 queued messages is: both show in
    ``packet_in_dropped`` (the server's own count was reachable only in process)."""
    import grpc
    from p4.v1 import p4runtime_pb2 as pb
    from p4.v1 import p4runtime_pb2_grpc as pbg

    from softswitch.engine.control import ControlHandler

    with SoftSwitch(CPU_P4, cpu_port=255) as sw:
        loop = sw.switch.loop
        stats = ControlHandler(loop).execute

        def punt(n: int) -> None:
            loop.call(lambda: loop._ingress_batch(1, [PUNT] * n))

        punt(3)
        assert stats("switch_stats", [])["packet_in"] == 3
        assert stats("switch_stats", [])["packet_in_dropped"] == 3
        req = pb.StreamMessageRequest()
        req.arbitration.device_id = 1
        req.arbitration.election_id.low = 1
        done = threading.Event()

        def requests():  # the arbitration, then the stream stays open (no half-close) until done
            yield req
            done.wait(60)

        with grpc.insecure_channel(sw.grpc_addr) as ch:
            call = pbg.P4RuntimeStub(ch).StreamChannel(requests())  # never read past the first
            assert next(call).arbitration.status.code == 0
            limit = sw.switch.server.limits.stream_queue
            deadline = time.monotonic() + 20
            while stats("switch_stats", [])["packet_in_dropped"] == 3 and time.monotonic() < deadline:
                punt(200)
            st = stats("switch_stats", [])
            done.set()
            call.cancel()
        assert st["packet_in_dropped"] > 3 and st["packet_in"] - st["packet_in_dropped"] >= limit
        assert sw.switch.server.packet_ins_dropped == st["packet_in_dropped"] - 3
