"""Congestion signals: trimming (lengths, DSCP 11 mark, priority 7) and its exemptions, early drop
when the queue estimate is full, ECN CE marking."""
from __future__ import annotations

import unittest

from base.mrc_fabric import BLOCK, MY_USID, QDEPTH_MAX, MrcFabricTest
from base.mrc_packets import (
    ACK,
    DSCP_TRIMMED,
    PROBE_REQ,
    WRITE_FIRST,
    WRITE_ONLY_IMM,
    Telemetry,
    carrier,
    parse_frame,
    srv6_packet,
    stev_packet,
)
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group

DST = "2001:db8:300::9"


@group("congestion")
class TrimTest(MrcFabricTest):
    """Threshold 0: every data packet to port 3 is trimmed after RETH [+ ImmDt]."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.add_own_usid()
        self.route_usid(0x0303, port=3)
        self.set_queue_thresholds(3, trim=0)
        self.set_switch_id(5)

        # STEV mode with telemetry: the record's queue id shows the priority (7)
        pkt = stev_packet("2001:db8:1::1", DST, opcode=WRITE_FIRST, payload_len=1000, telemetry=Telemetry())
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([3])
        f = parse_frame(data)
        self.assertEqual(f["udp_len"], 8 + 12 + 16)
        self.assertEqual(len(data), 14 + 40 + 88 + 36)
        self.assertEqual(f["payload_len"], 88 + 36)
        self.assertEqual(f["tc"] >> 2, DSCP_TRIMMED)
        self.assertEqual(f["telemetry"].records[0].queue_id, 7)

        # SRv6 mode with SRH and ImmDt: inner and outer lengths fixed
        pkt = srv6_packet(carrier(BLOCK, MY_USID, 0x0303), segments=["fc00::1"], segments_left=1,
                          opcode=WRITE_ONLY_IMM, payload_len=1000)
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([3])
        f = parse_frame(data)
        self.assertEqual(f["udp_len"], 40)
        self.assertEqual(f["inner_payload_len"], 40)
        self.assertEqual(f["payload_len"], 24 + 40 + 40)
        self.assertEqual(len(data), 14 + 40 + 24 + 40 + 40)
        self.assertEqual(f["tc"] >> 2, DSCP_TRIMMED)
        testutils.verify_no_other_packets(self)


@group("congestion")
class TrimExemptionsTest(MrcFabricTest):
    """ACKs, probes and already-trimmed packets pass whole even at threshold 0."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.set_queue_thresholds(3, trim=0)
        already = stev_packet("2001:db8:1::1", DST, tc=DSCP_TRIMMED << 2, payload_len=0)
        for pkt in (stev_packet("2001:db8:1::1", DST, opcode=ACK),
                    stev_packet("2001:db8:1::1", DST, opcode=PROBE_REQ, payload_len=24),
                    already):
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([3])
            self.assertEqual(len(data), len(bytes(pkt)))
        testutils.verify_no_other_packets(self)


@group("congestion")
class TrimFromQueueEstimateTest(MrcFabricTest):
    """The ingress estimate comes from egress_qdepth; each trim decays it by one, and the first
    packet that goes through untrimmed refreshes it with the real depth in egress."""

    @autocleanup
    def runTest(self):
        if self.target == "bmv2":
            raise unittest.SkipTest("bmv2's P4Runtime server cannot write registers")
        self.add_route("2001:db8:300::/48", port=3)
        self.set_queue_thresholds(3, trim=40)
        self.write_register("egress_qdepth", 3, 41)
        pkt = stev_packet("2001:db8:1::1", DST, payload_len=500)
        for expected_after in (40, 39):  # 41 and 40 are >= 40: trimmed, and the estimate decays
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([3])
            self.assertEqual(parse_frame(data)["tc"] >> 2, DSCP_TRIMMED)
            self.assertEqual(self.read_register("egress_qdepth", 3), expected_after)
        testutils.send_packet(self, 1, pkt)  # 39 < 40: forwarded whole
        _, data = self.receive_any([3])
        self.assertEqual(len(data), len(bytes(pkt)))
        self.assertEqual(self.read_register("egress_qdepth", 3), 0)  # egress wrote the real depth


@group("congestion")
class QueueFullDropTest(MrcFabricTest):
    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.set_queue_thresholds(3, trim=QDEPTH_MAX, drop=0)
        before = self.drops("queue_full")
        testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", DST, opcode=ACK))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count("queue_full", before)


@group("congestion")
class EcnTest(MrcFabricTest):
    """Threshold 0 marks every ECN-capable packet CE; Not-ECT is never marked."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.set_ecn_threshold(3, 0)
        for tc, expected in ((0x6A, 0x6B), (0x69, 0x6B), (0x68, 0x68), (0x6B, 0x6B)):
            testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", DST, tc=tc))
            _, data = self.receive_any([3])
            self.assertEqual(parse_frame(data)["tc"], expected, f"tc {tc:#x}")
        testutils.verify_no_other_packets(self)


@group("congestion")
class EcnQueueDepthTest(MrcFabricTest):
    """A burst into a rate-limited port builds a real queue; packets behind 3 others get CE."""

    @autocleanup
    def runTest(self):
        slow = testutils.test_param_get("slow_port")
        if not slow:
            raise unittest.SkipTest("no rate-limited port configured (test param slow_port)")
        slow = int(slow)
        self.add_route("2001:db8:300::/48", port=slow)
        self.set_ecn_threshold(slow, 3)
        burst = 16
        for i in range(burst):
            testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", DST, flow_label=i))
        marks = [parse_frame(self.receive_any([slow], timeout=10)[1])["tc"] & 3 for _ in range(burst)]
        self.assertEqual(marks[0], 2, "the first packet found an empty queue")
        self.assertIn(3, marks, f"no CE in a burst of {burst}: {marks}")
