"""Per-port admin state: a down port drops (and counts) on ingress and on egress."""
from __future__ import annotations

from base.mrc_fabric import SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import rewrite, stev_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group

from controller import p4contract as P4


@group("port_admin")
class PortAdminTest(MrcFabricTest):
    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:2::/48", port=2)
        self.add_route("2001:db8:1::/48", port=1)
        to2 = stev_packet("2001:db8:1::1", "2001:db8:2::1")
        exp = rewrite(to2, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC)
        testutils.send_packet(self, 1, to2)
        testutils.verify_packet(self, exp, 2)

        before = self.drops(P4.DROP_REASON_PORT_ADMIN_DOWN)
        self.set_port_down(2)
        testutils.send_packet(self, 1, to2)             # egress side of port 2
        testutils.send_packet(self, 2, stev_packet("2001:db8:2::1", "2001:db8:1::1"))  # ingress side
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_PORT_ADMIN_DOWN, before, 2)

        self.delete_table_entry(P4.T_INGRESS_PORT_ADMIN_PORT_RX_ADMIN, {"port": 2})
        self.delete_table_entry(P4.T_EGRESS_PORT_ADMIN_PORT_TX_ADMIN, {"port": 2})
        testutils.send_packet(self, 1, to2)
        testutils.verify_packet(self, exp, 2)
