"""SID plan: locator block, uSIDs, host addresses, telemetry switch ids and MACs for a topology.

Allocation (deterministic; indices follow natural name order, see ``Topology.spines``):

* spine K (1-based within its plane P): uSID ``0x1000 | P << 8 | K``   (e.g. p1s2 -> 0x1102)
* leaf I of plane P:                   uSID ``0x2000 | P << 8 | I``   (e.g. p2l1 -> 0x2201)
* host N (1-based, natural name order), NIC port P: uSID ``0x8000 | N << 4 | P``  (h3 port 2 -> 0x8032)
* a switch may pin its uSID with ``usid:`` in the topology; collisions are errors.
* switch id (telemetry) = the switch's uSID; MACs are locally administered unicast:
  switch port ``02:00:<uSID>:<port>``, host NIC port ``02:01:<uSID>:00:<plane>``.
* host GID (inner IPv6 address) = ``gid_prefix`` + N; outer address of a NIC port =
  ``block | port uSID ::`` (the address that delivers to that port).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from . import usid as U
from .topology import Topology, TopologyError

DEFAULT_BLOCK = "fc00::/32"
DEFAULT_GID_PREFIX = "fd00:4d52:4300::/64"
USIDS_PER_CARRIER = U.USIDS_PER_CARRIER
MAX_HOSTS = 0x7FF
MAX_PER_PLANE = 0xFF


def _mac(b: bytes) -> str:
    return ":".join(f"{x:02x}" for x in b)


@dataclass(frozen=True, slots=True)
class SidPlan:
    """Addresses and identifiers of every switch and host NIC port of one topology."""

    block: ipaddress.IPv6Network
    gid_prefix: ipaddress.IPv6Network
    switch_usid: dict[str, int]
    host_index: dict[str, int]
    host_port_usid: dict[tuple[str, int], int]
    owner: dict[int, str] = field(repr=False)  # uSID -> "switch" or "host:port"

    # -- addresses -----------------------------------------------------------------------------
    @property
    def block_value(self) -> int:
        """The locator block as an integer (``USID_BLOCK_BITS`` wide)."""
        return U.block_of(int(self.block.network_address))

    def carrier(self, *usids: int) -> ipaddress.IPv6Address:
        """The uSID carrier ``block | usid1 | usid2 | ...`` zero-filled to 128 bits."""
        return ipaddress.IPv6Address(U.compose(self.block_value, *usids))

    def usid_prefix(self, usid: int) -> ipaddress.IPv6Network:
        """The /48 ``block | usid`` that a switch matches (its own uN or a route)."""
        return ipaddress.IPv6Network((int(self.carrier(usid)), U.TOP_BITS))

    def host_port_address(self, host: str, port: int) -> ipaddress.IPv6Address:
        """Outer IPv6 address of a host NIC port (the carrier that ends at that port)."""
        return self.carrier(self.host_port_usid[(host, port)])

    def host_gid(self, host: str) -> ipaddress.IPv6Address:
        """Inner IPv6 address (RoCEv2 GID) of a host."""
        return self.gid_prefix.network_address + self.host_index[host]

    # -- identifiers ---------------------------------------------------------------------------
    def switch_id(self, switch: str) -> int:
        """32-bit telemetry switch id (= the switch's uSID)."""
        return self.switch_usid[switch]

    def switch_mac(self, switch: str, port: int) -> str:
        """MAC address of a switch port."""
        u = self.switch_usid[switch]
        return _mac(bytes([0x02, 0x00, u >> 8, u & 0xFF, port >> 8, port & 0xFF]))

    def host_mac(self, host: str, port: int) -> str:
        """MAC address of a host NIC port."""
        u = self.host_port_usid[(host, port)]
        return _mac(bytes([0x02, 0x01, u >> 8, u & 0xFF, 0x00, port]))

    def to_data(self) -> dict:
        """Plain-data form (for ``mrc-controller sid`` and for hosts)."""
        return {
            "block": str(self.block),
            "gid_prefix": str(self.gid_prefix),
            "switches": {n: {"usid": f"{u:04x}", "prefix": str(self.usid_prefix(u)),
                             "switch_id": self.switch_id(n)}
                         for n, u in sorted(self.switch_usid.items(), key=lambda kv: kv[1])},
            "hosts": {h: {"gid": str(self.host_gid(h)),
                          "ports": {p: {"usid": f"{self.host_port_usid[(h, p)]:04x}",
                                        "address": str(self.host_port_address(h, p)),
                                        "mac": self.host_mac(h, p)}
                                    for (hh, p) in sorted(self.host_port_usid) if hh == h}}
                      for h in sorted(self.host_index, key=self.host_index.get)},
        }


def _net(text: str, plen: int, what: str) -> ipaddress.IPv6Network:
    try:
        net = ipaddress.IPv6Network(text)
    except ValueError as e:
        raise TopologyError(f"{what}: {text!r} is not an IPv6 prefix: {e}") from None
    if net.prefixlen != plen:
        raise TopologyError(f"{what}: {text} must be a /{plen}")
    return net


def build_sid_plan(topo: Topology, block: str = DEFAULT_BLOCK,
                   gid_prefix: str = DEFAULT_GID_PREFIX) -> SidPlan:
    """Allocate uSIDs and addresses for ``topo`` (same topology and arguments, same plan)."""
    blk = _net(block, U.BLOCK_BITS, "locator block")
    gids = _net(gid_prefix, 64, "GID prefix")
    if blk.overlaps(gids):
        raise TopologyError(f"GID prefix {gids} overlaps the locator block {blk}")
    owner: dict[int, str] = {}

    def claim(u: int, who: str) -> int:
        if u in owner:
            raise TopologyError(f"{who}: uSID {u:04x} already allocated to {owner[u]}")
        owner[u] = who
        return u

    switch_usid: dict[str, int] = {}
    for s in topo.switches.values():  # pinned uSIDs first so automatic ones report the clash
        if s.usid is not None:
            switch_usid[s.name] = claim(s.usid, f"switch {s.name}")
    for p in range(1, topo.planes + 1):
        for base, group in ((0x1000, topo.spines(p)), (0x2000, topo.leaves(p))):
            if len(group) > MAX_PER_PLANE:
                raise TopologyError(f"plane {p}: more than {MAX_PER_PLANE} {group[0].role}s")
            for k, s in enumerate(group, start=1):
                if s.usid is None:
                    switch_usid[s.name] = claim(base | p << 8 | k, f"switch {s.name}")
    hosts = topo.host_list()
    if len(hosts) > MAX_HOSTS:
        raise TopologyError(f"hosts: at most {MAX_HOSTS} hosts fit the uSID plan, got {len(hosts)}")
    host_index = {h.name: n for n, h in enumerate(hosts, start=1)}
    host_port_usid: dict[tuple[str, int], int] = {}
    for h in hosts:
        for p in range(1, topo.planes + 1):
            host_port_usid[(h.name, p)] = claim(0x8000 | host_index[h.name] << 4 | p,
                                                f"host {h.name} port {p}")
    return SidPlan(blk, gids, switch_usid, host_index, host_port_usid, owner)
