"""IPv4 routing: route_v4 longest-prefix match to a next hop (port, MACs), TTL decremented once with a
valid header checksum, TTL expiry dropped and counted as HOP_LIMIT, route_v4's direct counter."""
from __future__ import annotations

from base.mrc_fabric import SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import explain, ipv4_checksum_ok, ipv4_icrc, ipv4_packet, rewrite
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.utils import checksum

from controller import p4contract as P4
from mrc.wire import formats as F

SRC = "10.0.0.1"


class _Ipv4Test(MrcFabricTest):
    def add_route_v4(self, prefix: str, port: int):
        return self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V4, {"dst_addr": prefix}, P4.A_INGRESS_ROUTING_SET_NEXT_HOP,
                                       self.next_hop(port))

    def forward(self, pkt, port: int) -> Ether:
        """Send ``pkt`` on port 1 and check it leaves ``port`` byte for byte as routed: neighbour and own
        MAC, TTL one less, header checksum valid (and changed), ICRC untouched and still valid."""
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([port])
        got = Ether(data)
        self.assertEqual(got[IP].ttl, pkt[IP].ttl - 1)
        self.assertTrue(ipv4_checksum_ok(got), f"bad IPv4 header checksum {got[IP].chksum:#06x}")
        self.assertNotEqual(got[IP].chksum, pkt[IP].chksum, "TTL changed but the checksum did not")
        self.assertEqual(ipv4_icrc(got), data[-4:], "the ICRC masks the TTL and checksum: still valid")
        exp = rewrite(pkt, eth_dst=neighbour_mac(port), eth_src=SWITCH_MAC)
        self.assertEqual(data, bytes(exp), explain(data, exp))
        return got


@group("ipv4")
class Ipv4RouteTest(_Ipv4Test):
    """LPM: the /24 wins over the /16 it sits in; each entry's direct counter counts its packets."""

    @autocleanup
    def runTest(self):
        wide = self.add_route_v4("10.1.0.0/16", port=2)
        narrow = self.add_route_v4("10.1.2.0/24", port=3)
        host = self.add_route_v4("10.1.2.200/32", port=4)
        sent = {2: [], 3: [], 4: []}
        for dst, port in (("10.1.7.1", 2), ("10.1.2.9", 3), ("10.1.2.200", 4), ("10.1.3.255", 2),
                          ("10.1.2.201", 3)):
            for ttl in (64, 2, 255):  # 2: the lowest TTL that is still forwarded (leaves with 1)
                pkt = ipv4_packet(SRC, dst, ttl=ttl, payload_len=32 + ttl % 7)
                self.forward(pkt, port)
                sent[port].append(len(bytes(pkt)))
        testutils.verify_no_other_packets(self)
        for entry, port in ((wide, 2), (narrow, 3), (host, 4)):
            packets, octets = self.wait_counter(lambda e=entry: self.read_direct_counter(e), len(sent[port]))
            self.assertEqual(packets, len(sent[port]), f"route_v4 counter of the port-{port} entry")
            self.assertEqual(octets, sum(sent[port]), f"route_v4 byte counter of the port-{port} entry")


@group("ipv4")
class Ipv4NoRouteTest(_Ipv4Test):
    """A destination outside every prefix is dropped and counted as NO_ROUTE."""

    @autocleanup
    def runTest(self):
        self.add_route_v4("10.1.0.0/16", port=2)
        before = self.drops(P4.DROP_REASON_NO_ROUTE)
        testutils.send_packet(self, 1, ipv4_packet(SRC, "192.0.2.7"))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_NO_ROUTE, before)


@group("ipv4")
class Ipv4TtlExpiryTest(_Ipv4Test):
    """TTL 1 and 0 are dropped with HOP_LIMIT after the route lookup (its direct counter counts the
    hit); TTL 2 still leaves, with TTL 1."""

    @autocleanup
    def runTest(self):
        route = self.add_route_v4("10.1.2.0/24", port=3)
        before = self.drops(P4.DROP_REASON_HOP_LIMIT)
        for ttl in (1, 0):
            testutils.send_packet(self, 1, ipv4_packet(SRC, "10.1.2.9", ttl=ttl))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_HOP_LIMIT, before, count=2)
        self.assertEqual(self.wait_counter(lambda: self.read_direct_counter(route), 2)[0], 2)
        self.forward(ipv4_packet(SRC, "10.1.2.9", ttl=2), 3)
        self.assertEqual(self.drops(P4.DROP_REASON_HOP_LIMIT), before + 2, "a forwarded packet counted as expired")
        self.assertEqual(self.wait_counter(lambda: self.read_direct_counter(route), 3)[0], 3)
        testutils.verify_no_other_packets(self)


@group("ipv4")
class Ipv4BadChecksumTest(_Ipv4Test):
    """A header whose checksum fails is dropped as PARSER_ERROR (RFC 1812 5.2.2), not forwarded with a
    freshly computed checksum that would hide the corruption."""

    @autocleanup
    def runTest(self):
        self.add_route_v4("10.1.0.0/16", port=2)
        bad = ipv4_packet(SRC, "10.1.0.9")
        bad[IP].chksum ^= 0x0101
        before = self.drops(P4.DROP_REASON_PARSER_ERROR)
        testutils.send_packet(self, 1, bad)
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_PARSER_ERROR, before)
        self.forward(ipv4_packet(SRC, "10.1.0.9"), 2)  # the same packet with its checksum intact


@group("ipv4")
class Ipv4FragmentTest(_Ipv4Test):
    """Fragments are routed on the IPv4 header alone: a later fragment whose first bytes look like
    UDP port 4791 and an RDMA WRITE is not parsed as one, so a trim threshold of 0 leaves it whole."""

    @autocleanup
    def runTest(self):
        self.add_route_v4("10.1.0.0/16", port=2)
        self.set_queue_thresholds(2, trim=0)
        for frag, mf in ((185, 0), (0, 1)):  # a last fragment at 1480 bytes; a first one (MF set)
            pkt = ipv4_packet(SRC, "10.1.0.9")
            pkt[IP].frag, pkt[IP].flags = frag, mf
            pkt = Ether(bytes(rewrite(pkt, hop_limit_delta=0)))  # checksum recomputed for the new flags
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([2])
            exp = rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC)
            self.assertEqual(data, bytes(exp), explain(data, exp))
        testutils.verify_no_other_packets(self)


def _ipv4_trimmed(whole: bytes, udp_len: int) -> bytes:
    """``whole`` (an IPv4 RoCEv2 frame as the switch forwards it) as a trimming switch leaves it: cut
    after RETH [+ ImmDt], UDP length ``udp_len`` and checksum 0, total length 20 + ``udp_len``, DSCP 11
    with the ECN bits kept, header checksum recomputed (docs/dataplane.md "Congestion")."""
    out = bytearray(whole[:14 + 20 + udp_len])
    out[15] = F.DSCP_TRIMMED << 2 | out[15] & 3
    out[16:18] = (20 + udp_len).to_bytes(2, "big")
    out[24:26] = b"\0\0"
    out[24:26] = checksum(bytes(out[14:34])).to_bytes(2, "big")
    out[38:40] = udp_len.to_bytes(2, "big")
    out[40:42] = b"\0\0"
    return bytes(out)


@group("ipv4")
class Ipv4EcnTest(_Ipv4Test):
    """ECN on the only IP header when it is IPv4: threshold 0 marks ECT(0) and ECT(1) CE, leaves Not-ECT
    and CE as they are; the header checksum follows the TOS; only the two marks are counted."""

    @autocleanup
    def runTest(self):
        self.add_route_v4("10.1.0.0/16", port=3)
        self.set_ecn_threshold(3, 0)
        before = self.read_counter(P4.C_CONGESTION_EVENTS, 1)[0]
        for tos, expected in ((0x6A, 0x6B), (0x69, 0x6B), (0x68, 0x68), (0x6B, 0x6B)):
            pkt = ipv4_packet(SRC, "10.1.0.9", tos=tos)
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([3])
            got = Ether(data)
            self.assertEqual(got[IP].tos, expected, f"tos {tos:#x}")
            self.assertTrue(ipv4_checksum_ok(got), f"tos {tos:#x}: bad IPv4 header checksum")
            exp = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, tc=expected)
            self.assertEqual(data, bytes(exp), explain(data, exp))
        testutils.verify_no_other_packets(self)
        got = self.wait_counter(lambda: self.read_counter(P4.C_CONGESTION_EVENTS, 1), before + 2)[0]
        self.assertEqual(got, before + 2, "congestion_events[ecn_ce]")


@group("ipv4")
class Ipv4TrimTest(_Ipv4Test):
    """Trimming an IPv4 (UDP-mode) data packet: cut after RETH [+ ImmDt], UDP checksum 0, total length
    recomputed, DSCP 11 on the IPv4 header with ECN kept, valid header checksum; counted as trimmed.  An IPv4 packet that
    arrives trimmed (DSCP 11) is neither trimmed again nor dropped early."""

    @autocleanup
    def runTest(self):
        self.add_route_v4("10.1.0.0/16", port=2)
        self.set_queue_thresholds(2, trim=0)
        before = self.read_counter(P4.C_CONGESTION_EVENTS, 0)[0]
        for opcode, udp_len in ((F.OP_WRITE_ONLY, 36), (F.OP_WRITE_LAST_IMM, 40)):
            pkt = ipv4_packet(SRC, "10.1.0.9", opcode=opcode, payload_len=700, tos=0x69)
            frame = bytes(pkt)
            pkt = Ether(frame[:40] + b"\xbe\xef" + frame[42:])  # a UDP checksum: a trim zeroes it
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([2])
            exp = _ipv4_trimmed(bytes(rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC)), udp_len)
            got = Ether(data)
            self.assertEqual((got[IP].len, got[IP].tos >> 2, got[IP].tos & 3), (20 + udp_len, F.DSCP_TRIMMED, 1),
                             f"opcode {opcode:#x}")
            self.assertTrue(ipv4_checksum_ok(got), f"opcode {opcode:#x}: bad IPv4 header checksum")
            self.assertEqual(data, exp, f"opcode {opcode:#x}: " + explain(data, Ether(exp)))
        got = self.wait_counter(lambda: self.read_counter(P4.C_CONGESTION_EVENTS, 0), before + 2)[0]
        self.assertEqual(got, before + 2, "congestion_events[trimmed]")
        # arrived trimmed: passes as it is (but for TTL and MACs), even with every packet dropped early
        self.modify_table_entry(P4.T_INGRESS_CONGESTION_QUEUE_THRESHOLDS, {"port": 2},
                                P4.A_INGRESS_CONGESTION_SET_QUEUE_THRESHOLDS, {"trim_threshold": 0, "drop_threshold": 0})
        cut = Ether(_ipv4_trimmed(bytes(ipv4_packet(SRC, "10.1.0.9", payload_len=700)), 36))
        testutils.send_packet(self, 1, cut)
        _, data = self.receive_any([2])
        exp = rewrite(cut, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC)
        self.assertEqual(data, bytes(exp), explain(data, exp))
        testutils.verify_no_other_packets(self)
        self.assertEqual(self.read_counter(P4.C_CONGESTION_EVENTS, 0)[0], before + 2, "trimmed twice")
