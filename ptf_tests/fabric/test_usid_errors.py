"""A carrier naming a switch that does not exist is dropped at the first switch that cannot route it
and counted there as usid_unknown (no other switch counts it, no host receives it)."""
from __future__ import annotations

from base.fabric_test import C_DROPS, FabricTest
from ptf.testutils import group

from controller import p4contract as P4
from mrc.wire import codec

BOGUS_SPINE, BOGUS_LEAF, BOGUS_HOST = 0x1FFF, 0x2FFF, 0x8FFF


@group("usid")
class UnknownUsidTest(FabricTest):
    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        for u in (BOGUS_SPINE, BOGUS_LEAF, BOGUS_HOST):
            self.assertNotIn(u, self.sids.owner, f"uSID {u:#x} exists in this topology")
        plane = 1
        sleaf = self.topo.host_leaf(src, plane)[0].name
        dleaf = self.topo.host_leaf(dst, plane)[0].name
        spine = self.topo.spines(plane)[0].name
        u = self.sids.switch_usid
        port_usid = self.sids.host_port_usid[(dst, plane)]
        cases = [  # carrier, the switch that must drop it
            ((u[sleaf], BOGUS_SPINE, u[dleaf], port_usid), sleaf),
            ((u[sleaf], u[spine], BOGUS_LEAF, port_usid), spine),
            ((u[sleaf], u[spine], u[dleaf], BOGUS_HOST), dleaf),
            ((BOGUS_LEAF, u[spine], u[dleaf], port_usid), sleaf),
        ]
        for usids, at in cases:
            carrier = self.sids.carrier(*usids).packed
            what = f"carrier {self.sids.carrier(*usids)} (dropped at {at})"
            before = self.drop_snapshot(P4.DROP_REASON_USID_UNKNOWN)
            frame, psn = self.data_packet(self.encap(src, dst, plane, codec.ENCAP_SRV6, carrier))
            self.send_from(src, plane, frame)
            got = self.wait_switch_counter(at, C_DROPS, P4.DROP_REASON_USID_UNKNOWN, before[at] + 1)
            self.assertEqual(got, before[at] + 1, f"{what}: {at} drop_reasons[usid_unknown]")
            self.assert_delivered_only({psn}, set())
            after = self.drop_snapshot(P4.DROP_REASON_USID_UNKNOWN)
            moved = {n: after[n] - before[n] for n in after if after[n] != before[n]}
            self.assertEqual(moved, {at: 1}, f"{what}: usid_unknown drops by switch")
