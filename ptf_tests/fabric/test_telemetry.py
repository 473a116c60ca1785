"""Per-hop telemetry through the fabric: a data packet carrying the telemetry Hop-by-Hop option
arrives with one filled record per hop, in path order, naming the switches and ports of its path."""
from __future__ import annotations

from base.fabric_ports import host_port
from base.fabric_test import FabricTest
from ptf.testutils import group
from scapy.layers.l2 import Ether

from controller.evplan import Hop
from mrc.wire import codec
from mrc.wire import formats as F
from mrc.wire.layers import telemetry_option

HBH_OFF = 14 + 40
RECORDS_OFF, RECORDS_END = HBH_OFF + 8, HBH_OFF + F.HBH_TELEMETRY_LEN
MAX_LATENCY_US = 5_000_000


def without_records(frame: bytes) -> bytes:
    """The frame with hop_count and the records blanked (what the switches may change)."""
    out = bytearray(frame)
    out[HBH_OFF + 5] = 0
    out[RECORDS_OFF:RECORDS_END] = bytes(RECORDS_END - RECORDS_OFF)
    return bytes(out)


class TelemetryBase(FabricTest):
    def check_records(self, got: bytes, hops: list[Hop], what: str) -> None:
        hop_count, recs = codec.decode_frame(got).telemetry()
        self.assertEqual(hop_count, len(hops), f"{what}: hop_count")
        self.assertEqual([(r.switch_id, r.ingress_port, r.egress_port) for r in recs],
                         [(self.sids.switch_id(h.switch), h.in_port, h.out_port) for h in hops],
                         f"{what}: records in path order")
        for r in recs:
            self.assertLess(r.hop_latency_us, MAX_LATENCY_US, f"{what}: implausible hop latency")
            self.assertGreater(r.ingress_ts_us, 0, f"{what}: ingress timestamp not filled")
        opt = telemetry_option(Ether(got))  # the scapy layer reads the same records
        self.assertIsNotNone(opt)
        self.assertEqual([r.switch_id for r in opt.filled()], [self.sids.switch_id(h.switch) for h in hops])
        unused = got[RECORDS_OFF + F.TELEMETRY_RECORD_LEN * len(hops):RECORDS_END]
        self.assertEqual(unused, bytes(len(unused)), f"{what}: records past hop_count were written")


@group("telemetry")
class TelemetrySrv6Test(TelemetryBase):
    """Every SRv6 EV: 3 records (source leaf, the EV's spine, destination leaf)."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        for ev in self.ev_plan(src, dst, "srv6"):
            _, _, hops = self.srv6_hops(src, ev)
            enc = self.encap(src, dst, ev.port, codec.ENCAP_SRV6, ev.value, ev_index=ev.index, telemetry=True)
            frame, _ = self.data_packet(enc)
            self.send_from(src, ev.port, frame)
            last = self.expected_hops(src, ev.port, frame, hops, srv6=True)[-1]
            want = without_records(last.frame)
            got = self.expect_frame(last.key, lambda d, w=want: without_records(d) == w,
                                    f"EV {ev.index} with telemetry", last.frame)
            self.check_records(got, hops, f"{src}->{dst} EV {ev.index} via {ev.spine}")
            self.assertEqual(hops[1].switch, ev.spine)


@group("telemetry")
class TelemetryStevTest(TelemetryBase):
    """STEV mode carries the option in its only IPv6 header; the spine record names the spine
    the leaf picked, arriving on that spine's port towards the source leaf."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        plane = 1
        sleaf, sport = self.topo.host_leaf(src, plane)
        dleaf, dport = self.topo.host_leaf(dst, plane)
        for i in range(4):
            enc = self.encap(src, dst, plane, codec.ENCAP_STEV, ((0xC000 + i) << 16) | i, telemetry=True)
            frame, _ = self.data_packet(enc)
            self.send_from(src, plane, frame)
            got = self.expect_frame(host_port(self.sids, dst, plane),
                                    lambda d: codec.decode_frame(d).dst_gid == self.sids.host_gid(dst).packed,
                                    f"STEV packet {i} with telemetry")
            recs = codec.decode_frame(got).telemetry()[1]
            self.assertEqual(len(recs), 3)
            spine = next(n for n, u in self.sids.switch_usid.items() if u == recs[1].switch_id)
            up = next(p for p in self.topo.ports_of(sleaf.name) if self.topo.peer(sleaf.name, p).node == spine)
            spine_in = self.topo.peer(sleaf.name, up).port
            spine_out = next(p for p in self.topo.ports_of(spine) if self.topo.peer(spine, p).node == dleaf.name)
            dleaf_in = self.topo.peer(spine, spine_out).port
            hops = [Hop(sleaf.name, sport, up), Hop(spine, spine_in, spine_out), Hop(dleaf.name, dleaf_in, dport)]
            self.check_records(got, hops, f"STEV packet {i}")
