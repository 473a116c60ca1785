"""Telemetry: hop records filled by a chain of two switches; postcards as PacketIn."""
from __future__ import annotations

import time
import unittest

from base.mrc_fabric import BLOCK, MY_USID, SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import carrier, explain, fill_hop, rewrite, srv6_packet, stev_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from controller import p4contract as P4
from mrc.wire.layers import HBHOptMrcTelemetry, MrcBTH, MrcTelemetryRecord, telemetry_option

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
            pkt = stev_packet("2001:db8:1::1", DST, telemetry=HBHOptMrcTelemetry())
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([ptf_port], timeout=5)
            got = Ether(data)
            tel = telemetry_option(got)
            self.assertEqual((tel.max_hops, tel.hop_count), (4, 2))
            self.assertEqual(got[IPv6].hlim, 62)
            r1, r2 = tel.filled()
            self.assertEqual((r1.switch_id, r1.ingress_port, r1.egress_port), (11, 1, s1_out))
            self.assertEqual((r2.switch_id, r2.ingress_port, r2.egress_port), (22, s2_in, s2_out))
            for r in (r1, r2):
                self.assertLess(r.hop_latency_us, 1_000_000)
                self.assertEqual(r.queue_id, P4.PRIORITY_DATA)
                self.assertLess(r.queue_depth, 64)
            for unused in tel.records[2:]:
                self.assertEqual(bytes(unused), bytes(MrcTelemetryRecord()))
            # every other byte as sent; the ICRC does not cover the Hop-by-Hop header, so it still holds
            exp = fill_hop(fill_hop(rewrite(pkt, eth_dst=neighbour_mac(s2_out), eth_src=SWITCH_MAC,
                                            hop_limit_delta=-2), r1), r2)
            self.assertEqual(data, bytes(exp), explain(data, exp))
            self.assertIs(got[MrcBTH].icrc_ok(), True)
        finally:
            self.undo_all()
            s2.close()


@group("telemetry")
class TelemetryFullTest(MrcFabricTest):
    """hop_count == max_hops: nothing is written, the packet is still forwarded."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:400::/48", port=2)
        full = HBHOptMrcTelemetry(max_hops=2, hop_count=2)
        pkt = stev_packet("2001:db8:1::1", DST, telemetry=full)
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([2])
        tel = telemetry_option(Ether(data))
        self.assertEqual((tel.max_hops, tel.hop_count), (2, 2))
        self.assertEqual([bytes(r) for r in tel.records], [bytes(r) for r in full.records])
        exp = rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC)
        self.assertEqual(data, bytes(exp), explain(data, exp))


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
        exp = rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC)
        self.assertEqual(data, bytes(exp), explain(data, exp))  # forwarded whole
        pin = self.get_packet_in()
        self.assertEqual(pin.metadata["reason"], P4.PACKET_IN_REASON_POSTCARD)
        self.assertEqual(pin.metadata["ingress_port"], 3)
        rec = MrcTelemetryRecord(pin.payload[:20])
        self.assertEqual((rec.switch_id, rec.ingress_port, rec.egress_port), (0x5151, 3, 2))
        self.assertEqual(rec.queue_id, P4.PRIORITY_DATA)
        self.assertLess(rec.hop_latency_us, 1_000_000)
        # the record, then the forwarded frame cut so the PacketIn is POSTCARD_TRUNC_BYTES long with its
        # 3-byte packet_in header
        self.assertEqual(pin.payload[20:], data[:P4.POSTCARD_TRUNC_BYTES - 3 - 20])
        self.assertEqual(Ether(pin.payload[20:])[MrcBTH].dqpn, 0x4242)
        # an unwatched flow makes no postcard
        testutils.send_packet(self, 3, stev_packet("2001:db8:1::1", DST, dest_qp=0x99))
        self.receive_any([2])
        self.verify_no_packet_in()


@group("telemetry")
class PostcardProtocolTest(MrcFabricTest):
    """A watch on the upper-layer protocol (ip_proto 17, UDP) catches a packet whether or not it
    carries the telemetry Hop-by-Hop header: ip_proto is the protocol past that header, not 0."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:400::/48", port=2)
        self.enable_postcards()
        self.insert_table_entry(P4.T_INGRESS_TELEMETRY_TELEMETRY_WATCH, {"ip_proto": (17, 0xFF)},
                                P4.A_INGRESS_TELEMETRY_WATCH_POSTCARD, priority=10)
        for tel in (None, HBHOptMrcTelemetry()):
            pkt = stev_packet("2001:db8:1::1", DST, dest_qp=0x4242, telemetry=tel)
            testutils.send_packet(self, 3, pkt)
            self.receive_any([2])
            pin = self.get_packet_in()
            self.assertEqual(pin.metadata["reason"], P4.PACKET_IN_REASON_POSTCARD,
                             f"telemetry={tel is not None}")
        # another protocol behind the telemetry header is not watched
        pkt = stev_packet("2001:db8:1::1", DST, telemetry=HBHOptMrcTelemetry())
        pkt[IPv6].payload.nh = 59
        testutils.send_packet(self, 3, pkt)
        self.receive_any([2])
        self.verify_no_packet_in()


@group("telemetry")
class TelemetrySrhOrderTest(MrcFabricTest):
    """SRv6 mode with the telemetry Hop-by-Hop header and an SRH: after a uN shift and after an End the
    switch sends the headers in the order they came -- IPv6, Hop-by-Hop, SRH, inner IPv6 (RFC 8200 4.1:
    Hop-by-Hop comes first) -- with the hop record filled and the SRH as End leaves it."""

    @autocleanup
    def runTest(self):
        self.set_switch_id(33)
        self.add_own_usid()
        self.route_usid(0x0202, port=2)
        self.route_usid(0x0777, port=3)
        next_carrier = carrier(BLOCK, 0x0777, 0x0888)
        cases = (  # (packet, expected DA, segments_left after, port)
            (carrier(BLOCK, MY_USID, 0x0202), carrier(BLOCK, 0x0202), 1, 2),  # uN shift: SRH untouched
            (carrier(BLOCK, MY_USID), next_carrier, 0, 3),  # End: SL 1 -> 0, DA = List[0]
        )
        for dst, new_dst, sl, port in cases:
            pkt = srv6_packet(dst, segments=[next_carrier], segments_left=1, telemetry=HBHOptMrcTelemetry())
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([port])
            tel = telemetry_option(Ether(data))
            self.assertIsNotNone(tel, "no telemetry Hop-by-Hop header right behind IPv6: " + explain(data, pkt))
            rec = tel.records[0]
            self.assertEqual((rec.switch_id, rec.ingress_port, rec.egress_port), (33, 1, port))
            exp = fill_hop(rewrite(pkt, eth_dst=neighbour_mac(port), eth_src=SWITCH_MAC, ip_dst=new_dst,
                                   segments_left=sl), rec)
            self.assertEqual(data, bytes(exp), explain(data, exp))
        testutils.verify_no_other_packets(self)


@group("telemetry")
class TelemetryRecordValuesTest(MrcFabricTest):
    """The record's measured fields: ingress_ts_us is the switch's ingress timestamp (it advances with
    time between two packets), queue_depth is the depth the packet found at enqueue (enq_qdepth): in a
    burst into the rate-limited port the first packet finds an empty queue and the last a backlog."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:400::/48", port=2)
        stamps = []
        for i in range(2):
            pkt = stev_packet("2001:db8:1::1", DST, flow_label=i, telemetry=HBHOptMrcTelemetry())
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([2])
            stamps.append(telemetry_option(Ether(data)).records[0].ingress_ts_us)
            time.sleep(0.2)
        self.assertGreater(stamps[0], 0, f"ingress timestamps {stamps}")
        self.assertTrue(150_000 <= (stamps[1] - stamps[0]) % 2**32 < 60_000_000,
                        f"ingress timestamps 0.2 s apart: {stamps}")
        slow = testutils.test_param_get("slow_port")
        if not slow:
            raise unittest.SkipTest("no rate-limited port configured (test param slow_port)")
        slow = int(slow)
        self.add_route("2001:db8:500::/48", port=slow)
        burst = 16
        frames = [bytes(stev_packet("2001:db8:1::1", "2001:db8:500::5", flow_label=i, telemetry=HBHOptMrcTelemetry()))
                  for i in range(burst)]  # built first: the backlog must build faster than it drains
        for frame in frames:
            testutils.send_packet(self, 1, frame)
        out = [Ether(self.receive_any([slow], timeout=10)[1]) for _ in range(burst)]
        depths = [telemetry_option(p).records[0].queue_depth for p in out]
        self.assertEqual([p[IPv6].fl for p in out], list(range(burst)), "one queue: FIFO")
        self.assertEqual(depths[0], 0, f"the first packet found an empty queue: {depths}")
        self.assertGreater(depths[-1], 0, f"the last packet of the burst found a backlog: {depths}")
