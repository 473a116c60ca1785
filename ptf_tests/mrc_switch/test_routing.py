"""Load balancing: ECMP spread over every member when the flow label or UDP source port varies,
stickiness when they do not, EV-direct member selection."""
from __future__ import annotations

from collections import Counter

from base.mrc_fabric import SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import explain, rewrite, stev_packet
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group

from controller import p4contract as P4

MEMBERS = [2, 3, 4]
DST = "2001:db8:200::7"
PACKETS = 90


class _GroupTest(MrcFabricTest):
    def spray(self, vary: str) -> Counter:
        seen: Counter = Counter()
        for i in range(PACKETS):
            kwargs = {"flow_label": 0x100 + i} if vary == "flow_label" else \
                {"sport": 0xC000 + i} if vary == "sport" else {"flow_label": 0x77, "sport": 0xC123}
            pkt = stev_packet("2001:db8:100::1", DST, **kwargs)
            testutils.send_packet(self, 1, pkt)
            port, data = self.receive_any(MEMBERS)
            exp = rewrite(pkt, eth_dst=neighbour_mac(port), eth_src=SWITCH_MAC)  # the member's next hop
            self.assertEqual(data, bytes(exp), explain(data, exp))
            seen[port] += 1
        testutils.verify_no_other_packets(self)
        return seen


@group("lb")
class EcmpSpreadTest(_GroupTest):
    @autocleanup
    def runTest(self):
        route = self.add_ecmp_route("2001:db8:200::/48", group_id=1, ports=MEMBERS)
        for vary in ("flow_label", "sport"):
            seen = self.spray(vary)
            self.assertEqual(set(seen), set(MEMBERS), f"varying {vary} must reach every member: {seen}")
        self.assertEqual(self.wait_counter(lambda: self.read_direct_counter(route), 2 * PACKETS)[0],
                         2 * PACKETS)


@group("lb")
class EcmpStickyTest(_GroupTest):
    @autocleanup
    def runTest(self):
        self.add_ecmp_route("2001:db8:200::/48", group_id=1, ports=MEMBERS)
        seen = self.spray("none")
        self.assertEqual(len(seen), 1, f"one flow must stay on one member: {seen}")


@group("lb")
class EvDirectTest(MrcFabricTest):
    """EV-direct: ev = sport << 16 | flow_label & 0xffff; its 2 low bits pick member j mod 3."""

    @autocleanup
    def runTest(self):
        self.add_ev_direct_route("2001:db8:200::/48", group_id=7, ports=MEMBERS)
        for ev_low in range(8):
            for sport in (0xC000, 0xD00D):
                pkt = stev_packet("2001:db8:100::1", DST, flow_label=0x50000 | ev_low, sport=sport)
                testutils.send_packet(self, 1, pkt)
                expected = MEMBERS[(ev_low & 3) % len(MEMBERS)]
                port, _ = self.receive_any(MEMBERS)
                self.assertEqual(port, expected, f"ev low bits {ev_low}")
        testutils.verify_no_other_packets(self)


@group("lb")
class GroupMissTest(MrcFabricTest):
    """A route to a group that does not pick a member drops the packet with NO_ROUTE (docs/dataplane.md:
    NO_ROUTE is a route, ECMP or EV-direct miss): an ECMP group id no ecmp_select entry holds, and an EV
    no ev_direct entry of the group matches.  Matching EVs are still forwarded."""

    @autocleanup
    def runTest(self):
        self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": "2001:db8:220::/48"},
                                P4.A_INGRESS_ROUTING_SET_ECMP_GROUP, {"group_id": 9})  # no ecmp_select entry
        self.insert_table_entry(P4.T_INGRESS_ROUTING_EV_DIRECT, {"group_id": 7, "ev": (0, 1)},
                                P4.A_INGRESS_ROUTING_SET_NEXT_HOP, self.next_hop(3), priority=10)  # even EVs only
        self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": "2001:db8:230::/48"},
                                P4.A_INGRESS_ROUTING_SET_EV_DIRECT_GROUP, {"group_id": 7})
        even = stev_packet("2001:db8:100::1", "2001:db8:230::7", flow_label=0x50002)
        testutils.send_packet(self, 1, even)
        testutils.verify_packet(self, rewrite(even, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC), 3)
        for dst, fl in (("2001:db8:220::7", 0x50002), ("2001:db8:230::7", 0x50003)):
            before = self.drops(P4.DROP_REASON_NO_ROUTE)
            testutils.send_packet(self, 1, stev_packet("2001:db8:100::1", dst, flow_label=fl))
            testutils.verify_no_other_packets(self)
            self.expect_drop_count(P4.DROP_REASON_NO_ROUTE, before)
