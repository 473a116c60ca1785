"""Visibility: per-port rx/tx packet and byte counters, direct counters on table entries."""
from __future__ import annotations

from base.mrc_fabric import BLOCK, MY_USID, MrcFabricTest
from base.mrc_packets import carrier, srv6_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group

from controller import p4contract as P4


@group("counters")
class PortAndDirectCountersTest(MrcFabricTest):
    @autocleanup
    def runTest(self):
        own = self.add_own_usid()
        route = self.route_usid(0x0202, port=2)
        rx0 = self.read_counter(P4.C_INGRESS_STATS_PORT_RX_COUNTER, 1)
        tx0 = self.read_counter(P4.C_EGRESS_STATS_PORT_TX_COUNTER, 2)
        pkt = srv6_packet(carrier(BLOCK, MY_USID, 0x0202))
        n = 5
        for _ in range(n):
            testutils.send_packet(self, 1, pkt)
            self.receive_any([2])
        rx = self.wait_counter(lambda: self.read_counter(P4.C_INGRESS_STATS_PORT_RX_COUNTER, 1), rx0[0] + n)
        tx = self.wait_counter(lambda: self.read_counter(P4.C_EGRESS_STATS_PORT_TX_COUNTER, 2), tx0[0] + n)
        self.assertEqual(rx[0] - rx0[0], n)
        self.assertEqual(tx[0] - tx0[0], n)
        self.assertEqual(rx[1] - rx0[1], n * len(bytes(pkt)))
        self.assertEqual(tx[1] - tx0[1], n * len(bytes(pkt)))
        self.assertEqual(self.wait_counter(lambda: self.read_direct_counter(own), n)[0], n)
        self.assertEqual(self.wait_counter(lambda: self.read_direct_counter(route), n)[0], n)
