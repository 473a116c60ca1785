"""Telemetry: hop records filled by a chain of two switches; postcards as PacketIn."""
from __future__ import annotations

import struct
import unittest

from base.mrc_fabric import MrcFabricTest
from base.mrc_packets import HBH_LEN, Telemetry, TelemetryRecord, parse_frame, stev_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group

DST = "2001:db8:400::4"


@group("telemetry")
class TelemetryChainTest(MrcFabricTest):
    """ptf port 1 -> s1 (id 11) port chain -> s2 (id 22) port out -> ptf port chain_ptf_port."""

    @autocleanup
    def runTest(self):
        if not testutils.test_param_get("grpcaddr2"):
            raise unittest.SkipTest("needs the second switch (test param grpcaddr2)")
        s1_out = int(testutils.test_param_get("chain_s1_port", 5))
        s2_in = int(testutils.test_param_get("chain_s2_in_port", 1))
        s2_out = int(testutils.test_param_get("chain_s2_out_port", 2))
        ptf_port = int(testutils.test_param_get("chain_ptf_port", 12))
        s2 = self.connect("grpcaddr2")
        try:
            self._load_pipeline(s2)
            self.set_switch_id(11)
            self.set_switch_id(22, client=s2)
            self.add_route("2001:db8:400::/48", port=s1_out)
            self.add_route("2001:db8:400::/48", port=s2_out, client=s2)
            testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", DST, telemetry=Telemetry()))
            _, data = self.receive_any([ptf_port], timeout=5)
            f = parse_frame(data)
            tel = f["telemetry"]
            self.assertEqual(tel.hop_count, 2)
            self.assertEqual(f["hop_limit"], 62)
            r1, r2 = tel.records[0], tel.records[1]
            self.assertEqual((r1.switch_id, r1.ingress_port, r1.egress_port), (11, 1, s1_out))
            self.assertEqual((r2.switch_id, r2.ingress_port, r2.egress_port), (22, s2_in, s2_out))
            for r in (r1, r2):
                self.assertLess(r.hop_latency_us, 1_000_000)
                self.assertEqual(r.queue_id, 0)
                self.assertLess(r.queue_depth, 64)
            self.assertEqual(tel.records[2], TelemetryRecord())
        finally:
            self.undo_all()
            s2.close()


@group("telemetry")
class TelemetryFullTest(MrcFabricTest):
    """hop_count == max_hops: nothing is written, the packet is still forwarded."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:400::/48", port=2)
        full = Telemetry(max_hops=2, hop_count=2)
        testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", DST, telemetry=full))
        _, data = self.receive_any([2])
        tel = parse_frame(data)["telemetry"]
        self.assertEqual((tel.hop_count, tel.records), (2, full.records))


@group("telemetry")
class PostcardTest(MrcFabricTest):
    """A watched flow is forwarded and a truncated copy with the hop record reaches the CPU."""

    @autocleanup
    def runTest(self):
        self.set_switch_id(0x5151)
        self.add_route("2001:db8:400::/48", port=2)
        self.enable_postcards()
        self.watch_dest_qp(0x4242)
        pkt = stev_packet("2001:db8:1::1", DST, dest_qp=0x4242, payload_len=1000)
        testutils.send_packet(self, 3, pkt)
        _, data = self.receive_any([2])
        self.assertEqual(len(data), len(bytes(pkt)))
        pin = self.get_packet_in()
        self.assertEqual(pin.metadata["reason"], 2)
        self.assertEqual(pin.metadata["ingress_port"], 3)
        rec = TelemetryRecord.unpack(pin.payload[:20])
        self.assertEqual((rec.switch_id, rec.ingress_port, rec.egress_port), (0x5151, 3, 2))
        self.assertLessEqual(len(pin.payload), 272 - 3)  # packet_in header is 3 bytes
        self.assertEqual(pin.payload[20:20 + 14 + 40], data[:14 + 40])
        # an unwatched flow makes no postcard
        testutils.send_packet(self, 3, stev_packet("2001:db8:1::1", DST, dest_qp=0x99))
        self.receive_any([2])
        self.verify_no_packet_in()
        self.assertEqual(struct.calcsize("!IHHIII"), 20)
        self.assertEqual(HBH_LEN, 88)
