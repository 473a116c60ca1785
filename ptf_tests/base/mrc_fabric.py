"""Domain layer for the MRC switch program: intents ("my uSID is X", "route uSID Y to port P",
"ECMP group over ports", "port down", thresholds) turned into the program's table entries.

Names here are the controller contract documented in docs/dataplane.md.
"""
from __future__ import annotations

import time

from base.mrc_packets import carrier
from base.p4rt_test import P4RuntimeClient, P4RuntimeTest
from ptf import testutils

BLOCK = 0xFC000000           # locator block of the test fabric (fc00:0000::/32)
MY_USID = 0x0100             # this switch's uSID
SWITCH_MAC = "00:aa:00:00:00:01"
CPU_PORT = 255
POSTCARD_SESSION_ID = 100

DROP = {"unspecified": 0, "parser_error": 1, "port_admin_down": 2, "no_route": 3, "hop_limit": 4,
        "usid_unknown": 5, "local_not_probe": 6, "queue_full": 7, "not_ip": 8}
PACKET_IN = {"forwarded": 0, "probe": 1, "postcard": 2, "link_probe": 3}  # define.p4 PACKET_IN_REASON_*
QDEPTH_MAX = (1 << 19) - 1


def neighbour_mac(port: int) -> str:
    """A distinct neighbour MAC per port, so a received frame tells which next hop it took."""
    return f"00:bb:00:00:00:{port:02x}"


class MrcFabricTest(P4RuntimeTest):
    """P4RuntimeTest with MRC fabric intents."""

    def ports(self) -> list[int]:
        return [int(p) for p in str(testutils.test_param_get("ports", "1,2,3,4")).split(",")]

    # -- SRv6 ------------------------------------------------------------------------------------------
    def add_own_usid(self, usid: int = MY_USID, block: int = BLOCK, client: P4RuntimeClient | None = None):
        return self.insert_table_entry("usid_un", {"block_usid": (block << 16) | usid}, "un",
                                       client=client)

    def add_my_sid(self, sid: str):
        return self.insert_table_entry("my_sid", {"sid": sid}, "srv6_end")

    def next_hop(self, port: int) -> dict:
        return {"port": port, "dst_mac": neighbour_mac(port), "src_mac": SWITCH_MAC}

    def add_route(self, prefix: str, port: int, client: P4RuntimeClient | None = None):
        return self.insert_table_entry("route_v6", {"dst_addr": prefix}, "set_next_hop",
                                       self.next_hop(port), client=client)

    def route_usid(self, usid: int, port: int, block: int = BLOCK, client: P4RuntimeClient | None = None):
        """/48 route for block + uSID (a neighbour switch or a host) to ``port``."""
        return self.add_route(f"{carrier(block, usid)}/48", port, client)

    def block_unknown_usids(self, block: int = BLOCK):
        """/32 on our block: a uSID we neither own nor route is dropped as USID_UNKNOWN."""
        return self.insert_table_entry("route_v6", {"dst_addr": f"{carrier(block)}/32"}, "drop_usid_unknown")

    # -- groups -------------------------------------------------------------------------------------------
    def add_ecmp_route(self, prefix: str, group_id: int, ports: list[int]):
        member_ids = []
        for port in ports:
            mid = group_id * 100 + port
            self.insert_action_profile_member("ecmp_selector", mid, "set_next_hop", self.next_hop(port))
            member_ids.append(mid)
        self.insert_action_profile_group("ecmp_selector", group_id, member_ids)
        self.insert_table_entry("ecmp_select", {"group_id": group_id}, group_id=group_id)
        return self.insert_table_entry("route_v6", {"dst_addr": prefix}, "set_ecmp_group",
                                       {"group_id": group_id})

    def add_ev_direct_route(self, prefix: str, group_id: int, ports: list[int]):
        """EV-direct plan: k = ceil(log2 n) low EV bits; value j selects member j mod n."""
        n = len(ports)
        k = max(1, (n - 1).bit_length())
        mask = (1 << k) - 1
        for j in range(1 << k):
            self.insert_table_entry("ev_direct", {"group_id": group_id, "ev": (j, mask)}, "set_next_hop",
                                    self.next_hop(ports[j % n]), priority=10)
        return self.insert_table_entry("route_v6", {"dst_addr": prefix}, "set_ev_direct_group",
                                       {"group_id": group_id})

    # -- port state and congestion ----------------------------------------------------------------
    def set_port_down(self, port: int, ingress: bool = True, egress: bool = True) -> None:
        if ingress:
            self.insert_table_entry("port_rx_admin", {"port": port}, "set_port_down")
        if egress:
            self.insert_table_entry("port_tx_admin", {"port": port}, "set_port_down")

    def set_queue_thresholds(self, port: int, trim: int, drop: int = QDEPTH_MAX):
        return self.insert_table_entry("queue_thresholds", {"port": port}, "set_queue_thresholds",
                                       {"trim_threshold": trim, "drop_threshold": drop})

    def set_ecn_threshold(self, port: int, threshold: int):
        return self.insert_table_entry("ecn_threshold", {"port": port}, "set_ecn_threshold",
                                       {"threshold": threshold})

    # -- telemetry ------------------------------------------------------------------------------------
    def set_switch_id(self, switch_id: int, client: P4RuntimeClient | None = None) -> None:
        self.set_default_action("switch_info", "set_switch_id", {"switch_id": switch_id},
                                restore=("set_switch_id", {"switch_id": 0}), client=client)

    def watch_dest_qp(self, dest_qp: int):
        return self.insert_table_entry("telemetry_watch", {"dest_qp": (dest_qp, 0xFFFFFF)},
                                       "watch_postcard", priority=10)

    def enable_postcards(self) -> None:
        self.insert_clone_session(POSTCARD_SESSION_ID, [CPU_PORT])

    # -- counters ---------------------------------------------------------------------------------------
    def drops(self, reason: str) -> int:
        return self.read_counter("drop_reasons", DROP[reason])[0]

    def expect_drop_count(self, reason: str, before: int, count: int = 1) -> None:
        got = self.wait_counter(lambda: self.read_counter("drop_reasons", DROP[reason]), before + count)[0]
        self.assertEqual(got, before + count, f"drop_reasons[{reason}]")

    # -- receive ------------------------------------------------------------------------------------------
    def receive_any(self, ports: list[int], timeout: float = 2.0) -> tuple[int, bytes]:
        """The next frame on any of ``ports`` (frames on other ports fail the test)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = testutils.dp_poll(self, device_number=0, timeout=max(0.01, deadline - time.monotonic()))
            if isinstance(res, self.dataplane.PollFailure):
                break
            if res.port not in ports:
                self.fail(f"frame on unexpected port {res.port}")
            return res.port, bytes(res.packet)
        self.fail(f"no frame on ports {ports}")
