"""Congestion signals: trimming (lengths, DSCP 11 mark, the top queue) and its exemptions, early drop
when the queue estimate is full, ECN CE marking, control packets (ACK, CNP, probes) on the top queue,
data resent after a loss (DSCP_RESEND) on the queue below it."""
from __future__ import annotations

import unittest

from base.mrc_fabric import BLOCK, MY_USID, QDEPTH_MAX, SWITCH_MAC, MrcFabricTest, neighbour_mac
from base.mrc_packets import (
    carrier,
    explain,
    fill_hop,
    rewrite,
    srv6_packet,
    stev_packet,
    transport_fields,
    trimmed,
)
from base.p4rt_test import autocleanup
from ptf import testutils
from ptf.testutils import group
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import NoPayload

from controller import p4contract as P4
from mrc.wire import formats as F
from mrc.wire.layers import RETH, HBHOptMrcTelemetry, ImmDt, MrcBTH, is_trimmed, telemetry_option

DST = "2001:db8:300::9"
EVENTS = P4.CONGESTION_EVENTS  # congestion_events index -> name (trimmed, ecn_ce, early_drop), from define.p4


class _CongestionTest(MrcFabricTest):
    def events(self) -> dict[str, int]:
        """congestion_events[0..2] (packets) by name."""
        return {name: self.read_counter(P4.C_CONGESTION_EVENTS, i)[0] for i, name in EVENTS.items()}

    def route_to_slow_port(self) -> int:
        """The rate-limited port of the run (test param slow_port), with DST's /48 routed to it; skip
        the test when the run has none."""
        slow = testutils.test_param_get("slow_port")
        if not slow:
            raise unittest.SkipTest("no rate-limited port configured (test param slow_port)")
        self.add_route("2001:db8:300::/48", port=int(slow))
        return int(slow)

    def expect_events(self, before: dict[str, int], **delta: int) -> None:
        """Each congestion_events cell moved by exactly ``delta[name]`` (0 when not named) since ``before``."""
        for name in delta:
            if name not in EVENTS.values():
                raise ValueError(f"no congestion event {name!r}")
        for i, name in EVENTS.items():
            want = before[name] + delta.get(name, 0)
            got = self.wait_counter(lambda i=i: self.read_counter(P4.C_CONGESTION_EVENTS, i), want)[0]
            self.assertEqual(got, want, f"congestion_events[{i}] ({name})")


@group("congestion")
class TrimTest(_CongestionTest):
    """Threshold 0: every data packet to port 3 is trimmed after RETH [+ ImmDt]."""

    def check_trimmed(self, got: Ether, sent: Ether, last: type) -> None:
        """Decoded with the layers: DSCP 11 with ECN kept, transport headers intact, nothing after
        the last one, no ICRC."""
        self.assertTrue(is_trimmed(got))
        self.assertEqual(got[IPv6].tc, F.DSCP_TRIMMED << 2 | sent[IPv6].tc & 3)
        self.assertEqual(transport_fields(got), transport_fields(sent))
        self.assertIsInstance(got[last].payload, NoPayload)
        self.assertIsNone(got[MrcBTH].icrc)
        self.assertEqual(got[UDP].chksum, 0)

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.add_own_usid()
        self.route_usid(0x0303, port=3)
        self.set_queue_thresholds(3, trim=0)
        self.set_switch_id(5)
        before = self.events()

        # STEV mode with telemetry: the record's queue id shows the priority (the top queue, 0)
        pkt = stev_packet("2001:db8:1::1", DST, opcode=F.OP_WRITE_FIRST, payload_len=1000, psn=77,
                          telemetry=HBHOptMrcTelemetry())
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([3])
        got = Ether(data)
        self.check_trimmed(got, pkt, RETH)
        self.assertEqual(got[UDP].len, 8 + 12 + 16)
        self.assertEqual(len(data), 14 + 40 + 88 + 36)
        self.assertEqual(got[IPv6].plen, 88 + 36)
        tel = telemetry_option(got)
        self.assertEqual((tel.max_hops, tel.hop_count), (4, 1))
        rec = tel.records[0]
        self.assertEqual((rec.switch_id, rec.ingress_port, rec.egress_port, rec.queue_id),
                         (5, 1, 3, F.TRIM_PRIORITY))
        exp = fill_hop(trimmed(rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC)), rec)
        self.assertEqual(data, bytes(exp), explain(data, exp))

        # SRv6 mode with SRH and ImmDt: inner and outer lengths fixed
        pkt = srv6_packet(carrier(BLOCK, MY_USID, 0x0303), segments=["fc00::1"], segments_left=1,
                          opcode=F.OP_WRITE_ONLY_IMM, payload_len=1000, psn=0x123456)
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([3])
        got = Ether(data)
        self.check_trimmed(got, pkt, ImmDt)
        self.assertEqual(got[UDP].len, 40)
        self.assertEqual(got.getlayer(IPv6, 2).plen, 40)
        self.assertEqual(got[IPv6].plen, 24 + 40 + 40)
        self.assertEqual(len(data), 14 + 40 + 24 + 40 + 40)
        exp = trimmed(rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, ip_dst=carrier(BLOCK, 0x0303)))
        self.assertEqual(data, bytes(exp), explain(data, exp))
        testutils.verify_no_other_packets(self)
        self.expect_events(before, trimmed=2)  # no ECN entry on port 3: nothing CE-marked


@group("congestion")
class TrimExemptionsTest(_CongestionTest):
    """ACKs, probes and already-trimmed packets pass whole (ICRC intact) even at threshold 0."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.set_queue_thresholds(3, trim=0)
        already = trimmed(stev_packet("2001:db8:1::1", DST, opcode=F.OP_WRITE_LAST_IMM, payload_len=1000))
        self.assertTrue(is_trimmed(already))
        before = self.events()
        for pkt in (stev_packet("2001:db8:1::1", DST, opcode=F.OP_ACK),
                    stev_packet("2001:db8:1::1", DST, opcode=F.OP_PROBE_REQ),
                    already):
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC), 3)
            if pkt is not already:
                self.assertIs(Ether(bytes(pkt))[MrcBTH].icrc_ok(), True)
        testutils.verify_no_other_packets(self)
        self.expect_events(before)  # exempt packets are not counted as trimmed


@group("congestion")
class TrimFromQueueEstimateTest(_CongestionTest):
    """The ingress estimate comes from egress_qdepth; each trim decays a stale one (no refresh for
    QDEPTH_STALE_US, or a refresh time more than QDEPTH_FUTURE_US ahead) by one, the first packet
    that goes through untrimmed refreshes it with the real depth in egress, and a trim leaves a
    fresh estimate as it is."""

    @autocleanup
    def runTest(self):
        if not self.can_write_registers:
            raise unittest.SkipTest(f"{self.target}'s P4Runtime server cannot write registers")
        try:
            self.add_route("2001:db8:300::/48", port=3)
            self.set_queue_thresholds(3, trim=40)
            self.write_register(P4.R_EGRESS_QDEPTH_US, 3, 0)  # never refreshed: stale
            self.write_register(P4.R_EGRESS_QDEPTH, 3, 41)
            pkt = stev_packet("2001:db8:1::1", DST, payload_len=500)
            whole = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC)
            before = self.events()
            for expected_after in (40, 39):  # 41 and 40 are >= 40: trimmed, and the estimate decays
                testutils.send_packet(self, 1, pkt)
                testutils.verify_packet(self, trimmed(whole), 3)
                self.assertEqual(self.read_register(P4.R_EGRESS_QDEPTH, 3), expected_after)
            testutils.send_packet(self, 1, pkt)  # 39 < 40: forwarded whole
            testutils.verify_packet(self, whole, 3)
            self.assertEqual(self.read_register(P4.R_EGRESS_QDEPTH, 3), 0)  # egress wrote the real depth
            refreshed = self.read_register(P4.R_EGRESS_QDEPTH_US, 3)
            self.assertGreater(refreshed, 0, "egress stamps its refresh")
            # fresh (stamped 10 s ahead of that refresh): under overload several packets arrive per
            # departure, and a trim does not take one away from an estimate a dequeue has just written
            self.write_register(P4.R_EGRESS_QDEPTH_US, 3, refreshed + 10_000_000)
            self.write_register(P4.R_EGRESS_QDEPTH, 3, 41)
            for _ in range(2):
                testutils.send_packet(self, 1, pkt)
                testutils.verify_packet(self, trimmed(whole), 3)
                self.assertEqual(self.read_register(P4.R_EGRESS_QDEPTH, 3), 41)
            # stale: a refresh time an hour ahead (beyond QDEPTH_FUTURE_US) is no egress's stamp but a
            # client's write; until 2026-12-07 it counted as fresh and the port trimmed every data
            # packet until the clock caught up
            self.write_register(P4.R_EGRESS_QDEPTH_US, 3, refreshed + 3_600_000_000)
            for expected_after in (40, 39):
                testutils.send_packet(self, 1, pkt)
                testutils.verify_packet(self, trimmed(whole), 3)
                self.assertEqual(self.read_register(P4.R_EGRESS_QDEPTH, 3), expected_after)
            self.expect_events(before, trimmed=6)
        finally:  # registers outlive the test: leave port 3 with an empty, stale estimate
            self.write_register(P4.R_EGRESS_QDEPTH, 3, 0)
            self.write_register(P4.R_EGRESS_QDEPTH_US, 3, 0)


@group("congestion")
class TrimUnderBurstTest(_CongestionTest):
    """The queue estimate from traffic alone (no register written, so it runs on bmv2 too, whose
    P4Runtime server cannot write registers): a burst into a rate-limited port is admitted whole
    until ingress's count of admitted packets reaches the trim threshold, then trimmed; each frame
    leaves either whole or as exactly its trimmed form, trimmed headers overtake the data backlog
    (the top queue), the trims are counted, nothing is dropped; once the backlog has drained, egress
    has written the real depth and a packet goes through whole again."""

    @autocleanup
    def runTest(self):
        slow = self.route_to_slow_port()
        threshold, burst = 3, 24
        self.set_queue_thresholds(slow, trim=threshold)
        before = self.events()
        pkts = [stev_packet("2001:db8:1::1", DST, flow_label=i, payload_len=500, psn=i) for i in range(burst)]
        frames = [bytes(p) for p in pkts]  # built first: the backlog must build faster than it drains
        for frame in frames:
            testutils.send_packet(self, 1, frame)
        out = [self.receive_any([slow], timeout=10)[1] for _ in range(burst)]
        testutils.verify_no_other_packets(self)
        whole = {bytes(rewrite(p, eth_dst=neighbour_mac(slow), eth_src=SWITCH_MAC)): i for i, p in enumerate(pkts)}
        cut = {bytes(trimmed(rewrite(p, eth_dst=neighbour_mac(slow), eth_src=SWITCH_MAC))): i
               for i, p in enumerate(pkts)}
        kinds = []  # (cut?, index in the burst) in the order the frames left
        for data in out:
            self.assertTrue(data in whole or data in cut, f"neither whole nor trimmed: {Ether(data)!r}")
            kinds.append((False, whole[data]) if data in whole else (True, cut[data]))
        self.assertEqual(sorted(i for _, i in kinds), list(range(burst)), "each packet once")
        n_cut = sum(c for c, _ in kinds)
        got_whole = [i for c, i in kinds if not c]
        # the first `threshold` admitted found the estimate below it: the burst's first packets pass
        self.assertEqual(got_whole[:threshold], list(range(threshold)), f"out (cut?, index): {kinds}")
        self.assertGreater(n_cut, 0, f"a burst of {burst} into a {slow}-port backlog trimmed nothing: {kinds}")
        # a trimmed header leaves ahead of the data queued before it: not all of them last
        first_cut = next(n for n, (c, _) in enumerate(kinds) if c)
        self.assertLess(first_cut, burst - n_cut, f"trimmed headers waited behind the data: {kinds}")
        self.expect_events(before, trimmed=n_cut)
        # drained: egress wrote the depth it saw at the last dequeue, so the next packet passes whole
        pkt = stev_packet("2001:db8:1::1", DST, flow_label=burst, payload_len=500)
        testutils.send_packet(self, 1, pkt)
        testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(slow), eth_src=SWITCH_MAC), slow)
        testutils.verify_no_other_packets(self)
        self.expect_events(before, trimmed=n_cut)


@group("congestion")
class QueueFullDropTest(_CongestionTest):
    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.set_queue_thresholds(3, trim=QDEPTH_MAX, drop=0)
        before = self.drops(P4.DROP_REASON_QUEUE_FULL)
        events = self.events()
        testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", DST, opcode=F.OP_WRITE_ONLY))
        testutils.verify_no_other_packets(self)
        self.expect_drop_count(P4.DROP_REASON_QUEUE_FULL, before)
        self.expect_events(events, early_drop=1)
        # control packets do not enter the data queue: never dropped on its estimate
        for op in (F.OP_ACK, F.OP_CNP, F.OP_PROBE_REQ, F.OP_PORT_STATUS):
            pkt = stev_packet("2001:db8:1::1", DST, opcode=op)
            testutils.send_packet(self, 1, pkt)
            testutils.verify_packet(self, rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC), 3)
        testutils.verify_no_other_packets(self)
        self.expect_events(events, early_drop=1)


@group("congestion")
class ControlPriorityTest(_CongestionTest):
    """ACKs, CNPs, probes and port status take the top queue (with trimmed headers): sent behind a
    data burst into a rate-limited port, they leave before the data backlog has drained.

    In a FIFO they would be the last four out. What strict priority guarantees is that each one
    overtakes the data still queued when it arrives, so data must come out after the last of them;
    how many data packets leave before them depends on how fast the test's sender is (a loaded CI
    machine sent the four over ~25 ms, 5 data departures at the port's 200 frames/s, and a check
    that every control packet beat the 10th data packet failed).  The 20-frame burst is 100 ms of
    backlog."""

    @autocleanup
    def runTest(self):
        slow = self.route_to_slow_port()
        burst = 20
        ctl = (F.OP_ACK, F.OP_CNP, F.OP_PROBE_REQ, F.OP_PORT_STATUS)
        # built before sending (~1 ms of scapy a packet): the backlog must build faster than it drains
        frames = [bytes(stev_packet("2001:db8:1::1", DST, flow_label=i, payload_len=200)) for i in range(burst)]
        frames += [bytes(stev_packet("2001:db8:1::1", DST, opcode=op)) for op in ctl]
        for frame in frames:
            testutils.send_packet(self, 1, frame)
        ops = [Ether(self.receive_any([slow], timeout=10)[1])[MrcBTH].opcode for _ in range(burst + len(ctl))]
        pos = [i for i, op in enumerate(ops) if op in ctl]
        self.assertEqual(sorted(ops[i] for i in pos), sorted(ctl), f"opcodes out: {[hex(o) for o in ops]}")
        last_data = max(i for i, op in enumerate(ops) if op not in ctl)
        self.assertLess(max(pos), last_data, f"control packets waited behind the data: {[hex(o) for o in ops]}")


@group("congestion")
class PacketOutPriorityTest(_CongestionTest):
    """A PacketOut (the controller's wiring probe) takes the top queue: sent behind a data burst into a
    rate-limited port, it leaves before the data backlog has drained (in the data queue it waited
    behind the burst, or was tail-dropped with a full queue)."""

    @autocleanup
    def runTest(self):
        slow = self.route_to_slow_port()
        burst = 20
        frames = [bytes(stev_packet("2001:db8:1::1", DST, flow_label=i, payload_len=200)) for i in range(burst)]
        for frame in frames:
            testutils.send_packet(self, 1, frame)
        probe = Ether(dst="01:80:c2:00:00:0e", src="02:00:00:00:00:99", type=P4.ETHERTYPE_LINK_PROBE) / (b"PTFPROBE" + bytes(52))
        self.send_packet_out(bytes(probe), egress_port=slow)
        out = [self.receive_any([slow], timeout=10)[1] for _ in range(burst + 1)]
        pos = [i for i, data in enumerate(out) if Ether(data).type == P4.ETHERTYPE_LINK_PROBE]
        self.assertEqual(len(pos), 1, "the PacketOut did not come out once")
        # (it leaves once the data packet on the wire when it arrived is out: anywhere but last)
        self.assertLess(pos[0], burst, f"the PacketOut waited behind the data (position {pos[0]} of {burst + 1})")


RESEND_TC = F.DSCP_RESEND << 2 | F.ECN_ECT0


@group("congestion")
class ResendPriorityTest(_CongestionTest):
    """Data resent after a loss verdict (outer DSCP_RESEND) takes priority PRIORITY_RESEND: never
    trimmed nor dropped early on the data queue's estimate, not counted in it, and sent behind a data
    burst into a rate-limited port it leaves before the data backlog has drained (as control packets
    do, ControlPriorityTest)."""

    @autocleanup
    def runTest(self):
        self.assertEqual((P4.DSCP_RESEND, P4.PRIORITY_RESEND), (F.DSCP_RESEND, F.RESEND_PRIORITY))
        dst = "2001:db8:400::9"  # DST's /48 goes to the slow port below
        self.add_route("2001:db8:400::/48", port=3)
        self.set_queue_thresholds(3, trim=0, drop=0)
        self.set_switch_id(5)
        before = self.events()
        # threshold 0 trims every data packet; the resend passes whole, on the resend queue (its telemetry record)
        pkt = stev_packet("2001:db8:1::1", dst, opcode=F.OP_WRITE_MIDDLE, payload_len=1000, tc=RESEND_TC,
                          telemetry=HBHOptMrcTelemetry())
        testutils.send_packet(self, 1, pkt)
        _, data = self.receive_any([3])
        got = Ether(data)
        self.assertFalse(is_trimmed(got))
        self.assertEqual(got[IPv6].tc, RESEND_TC)
        rec = telemetry_option(got).records[0]
        self.assertEqual((rec.switch_id, rec.ingress_port, rec.egress_port, rec.queue_id),
                         (5, 1, 3, F.RESEND_PRIORITY))
        exp = fill_hop(rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC), rec)
        self.assertEqual(data, bytes(exp), explain(data, exp))
        # the DSCP alone does not lift a packet that is not MRC data: an ACK keeps the top queue
        ack = stev_packet("2001:db8:1::1", dst, opcode=F.OP_ACK, tc=RESEND_TC, telemetry=HBHOptMrcTelemetry())
        testutils.send_packet(self, 1, ack)
        _, data = self.receive_any([3])
        self.assertEqual(telemetry_option(Ether(data)).records[0].queue_id, F.TRIM_PRIORITY)
        # the same packet with the data DSCP is trimmed
        testutils.send_packet(self, 1, stev_packet("2001:db8:1::1", dst, opcode=F.OP_WRITE_MIDDLE, payload_len=1000))
        _, data = self.receive_any([3])
        self.assertTrue(is_trimmed(Ether(data)))
        testutils.verify_no_other_packets(self)
        self.expect_events(before, trimmed=1)

        slow = self.route_to_slow_port()
        burst = 20
        resends = 3
        # built before sending (ControlPriorityTest): the backlog must build faster than it drains
        frames = [bytes(stev_packet("2001:db8:1::1", DST, flow_label=i, payload_len=200)) for i in range(burst)]
        frames += [bytes(stev_packet("2001:db8:1::1", DST, flow_label=100 + i, payload_len=200, tc=RESEND_TC))
                   for i in range(resends)]
        for frame in frames:
            testutils.send_packet(self, 1, frame)
        out = [Ether(self.receive_any([slow], timeout=10)[1]) for _ in range(burst + resends)]
        pos = [i for i, p in enumerate(out) if p[IPv6].tc >> 2 == F.DSCP_RESEND]
        self.assertEqual(len(pos), resends, f"flow labels out: {[p[IPv6].fl for p in out]}")
        last_data = max(i for i, p in enumerate(out) if p[IPv6].tc >> 2 != F.DSCP_RESEND)
        self.assertLess(max(pos), last_data, f"resends waited behind the data: {[p[IPv6].fl for p in out]}")


@group("congestion")
class EcnTest(_CongestionTest):
    """Threshold 0 marks every ECN-capable packet CE; Not-ECT is never marked."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.set_ecn_threshold(3, 0)
        before = self.events()
        for tc, expected in ((0x6A, 0x6B), (0x69, 0x6B), (0x68, 0x68), (0x6B, 0x6B)):
            pkt = stev_packet("2001:db8:1::1", DST, tc=tc)
            testutils.send_packet(self, 1, pkt)
            _, data = self.receive_any([3])
            self.assertEqual(Ether(data)[IPv6].tc, expected, f"tc {tc:#x}")
            exp = rewrite(pkt, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC, tc=expected)
            self.assertEqual(data, bytes(exp), explain(data, exp))  # the ICRC masks the traffic class
        testutils.verify_no_other_packets(self)
        # ECT(0) and ECT(1) were marked here; Not-ECT is never marked, an arriving CE is not counted again
        self.expect_events(before, ecn_ce=2)


@group("congestion")
class EcnQueueDepthTest(_CongestionTest):
    """A burst into a rate-limited port builds a real queue; packets behind 3 others get CE."""

    @autocleanup
    def runTest(self):
        slow = self.route_to_slow_port()
        self.set_ecn_threshold(slow, 3)
        burst = 16
        before = self.events()
        frames = [bytes(stev_packet("2001:db8:1::1", DST, flow_label=i)) for i in range(burst)]  # built first
        for frame in frames:
            testutils.send_packet(self, 1, frame)
        marks = [Ether(self.receive_any([slow], timeout=10)[1])[IPv6].tc & 3 for _ in range(burst)]
        self.assertEqual(marks[0], 2, "the first packet found an empty queue")
        self.assertIn(3, marks, f"no CE in a burst of {burst}: {marks}")
        self.expect_events(before, ecn_ce=marks.count(3))  # all were sent ECT(0): each CE is ours


@group("congestion")
class UpstreamTrimmedTest(_CongestionTest):
    """A packet trimmed upstream (DSCP 11) is queued on the top queue at this hop too and is never dropped
    early; the resend DSCP (34) alone lifts no packet that is not MRC data (docs/dataplane.md
    "Congestion").  The queue is read from the telemetry record (queue id = priority)."""

    @autocleanup
    def runTest(self):
        self.add_route("2001:db8:300::/48", port=3)
        self.add_route("2001:db8:400::/48", port=2)
        self.set_queue_thresholds(3, trim=QDEPTH_MAX, drop=0)  # every data packet to port 3 dropped early
        self.set_switch_id(5)
        before = self.events()
        drops = self.drops(P4.DROP_REASON_QUEUE_FULL)
        cut = trimmed(stev_packet("2001:db8:1::1", DST, opcode=F.OP_WRITE_MIDDLE, payload_len=1000,
                                  telemetry=HBHOptMrcTelemetry()))
        testutils.send_packet(self, 1, cut)
        _, data = self.receive_any([3])
        rec = telemetry_option(Ether(data)).records[0]
        self.assertEqual((rec.switch_id, rec.egress_port, rec.queue_id), (5, 3, F.TRIM_PRIORITY))
        exp = fill_hop(rewrite(cut, eth_dst=neighbour_mac(3), eth_src=SWITCH_MAC), rec)
        self.assertEqual(data, bytes(exp), explain(data, exp))
        # not MRC (UDP port 4792) with the resend DSCP: the data queue, like any other packet
        other = stev_packet("2001:db8:1::1", "2001:db8:400::4", tc=F.DSCP_RESEND << 2 | F.ECN_ECT0,
                            telemetry=HBHOptMrcTelemetry())
        other[UDP].dport = 4792
        other = Ether(bytes(other))
        testutils.send_packet(self, 1, other)
        _, data = self.receive_any([2])
        rec = telemetry_option(Ether(data)).records[0]
        self.assertEqual((rec.switch_id, rec.egress_port, rec.queue_id), (5, 2, F.DATA_PRIORITY))
        testutils.verify_no_other_packets(self)
        self.expect_events(before)
        self.assertEqual(self.drops(P4.DROP_REASON_QUEUE_FULL), drops)


@group("congestion")
class AdmissionEstimateTest(_CongestionTest):
    """Ingress counts what it admits to a port's data queue into the estimate (docs/dataplane.md
    "Congestion": every packet admitted to the data queues of a port with thresholds adds one; control
    packets, resends and trimmed packets add nothing).  Without registers, so on every target: egress
    holds the port down (no dequeue refreshes the estimate), and a data packet sent once the port is
    up again shows by being trimmed or not whether the estimate reached the trim threshold."""

    @autocleanup
    def runTest(self):
        port, threshold = 2, 3
        self.add_route("2001:db8:300::/48", port=port)
        self.set_queue_thresholds(port, trim=threshold)
        data = [stev_packet("2001:db8:1::1", DST, flow_label=i, payload_len=300, psn=i) for i in range(8)]

        def whole_or_cut(pkt) -> bool:
            """Send ``pkt`` with the port up: True if it left trimmed, False if whole."""
            testutils.send_packet(self, 1, pkt)
            _, got = self.receive_any([port])
            whole = rewrite(pkt, eth_dst=neighbour_mac(port), eth_src=SWITCH_MAC)
            if got == bytes(whole):
                return False
            self.assertEqual(got, bytes(trimmed(whole)), "neither whole nor trimmed: " + explain(got, whole))
            return True

        def while_down(pkts) -> None:
            """Send ``pkts`` while egress holds the port down: admitted by ingress, dropped in egress."""
            self.set_port_down(port, ingress=False)
            drops = self.drops(P4.DROP_REASON_PORT_ADMIN_DOWN)
            for p in pkts:
                testutils.send_packet(self, 1, p)
            self.expect_drop_count(P4.DROP_REASON_PORT_ADMIN_DOWN, drops, len(pkts))
            self.delete_table_entry(P4.T_EGRESS_PORT_ADMIN_PORT_TX_ADMIN, {"port": port})

        # a packet of the data queue that is never trimmed (not MRC): its dequeue writes the real depth, 0
        other = stev_packet("2001:db8:1::1", DST)
        other[UDP].dport = 4792
        self.assertFalse(whole_or_cut(Ether(bytes(other))))
        # two data packets count; an ACK, a CNP, a probe, a resend and a trimmed packet do not
        while_down([data[0], data[1],
                    *(stev_packet("2001:db8:1::1", DST, opcode=op) for op in (F.OP_ACK, F.OP_CNP, F.OP_PROBE_REQ)),
                    stev_packet("2001:db8:1::1", DST, payload_len=300, tc=RESEND_TC),
                    trimmed(data[2])])
        self.assertFalse(whole_or_cut(data[3]), "estimate 2 < 3: whole")  # and its dequeue writes 0 again
        # three data packets reach the threshold: the next data packet is trimmed
        while_down(data[4:7])
        self.assertTrue(whole_or_cut(data[7]), f"{threshold} packets admitted: estimate {threshold}, trimmed")
