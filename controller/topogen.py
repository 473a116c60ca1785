"""Generate multi-plane two-tier Clos topologies (every host on leaf i of every plane).

Naming and port numbering are fixed so generated files are readable and stable:
spine ``p<P>s<K>``, leaf ``p<P>l<I>``, host ``h<N>``; leaf port K goes to spine K, leaf port
``spines + J`` to the J-th host of that leaf; spine port I goes to leaf I; host NIC port P is plane P.
"""
from __future__ import annotations

from typing import Any

import yaml

from .p4contract import CPU_PORT
from .topology import DEFAULT_GRPC_BASE, Topology, TopologyError, parse_topology

# Each count's upper bound and why (ports are numbered from 1 with no gap: see clos_data).
COUNT_LIMITS = {"planes": (15, ""),
                "spines": (CPU_PORT - 2, " (a leaf needs a host port below the CPU port)"),
                "leaves": (CPU_PORT - 1, f" (spine port I goes to leaf I; {CPU_PORT} is the CPU port)"),
                "hosts-per-leaf": (200, "")}


def count_error(what: str, v: int) -> str:
    """What is wrong with count ``what`` (a key of COUNT_LIMITS) of value ``v`` on its own, or ""."""
    hi, why = COUNT_LIMITS[what]
    return "" if 1 <= v <= hi else f"must be 1..{hi}{why}, got {v}"


def clos_data(planes: int, spines: int, leaves: int, hosts_per_leaf: int, *, name: str | None = None,
              grpc_base_port: int = DEFAULT_GRPC_BASE, link_defaults: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """The plain-data form of a Clos topology (what ``topo gen`` writes)."""
    # Ports are numbered from 1 with no gap, so they stop below the CPU port: a spine's leaf ports
    # 1..leaves (at most 254), a leaf's spine and host ports 1..spines + hosts-per-leaf (at most 254,
    # so at most 253 spines).  The SID plan's 255 per plane needs a hand-written file with ports past 255.
    for what, v in (("planes", planes), ("spines", spines), ("leaves", leaves), ("hosts-per-leaf", hosts_per_leaf)):
        why = count_error(what, v)
        if why:
            raise TopologyError(f"{what}: {why}")
    if spines + hosts_per_leaf >= CPU_PORT:
        raise TopologyError(f"spines + hosts-per-leaf: must be at most {CPU_PORT - 1} (a leaf's ports 1..spines + "
                            f"hosts-per-leaf stay below the CPU port {CPU_PORT}), got {spines + hosts_per_leaf}")
    switches: list[dict[str, Any]] = []
    links: list[list[str]] = []
    for p in range(1, planes + 1):
        for k in range(1, spines + 1):
            switches.append({"name": f"p{p}s{k}", "role": "spine", "plane": p})
        for i in range(1, leaves + 1):
            switches.append({"name": f"p{p}l{i}", "role": "leaf", "plane": p})
    for n, sw in enumerate(switches):
        sw["device_id"] = n + 1
        sw["grpc_port"] = grpc_base_port + n
    hosts = [f"h{n}" for n in range(1, leaves * hosts_per_leaf + 1)]
    for p in range(1, planes + 1):
        for i in range(1, leaves + 1):
            for k in range(1, spines + 1):
                links.append([f"p{p}l{i}:{k}", f"p{p}s{k}:{i}"])
            for j in range(1, hosts_per_leaf + 1):
                host = hosts[(i - 1) * hosts_per_leaf + j - 1]
                links.append([f"{host}:{p}", f"p{p}l{i}:{spines + j}"])
    data: dict[str, Any] = {
        "name": name or f"clos-{planes}p{spines}s{leaves}l{hosts_per_leaf}h",
        "planes": planes,
        "grpc_base_port": grpc_base_port,
    }
    if link_defaults:
        data["link_defaults"] = dict(link_defaults)
    data.update({"switches": switches, "hosts": hosts, "links": links})
    return data


def clos(planes: int, spines: int, leaves: int, hosts_per_leaf: int, **kw: Any) -> Topology:
    """A validated Clos topology."""
    return parse_topology(clos_data(planes, spines, leaves, hosts_per_leaf, **kw))


def dump_yaml(data: dict[str, Any]) -> str:
    """YAML text of topology data: block mappings, links as one-line pairs."""
    header = ("# mrc-fabric topology: planes, switches (leaf = T0, spine = T1), hosts (NIC port p is\n"
              "# plane p) and links 'node:port'.  See docs/controller.md for the format.\n")
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)
