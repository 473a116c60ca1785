"""Domain layer for the MRC switch program: intents ("my uSID is X", "route uSID Y to port P",
"ECMP group over ports", "port down", thresholds) turned into the program's table entries.

Program names and constants come from the generated data-plane contract (controller/p4contract.py,
`make contract`); the values below the contract (block, uSID, MAC) are this suite's own test fabric.
"""
from __future__ import annotations

import time

from base.mrc_packets import carrier
from base.p4rt_test import P4RuntimeClient, P4RuntimeTest
from ptf import testutils

from controller import p4contract as P4

BLOCK = 0xFC000000           # locator block of the test fabric (fc00:0000::/32)
MY_USID = 0x0100             # this switch's uSID
SWITCH_MAC = "00:aa:00:00:00:01"
CPU_PORT = P4.CPU_PORT
POSTCARD_SESSION_ID = P4.POSTCARD_SESSION_ID

QDEPTH_MAX = P4.QDEPTH_ESTIMATE_MAX


def neighbour_mac(port: int) -> str:
    """A distinct neighbour MAC per port, so a received frame tells which next hop it took."""
    return f"00:bb:00:00:00:{port:02x}"


class MrcFabricTest(P4RuntimeTest):
    """P4RuntimeTest with MRC fabric intents."""

    def ports(self) -> list[int]:
        return [int(p) for p in str(testutils.test_param_get("ports", "1,2,3,4")).split(",")]

    # -- SRv6 ------------------------------------------------------------------------------------------
    def add_own_usid(self, usid: int = MY_USID, block: int = BLOCK, client: P4RuntimeClient | None = None):
        return self.insert_table_entry(P4.T_INGRESS_SRV6_USID_UN, {"block_usid": (block << 16) | usid}, P4.A_INGRESS_SRV6_UN,
                                       client=client)

    def add_my_sid(self, sid: str):
        return self.insert_table_entry(P4.T_INGRESS_SRV6_MY_SID, {"sid": sid}, P4.A_INGRESS_SRV6_SRV6_END)

    def next_hop(self, port: int) -> dict:
        return {"port": port, "dst_mac": neighbour_mac(port), "src_mac": SWITCH_MAC}

    def add_route(self, prefix: str, port: int, client: P4RuntimeClient | None = None):
        return self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": prefix}, P4.A_INGRESS_ROUTING_SET_NEXT_HOP,
                                       self.next_hop(port), client=client)

    def route_usid(self, usid: int, port: int, block: int = BLOCK, client: P4RuntimeClient | None = None):
        """/48 route for block + uSID (a neighbour switch or a host) to ``port``."""
        return self.add_route(f"{carrier(block, usid)}/48", port, client)

    def block_unknown_usids(self, block: int = BLOCK):
        """/32 on our block: a uSID we neither own nor route is dropped as USID_UNKNOWN."""
        return self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": f"{carrier(block)}/32"},
                                       P4.A_INGRESS_ROUTING_DROP_USID_UNKNOWN)

    # -- groups -------------------------------------------------------------------------------------------
    def add_ecmp_route(self, prefix: str, group_id: int, ports: list[int]):
        member_ids = []
        for port in ports:
            mid = group_id * 100 + port
            self.insert_action_profile_member(P4.AP_INGRESS_ROUTING_ECMP_SELECTOR, mid, P4.A_INGRESS_ROUTING_SET_NEXT_HOP, self.next_hop(port))
            member_ids.append(mid)
        self.insert_action_profile_group(P4.AP_INGRESS_ROUTING_ECMP_SELECTOR, group_id, member_ids)
        self.insert_table_entry(P4.T_INGRESS_ROUTING_ECMP_SELECT, {"group_id": group_id}, group_id=group_id)
        return self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": prefix}, P4.A_INGRESS_ROUTING_SET_ECMP_GROUP,
                                       {"group_id": group_id})

    def add_ev_direct_route(self, prefix: str, group_id: int, ports: list[int]):
        """EV-direct plan: k = ceil(log2 n) low EV bits; value j selects member j mod n."""
        n = len(ports)
        k = max(1, (n - 1).bit_length())
        mask = (1 << k) - 1
        for j in range(1 << k):
            self.insert_table_entry(P4.T_INGRESS_ROUTING_EV_DIRECT, {"group_id": group_id, "ev": (j, mask)},
                                    P4.A_INGRESS_ROUTING_SET_NEXT_HOP,
                                    self.next_hop(ports[j % n]), priority=10)
        return self.insert_table_entry(P4.T_INGRESS_ROUTING_ROUTE_V6, {"dst_addr": prefix}, P4.A_INGRESS_ROUTING_SET_EV_DIRECT_GROUP,
                                       {"group_id": group_id})

    # -- port state and congestion ----------------------------------------------------------------
    def set_port_down(self, port: int, ingress: bool = True, egress: bool = True) -> None:
        if ingress:
            self.insert_table_entry(P4.T_INGRESS_PORT_ADMIN_PORT_RX_ADMIN, {"port": port},
                                    P4.A_INGRESS_PORT_ADMIN_SET_PORT_DOWN)
        if egress:
            self.insert_table_entry(P4.T_EGRESS_PORT_ADMIN_PORT_TX_ADMIN, {"port": port},
                                    P4.A_EGRESS_PORT_ADMIN_SET_PORT_DOWN)

    def set_queue_thresholds(self, port: int, trim: int, drop: int = QDEPTH_MAX):
        return self.insert_table_entry(P4.T_INGRESS_CONGESTION_QUEUE_THRESHOLDS, {"port": port},
                                       P4.A_INGRESS_CONGESTION_SET_QUEUE_THRESHOLDS,
                                       {"trim_threshold": trim, "drop_threshold": drop})

    def set_ecn_threshold(self, port: int, threshold: int):
        return self.insert_table_entry(P4.T_EGRESS_CONGESTION_ECN_THRESHOLD, {"port": port},
                                       P4.A_EGRESS_CONGESTION_SET_ECN_THRESHOLD,
                                       {"threshold": threshold})

    # -- telemetry ------------------------------------------------------------------------------------
    def set_switch_id(self, switch_id: int, client: P4RuntimeClient | None = None) -> None:
        self.set_default_action(P4.T_EGRESS_TELEMETRY_SWITCH_INFO, P4.A_EGRESS_TELEMETRY_SET_SWITCH_ID,
                                {"switch_id": switch_id}, restore=(P4.A_EGRESS_TELEMETRY_SET_SWITCH_ID, {"switch_id": 0}), client=client)

    def watch_dest_qp(self, dest_qp: int):
        return self.insert_table_entry(P4.T_INGRESS_TELEMETRY_TELEMETRY_WATCH, {"dest_qp": (dest_qp, 0xFFFFFF)},
                                       P4.A_INGRESS_TELEMETRY_WATCH_POSTCARD, priority=10)

    def enable_postcards(self) -> None:
        self.insert_clone_session(POSTCARD_SESSION_ID, [CPU_PORT])

    # -- counters ---------------------------------------------------------------------------------------
    def drops(self, reason: int) -> int:
        """``drop_reasons[reason]`` (``reason``: a contract code, P4.DROP_REASON_*)."""
        return self.read_counter(P4.C_DROP_REASONS, reason)[0]

    def expect_drop_count(self, reason: int, before: int, count: int = 1) -> None:
        got = self.wait_counter(lambda: self.read_counter(P4.C_DROP_REASONS, reason), before + count)[0]
        self.assertEqual(got, before + count, f"drop_reasons[{P4.DROP_REASONS.get(reason, reason)}]")

    # -- receive ------------------------------------------------------------------------------------------
    def receive_any(self, ports: list[int], timeout: float = 5.0) -> tuple[int, bytes]:
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
