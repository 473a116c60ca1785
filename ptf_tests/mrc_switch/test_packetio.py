"""Controller I/O: PacketOut to a port bypassing the pipeline; PacketIn with port and reason."""
from __future__ import annotations

from base.mrc_fabric import MrcFabricTest
from base.mrc_packets import stev_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group


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
        self.add_route("2001:db8:cc::/48", port=255)
        testutils.send_packet(self, 3, stev_packet("2001:db8:1::1", "2001:db8:cc::1"))
        pin = self.get_packet_in()
        self.assertEqual(pin.metadata["ingress_port"], 3)
        self.assertEqual(pin.metadata["reason"], 0)
        testutils.verify_no_other_packets(self)
