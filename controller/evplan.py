"""EV plans: for each ordered host pair, the explicit (EXP) EV arrays over every plane and spine.

SRv6 EV: the carrier ``block | src-leaf | spine | dst-leaf | dst-host-port`` (16 bytes, zero-filled)
on NIC port P (= plane).  STEV EV: 32 bits, high 16 = UDP source port, low 16 = flow label low bits;
the flow label's low byte is the spine's member index in the source leaf's uplink group, so EV-direct
switches (``member = flow_label[7:0] % n``) send it to that spine.  ``evs_per_path`` EVs per path
differ in the UDP source port (and, for STEV, in flow-label bits 8..15).

EV order: variant-major, then spine, then plane, so consecutive EVs of a round-robin alternate planes.
``walk_srv6``/``walk_stev`` follow an EV hop by hop through the plan's static intents.
"""
from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import usid as U
from .plan import EvDirectMap, FabricPlan, HostRoute, HostRouteGroup, OwnUsid, RouteUsid, SwitchPlan

SRV6_FIELDS = (32, 16, 16, 16, 16)
STEV_FIELDS = (16, 16)
UDP_SPORT_BASE = 0xC000
MAX_HOPS = 16


class EvPlanError(ValueError):
    """A bad EV-plan request (unknown host, too many EVs)."""


@dataclass(frozen=True, slots=True)
class Ev:
    """One entropy value and the path it names."""

    index: int
    port: int  # NIC port, 1-based = plane
    value: bytes  # 16 bytes (SRv6 carrier) or 4 bytes (STEV)
    udp_sport: int
    flow_label: int  # STEV: low 16 bits of the flow label; SRv6: 0
    spine: str

    @property
    def plane(self) -> int:
        return self.port


@dataclass(frozen=True, slots=True)
class EvProfile:
    """An MRC EXP EV profile for one ordered host pair and one format."""

    src: str
    dst: str
    format: str  # "SRV6" | "STEV"
    fields: tuple[int, ...]
    evs: tuple[Ev, ...]
    ev_min_active: int = 1

    @property
    def ev_count(self) -> int:
        return len(self.evs)


def _paths(plan: FabricPlan, evs_per_path: int) -> list[tuple[int, int, int, int, str]]:
    """(index, variant, plane, spine's index in its plane, spine) in EV order."""
    topo = plan.topology
    spines = {p: [s.name for s in topo.spines(p)] for p in range(1, topo.planes + 1)}
    kmax = max(len(v) for v in spines.values())
    out = []
    for v in range(evs_per_path):
        for k in range(kmax):
            for p in range(1, topo.planes + 1):
                if k < len(spines[p]):
                    out.append((len(out), v, p, k, spines[p][k]))
    if len(out) > 0x4000:
        raise EvPlanError(f"{len(out)} EVs per pair exceed the 16384 UDP source ports from {UDP_SPORT_BASE}")
    return out


def _check_pair(plan: FabricPlan, src: str, dst: str, evs_per_path: int) -> None:
    for h in (src, dst):
        if h not in plan.topology.hosts:
            raise EvPlanError(f"unknown host {h!r} (hosts: {', '.join(sorted(plan.topology.hosts))})")
    if src == dst:
        raise EvPlanError(f"host {src}: no EV plan from a host to itself")
    if not 1 <= evs_per_path <= 256:
        raise EvPlanError(f"evs-per-path must be 1..256, got {evs_per_path}")


def srv6_profile(plan: FabricPlan, src: str, dst: str, evs_per_path: int = 1) -> EvProfile:
    """SRv6 EVs from ``src`` to ``dst``: one carrier per (plane, spine), ``evs_per_path`` each."""
    _check_pair(plan, src, dst, evs_per_path)
    topo, sids = plan.topology, plan.sids
    # the leaves' and the host port's uSIDs once per plane, not once per EV (256 EVs a pair at scale)
    ends = {p: (sids.switch_usid[topo.host_leaf(src, p)[0].name], sids.switch_usid[topo.host_leaf(dst, p)[0].name],
                sids.host_port_usid[(dst, p)]) for p in range(1, topo.planes + 1)}
    evs = []
    for idx, _v, p, _k, spine in _paths(plan, evs_per_path):
        sleaf, dleaf, dport = ends[p]
        carrier = sids.carrier(sleaf, sids.switch_usid[spine], dleaf, dport)
        evs.append(Ev(idx, p, carrier.packed, UDP_SPORT_BASE + idx, 0, spine))
    return EvProfile(src, dst, "SRV6", SRV6_FIELDS, tuple(evs))


def stev_profile(plan: FabricPlan, src: str, dst: str, evs_per_path: int = 1) -> EvProfile:
    """STEV EVs from ``src`` to ``dst`` that EV-direct leaves steer to each spine."""
    _check_pair(plan, src, dst, evs_per_path)
    evs = []
    # k, the spine's index in its plane, is its member index in the leaf's uplink group (until
    # 2026-12-07 looked up by name for each EV, each time sorting the plane's spines: 23 ms a profile
    # at 1,024 hosts)
    for idx, v, p, k, spine in _paths(plan, evs_per_path):
        sport = UDP_SPORT_BASE + idx
        label = (v << 8) | k
        evs.append(Ev(idx, p, ((sport << 16) | label).to_bytes(4, "big"), sport, label, spine))
    return EvProfile(src, dst, "STEV", STEV_FIELDS, tuple(evs))


def ev_nodes(topo: Any, src: str, dst: str, port: int, spine: str | None, encap: str,
             ev_direct: bool = True) -> list[str] | None:
    """The nodes an EV from ``src`` to ``dst`` on NIC ``port`` that the plan steers to ``spine`` crosses,
    in order, as this module's profiles route it: SRv6 always through the spine (its carrier names
    source leaf, spine, destination leaf; two hosts of one leaf too, a U-turn at the spine), STEV
    through the spine unless both hosts share the leaf (the leaf's GID host route delivers it).  None
    where the plan does not decide the path: UDP EVs (no carrier, no EV-direct label: an ECMP leaf
    hashes them, an EV-direct one sends them all to member 0), STEV on leaves that hash instead of steering by EV (``ev_direct`` False), no spine named."""
    if spine is None or encap not in ("srv6", "stev") or (encap == "stev" and not ev_direct):
        return None
    la, lb = topo.host_leaf(src, port)[0].name, topo.host_leaf(dst, port)[0].name
    if encap == "stev" and la == lb:
        return [src, la, dst]
    return [src, la, spine, lb, dst]


def profile_to_data(prof: EvProfile) -> dict[str, Any]:
    """The file form of a profile, shaped like an MRC EXP EV profile (``mrc_ctl.h``)."""
    evs = []
    for ev in prof.evs:
        d: dict[str, Any] = {"index": ev.index, "port": ev.port, "ev": ev.value.hex()}
        if prof.format == "SRV6":
            d["address"] = str(ipaddress.IPv6Address(ev.value))
        else:
            d["flow_label"] = ev.flow_label
        d.update({"udp_sport": ev.udp_sport, "plane": ev.plane, "spine": ev.spine})
        evs.append(d)
    return {"mode": "EXP", "format": prof.format,
            "format_profile": {"field_widths": list(prof.fields)},
            "ev_count": prof.ev_count, "ev_min_active": prof.ev_min_active, "evs": evs}


def host_ev_data(plan: FabricPlan, src: str, evs_per_path: int = 1,
                 formats: tuple[str, ...] = ("SRV6", "STEV")) -> dict[str, Any]:
    """Everything host ``src`` needs: its addresses and, per peer, one profile per format."""
    sids = plan.sids
    build = {"SRV6": srv6_profile, "STEV": stev_profile}
    for f in formats:
        if f not in build:
            raise EvPlanError(f"unknown EV format {f!r} (SRV6, STEV)")
    peers = {}
    for h in plan.topology.host_list():
        if h.name == src:
            continue
        peers[h.name] = {"gid": str(sids.host_gid(h.name)),
                         "profiles": {f.lower(): profile_to_data(build[f](plan, src, h.name, evs_per_path))
                                      for f in formats}}
    ports = {}
    for p in range(1, plan.topology.planes + 1):
        leaf, lport = plan.topology.host_leaf(src, p)
        ports[p] = {"address": str(sids.host_port_address(src, p)), "mac": sids.host_mac(src, p),
                    "leaf": leaf.name, "leaf_port": lport, "leaf_mac": sids.switch_mac(leaf.name, lport)}
    return {"host": src, "gid": str(sids.host_gid(src)), "block": str(sids.block), "ports": ports,
            "peers": peers}


def write_ev_files(plan: FabricPlan, out_dir: str | Path, evs_per_path: int = 1, fmt: str = "yaml",
                   formats: tuple[str, ...] = ("SRV6", "STEV")) -> list[Path]:
    """Write ``<out_dir>/<host>.<fmt>`` for every host; returns the paths written."""
    if fmt not in ("yaml", "json"):
        raise EvPlanError(f"file format must be yaml or json, got {fmt!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for h in plan.topology.host_list():
        data = host_ev_data(plan, h.name, evs_per_path, formats)
        path = out / f"{h.name}.{fmt}"
        text = (json.dumps(data, indent=1) + "\n" if fmt == "json"
                else yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120))
        path.write_text(text)
        written.append(path)
    return written


# -- walking EVs through the static plan ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hop:
    """One switch an EV crosses: where it entered and left."""

    switch: str
    in_port: int
    out_port: int


def _route_usid(sp: SwitchPlan, top: int) -> RouteUsid | None:
    for r in sp.of(RouteUsid):
        if U.top(int(ipaddress.IPv6Network(r.prefix).network_address)) == top:
            return r
    return None


def walk_srv6(plan: FabricPlan, src: str, port: int, dst_addr: bytes) -> tuple[str, int, list[Hop]]:
    """Forward an SRv6 packet from host ``src`` NIC ``port`` by the plan's uN/uSID routes.

    Returns (host reached, its NIC port, hops); raises EvPlanError where the packet would drop.
    """
    topo = plan.topology
    dst = int.from_bytes(dst_addr, "big")
    here = topo.peer(src, port)
    if here is None:
        raise EvPlanError(f"host {src} port {port}: not connected")
    hops: list[Hop] = []
    for _ in range(MAX_HOPS):
        if here.node in topo.hosts:
            return here.node, here.port, hops
        sp = plan.switches[here.node]
        own = sp.of(OwnUsid)[0]
        if U.top(dst) == U.top(int(ipaddress.IPv6Network(own.prefix).network_address)):
            dst = U.shift(dst)
        r = _route_usid(sp, U.top(dst))
        if r is None:
            raise EvPlanError(f"{here.node}: no route for {ipaddress.IPv6Address(dst)} (after {hops})")
        hops.append(Hop(here.node, here.port, r.next_hop.port))
        here = topo.peer(here.node, r.next_hop.port)
    raise EvPlanError(f"loop: more than {MAX_HOPS} hops from {src} port {port}")


def walk_stev(plan: FabricPlan, src: str, port: int, dst_gid: str, flow_label: int
              ) -> tuple[str, int, list[Hop]]:
    """Forward an STEV packet (no outer header) by GID host routes with EV-direct group selection."""
    topo = plan.topology
    prefix = f"{ipaddress.IPv6Address(dst_gid)}/128"
    here = topo.peer(src, port)
    hops: list[Hop] = []
    for _ in range(MAX_HOPS):
        if here is None:
            raise EvPlanError(f"dead end after {hops}")
        if here.node in topo.hosts:
            return here.node, here.port, hops
        sp = plan.switches[here.node]
        out = None
        for r in sp.of(HostRoute):
            if r.prefix == prefix:
                out = r.next_hop.port
        for g in sp.of(HostRouteGroup):
            if g.prefix == prefix:
                sel = next(m for m in sp.of(EvDirectMap) if m.group_id == g.group_id)
                member = sel.members[sel.member_for(flow_label)]
                out = next(p for p in topo.ports_of(here.node) if topo.peer(here.node, p).node == member)
        if out is None:
            raise EvPlanError(f"{here.node}: no host route for {prefix}")
        hops.append(Hop(here.node, here.port, out))
        here = topo.peer(here.node, out)
    raise EvPlanError(f"loop: more than {MAX_HOPS} hops from {src} port {port}")
