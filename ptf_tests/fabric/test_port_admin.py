"""A spine port set administratively down through the controller: packets on the EVs that cross it
are dropped and counted at that spine; every other EV still delivers; bringing it up restores them."""
from __future__ import annotations

from base.fabric_test import C_DROPS, FabricTest
from ptf.testutils import group

from controller import p4contract as P4
from mrc.wire import codec


@group("port_admin")
class SpinePortAdminDownTest(FabricTest):
    def send_all(self, src: str, dst: str, down: tuple[str, int] | None) -> int:
        """One packet per SRv6 EV; those whose path leaves ``down`` must vanish. Returns how many did."""
        dropped, psns = 0, set()
        for ev in self.ev_plan(src, dst, "srv6"):
            _, _, hops = self.srv6_hops(src, ev)
            frame, psn = self.data_packet(self.encap(src, dst, ev.port, codec.ENCAP_SRV6, ev.value,
                                                     ev_index=ev.index))
            self.send_from(src, ev.port, frame)
            if down is not None and (hops[1].switch, hops[1].out_port) == down:
                dropped += 1
                psns.add(psn)
                continue
            last = self.expected_hops(src, ev.port, frame, hops, srv6=True)[-1]
            self.expect_exact(last.key, last.frame, f"EV {ev.index} via {ev.spine} (port down: {down})")
        if psns:
            self.assert_delivered_only(psns, set())
        return dropped

    def runTest(self):
        src = self.topo.host_list()[0].name
        dst = self.host_pair_other_leaf(src)
        spine = self.topo.spines(1)[0].name
        dleaf = self.topo.host_leaf(dst, 1)[0].name
        port = next(p for p in self.topo.ports_of(spine) if self.topo.peer(spine, p).node == dleaf)

        before = self.drop_snapshot(P4.DROP_REASON_PORT_ADMIN_DOWN)
        self.port_admin(spine, port, False)
        dropped = self.send_all(src, dst, (spine, port))
        self.assertEqual(dropped, 1, "exactly one EV (plane 1, first spine) crosses the port")
        got = self.wait_switch_counter(spine, C_DROPS, P4.DROP_REASON_PORT_ADMIN_DOWN, before[spine] + dropped)
        self.assertEqual(got - before[spine], dropped, f"{spine} drop_reasons[port_admin_down]")
        after = self.drop_snapshot(P4.DROP_REASON_PORT_ADMIN_DOWN)
        self.assertEqual({n: after[n] - before[n] for n in after if n != spine and after[n] != before[n]}, {},
                         "port_admin_down counted at other switches")

        self.undo_all()  # the controller brings the port back up
        self.send_all(src, dst, None)
        self.assertEqual(self.drops(spine, P4.DROP_REASON_PORT_ADMIN_DOWN), after[spine])
