"""Match kinds with priorities (exact, LPM, ternary, range, optional), action profiles and an
action selector (spread over members by hash, sticky per flow)."""
from __future__ import annotations

import ipaddress
import struct
from collections import Counter

from base.p4rt_test import autocleanup
from p4.v1 import p4runtime_pb2
from ptf import testutils
from ptf.testutils import group
from subset_base import SubsetTest, eth

FIELDS = ("exact", "lpm", "tern", "range", "opt", "prof", "sel")


def t_frame(addr: str = "0.0.0.0", port: int = 0, proto: int = 0, opt: int = 0, flow: int = 0) -> bytes:
    return eth(struct.pack("!IHBB8sI", int(ipaddress.IPv4Address(addr)), port, proto, opt, bytes(8), flow))


def results(frame: bytes) -> dict[str, int]:
    """The r_* bytes the tables wrote into an output frame."""
    return dict(zip(FIELDS, frame[14 + 8:14 + 15], strict=True))


class TablesTest(SubsetTest):
    program = "tables"

    def lookup(self, **fields) -> dict[str, int]:
        self.send(1, t_frame(**fields))
        return results(self.recv(2))


@group("tables")
class MatchKindsTest(TablesTest):
    """Every match kind picks the entry P4Runtime semantics say: longest prefix, highest priority."""

    @autocleanup
    def runTest(self):
        self.insert_table_entry("t_exact", {"h.t.addr": "10.1.2.3"}, "set_exact", {"v": 9})
        for prefix, v in (("10.0.0.0/8", 1), ("10.1.0.0/16", 2), ("10.1.2.0/24", 3)):
            self.insert_table_entry("t_lpm", {"h.t.addr": prefix}, "set_lpm", {"v": v})
        # ternary: a wildcard field is omitted from the entry, as P4Runtime requires
        self.insert_table_entry("t_tern", {"h.t.addr": ("10.0.0.0", "255.0.0.0")}, "set_tern", {"v": 1},
                                priority=10)
        self.insert_table_entry("t_tern", {"h.t.addr": ("10.1.0.0", "255.255.0.0")}, "set_tern", {"v": 2},
                                priority=20)
        self.insert_table_entry("t_tern", {"h.t.addr": ("10.1.2.3", "255.255.255.255"),
                                           "h.t.port": (80, 0xFFFF)}, "set_tern", {"v": 3}, priority=5)
        for (low, high), prio, v in (((0, 1023), 1, 1), ((80, 80), 10, 2), ((1000, 2000), 5, 3)):
            self.insert_table_entry("t_range", {"h.t.port": (low, high)}, "set_range", {"v": v},
                                    priority=prio)
        self.insert_table_entry("t_opt", {"h.t.proto": 6}, "set_opt", {"v": 1}, priority=1)
        self.insert_table_entry("t_opt", {"h.t.proto": 6, "h.t.opt": 9}, "set_opt", {"v": 2}, priority=2)
        self.insert_table_entry("t_opt", {"h.t.opt": 7}, "set_opt", {"v": 3}, priority=3)

        r = self.lookup(addr="10.1.2.3", port=80, proto=6, opt=9)
        self.assertEqual((r["exact"], r["lpm"], r["tern"], r["range"], r["opt"]), (9, 3, 2, 2, 2))
        r = self.lookup(addr="10.1.9.9", port=1010, proto=6, opt=0)
        self.assertEqual((r["exact"], r["lpm"], r["tern"], r["range"], r["opt"]), (0, 2, 2, 3, 1))
        r = self.lookup(addr="10.200.0.1", port=500, proto=17, opt=7)
        self.assertEqual((r["exact"], r["lpm"], r["tern"], r["range"], r["opt"]), (0, 1, 1, 1, 3))
        r = self.lookup(addr="11.0.0.1", port=3000, proto=17, opt=0)
        self.assertEqual((r["exact"], r["lpm"], r["tern"], r["range"], r["opt"]), (0, 0, 0, 0, 0))

        # a higher-priority ternary entry takes over; deleting it restores the old winner
        self.insert_table_entry("t_tern", {"h.t.port": (80, 0xFFFF)}, "set_tern", {"v": 4}, priority=30)
        self.assertEqual(self.lookup(addr="10.1.2.3", port=80)["tern"], 4)
        self.delete_table_entry("t_tern", {"h.t.port": (80, 0xFFFF)}, priority=30)
        self.assertEqual(self.lookup(addr="10.1.2.3", port=80)["tern"], 2)
        # the default action (run on a miss) can be changed, with its parameters
        self.set_default_action("t_exact", "set_exact", {"v": 0x77}, restore=("NoAction", None))
        self.assertEqual(self.lookup(addr="10.9.9.9")["exact"], 0x77)
        self.assertEqual(self.lookup(addr="10.1.2.3")["exact"], 9)
        # MODIFY changes the action data of an existing entry
        self.modify_table_entry("t_exact", {"h.t.addr": "10.1.2.3"}, "set_exact", {"v": 10})
        self.assertEqual(self.lookup(addr="10.1.2.3")["exact"], 10)


@group("tables")
@group("action_profiles")
class ActionProfileTest(TablesTest):
    """Entries of an action-profile table point at shared members."""

    def member_entry(self, proto: int, member_id: int) -> p4runtime_pb2.Entity:
        e = self.table_entry("t_prof", {"h.t.proto": proto})
        e.table_entry.action.action_profile_member_id = member_id
        return e

    @autocleanup
    def runTest(self):
        self.insert_action_profile_member("prof", 1, "set_prof", {"v": 0xA1})
        self.insert_action_profile_member("prof", 2, "set_prof", {"v": 0xA2})
        for proto, member in ((6, 1), (17, 1), (1, 2)):
            self.insert(self.member_entry(proto, member))
        self.assertEqual([self.lookup(proto=p)["prof"] for p in (6, 17, 1, 2)], [0xA1, 0xA1, 0xA2, 0])
        # modifying the shared member changes every entry that points at it
        m = p4runtime_pb2.Entity()
        m.action_profile_member.action_profile_id = self.p4info.get_id("action_profiles", "prof")
        m.action_profile_member.member_id = 1
        m.action_profile_member.action.CopyFrom(self._action("set_prof", {"v": 0xB1}))
        self.client.write(p4runtime_pb2.Update.MODIFY, m)
        self.assertEqual([self.lookup(proto=p)["prof"] for p in (6, 17, 1)], [0xB1, 0xB1, 0xA2])


@group("tables")
@group("action_profiles")
class ActionSelectorTest(TablesTest):
    """A selector group spreads flows over its members by hash; one flow always takes one member."""

    @autocleanup
    def runTest(self):
        members = {11: 2, 12: 3, 13: 4}
        for mid, port in members.items():
            self.insert_action_profile_member("sel", mid, "set_port", {"port": port, "v": 0xB0 + port})
        self.insert_action_profile_group("sel", 100, list(members))
        self.insert_table_entry("t_sel", {"h.t.opt": 9}, group_id=100)

        flows = range(1, 49)
        first: dict[int, int] = {}
        for flow in flows:
            self.send(1, t_frame(opt=9, flow=flow * 7919))
            port, frame = self.recv_any()
            self.assertEqual(results(frame)["sel"], 0xB0 + port, "member action data and port disagree")
            first[flow] = port
        spread = Counter(first.values())
        self.assertGreaterEqual(len(spread), 2, f"48 flows all took one member: {spread}")
        for flow in flows:
            self.send(1, t_frame(opt=9, flow=flow * 7919))
            port, _ = self.recv_any()
            self.assertEqual(port, first[flow], f"flow {flow} moved from port {first[flow]} to {port}")

    def recv_any(self) -> tuple[int, bytes]:
        res = testutils.dp_poll(self, 0, None, timeout=2.0)
        if isinstance(res, self.dataplane.PollFailure):
            self.fail("no packet out of the selector")
        self.assertIn(res.port, (2, 3, 4))
        return res.port, bytes(res.packet)
