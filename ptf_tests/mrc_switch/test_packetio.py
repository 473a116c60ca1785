"""Controller I/O: PacketOut to a port bypassing the pipeline; PacketIn with port and reason;
the link-probe punt the wiring check relies on (ethertype 0x88B5, reason LINK_PROBE)."""
from __future__ import annotations

import unittest

from base.mrc_fabric import SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import explain, rewrite, stev_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from controller import p4contract as P4

ETHERTYPE_LINK_PROBE = P4.ETHERTYPE_LINK_PROBE  # define.p4: IEEE 802 Local Experimental Ethertype 1


def link_probe(tag: str, ether_type: int = ETHERTYPE_LINK_PROBE) -> Packet:
    """A minimum-size link-probe frame whose payload names the test and the port it is for."""
    body = f"h8-link-probe {tag}".encode()
    return Ether(dst="01:80:c2:00:00:0e", src=SWITCH_MAC, type=ether_type) / Raw(body.ljust(46, b"\0"))


@group("packetio")
class PacketOutTest(MrcFabricTest):
    @autocleanup
    def runTest(self):
        pkt = stev_packet("2001:db8:1::1", "2001:db8:2::1", hop_limit=1)  # would expire if routed
        for port in self.ports():
            self.send_packet_out(bytes(pkt), egress_port=port)
            testutils.verify_packet(self, pkt, port)
        testutils.verify_no_other_packets(self)


@group("packetio")
class PacketInForwardedTest(MrcFabricTest):
    """A route to the CPU port yields a PacketIn with reason FORWARDED and the ingress port."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:cc::/48", port=P4.CPU_PORT)
        testutils.send_packet(self, 3, stev_packet("2001:db8:1::1", "2001:db8:cc::1"))
        pin = self.get_packet_in()
        self.assertEqual(pin.metadata["ingress_port"], 3)
        self.assertEqual(pin.metadata["reason"], P4.PACKET_IN_REASON_FORWARDED)
        testutils.verify_no_other_packets(self)


@group("packetio")
class LinkProbePuntTest(MrcFabricTest):
    """A link probe on any front-panel port reaches the CPU untouched, reason LINK_PROBE, with its
    ingress port, without a single table entry and through an admin-down port; counted per port."""

    @autocleanup
    def runTest(self):
        down = self.ports()[-1]
        self.set_port_down(down)
        admin_drops = self.drops(P4.DROP_REASON_PORT_ADMIN_DOWN)
        for port in self.ports():
            probe = bytes(link_probe(f"port {port}"))
            probes0 = self.read_counter(P4.C_INGRESS_PACKETIO_LINK_PROBE_COUNTER, port)
            rx0 = self.read_counter(P4.C_INGRESS_STATS_PORT_RX_COUNTER, port)
            testutils.send_packet(self, port, probe)
            pin = self.get_packet_in()
            self.assertEqual((pin.metadata["ingress_port"], pin.metadata["reason"]), (port, P4.PACKET_IN_REASON_LINK_PROBE),
                             f"port {port}")
            self.assertEqual(pin.payload, probe)
            probes = self.wait_counter(lambda p=port: self.read_counter(P4.C_INGRESS_PACKETIO_LINK_PROBE_COUNTER, p), probes0[0] + 1)
            self.assertEqual(probes, (probes0[0] + 1, probes0[1] + len(probe)), f"link_probe_counter[{port}]")
            rx = self.wait_counter(lambda p=port: self.read_counter(P4.C_INGRESS_STATS_PORT_RX_COUNTER, p), rx0[0] + 1)
            self.assertEqual(rx[0], rx0[0] + 1, f"port_rx_counter[{port}]")
        testutils.verify_no_other_packets(self)
        self.verify_no_packet_in()
        self.assertEqual(self.drops(P4.DROP_REASON_PORT_ADMIN_DOWN), admin_drops, "a link probe is no admin drop")


@group("packetio")
class LinkProbeEthertypeOnlyTest(MrcFabricTest):
    """Only 0x88B5 is punted: the other experimental ethertype (0x88B6) is no IP and is dropped."""

    @autocleanup
    def runTest(self):
        before = self.drops(P4.DROP_REASON_NOT_IP)
        probes0 = self.read_counter(P4.C_INGRESS_PACKETIO_LINK_PROBE_COUNTER, 1)
        testutils.send_packet(self, 1, link_probe("other ethertype", ether_type=0x88B6))
        self.expect_drop_count(P4.DROP_REASON_NOT_IP, before)
        self.verify_no_packet_in()
        testutils.verify_no_other_packets(self)
        self.assertEqual(self.read_counter(P4.C_INGRESS_PACKETIO_LINK_PROBE_COUNTER, 1), probes0)


@group("packetio")
class LinkProbePacketOutTest(MrcFabricTest):
    """A link probe sent as PacketOut leaves its port as is, even an admin-down one (the cable is still
    there); any other PacketOut to that port is dropped by the port's admin state."""

    @autocleanup
    def runTest(self):
        port = self.ports()[1]
        self.set_port_down(port)
        probe = link_probe(f"out of {port}")
        tx0 = self.read_counter(P4.C_EGRESS_STATS_PORT_TX_COUNTER, port)
        self.send_packet_out(bytes(probe), egress_port=port)
        testutils.verify_packet(self, probe, port)
        self.assertEqual(self.wait_counter(lambda: self.read_counter(P4.C_EGRESS_STATS_PORT_TX_COUNTER, port), tx0[0] + 1)[0],
                         tx0[0] + 1)

        before = self.drops(P4.DROP_REASON_PORT_ADMIN_DOWN)
        self.send_packet_out(bytes(stev_packet("2001:db8:1::1", "2001:db8:2::1")), egress_port=port)
        self.expect_drop_count(P4.DROP_REASON_PORT_ADMIN_DOWN, before)
        testutils.verify_no_other_packets(self)
        self.verify_no_packet_in()


@group("packetio")
class LinkProbeAcrossCableTest(MrcFabricTest):
    """The wiring check over one real cable: a PacketOut probe out of s1's chain port is a PacketIn at
    s2 naming s2's port, with s2's receiving port admin-down and neither switch holding a route."""

    @autocleanup
    def runTest(self):
        if not testutils.test_param_get("grpcaddr2"):
            raise unittest.SkipTest("needs the second switch (test param grpcaddr2)")
        s1_out = int(testutils.test_param_get("chain_s1_port", 5))
        s2_in = int(testutils.test_param_get("chain_s2_in_port", 1))
        s2 = self.connect("grpcaddr2")
        try:
            self._load_pipeline(s2)
            self.insert_table_entry(P4.T_INGRESS_PORT_ADMIN_PORT_RX_ADMIN, {"port": s2_in},
                                    P4.A_INGRESS_PORT_ADMIN_SET_PORT_DOWN, client=s2)
            probe = bytes(link_probe(f"s1:{s1_out}"))
            self.send_packet_out(probe, egress_port=s1_out)
            pin = self.get_packet_in(client=s2)
            self.assertEqual((pin.metadata["ingress_port"], pin.metadata["reason"]), (s2_in, P4.PACKET_IN_REASON_LINK_PROBE))
            self.assertEqual(pin.payload, probe)
            self.verify_no_packet_in()  # nothing came back to s1
            testutils.verify_no_other_packets(self)
        finally:
            self.undo_all()
            s2.close()


@group("packetio")
class PacketInForwardedHopLimitTest(MrcFabricTest):
    """A route to the CPU port is a next hop like any other (docs/dataplane.md "SRv6 uSID behaviour"):
    the PacketIn carries the frame as routed -- the route's MACs, hop limit one less -- and a packet
    arriving with hop limit 1 is dropped as HOP_LIMIT instead of reaching the controller."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:cc::/48", port=P4.CPU_PORT)
        pkt = stev_packet("2001:db8:1::1", "2001:db8:cc::1", hop_limit=64)
        testutils.send_packet(self, 3, pkt)
        pin = self.get_packet_in()
        self.assertEqual((pin.metadata["ingress_port"], pin.metadata["reason"]), (3, P4.PACKET_IN_REASON_FORWARDED))
        exp = rewrite(pkt, eth_dst=neighbour_mac(P4.CPU_PORT), eth_src=SWITCH_MAC)
        self.assertEqual(pin.payload, bytes(exp), explain(pin.payload, exp))
        before = self.drops(P4.DROP_REASON_HOP_LIMIT)
        testutils.send_packet(self, 3, stev_packet("2001:db8:1::1", "2001:db8:cc::1", hop_limit=1))
        self.expect_drop_count(P4.DROP_REASON_HOP_LIMIT, before)
        self.verify_no_packet_in()
        testutils.verify_no_other_packets(self)
