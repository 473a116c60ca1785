"""SRv6 mode through the converged fabric: every EV of the controller's EV plan (each plane x spine)
carries an MRC data packet to the right host NIC port, with the outer header as every uN hop leaves
it (uSID shifted, hop limit decremented once, link MACs) and the inner packet byte-identical."""
from __future__ import annotations

from base.fabric_test import FabricTest
from ptf.testutils import group

from mrc.wire import codec
from mrc.wire import formats as F


class EvPathsBase(FabricTest):
    """Send one data packet on every SRv6 EV from ``src`` to ``dst`` and follow it hop by hop."""

    def check_pair(self, src: str, dst: str) -> None:
        evs = self.ev_plan(src, dst, "srv6")
        expected_count = self.topo.planes * max(len(self.topo.spines(p)) for p in range(1, self.topo.planes + 1))
        self.assertEqual(len(evs), expected_count, "one EV per plane x spine")
        self.assertEqual({(e.plane, e.spine) for e in evs},
                         {(p, s.name) for p in range(1, self.topo.planes + 1) for s in self.topo.spines(p)})
        psns = set()
        for ev in evs:
            host, nic, hops = self.srv6_hops(src, ev)
            self.assertEqual((host, nic), (dst, ev.port), f"EV {ev.index}: the plan walks to the wrong host")
            self.assertIn(ev.spine, [h.switch for h in hops])
            frame, psn = self.data_packet(self.encap(src, dst, ev.port, codec.ENCAP_SRV6, ev.value,
                                                     ev_index=ev.index), opcode=F.OP_WRITE_ONLY_IMM)
            psns.add(psn)
            self.send_from(src, ev.port, frame)
            steps = self.expected_hops(src, ev.port, frame, hops, srv6=True)
            got = b""
            for i, step in enumerate(steps):
                if step.key is not None:
                    got = self.expect_exact(step.key, step.frame, f"{src}->{dst} EV {ev.index} ({ev.spine}) "
                                                                  f"after hop {i + 1} {step.hop.switch}")
            self.assertEqual(steps[-1].key, (self.sids.host_index[dst], ev.port), "last hop is not the host")
            # the delivered frame: outer dst = the NIC port address, hop limit - hops, inner intact
            self.assertEqual(got[14 + 24:14 + 40], self.sids.host_port_address(dst, ev.port).packed)
            self.assertEqual(got[14 + 7], frame[14 + 7] - len(hops))
            self.assertEqual(got[14 + 40:], frame[14 + 40:], "inner packet changed")
            fr = codec.decode_frame(got)  # ICRC over the inner packet still valid
            self.assertEqual((fr.psn, fr.imm, fr.dst_gid), (psn, 0xC0FFEE, self.sids.host_gid(dst).packed))
        self.assert_delivered_only(psns, {(self.sids.host_index[dst], p) for p in range(1, self.topo.planes + 1)})


@group("srv6")
class EvPathsOtherLeafTest(EvPathsBase):
    """h1 to a host on another leaf: src leaf, spine, dst leaf on every plane."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        self.check_pair(src, self.host_pair_other_leaf(src))


@group("srv6")
class EvPathsReverseTest(EvPathsBase):
    """The reverse direction uses the same spines (symmetric EV lists)."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        fwd, rev = self.ev_plan(src, dst), self.ev_plan(dst, src)
        self.assertEqual([(e.plane, e.spine) for e in fwd], [(e.plane, e.spine) for e in rev])
        self.check_pair(dst, src)


@group("srv6")
class EvPathsSameLeafTest(EvPathsBase):
    """Hosts on the same leaf still go up to the spine the EV names and back."""

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_same_leaf(src)
        if dst is None:
            self.skipTest("no two hosts share a leaf in this topology")
        self.check_pair(src, dst)
