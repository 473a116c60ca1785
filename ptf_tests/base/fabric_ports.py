"""PTF port map of an emulated fabric: every host NIC port, plus read-only taps on leaf uplinks.

* host ``hN`` NIC port P (= plane P) is PTF device ``N`` (the host's SID-plan index), port ``P``,
  interface ``<prefix>-hN/nicP`` (inside the host's namespace; see ``ptf_tests/platforms/netns_eth``);
* every leaf–spine link is tapped at its leaf end: PTF device ``TAP_BASE + leaf device id``, port = the
  leaf's P4 port, interface ``<prefix>s<i>p<port>`` in the root namespace.  A tap sees the frames
  the leaf sends to the spine and those it receives from it, so tests can check the packet between
  hops.  Tests never send on taps.

Pure functions of the topology and the run prefix, shared by the runner and the tests.
"""
from __future__ import annotations

from dataclasses import dataclass

from controller.sidplan import SidPlan
from controller.topology import Topology
from mrc_fabric.naming import Names

TAP_BASE = 1000


@dataclass(frozen=True, slots=True)
class PtfPort:
    """One PTF dataplane port: (device, port) and the interface it is bound to."""

    device: int
    port: int
    iface: str
    node: str  # host name, or the leaf switch a tap sits on
    node_port: int  # NIC port (plane) or the leaf's P4 port
    tap: bool

    @property
    def key(self) -> tuple[int, int]:
        return self.device, self.port

    def ptf_arg(self) -> str:
        """The ``-i`` argument of PTF's multi-device form."""
        return f"{self.device}-{self.port}@{self.iface}"


def host_port(sids: SidPlan, host: str, plane: int) -> tuple[int, int]:
    """PTF (device, port) of host NIC port ``plane``."""
    return sids.host_index[host], plane


def tap_port(topo: Topology, leaf: str, port: int) -> tuple[int, int]:
    """PTF (device, port) of the tap on ``leaf`` P4 port ``port``."""
    return TAP_BASE + topo.switches[leaf].device_id, port


def fabric_ports(topo: Topology, sids: SidPlan, prefix: str) -> list[PtfPort]:
    """Every PTF port of the fabric, hosts first, in a stable order."""
    names = Names.for_topology(prefix, topo)
    out = []
    for h in topo.host_list():
        for plane in range(1, topo.planes + 1):
            dev, port = host_port(sids, h.name, plane)
            out.append(PtfPort(dev, port, f"{names.netns(h.name)}/{names.host_if(plane)}", h.name, plane, False))
    for leaf in topo.leaves():
        for port in topo.ports_of(leaf.name):
            peer = topo.peer(leaf.name, port)
            if peer is not None and peer.node in topo.switches:
                dev, p = tap_port(topo, leaf.name, port)
                out.append(PtfPort(dev, p, names.switch_if(leaf.name, port), leaf.name, port, True))
    return out
