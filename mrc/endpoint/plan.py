"""EV plans for the endpoint: read the controller's per-host files, or make EVs for direct links.

The controller (``controller/evplan.py``, ``mrc-controller evplan``) writes one YAML/JSON file per
host: ``host``, ``gid``, ``ports`` (per NIC port: ``mac``, ``leaf_mac`` = next hop), and ``peers``
(per peer host: ``gid`` and ``profiles.srv6`` / ``profiles.stev`` shaped like an ``mrc_ctl.h`` EXP EV
profile: ``mode``, ``format``, ``ev_min_active``, ``evs: [{index, port, ev (hex), udp_sport, ...}]``).
UDP mode has no profile of its own: its 16-bit EV is each EV's ``udp_sport``.

:func:`load_profile` puts one such profile into an ``mrc.ctl`` context as an EV format profile (the
plan's ``field_widths``) and an EXP EV profile: QPs then bind to it by id
(``QpAttr(ev_profile_id=...)``), and what goes on the wire is ctl's expansion of the plan's EVs.

Two hosts joined directly (veth, no switches) have no plan: :func:`direct_evs` makes ``k`` EVs per
port, numbered like the controller's (variant-major, then port, so a round robin alternates planes).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrc.endpoint.netif import parse_mac
from mrc.yamlio import YamlFileError, decode_text, load_yaml, place_error

ENCAPS = ("srv6", "stev", "udp")
UDP_SPORT_BASE = 0xC000
DIRECT_BLOCK = 0xFC000000  # uSID block of synthesized direct-link carriers (never routed)


class PlanError(ValueError):
    """An EV plan file is missing, unreadable or malformed (the message names the file and field)."""


@dataclass(frozen=True, slots=True)
class PortInfo:
    """One NIC port of this host as the plan describes it."""

    port: int
    mac: bytes | None = None
    next_hop_mac: bytes | None = None  # the leaf switch port's MAC
    address: str | None = None


@dataclass(frozen=True, slots=True)
class PlanProfile:
    """One EV profile of the plan as ``mrc_ctl.h`` would take it: format mode and field widths, the
    ``ev_min_active`` floor and the EXP array ``[(ev bytes, port), ...]`` (values MSB-first from byte 0)."""

    encap: str  # "srv6" | "stev" | "udp"
    field_widths: tuple[int, ...]
    ev_min_active: int
    evs: tuple[tuple[bytes, int], ...]
    # the spine each EV crosses, as the controller's plan names it (its ``spine`` key), in ``evs`` order;
    # empty when the plan does not say (direct links, older plans).  Reports only: nothing routes by it.
    spines: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PeerPlan:
    """The EVs this host uses to reach one peer, per encapsulation: ``[(ev, port), ...]``."""

    name: str
    gid: bytes
    evs: dict[str, list[tuple[bytes | int, int]]] = field(default_factory=dict)
    ev_min_active: dict[str, int] = field(default_factory=dict)
    profiles: dict[str, PlanProfile] = field(default_factory=dict)  # per encap, for load_profile


@dataclass(frozen=True, slots=True)
class HostPlan:
    """A host's EV plan: its GID, its ports and the EVs to each peer."""

    host: str
    gid: bytes
    ports: dict[int, PortInfo]
    peers: dict[str, PeerPlan]

    def peer_by_gid(self, gid: bytes) -> PeerPlan:
        """The peer with GID ``gid``; PlanError if the plan does not know it."""
        for p in self.peers.values():
            if p.gid == gid:
                return p
        raise PlanError(f"host {self.host}: no peer with GID {ipaddress.IPv6Address(gid)} in the EV plan")

    def evs_to(self, peer: PeerPlan, encap: str) -> list[tuple[bytes | int, int]]:
        """EVs to ``peer`` for ``encap``; PlanError if the plan has none."""
        evs = peer.evs.get(encap)
        if not evs:
            raise PlanError(f"host {self.host}: the EV plan has no {encap} EVs to {peer.name}")
        return evs


def _gid(text: Any, where: str) -> bytes:
    try:
        return ipaddress.IPv6Address(str(text)).packed
    except ValueError:
        raise PlanError(f"{where}: not an IPv6 address: {text!r}") from None


def _int(d: dict, key: str, where: str) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise PlanError(f"{where}.{key}: expected an integer, got {v!r}")
    return v


def _field_widths(prof: dict, fmt: str, where: str) -> tuple[int, ...]:
    raw = (prof.get("format_profile") or {}).get("field_widths")
    if raw is None:  # older plans: the controller's fixed layouts
        return (32, 16, 16, 16, 16) if fmt == "SRV6" else (16, 16)
    if not isinstance(raw, list) or not raw or not all(isinstance(w, int) and not isinstance(w, bool) and w > 0
                                                       for w in raw):
        raise PlanError(f"{where}.format_profile.field_widths: expected a list of positive integers, got {raw!r}")
    return tuple(raw)


def _profile_evs(prof: Any, where: str) -> tuple[dict[str, list[tuple[bytes | int, int]]], int,
                                                 dict[str, PlanProfile]]:
    if not isinstance(prof, dict) or not isinstance(prof.get("evs"), list):
        raise PlanError(f"{where}: expected a profile with an 'evs' list")
    fmt = str(prof.get("format", "")).upper()
    if fmt not in ("SRV6", "STEV"):
        raise PlanError(f"{where}.format: expected SRV6 or STEV, got {prof.get('format')!r}")
    widths = _field_widths(prof, fmt, where)
    main: list[tuple[bytes | int, int]] = []
    udp: list[tuple[bytes | int, int]] = []
    raw: list[tuple[bytes, int]] = []
    spines: list[str] = []
    for i, e in enumerate(prof["evs"]):
        w = f"{where}.evs[{i}]"
        if not isinstance(e, dict):
            raise PlanError(f"{w}: expected a mapping")
        port = _int(e, "port", w)
        if port < 1:
            raise PlanError(f"{w}.port: NIC ports are 1-based, got {port}")
        try:
            val = bytes.fromhex(str(e.get("ev", "")))
        except ValueError:
            raise PlanError(f"{w}.ev: not hex: {e.get('ev')!r}") from None
        if fmt == "SRV6":
            if len(val) not in (16, 32):
                raise PlanError(f"{w}.ev: an SRV6 EV is 16 or 32 bytes, got {len(val)}")
            main.append((val, port))
        else:
            if len(val) != 4:
                raise PlanError(f"{w}.ev: an STEV EV is 4 bytes, got {len(val)}")
            main.append((int.from_bytes(val, "big"), port))
        raw.append((val, port))
        if isinstance(e.get("spine"), str) and e["spine"]:
            spines.append(e["spine"])
        if "udp_sport" in e:
            udp.append((_int(e, "udp_sport", w) & 0xFFFF, port))
    if not main:
        raise PlanError(f"{where}.evs: empty")
    out = {fmt.lower(): main}
    if len(udp) == len(main):
        out["udp"] = udp
    min_active = prof.get("ev_min_active", 1)
    if isinstance(min_active, bool) or not isinstance(min_active, int) or min_active < 0:
        raise PlanError(f"{where}.ev_min_active: expected a non-negative integer, got {min_active!r}")
    named = tuple(spines) if len(spines) == len(raw) else ()
    profiles = {fmt.lower(): PlanProfile(fmt.lower(), widths, min_active, tuple(raw), named)}
    if "udp" in out:
        profiles["udp"] = PlanProfile("udp", (16,), min_active,
                                      tuple((sport.to_bytes(2, "big"), port) for sport, port in out["udp"]), named)
    return out, min_active, profiles


def parse_plan(data: Any, where: str = "plan") -> HostPlan:
    """Check and convert a loaded plan document; PlanError names the offending field."""
    if not isinstance(data, dict):
        raise PlanError(f"{where}: expected a mapping at the top level")
    host = str(data.get("host", ""))
    if not host:
        if {"switches", "links"} <= set(data):  # the topology given for the plan: "host: missing" said little
            raise PlanError(f"{where}: this is a topology file, not a host's EV plan (make the plans with "
                            "`mrc-controller ev gen -t TOPOLOGY -o DIR` and give DIR/HOST.yaml)")
        raise PlanError(f"{where}.host: missing")
    gid = _gid(data.get("gid"), f"{where}.gid")
    ports: dict[int, PortInfo] = {}
    raw_ports = data.get("ports", {})
    if not isinstance(raw_ports, dict):
        raise PlanError(f"{where}.ports: expected a mapping of port number -> port")
    for k, v in raw_ports.items():
        w = f"{where}.ports.{k}"
        try:
            p = int(k)
        except (TypeError, ValueError):
            raise PlanError(f"{w}: port keys are 1-based integers") from None
        if not isinstance(v, dict):
            raise PlanError(f"{w}: expected a mapping")
        try:
            mac = parse_mac(v["mac"]) if v.get("mac") else None
            nh = parse_mac(v["leaf_mac"]) if v.get("leaf_mac") else None
        except ValueError as exc:
            raise PlanError(f"{w}: {exc}") from None
        ports[p] = PortInfo(p, mac, nh, v.get("address"))
    peers: dict[str, PeerPlan] = {}
    raw_peers = data.get("peers", {})
    if not isinstance(raw_peers, dict):
        raise PlanError(f"{where}.peers: expected a mapping of host -> peer")
    for name, v in raw_peers.items():
        w = f"{where}.peers.{name}"
        if not isinstance(v, dict):
            raise PlanError(f"{w}: expected a mapping")
        evs: dict[str, list[tuple[bytes | int, int]]] = {}
        mins: dict[str, int] = {}
        profs: dict[str, PlanProfile] = {}
        raw_profiles = v.get("profiles") or {}
        if not isinstance(raw_profiles, dict):  # was an AttributeError traceback
            raise PlanError(f"{w}.profiles: expected a mapping of encapsulation -> profile")
        for pname, prof in raw_profiles.items():
            got, m, pp = _profile_evs(prof, f"{w}.profiles.{pname}")
            for enc, lst in got.items():
                evs.setdefault(enc, lst)
                mins.setdefault(enc, m)
                profs.setdefault(enc, pp[enc])
        peers[str(name)] = PeerPlan(str(name), _gid(v.get("gid"), f"{w}.gid"), evs, mins, profs)
    return HostPlan(host, gid, ports, peers)


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def load_plan(path: str | Path) -> HostPlan:
    """Read a controller EV plan file (YAML or JSON).  Errors are one line naming the file (and the
    line and column of a syntax error); a key given twice is an error, not the last one winning."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except IsADirectoryError:  # most often `ev gen -o DIR`'s folder: it holds one plan per host
        names = sorted(q.name for q in p.iterdir() if q.suffix in (".yaml", ".yml", ".json"))
        listed = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        raise PlanError(f"{p}: is a directory; give this host's plan file in it"
                        + (f" ({listed})" if names else "")) from None
    except OSError as exc:
        raise PlanError(f"{p}: {exc.strerror or exc}") from None
    json_file = p.suffix == ".json"
    try:  # the topologies' and scenarios' reader: one line naming the file, duplicate keys refused
        text = decode_text(raw, str(p))
        data = None if json_file else load_yaml(text, str(p))
    except YamlFileError as exc:
        raise PlanError(str(exc)) from None
    if json_file:
        try:
            data = json.loads(text, object_pairs_hook=_json_pairs)
        except json.JSONDecodeError as exc:
            raise PlanError(f"{p}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:
            raise PlanError(f"{p}: not valid JSON: {' '.join(str(exc).split()) or 'nested too deeply'}") from None
    return _parse_file(data, p)


def _parse_file(data: Any, p: Path) -> HostPlan:
    """``parse_plan`` of the document read from ``p``; an error names the file, the line and column of
    the field, and the field (``FILE:LINE:COL: peers.h2.gid: ...``)."""
    try:
        return parse_plan(data)
    except PlanError as exc:
        raise PlanError(place_error(p, str(exc), "plan")) from None


def direct_evs(encap: str, ports: list[int], per_port: int = 1, src_id: int = 1,
               dst_id: int = 2) -> list[tuple[bytes | int, int]]:
    """EVs for hosts linked port-to-port without switches (the EV only varies the headers).

    SRv6: carrier ``fc00:0000 | src | 0x0100+variant | dst | port`` (never routed); STEV: sport
    ``0xC000+index`` and flow label ``variant << 8 | port``; UDP: sport ``0xC000+index``.
    """
    if encap not in ENCAPS:
        raise ValueError(f"encap must be one of {ENCAPS}, not {encap!r}")
    if not 1 <= per_port <= 256:
        raise ValueError(f"EVs per port must be 1..256, got {per_port}")
    out: list[tuple[bytes | int, int]] = []
    for v in range(per_port):
        for p in ports:
            idx = len(out)
            if encap == "srv6":
                c = (DIRECT_BLOCK << 96) | ((src_id & 0xFFFF) << 80) | ((0x100 + v) << 64) \
                    | ((dst_id & 0xFFFF) << 48) | ((p & 0xFFFF) << 32)
                out.append((c.to_bytes(16, "big"), p))
            elif encap == "stev":
                out.append((((UDP_SPORT_BASE + idx) << 16) | (v << 8) | (p & 0xFF), p))
            else:
                out.append((UDP_SPORT_BASE + idx, p))
    return out


def load_profile(ctx: Any, prof: PlanProfile, ev_profile_id: int, fmt_profile_id: int | None = None, *,
                 ports: list[int] | None = None) -> Any:
    """Configure ``prof`` in ``ctx`` (an ``mrc.ctl.MrcCtlContext``) and bring it ONLINE.

    EV format profile ``fmt_profile_id`` (default: ``ev_profile_id``) gets the plan's mode and field
    widths; EV profile ``ev_profile_id`` becomes an EXP profile of the plan's EVs (only those on
    ``ports``, default every port of the device) with one EV field per format field, each taking
    all of its format field's bits (``mask`` = all ones, ``init_val`` 0), so ctl's expansion of an EV
    is the value the plan wrote.  Event mask: GOOD and ASSUMED_BAD.  Returns the live profile.
    Raises PlanError naming the profile when ctl refuses it.
    """
    from mrc.ctl import Ev as CtlEv
    from mrc.ctl import EvFmtMode, MrcCtlError
    from mrc.ctl.loading import online_exp_ev_profile, online_fmt_profile

    fid = ev_profile_id if fmt_profile_id is None else fmt_profile_id
    allowed = set(ctx.query_device().ports()) if ports is None else set(ports)
    evs = [CtlEv(val, port) for val, port in prof.evs if port in allowed]
    if not evs:
        raise PlanError(f"EV plan {prof.encap} profile: no EV on port(s) {sorted(allowed)}")
    mode = {"srv6": EvFmtMode.SRV6, "stev": EvFmtMode.STEV, "udp": EvFmtMode.UDP}[prof.encap]
    try:
        online_fmt_profile(ctx, fid, mode, prof.field_widths)
        online_exp_ev_profile(ctx, ev_profile_id, fid, prof.field_widths, evs, prof.ev_min_active)
    except MrcCtlError as exc:
        raise PlanError(f"EV plan {prof.encap} profile -> EV profile {ev_profile_id}: {exc}") from None
    return ctx.ev_profile(ev_profile_id)
