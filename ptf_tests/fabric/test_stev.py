"""STEV mode through the fabric (no outer header; the EV is the UDP source port and the flow label):
the source leaf's ECMP group sprays flows with varying EVs over every spine of the plane, and one EV
always takes the same spine.  Counted twice: by the taps on the leaf uplinks and by the leaf's own
port_tx counters."""
from __future__ import annotations

import time

from base.fabric_ports import host_port, tap_port
from base.fabric_test import C_PORT_TX, RECV_TIMEOUT, FabricTest
from ptf.testutils import group

from controller import p4contract as P4
from controller.mapping import STEV_EV_DIRECT
from mrc.wire import codec
from mrc.wire import formats as F

FLOWS = 48
STICKY_PACKETS = 16
SLOW_PPS = 12  # StevSlowTargetTest: 48 frames take 4 s at the destination leaf's host port


class StevBase(FabricTest):
    def uplinks(self, leaf: str) -> dict[int, str]:
        """Leaf P4 port -> spine."""
        out = {}
        for port in self.topo.ports_of(leaf):
            peer = self.topo.peer(leaf, port)
            if peer.node in self.topo.switches:
                out[port] = peer.node
        return out

    def spray(self, src: str, dst: str, plane: int, evs: list[int]) -> dict[str, int]:
        """Send one data packet per EV; check each is delivered intact; packets per spine (taps)."""
        leaf = self.topo.host_leaf(src, plane)[0].name
        ups = self.uplinks(leaf)
        before = {p: self.counter(leaf, C_PORT_TX, p) for p in ups}
        sent: dict[int, bytes] = {}
        for ev in evs:
            frame, psn = self.data_packet(self.encap(src, dst, plane, codec.ENCAP_STEV, ev), payload_len=128)
            sent[psn] = frame
            self.send_from(src, plane, frame)
        dst_key = host_port(self.sids, dst, plane)
        dleaf, dport = self.topo.host_leaf(dst, plane)
        got = self.collect(dst_key, set(sent), f"STEV {src}->{dst} plane {plane}")
        for psn, frame in sent.items():
            want = bytearray(frame)
            want[0:6] = bytes.fromhex(self.sids.host_mac(dst, plane).replace(":", ""))
            want[6:12] = bytes.fromhex(self.sids.switch_mac(dleaf.name, dport).replace(":", ""))
            want[14 + 7] -= 3  # leaf, spine, leaf: MACs and hop limit change, nothing else
            # a burst may queue up past the ECN threshold: ECT(0) may become CE, nothing else may change
            ecn = (got[psn][15] >> 4) & 3
            self.assertIn(ecn, (F.ECN_ECT0, F.ECN_CE), f"STEV psn {psn}: ECN {ecn:#b}")
            self.assertEqual(codec.mark_ce(got[psn]), codec.mark_ce(bytes(want)),
                             f"STEV psn {psn} delivered to {dst} changed")
        taps = [tap_port(self.topo, leaf, p) for p in ups]
        seen = self.frames_with_psn(taps, set(sent))
        per_spine = {ups[key[1]]: len(frames) for key, frames in seen.items()}
        self.assertEqual(sum(per_spine.values()), len(evs), f"taps saw {per_spine}")
        for p, spine in ups.items():
            n = per_spine.get(spine, 0)
            got = self.wait_switch_counter(leaf, C_PORT_TX, p, before[p] + n) - before[p]
            self.assertEqual(got, n, f"{leaf} port_tx_counter[{p}] (to {spine}) vs frames seen on its link")
        self.assert_delivered_only(set(sent), {dst_key})
        return per_spine


@group("stev")
class StevSprayTest(StevBase):
    """Flows with varying EVs (source port and flow label) use every spine of each plane."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        for plane in range(1, self.topo.planes + 1):
            evs = [((0xC000 + i) << 16) | ((i * 0x9E37) & 0xFFFF) for i in range(FLOWS)]
            per_spine = self.spray(src, dst, plane, evs)
            spines = {s.name for s in self.topo.spines(plane)}
            self.assertEqual(set(per_spine), spines, f"plane {plane}: {FLOWS} flows reached only {per_spine}")


@group("stev")
class StevSlowTargetTest(StevBase):
    """A slow target delivers every frame, late: the destination leaf's host port drains at
    ``SLOW_PPS``, so the 48 flows need about four seconds, longer than the silence a batch may have
    (bmv2 on a loaded machine: "6 of 48 frames missing").  Every frame must still arrive, intact,
    exactly once, over every spine."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        leaf, port = self.topo.host_leaf(dst, 1)
        self.shape(leaf.name, port, SLOW_PPS)
        evs = [((0xC100 + i) << 16) | ((i * 0x9E37) & 0xFFFF) for i in range(FLOWS)]
        t0 = time.monotonic()
        per_spine = self.spray(src, dst, 1, evs)
        took = time.monotonic() - t0
        self.assertEqual(set(per_spine), {s.name for s in self.topo.spines(1)}, f"{per_spine}")
        self.assertGreater(self.last_batch_s, RECV_TIMEOUT, f"the batch took {self.last_batch_s:.1f}s "
                           f"({took:.1f}s in all): the port was not slow, this test proves nothing")


@group("stev")
class StevStickyTest(StevBase):
    """One EV, many packets: every packet takes the same spine."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        ev = self.ev_plan(src, dst, "stev")[0]
        evb = int.from_bytes(ev.value, "big")
        per_spine = self.spray(src, dst, ev.port, [evb] * STICKY_PACKETS)
        self.assertEqual(len(per_spine), 1, f"EV {evb:#010x} was split over {per_spine}")
        self.assertEqual(sum(per_spine.values()), STICKY_PACKETS)


@group("stev")
class StevEvDirectTest(StevBase):
    """With the leaves in EV-direct mode (re-converged through the controller), every STEV EV of the
    controller's EV plan takes exactly the spine the plan names for it."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        self.converge([s.name for s in self.topo.leaves()], STEV_EV_DIRECT)
        for plane in range(1, self.topo.planes + 1):  # the controller switched the leaf's GID route
            leaf = self.topo.host_leaf(src, plane)[0].name
            entry = self.sw(leaf).read(self.table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": f"{self.sids.host_gid(dst)}/128"}))
            self.assertEqual(len(entry), 1, f"{leaf}: route to {dst}")
            self.assertEqual(self.p4info.name_of("actions", entry[0].table_entry.action.action.action_id),
                             P4.A_INGRESS_ROUTING_SET_EV_DIRECT_GROUP)
        for ev in self.ev_plan(src, dst, "stev"):
            per_spine = self.spray(src, dst, ev.port, [int.from_bytes(ev.value, "big")] * 3)
            self.assertEqual(per_spine, {ev.spine: 3}, f"STEV EV {ev.index} ({ev.value.hex()})")
