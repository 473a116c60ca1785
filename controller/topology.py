"""Topology model of a multi-plane two-tier Clos fabric: load, validate, query.

A topology names planes, switches (leaves = T0, spines = T1, each in one plane), hosts (one NIC port
per plane) and point-to-point links with port numbers on both ends.  Validation errors name the
element at fault so a user can fix the YAML without reading code.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrc.yamlio import YamlFileError, place_error, read_yaml_file, unknown_keys

from .p4contract import CPU_PORT, DROP_PORT

MAX_PORT = DROP_PORT - 1  # 9-bit port space; the last value is the v1model drop port
RESERVED_PORTS = {CPU_PORT: "the CPU port", DROP_PORT: "the drop port"}
DEFAULT_GRPC_BASE = 9559
ROLES = ("leaf", "spine")
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


class TopologyError(ValueError):
    """An invalid topology; the message names the offending element."""


@dataclass(frozen=True, slots=True)
class LinkProps:
    """Optional emulation properties of a link (used by softswitch port shaping)."""

    delay_us: int = 0
    queue_depth: int = 0  # packets; 0 = target default
    # the link's rate in full-size frames per second; 0 = unlimited.  How a target applies it is its
    # capability ``shares_link_rate``: softswitch, one link of that many full frames' bits/s shared by
    # the port's queues; bmv2, set_queue_rate on each priority queue but the top one (unlimited)
    rate_pps: int = 0


@dataclass(frozen=True, slots=True)
class Switch:
    """A fabric switch: its role, plane and how its P4Runtime server is reached."""

    name: str
    role: str  # "leaf" | "spine"
    plane: int  # 1-based
    device_id: int
    grpc_port: int
    usid: int | None = None  # explicit uSID override (else the SID plan allocates one)


@dataclass(frozen=True, slots=True)
class Host:
    """A host; NIC port ``p`` (1-based) attaches to plane ``p``."""

    name: str


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One end of a link: a switch port or a host NIC port (``port`` = plane for hosts)."""

    node: str
    port: int

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"


@dataclass(frozen=True, slots=True)
class Link:
    """A point-to-point link between two endpoints."""

    a: Endpoint
    b: Endpoint
    props: LinkProps = LinkProps()

    @property
    def name(self) -> str:
        return f"{self.a}--{self.b}"

    def other(self, end: Endpoint) -> Endpoint:
        """The opposite end of ``end``."""
        return self.b if end == self.a else self.a


@dataclass(slots=True)
class Topology:
    """A validated fabric topology with adjacency lookups."""

    name: str
    planes: int
    switches: dict[str, Switch]
    hosts: dict[str, Host]
    links: list[Link]
    _by_end: dict[Endpoint, Link] = field(default_factory=dict, repr=False)
    # connected ports per node, ascending: ports_of scanned every end of every link, so validating a
    # fabric was quadratic (2,016 hosts: 6 s; the generator's largest shapes: many minutes)
    _ports: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_end = {}
        ports: dict[str, list[int]] = {}
        for link in self.links:
            self._by_end[link.a] = link
            self._by_end[link.b] = link
        for end in self._by_end:
            ports.setdefault(end.node, []).append(end.port)
        self._ports = {n: sorted(ps) for n, ps in ports.items()}

    # -- queries -------------------------------------------------------------------------------
    def link_at(self, node: str, port: int) -> Link | None:
        """The link plugged into ``node:port``, or None."""
        return self._by_end.get(Endpoint(node, port))

    def peer(self, node: str, port: int) -> Endpoint | None:
        """The endpoint at the other side of ``node:port``, or None if nothing is plugged in."""
        link = self.link_at(node, port)
        return None if link is None else link.other(Endpoint(node, port))

    def ports_of(self, node: str) -> list[int]:
        """Connected port numbers of a switch or host, ascending."""
        return list(self._ports.get(node, ()))

    def switches_of(self, role: str, plane: int | None = None) -> list[Switch]:
        """Switches of a role (optionally in one plane), in natural name order."""
        out = [s for s in self.switches.values() if s.role == role and (plane is None or s.plane == plane)]
        return sorted(out, key=lambda s: natural_key(s.name))

    def leaves(self, plane: int | None = None) -> list[Switch]:
        return self.switches_of("leaf", plane)

    def spines(self, plane: int | None = None) -> list[Switch]:
        return self.switches_of("spine", plane)

    def host_list(self) -> list[Host]:
        """Hosts in natural name order."""
        return sorted(self.hosts.values(), key=lambda h: natural_key(h.name))

    def host_leaf(self, host: str, plane: int) -> tuple[Switch, int]:
        """The leaf (and its port) that host NIC port ``plane`` attaches to."""
        peer = self.peer(host, plane)
        assert peer is not None  # guaranteed by validation
        return self.switches[peer.node], peer.port

    def hosts_of_leaf(self, leaf: str) -> list[tuple[str, int, int]]:
        """(host, host NIC port, leaf port) for every host attached to ``leaf``."""
        out = []
        for port in self.ports_of(leaf):
            peer = self.peer(leaf, port)
            if peer is not None and peer.node in self.hosts:
                out.append((peer.node, peer.port, port))
        return out

    def links_between(self, a: str, b: str) -> list[Link]:
        """All links joining nodes ``a`` and ``b`` (either direction)."""
        return [lk for lk in self.links if {lk.a.node, lk.b.node} == {a, b}]

    def iter_ends(self) -> Iterator[Endpoint]:
        for link in self.links:
            yield link.a
            yield link.b


def natural_key(name: str) -> tuple:
    """Sort key that orders ``s2`` before ``s10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


# -- loading ---------------------------------------------------------------------------------------
def load_topology(path: str | Path) -> Topology:
    """Read and validate a topology YAML file."""
    p = Path(path)
    try:
        data = read_yaml_file(p)
    except OSError as e:
        raise TopologyError(f"{p}: cannot read topology: {e.strerror}") from e
    except YamlFileError as e:
        raise TopologyError(str(e)) from None
    try:
        return parse_topology(data)
    except TopologyError as e:  # FILE:LINE:COL: planes: ... where the message starts with a key path
        raise TopologyError(place_error(p, str(e))) from e


def parse_topology(data: Any) -> Topology:
    """Validate a topology given as plain data (the parsed YAML) and build the model."""
    if not isinstance(data, dict):
        raise TopologyError("topology must be a mapping with planes, switches, hosts and links")
    _no_unknown(data, {"name", "planes", "grpc_base_port", "switches", "hosts", "links", "link_defaults"},
                "topology")
    name = data.get("name", "fabric")
    if isinstance(name, bool) or not isinstance(name, (str, int)) or not str(name):  # [a, b] was "['a', 'b']"
        raise TopologyError(f"name: must be a string, got {name!r}")
    name = str(name)
    planes = data.get("planes")
    if not isinstance(planes, int) or isinstance(planes, bool) or not 1 <= planes <= 15:
        raise TopologyError(f"planes: must be an integer 1..15, got {planes!r}")
    grpc_base = _int(data.get("grpc_base_port", DEFAULT_GRPC_BASE), "grpc_base_port", 1, 65535)
    defaults = _link_props(data.get("link_defaults") or {}, "link_defaults", LinkProps())

    switches = _parse_switches(data.get("switches"), planes, grpc_base)
    hosts = _parse_hosts(data.get("hosts"), switches)
    links = _parse_links(data.get("links"), switches, hosts, defaults)
    topo = Topology(name=name, planes=planes, switches=switches, hosts=hosts, links=links)
    _check_structure(topo)
    # pinned uSIDs that collide (with each other or with an automatic one): `topo check` said ok and
    # every other command refused the file without naming it
    from .sidplan import build_sid_plan  # here: sidplan imports this module

    build_sid_plan(topo)
    return topo


def _no_unknown(d: dict, allowed: set[str], where: str) -> None:
    extra = unknown_keys(d, allowed)
    if extra:
        raise TopologyError(f"{where}: unknown key(s) {', '.join(extra)} "
                            f"(allowed: {', '.join(sorted(allowed))})")


def _int(v: Any, where: str, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise TopologyError(f"{where}: must be an integer {lo}..{hi}, got {v!r}")
    return v


def _check_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise TopologyError(f"{where}: name {name!r} must start with a letter and use only letters, "
                            "digits and '_' (at most 32 characters)")
    return name


def _parse_switches(raw: Any, planes: int, grpc_base: int) -> dict[str, Switch]:
    if not isinstance(raw, list) or not raw:
        raise TopologyError("switches: must be a non-empty list")
    out: dict[str, Switch] = {}
    device_ids: dict[int, str] = {}
    grpc_ports: dict[int, str] = {}
    for i, s in enumerate(raw):
        where = f"switches[{i}]"
        if not isinstance(s, dict):
            raise TopologyError(f"{where}: must be a mapping")
        name = _check_name(s.get("name"), where)
        where = f"switch {name}"
        _no_unknown(s, {"name", "role", "plane", "device_id", "grpc_port", "usid"}, where)
        if name in out:
            raise TopologyError(f"{where}: duplicate switch name")
        role = s.get("role")
        if role not in ROLES:
            raise TopologyError(f"{where}: role must be one of {', '.join(ROLES)}, got {role!r}")
        plane = s.get("plane")
        if not isinstance(plane, int) or isinstance(plane, bool) or not 1 <= plane <= planes:
            raise TopologyError(f"{where}: plane must be 1..{planes}, got {plane!r}")
        dev = _int(s.get("device_id", i + 1), f"{where}: device_id", 1, 2**64 - 1)
        port = _int(s.get("grpc_port", grpc_base + i), f"{where}: grpc_port", 1, 65535)
        usid = s.get("usid")
        if usid is not None:
            usid = _int(usid, f"{where}: usid", 1, 0xFFFF)
        if dev in device_ids:
            raise TopologyError(f"{where}: device_id {dev} already used by switch {device_ids[dev]}")
        if port in grpc_ports:
            raise TopologyError(f"{where}: grpc_port {port} already used by switch {grpc_ports[port]}")
        device_ids[dev] = name
        grpc_ports[port] = name
        out[name] = Switch(name, role, plane, dev, port, usid)
    return out


def _parse_hosts(raw: Any, switches: dict[str, Switch]) -> dict[str, Host]:
    if not isinstance(raw, list):
        raise TopologyError("hosts: must be a list")
    out: dict[str, Host] = {}
    for i, h in enumerate(raw):
        if isinstance(h, str):
            h = {"name": h}
        if not isinstance(h, dict):
            raise TopologyError(f"hosts[{i}]: must be a name or a mapping")
        name = _check_name(h.get("name"), f"hosts[{i}]")
        _no_unknown(h, {"name"}, f"host {name}")
        if name in out:
            raise TopologyError(f"host {name}: duplicate host name")
        if name in switches:
            raise TopologyError(f"host {name}: name already used by a switch")
        out[name] = Host(name)
    return out


def _link_props(raw: Any, where: str, base: LinkProps) -> LinkProps:
    if not isinstance(raw, dict):
        raise TopologyError(f"{where}: link properties must be a mapping")
    _no_unknown(raw, {"delay_us", "queue_depth", "rate_pps"}, where)
    delay = _int(raw.get("delay_us", base.delay_us), f"{where}: delay_us", 0, 10_000_000)
    depth = _int(raw.get("queue_depth", base.queue_depth), f"{where}: queue_depth", 0, 1_000_000)
    rate = _int(raw.get("rate_pps", base.rate_pps), f"{where}: rate_pps", 0, 100_000_000)
    return LinkProps(delay, depth, rate)


def _endpoint(raw: Any, where: str, switches: dict[str, Switch], hosts: dict[str, Host]) -> Endpoint:
    if not isinstance(raw, str) or raw.count(":") != 1:
        raise TopologyError(f"{where}: endpoint must be 'node:port', got {raw!r}")
    node, port_s = raw.split(":")
    if node not in switches and node not in hosts:
        raise TopologyError(f"{where}: endpoint {raw} names unknown node {node!r} "
                            "(dangling link: no such switch or host)")
    try:
        port = int(port_s)
    except ValueError:
        raise TopologyError(f"{where}: endpoint {raw}: port {port_s!r} is not a number") from None
    if node in switches:
        if port in RESERVED_PORTS:
            raise TopologyError(f"{where}: endpoint {raw}: port {port} is reserved "
                                f"({RESERVED_PORTS[port]})")
        if not 0 <= port <= MAX_PORT:
            raise TopologyError(f"{where}: endpoint {raw}: port {port} out of range 0..{MAX_PORT}")
    return Endpoint(node, port)


def _parse_links(raw: Any, switches: dict[str, Switch], hosts: dict[str, Host],
                 defaults: LinkProps) -> list[Link]:
    if not isinstance(raw, list) or not raw:
        raise TopologyError("links: must be a non-empty list")
    out: list[Link] = []
    used: dict[Endpoint, str] = {}
    for i, lk in enumerate(raw):
        where = f"links[{i}]"
        props = defaults
        if isinstance(lk, list):
            if len(lk) != 2:
                raise TopologyError(f"{where}: a link is a pair [a, b], got {lk!r}")
            ra, rb = lk
        elif isinstance(lk, dict):
            _no_unknown(lk, {"a", "b", "delay_us", "queue_depth", "rate_pps"}, where)
            ra, rb = lk.get("a"), lk.get("b")
            props = _link_props({k: v for k, v in lk.items() if k not in ("a", "b")}, where, defaults)
        else:
            raise TopologyError(f"{where}: a link is [a, b] or a mapping with a and b")
        a = _endpoint(ra, where, switches, hosts)
        b = _endpoint(rb, where, switches, hosts)
        where = f"link {a}--{b}"
        if a.node == b.node:
            raise TopologyError(f"{where}: both ends on the same node {a.node}")
        for end in (a, b):
            if end in used:
                raise TopologyError(f"{where}: duplicate port {end} (already used by {used[end]})")
            used[end] = where
        out.append(Link(a, b, props))
    return out


def _check_structure(t: Topology) -> None:
    """Two-tier Clos rules: leaf–spine links inside one plane, host port p to a leaf of plane p."""
    for lk in t.links:
        where = f"link {lk.name}"
        a_sw, b_sw = t.switches.get(lk.a.node), t.switches.get(lk.b.node)
        if a_sw is None and b_sw is None:
            raise TopologyError(f"{where}: joins two hosts")
        if a_sw is not None and b_sw is not None:
            if a_sw.plane != b_sw.plane:
                raise TopologyError(f"{where}: joins plane {a_sw.plane} ({a_sw.name}) and plane "
                                    f"{b_sw.plane} ({b_sw.name}); links stay inside one plane")
            if a_sw.role == b_sw.role:
                raise TopologyError(f"{where}: joins two {a_sw.role}s; a two-tier Clos links "
                                    "leaves to spines only")
            continue
        host_end, sw = (lk.a, b_sw) if a_sw is None else (lk.b, a_sw)
        assert sw is not None
        if not 1 <= host_end.port <= t.planes:
            raise TopologyError(f"{where}: host port {host_end} does not match the planes: NIC port "
                                f"must be 1..{t.planes} (port p attaches to plane p)")
        if sw.role != "leaf":
            raise TopologyError(f"{where}: host {host_end.node} attaches to spine {sw.name}; hosts "
                                "attach to leaves")
        if sw.plane != host_end.port:
            raise TopologyError(f"{where}: host port {host_end} is NIC port {host_end.port} but leaf "
                                f"{sw.name} is in plane {sw.plane}; NIC port p attaches to plane p")
    for h in t.host_list():
        missing = [p for p in range(1, t.planes + 1) if t.link_at(h.name, p) is None]
        if missing:
            raise TopologyError(f"host {h.name}: ports do not match the planes: no link on NIC "
                                f"port(s) {', '.join(map(str, missing))} (needs one per plane "
                                f"1..{t.planes})")
    for p in range(1, t.planes + 1):
        if not t.spines(p):
            raise TopologyError(f"plane {p}: has no spine")
        if not t.leaves(p):
            raise TopologyError(f"plane {p}: has no leaf")
    for sw in t.switches.values():
        if not t.ports_of(sw.name):
            raise TopologyError(f"switch {sw.name}: has no links")
        seen: dict[str, int] = {}
        for q in t.ports_of(sw.name):
            node = t.peer(sw.name, q).node
            if node in seen and node in t.switches:
                raise TopologyError(f"switch {sw.name}: parallel links to {node} (ports {seen[node]} "
                                    f"and {q}); use one link per leaf-spine pair")
            seen[node] = q
        if sw.role == "leaf":
            up = {t.peer(sw.name, q).node for q in t.ports_of(sw.name)} & set(t.switches)
            missing = [s.name for s in t.spines(sw.plane) if s.name not in up]
            if missing:
                raise TopologyError(f"switch {sw.name}: leaf has no link to spine(s) "
                                    f"{', '.join(missing)} of plane {sw.plane}")


def topology_to_data(t: Topology) -> dict[str, Any]:
    """The plain-data (YAML) form of a topology; ``parse_topology`` of it gives ``t`` back."""
    links: list[Any] = []
    for lk in t.links:
        if lk.props == LinkProps():
            links.append([str(lk.a), str(lk.b)])
        else:
            d: dict[str, Any] = {"a": str(lk.a), "b": str(lk.b)}
            for k in ("delay_us", "queue_depth", "rate_pps"):
                if getattr(lk.props, k):
                    d[k] = getattr(lk.props, k)
            links.append(d)
    switches = []
    for s in t.switches.values():
        d = {"name": s.name, "role": s.role, "plane": s.plane, "device_id": s.device_id,
             "grpc_port": s.grpc_port}
        if s.usid is not None:
            d["usid"] = s.usid
        switches.append(d)
    return {"name": t.name, "planes": t.planes, "switches": switches,
            "hosts": [h.name for h in t.hosts.values()], "links": links}
