"""SRv6 uSID: uN shift for 1..6 uSIDs, end of carrier with and without SRH, classic End,
host delivery, unknown uSID, hop limit expiry, parser errors (dropped only where the DA is ours)."""
from __future__ import annotations

import ipaddress

from base.mrc_fabric import BLOCK, MY_USID, SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import carrier, explain, rewrite, srv6_packet, with_ext, with_tlv
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet6 import (
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrSegmentRouting,
    PadN,
    RouterAlert,
)
from scapy.layers.l2 import Ether

from controller import p4contract as P4
from controller import usid as U
from mrc.wire import formats as F
from mrc.wire.layers import MrcBTH, MrcProbe


@group("srv6")
class UsidShiftTest(MrcFabricTest):
    """The top uSID is ours: the rest shifts left 16 bits, block kept, routed on the next uSID."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        next_usids = [0x0201, 0x0302, 0x0403, 0x0504, 0x0605]
        for i, nxt in enumerate(next_usids):
            self.route_usid(nxt, port=1 + i % 4)
        # carriers holding 1..6 uSIDs: ours first, then 0..5 more
        for total in range(2, 7):
            rest = [next_usids[total - 2]] + [0x0A00 + k for k in range(total - 2)]
            pkt = srv6_packet(carrier(BLOCK, MY_USID, *rest), eth_dst=SWITCH_MAC)
            port = 1 + (total - 2) % 4
            exp = rewrite(pkt, eth_dst=neighbour_mac(port), eth_src=SWITCH_MAC, ip_dst=carrier(BLOCK, *rest))
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, exp, port)
        testutils.verify_no_other_packets(self)


@group("srv6")
class EndOfCarrierNoSrhTest(MrcFabricTest):
    """Our uSID is the last one and there is no SRH: probes go to the CPU, data is dropped."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        before = self.drops(P4.DROP_REASON_LOCAL_NOT_PROBE)
        data = srv6_packet(carrier(BLOCK, MY_USID), opcode=F.OP_WRITE_ONLY)
        testutils.send_packet(self, 2, data)
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_LOCAL_NOT_PROBE, before)

        probe = srv6_packet(carrier(BLOCK, MY_USID), opcode=F.OP_PROBE_REQ, psn=0x4711)
        testutils.send_packet(self, 2, probe)
        pin = self.get_packet_in()
        self.assertEqual(pin.metadata["ingress_port"], 2)
        self.assertEqual(pin.metadata["reason"], P4.PACKET_IN_REASON_PROBE)
        self.assertEqual(pin.payload, bytes(probe))  # not forwarded: hop limit untouched
        got = Ether(pin.payload)
        self.assertEqual((got[MrcBTH].opcode, got[MrcProbe].req_id), (F.OP_PROBE_REQ, 0x4711))
        self.assertIs(got[MrcBTH].icrc_ok(), True)


@group("srv6")
class EndOfCarrierWithSrhTest(MrcFabricTest):
    """Carrier ends here and the SRH has segments left: End copies the next segment to the DA."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        next_carrier = carrier(BLOCK, 0x0777, 0x0888)
        self.route_usid(0x0777, port=3)
        pkt = srv6_packet(carrier(BLOCK, MY_USID), segments=[next_carrier], segments_left=1)
        exp = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, ip_dst=next_carrier,
                      segments_left=0)
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, exp, 3)
        testutils.verify_no_other_packets(self)


@group("srv6")
class ClassicEndTest(MrcFabricTest):
    """A full 128-bit SID in my_sid performs SRH End."""

    @autocleanup
    def runTest(self):
        sid = "fc00:ffff::1"
        self.add_my_sid(sid)
        self.add_route("2001:db8:99::/48", port=4)
        segs = ["2001:db8:99::1", sid]  # List[0] is the last segment
        pkt = srv6_packet(sid, segments=segs, segments_left=1)
        exp = rewrite(pkt, eth_dst=neighbour_mac(4), eth_src=SWITCH_MAC, ip_dst=segs[0], segments_left=0)
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, exp, 4)
        testutils.verify_no_other_packets(self)


@group("srv6")
class HostDeliveryTest(MrcFabricTest):
    """Leaf: after our uSID the host's uSID is on top; the /48 host route delivers it."""

    @autocleanup
    def runTest(self):
        host_usid = 0x0F01
        self.add_own_usid()
        self.route_usid(host_usid, port=4)
        pkt = srv6_packet(carrier(BLOCK, MY_USID, host_usid))
        exp = rewrite(pkt, eth_dst=neighbour_mac(4), eth_src=SWITCH_MAC, ip_dst=carrier(BLOCK, host_usid))
        testutils.send_packet(self, 2, pkt)
        testutils.verify_packet(self, exp, 4)
        # STEV-mode host route (/128 on the host address)
        self.add_route("2001:db8:1::5/128", port=3)
        pkt = srv6_packet("2001:db8:1::5")
        testutils.send_packet(self, 2, pkt)
        testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC), 3)
        testutils.verify_no_other_packets(self)


@group("srv6")
class UnknownUsidTest(MrcFabricTest):
    """Our block but a uSID that is neither ours nor routed: dropped as USID_UNKNOWN."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        entry = self.block_unknown_usids()
        before = self.drops(P4.DROP_REASON_USID_UNKNOWN)
        testutils.send_packet(self, 1, srv6_packet(carrier(BLOCK, 0x0BAD, 0x0202)))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_USID_UNKNOWN, before)
        self.assertEqual(self.wait_counter(lambda: self.read_direct_counter(entry), 1)[0], 1)
        before = self.drops(P4.DROP_REASON_NO_ROUTE)
        testutils.send_packet(self, 1, srv6_packet("2001:db8:dead::1"))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_NO_ROUTE, before)


@group("srv6")
class HopLimitTest(MrcFabricTest):
    """Hop limit 1 cannot be forwarded (dropped, counted); 2 leaves with 1."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        self.route_usid(0x0202, port=2)
        before = self.drops(P4.DROP_REASON_HOP_LIMIT)
        testutils.send_packet(self, 1, srv6_packet(carrier(BLOCK, MY_USID, 0x0202), hop_limit=1))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_HOP_LIMIT, before)
        pkt = srv6_packet(carrier(BLOCK, MY_USID, 0x0202), hop_limit=2)
        exp = rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC, ip_dst=carrier(BLOCK, 0x0202))
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, exp, 2)


@group("srv6")
class SrhTooManySegmentsTest(MrcFabricTest):
    """An SRH with 5 segments is a parser error. Where the packet ends at one of our SIDs (End) it is
    dropped and counted; a uN shift forwards it, shifted, the SRH untouched (RFC 9800 4.1.1 shifts
    before any of the SRH's checks); in transit it is forwarded on its DA untouched, as a transit
    node does not inspect the routing header (RFC 8754 section 4.2)."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        self.route_usid(0x0202, port=3)
        self.add_route("fc00::/16", port=2)
        segs = [f"fc00::{i}" for i in range(5)]
        before = self.drops(P4.DROP_REASON_PARSER_ERROR)
        testutils.send_packet(self, 1, srv6_packet(carrier(BLOCK, MY_USID), segments=segs))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_PARSER_ERROR, before)
        pkt = srv6_packet(carrier(BLOCK, MY_USID, 0x0202), segments=segs)
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC,
                                              ip_dst=carrier(BLOCK, 0x0202)), 3)
        for pkt in (srv6_packet("fc00::9", segments=segs), srv6_packet("fc00::9", segments=segs[:4])):
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC), 2)
        testutils.verify_no_other_packets(self)


@group("srv6")
class TransitUnsupportedRoutingHeaderTest(MrcFabricTest):
    """Routing headers a transit switch does not process (an SRH with a TLV, another routing type,
    segments left beyond the list) pass it unchanged but for the hop limit (RFC 8754 4.2, RFC 8200
    4.4); where the packet ends at our SID the last two are parser errors."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        self.add_route("fc00::/16", port=2)
        pad_tlv = with_tlv(srv6_packet("fc00::9", segments=["fc00::9"]), 6)
        other_type = srv6_packet("fc00::9", segments=["fc00::9"])
        other_type[IPv6ExtHdrSegmentRouting].type = 3
        bad_sl = srv6_packet("fc00::9", segments=["fc00::9"], segments_left=2)
        for pkt in (pad_tlv, other_type, bad_sl):
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(2), eth_src=SWITCH_MAC), 2)
        before = self.drops(P4.DROP_REASON_PARSER_ERROR)
        mine = srv6_packet(carrier(BLOCK, MY_USID), segments=["fc00::9"], segments_left=2)
        testutils.send_packet(self, 1, mine)
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_PARSER_ERROR, before)


@group("srv6")
class EndSegmentListTest(MrcFabricTest):
    """End at every segments_left of a full 4-entry list: SL -= 1, then DA = Segment List[SL] (RFC 8754
    4.3.1.1; docs/dataplane.md "SRv6 uSID behaviour"), the segment list itself untouched."""

    @autocleanup
    def runTest(self):
        sid = "fc00:ffff::1"
        self.add_my_sid(sid)
        self.add_route("2001:db8::/32", port=3)
        segs = [f"2001:db8:{0x90 + i:x}::{i + 1}" for i in range(4)]  # List[0] (the last segment) .. List[3]
        for sl in (4, 3, 2, 1):
            pkt = srv6_packet(sid, segments=segs, segments_left=sl)
            exp = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, ip_dst=segs[sl - 1],
                          segments_left=sl - 1)
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([3])
            self.assertEqual(data, bytes(exp), f"segments_left {sl}: " + explain(data, exp))
        testutils.verify_no_other_packets(self)


@group("srv6")
class EndOfCarrierProbeOpcodesTest(MrcFabricTest):
    """Every MRC message addressed to a switch -- probe request 0xC0, probe response 0xC1, port status
    0xC2 -- ending at this switch is a PacketIn with reason PROBE and the frame as received
    (docs/dataplane.md "SRv6 uSID behaviour"); a data packet ending here is not."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        for op in (F.OP_PROBE_REQ, F.OP_PROBE_RESP, F.OP_PORT_STATUS):
            pkt = srv6_packet(carrier(BLOCK, MY_USID), opcode=op, psn=0x4700 + op)
            testutils.send_packet(self, 2, pkt)
            pin = self.get_packet_in()
            self.assertEqual((pin.metadata["ingress_port"], pin.metadata["reason"]),
                             (2, P4.PACKET_IN_REASON_PROBE), f"opcode {op:#x}")
            self.assertEqual(pin.payload, bytes(pkt), f"opcode {op:#x}")
        before = self.drops(P4.DROP_REASON_LOCAL_NOT_PROBE)
        testutils.send_packet(self, 2, srv6_packet(carrier(BLOCK, MY_USID), opcode=F.OP_ACK))
        self.expect_drop_count(P4.DROP_REASON_LOCAL_NOT_PROBE, before)
        self.verify_no_packet_in()
        testutils.verify_no_other_packets(self)


@group("srv6")
class UsidArgumentTest(MrcFabricTest):
    """The carrier ends where the whole Argument (every bit after the active uSID) is zero, RFC 9800
    section 4.1.1: ``block|ours|0000|X`` is shifted (to ``block|0000|X``) and routed, not ended here."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        self.add_route(f"{carrier(BLOCK)}/32", port=4)  # the block: what the shift leaves on top
        dst = int(ipaddress.IPv6Address(carrier(BLOCK, MY_USID))) | 0x0202 << 48
        pkt = srv6_packet(str(ipaddress.IPv6Address(dst)))
        exp = rewrite(pkt, eth_dst=neighbour_mac(4), eth_src=SWITCH_MAC,
                      ip_dst=str(ipaddress.IPv6Address(U.shift(dst))))
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, exp, 4)
        testutils.verify_no_other_packets(self)


@group("srv6")
class EndBehindOptionsHeadersTest(MrcFabricTest):
    """An SRH behind a Hop-by-Hop header other than the telemetry one and/or Destination Options (the
    RFC 8200 4.1 order) is found: End at our uSID does SL -= 1, DA = Segment List[SL]; the options
    headers pass unchanged."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        next_carrier = carrier(BLOCK, 0x0777, 0x0888)
        self.route_usid(0x0777, port=3)
        base = srv6_packet(carrier(BLOCK, MY_USID), segments=[next_carrier], segments_left=1)
        for exts in ([IPv6ExtHdrHopByHop(options=[RouterAlert()])],
                     [IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0" * 12)])],
                     [IPv6ExtHdrHopByHop(options=[RouterAlert()]), IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0" * 4)])]):
            pkt = with_ext(base, *exts)
            exp = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, ip_dst=next_carrier,
                          segments_left=0)
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, exp, 3)
        testutils.verify_no_other_packets(self)


@group("srv6")
class EndWithSrhTlvTest(MrcFabricTest):
    """TLVs after the segment list (RFC 8754 2.1, here a PadN TLV: hdr_ext_len > 2 * (last_entry + 1))
    do not stop End: SL -= 1, DA = Segment List[SL], the TLVs as they were."""

    @autocleanup
    def runTest(self):
        self.add_own_usid()
        next_carrier = carrier(BLOCK, 0x0777, 0x0888)
        self.route_usid(0x0777, port=3)
        pkt = with_tlv(srv6_packet(carrier(BLOCK, MY_USID), segments=[next_carrier], segments_left=1), 24)
        self.assertEqual(pkt[IPv6ExtHdrSegmentRouting].len, 2 + 3)
        exp = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, ip_dst=next_carrier, segments_left=0)
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, exp, 3)
        testutils.verify_no_other_packets(self)
