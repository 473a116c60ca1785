"""The one place that maps plan intents to ``p4src/mrc_switch.p4`` table entries (P4Runtime entities).

Table, action, key and parameter names are the program's P4Info names (``docs/dataplane.md``);
ids are resolved from the P4Info the switch runs, so nothing here depends on p4c's hash ids.
Besides the plan's intents the controller owns one fixed thing: the postcard clone session
(``POSTCARD_SESSION`` → CPU port).  Wiring probes need no entry: the program punts every frame of
``ETHERTYPE_LINK_PROBE`` itself (PacketIn reason ``REASON_LINK_PROBE``).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from . import p4contract as P4
from .plan import (
    STEV_ECMP,
    STEV_EV_DIRECT,
    STEV_MODES,
    DropUnknownUsid,
    EcmpGroup,
    EvDirectMap,
    HostRoute,
    HostRouteGroup,
    NextHop,
    OwnUsid,
    PortSetting,
    RouteUsid,
    SwitchPlan,
    Telemetry,
)

# ---- p4src names: short aliases of the generated contract (controller/p4contract.py, `make contract`) ----
T_PORT_RX_ADMIN = P4.T_INGRESS_PORT_ADMIN_PORT_RX_ADMIN
T_PORT_TX_ADMIN = P4.T_EGRESS_PORT_ADMIN_PORT_TX_ADMIN
T_USID_UN = P4.T_INGRESS_SRV6_USID_UN
T_ROUTE_V6 = P4.T_INGRESS_ROUTING_ROUTE_V6
T_ROUTE_V4 = P4.T_INGRESS_ROUTING_ROUTE_V4
T_ECMP_SELECT = P4.T_INGRESS_ROUTING_ECMP_SELECT
T_EV_DIRECT = P4.T_INGRESS_ROUTING_EV_DIRECT
T_QUEUE_THRESHOLDS = P4.T_INGRESS_CONGESTION_QUEUE_THRESHOLDS
T_ECN_THRESHOLD = P4.T_EGRESS_CONGESTION_ECN_THRESHOLD
T_SWITCH_INFO = P4.T_EGRESS_TELEMETRY_SWITCH_INFO
T_TELEMETRY_WATCH = P4.T_INGRESS_TELEMETRY_TELEMETRY_WATCH
AP_ECMP = P4.AP_INGRESS_ROUTING_ECMP_SELECTOR

A_RX_DOWN = P4.A_INGRESS_PORT_ADMIN_SET_PORT_DOWN
A_TX_DOWN = P4.A_EGRESS_PORT_ADMIN_SET_PORT_DOWN
A_UN = P4.A_INGRESS_SRV6_UN
A_NEXT_HOP = P4.A_INGRESS_ROUTING_SET_NEXT_HOP
A_ECMP_GROUP = P4.A_INGRESS_ROUTING_SET_ECMP_GROUP
A_EV_DIRECT_GROUP = P4.A_INGRESS_ROUTING_SET_EV_DIRECT_GROUP
A_DROP_USID_UNKNOWN = P4.A_INGRESS_ROUTING_DROP_USID_UNKNOWN
A_DROP_NO_ROUTE = P4.A_INGRESS_ROUTING_DROP_NO_ROUTE
A_QUEUE_THRESHOLDS = P4.A_INGRESS_CONGESTION_SET_QUEUE_THRESHOLDS
A_ECN_THRESHOLD = P4.A_EGRESS_CONGESTION_SET_ECN_THRESHOLD
A_SWITCH_ID = P4.A_EGRESS_TELEMETRY_SET_SWITCH_ID
A_WATCH_POSTCARD = P4.A_INGRESS_TELEMETRY_WATCH_POSTCARD

C_PORT_RX = P4.C_INGRESS_STATS_PORT_RX_COUNTER
C_PORT_TX = P4.C_EGRESS_STATS_PORT_TX_COUNTER
C_DROP_REASONS = P4.C_DROP_REASONS  # top level; a program that splits it per control has *.drop_reasons
C_CONGESTION_EVENTS = P4.C_CONGESTION_EVENTS
R_EGRESS_QDEPTH = P4.R_EGRESS_QDEPTH  # data-queue depth estimate per port (docs/dataplane.md)

PACKET_IN = P4.PACKET_IN
PACKET_OUT = P4.PACKET_OUT
CPU_PORT = P4.CPU_PORT
POSTCARD_SESSION = P4.POSTCARD_SESSION_ID
QDEPTH_MAX = P4.QDEPTH_ESTIMATE_MAX  # qdepth_t is 19 bits: "never" for a threshold

DROP_REASONS = P4.DROP_REASONS
PACKET_IN_REASONS = P4.PACKET_IN_REASONS
REASON_FORWARDED, REASON_PROBE = P4.PACKET_IN_REASON_FORWARDED, P4.PACKET_IN_REASON_PROBE
REASON_POSTCARD, REASON_LINK_PROBE = P4.PACKET_IN_REASON_POSTCARD, P4.PACKET_IN_REASON_LINK_PROBE

# Link probes (the wiring check): IEEE 802 Local Experimental Ethertype 1; every switch punts them to
# the CPU on arrival, before port admin and forwarding.
ETHERTYPE_LINK_PROBE = P4.ETHERTYPE_LINK_PROBE


class MappingError(ValueError):
    """The P4Info lacks a name the mapping needs, or an intent cannot be expressed."""


def canonical(value: int) -> bytes:
    """Shortest P4Runtime bytestring of ``value`` (what servers return on reads)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def canonical_bytes(data: bytes) -> bytes:
    """Re-encode a bytestring in its shortest form (leading zero bytes stripped, at least one)."""
    return canonical(int.from_bytes(data, "big")) if data else data


def mac_int(mac: str) -> int:
    """``02:00:21:01:00:03`` → int."""
    return int(mac.replace(":", ""), 16)


@dataclass
class P4Names:
    """Name → id lookups (and field widths) for one P4Info."""

    p4info: p4info_pb2.P4Info
    tables: dict[str, p4info_pb2.Table] = field(default_factory=dict)
    actions: dict[str, p4info_pb2.Action] = field(default_factory=dict)
    counters: dict[str, p4info_pb2.Counter] = field(default_factory=dict)
    registers: dict[str, p4info_pb2.Register] = field(default_factory=dict)
    profiles: dict[str, p4info_pb2.ActionProfile] = field(default_factory=dict)
    table_by_id: dict[int, p4info_pb2.Table] = field(default_factory=dict)
    action_by_id: dict[int, p4info_pb2.Action] = field(default_factory=dict)
    meta: dict[str, p4info_pb2.ControllerPacketMetadata] = field(default_factory=dict)

    @classmethod
    def from_p4info(cls, p4info: p4info_pb2.P4Info) -> P4Names:
        """Index a P4Info by fully qualified name and by alias."""
        n = cls(p4info)
        for coll, dst in ((p4info.tables, n.tables), (p4info.actions, n.actions), (p4info.counters, n.counters),
                          (p4info.registers, n.registers), (p4info.action_profiles, n.profiles),
                          (p4info.controller_packet_metadata, n.meta)):
            for obj in coll:
                dst[obj.preamble.name] = obj
                dst.setdefault(obj.preamble.alias, obj)
        n.table_by_id = {t.preamble.id: t for t in p4info.tables}
        n.action_by_id = {a.preamble.id: a for a in p4info.actions}
        return n

    @staticmethod
    def _get(d: dict, name: str, what: str):
        try:
            return d[name]
        except KeyError:
            raise MappingError(f"the P4Info has no {what} {name!r} (is the switch running p4src/mrc_switch.p4?)") \
                from None

    def table(self, name: str) -> p4info_pb2.Table:
        return self._get(self.tables, name, "table")

    def action(self, name: str) -> p4info_pb2.Action:
        return self._get(self.actions, name, "action")

    def profile(self, name: str) -> p4info_pb2.ActionProfile:
        return self._get(self.profiles, name, "action profile")

    def counters_named(self, name: str) -> list[p4info_pb2.Counter]:
        """Counters called ``name`` or ending in ``.name`` (one top-level or one per control)."""
        return [c for c in self.p4info.counters
                if c.preamble.name == name or c.preamble.name.endswith("." + name)]

    def registers_named(self, name: str) -> list[p4info_pb2.Register]:
        """Registers called ``name`` or ending in ``.name``."""
        return [r for r in self.p4info.registers
                if r.preamble.name == name or r.preamble.name.endswith("." + name)]

    def metadata_ids(self, header: str) -> dict[str, tuple[int, int]]:
        """Controller header field name → (id, bitwidth)."""
        m = self._get(self.meta, header, "controller header")
        return {f.name: (f.id, f.bitwidth) for f in m.metadata}

    # ---- entity builders ----------------------------------------------------------------------
    def _match(self, t: p4info_pb2.Table, key: dict[str, tuple]) -> list[p4runtime_pb2.FieldMatch]:
        out = []
        by_name = {m.name: m for m in t.match_fields}
        for name, spec in key.items():
            mf = by_name.get(name)
            if mf is None:
                raise MappingError(f"table {t.preamble.name!r} has no key {name!r}")
            fm = p4runtime_pb2.FieldMatch(field_id=mf.id)
            kind = mf.match_type
            if kind == p4info_pb2.MatchField.EXACT:
                fm.exact.value = canonical(spec[0])
            elif kind == p4info_pb2.MatchField.LPM:
                value, plen = spec
                if plen == 0:
                    continue  # don't-care: omitted
                value &= ((1 << mf.bitwidth) - 1) ^ ((1 << (mf.bitwidth - plen)) - 1)
                fm.lpm.value, fm.lpm.prefix_len = canonical(value), plen
            elif kind == p4info_pb2.MatchField.TERNARY:
                value, mask = spec
                if mask == 0:
                    continue
                fm.ternary.value, fm.ternary.mask = canonical(value & mask), canonical(mask)
            else:
                raise MappingError(f"table {t.preamble.name!r} key {name!r}: unsupported match kind {kind}")
            out.append(fm)
        return out

    def action_msg(self, name: str, **params: int) -> p4runtime_pb2.Action:
        a = self.action(name)
        msg = p4runtime_pb2.Action(action_id=a.preamble.id)
        known = {p.name: p for p in a.params}
        if set(params) != set(known):
            raise MappingError(f"action {name!r} takes {sorted(known)}, got {sorted(params)}")
        for p in a.params:  # P4Info order
            msg.params.add(param_id=p.id, value=canonical(params[p.name]))
        return msg

    def table_entry(self, table: str, key: dict[str, tuple], action: str | None = None, *,
                    params: dict[str, int] | None = None, group_id: int | None = None,
                    priority: int = 0) -> p4runtime_pb2.Entity:
        t = self.table(table)
        ent = p4runtime_pb2.Entity()
        te = ent.table_entry
        te.table_id = t.preamble.id
        te.match.extend(self._match(t, key))
        if priority:
            te.priority = priority
        if group_id is not None:
            te.action.action_profile_group_id = group_id
        elif action is not None:
            te.action.action.CopyFrom(self.action_msg(action, **(params or {})))
        return ent

    def default_entry(self, table: str, action: str, **params: int) -> p4runtime_pb2.Entity:
        ent = self.table_entry(table, {}, action, params=params)
        ent.table_entry.is_default_action = True
        return ent

    def member(self, profile: str, member_id: int, action: str, **params: int) -> p4runtime_pb2.Entity:
        ent = p4runtime_pb2.Entity()
        m = ent.action_profile_member
        m.action_profile_id = self.profile(profile).preamble.id
        m.member_id = member_id
        m.action.CopyFrom(self.action_msg(action, **params))
        return ent

    def group(self, profile: str, group_id: int, member_ids: list[int]) -> p4runtime_pb2.Entity:
        ap = self.profile(profile)
        if ap.max_group_size and len(member_ids) > ap.max_group_size:
            # the switch would refuse the group (RESOURCE_EXHAUSTED) on every converge attempt
            raise MappingError(f"group {group_id} has {len(member_ids)} members, but {ap.preamble.name} holds at "
                               f"most {ap.max_group_size} (@max_group_size)")
        ent = p4runtime_pb2.Entity()
        g = ent.action_profile_group
        g.action_profile_id = ap.preamble.id
        g.group_id = group_id
        # the P4Info's @max_group_size (64 for ecmp_selector: p4c writes it, as in the conformance P4Info);
        # without one, 0 ("not known at creation": the target's own maximum, p4runtime.proto).  Until
        # 2026-12-07 that was the member count, which a later MODIFY with another count could not change:
        # PI and softswitch refuse it (INVALID_ARGUMENT) on every converge after a plane gained a spine
        g.max_size = ap.max_group_size
        for mid in member_ids:
            g.members.add(member_id=mid, weight=1)
        return ent


def clone_session(session_id: int, port: int) -> p4runtime_pb2.Entity:
    """A clone session replicating to one port (instance 0 canonical: omitted)."""
    ent = p4runtime_pb2.Entity()
    cs = ent.packet_replication_engine_entry.clone_session_entry
    cs.session_id = session_id
    cs.replicas.add(egress_port=port)
    return ent


@dataclass
class DesiredState:
    """What one switch must hold, grouped in write (dependency) order."""

    pre: list[p4runtime_pb2.Entity] = field(default_factory=list)
    members: list[p4runtime_pb2.Entity] = field(default_factory=list)
    groups: list[p4runtime_pb2.Entity] = field(default_factory=list)
    entries: list[p4runtime_pb2.Entity] = field(default_factory=list)
    defaults: list[p4runtime_pb2.Entity] = field(default_factory=list)

    def all(self) -> list[p4runtime_pb2.Entity]:
        return self.pre + self.members + self.groups + self.entries + self.defaults

    def __len__(self) -> int:
        return len(self.all())


def _nh_params(nh: NextHop) -> dict[str, int]:
    return {"port": nh.port, "dst_mac": mac_int(nh.neighbour_mac), "src_mac": mac_int(nh.own_mac)}


def _prefix(text: str) -> tuple[int, int]:
    net = ipaddress.IPv6Network(text)
    return int(net.network_address), net.prefixlen


def member_id(group_id: int, index: int) -> int:
    """Action-profile member id of member ``index`` of ``group_id`` (stable, readable)."""
    return group_id * 1000 + index + 1


def desired_state(names: P4Names, sp: SwitchPlan, *, stev_mode: str = STEV_ECMP,
                  postcards: bool = True,
                  watch_qps: tuple[int, ...] = ()) -> DesiredState:
    """Every entity ``sp`` needs on a switch running ``p4src/mrc_switch.p4`` (deterministic).

    ``watch_qps``: RoCE destination QPs whose forwarded packets send a postcard from every hop."""
    if stev_mode not in STEV_MODES:
        raise MappingError(f"stev_mode must be {STEV_ECMP!r} or {STEV_EV_DIRECT!r}, not {stev_mode!r}")
    d = DesiredState()
    groups = {g.group_id: g for g in sp.of(EcmpGroup)}
    for ps in sp.of(PortSetting):
        if not ps.admin_up:
            d.entries.append(names.table_entry(T_PORT_RX_ADMIN, {"port": (ps.port,)}, A_RX_DOWN))
            d.entries.append(names.table_entry(T_PORT_TX_ADMIN, {"port": (ps.port,)}, A_TX_DOWN))
        trim = ps.trim_threshold if ps.trim_enabled else QDEPTH_MAX
        d.entries.append(names.table_entry(T_QUEUE_THRESHOLDS, {"port": (ps.port,)}, A_QUEUE_THRESHOLDS,
                                           params={"trim_threshold": min(trim, QDEPTH_MAX),
                                                   "drop_threshold": min(ps.drop_threshold, QDEPTH_MAX)}))
        d.entries.append(names.table_entry(T_ECN_THRESHOLD, {"port": (ps.port,)}, A_ECN_THRESHOLD,
                                           params={"threshold": min(ps.ecn_threshold, QDEPTH_MAX)}))
    for ou in sp.of(OwnUsid):
        d.entries.append(names.table_entry(T_USID_UN, {"block_usid": (ou.block_usid,)}, A_UN))
    for du in sp.of(DropUnknownUsid):
        d.entries.append(names.table_entry(T_ROUTE_V6, {"dst_addr": _prefix(du.prefix)}, A_DROP_USID_UNKNOWN))
    for ru in sp.of(RouteUsid):
        d.entries.append(names.table_entry(T_ROUTE_V6, {"dst_addr": _prefix(ru.prefix)}, A_NEXT_HOP,
                                           params=_nh_params(ru.next_hop)))
    for g in groups.values():
        ids = [member_id(g.group_id, i) for i in range(len(g.members))]
        for mid, nh in zip(ids, g.members, strict=True):
            d.members.append(names.member(AP_ECMP, mid, A_NEXT_HOP, **_nh_params(nh)))
        try:
            d.groups.append(names.group(AP_ECMP, g.group_id, ids))
        except MappingError as e:  # (a leaf's ECMP group has one member per spine of its plane)
            raise MappingError(f"switch {sp.name}: ECMP {e}") from None
        d.entries.append(names.table_entry(T_ECMP_SELECT, {"group_id": (g.group_id,)}, group_id=g.group_id))
    for ev in sp.of(EvDirectMap):
        g = groups.get(ev.group_id)
        if g is None or len(g.members) != len(ev.members):
            raise MappingError(f"switch {sp.name}: EV-direct group {ev.group_id} has no matching ECMP group")
        for value, mask, idx in ev.ternary_entries():
            d.entries.append(names.table_entry(T_EV_DIRECT, {"group_id": (ev.group_id,), "ev": (value, mask)},
                                               A_NEXT_HOP, params=_nh_params(g.members[idx]), priority=1))
    for hr in sp.of(HostRoute):
        d.entries.append(names.table_entry(T_ROUTE_V6, {"dst_addr": _prefix(hr.prefix)}, A_NEXT_HOP,
                                           params=_nh_params(hr.next_hop)))
    for hg in sp.of(HostRouteGroup):
        act = A_ECMP_GROUP if stev_mode == STEV_ECMP else A_EV_DIRECT_GROUP
        d.entries.append(names.table_entry(T_ROUTE_V6, {"dst_addr": _prefix(hg.prefix)}, act,
                                           params={"group_id": hg.group_id}))
    # The routing tables' default (a miss) is the program's drop_no_route, but it is not const: a
    # client writing behind the controller could make every miss forward somewhere.  Planning it
    # makes reconcile read it and put it back, as it does every other entity it owns.
    for t in (T_ROUTE_V6, T_ROUTE_V4):
        if t in names.tables:
            d.defaults.append(names.default_entry(t, A_DROP_NO_ROUTE))
    for tm in sp.of(Telemetry):
        d.defaults.append(names.default_entry(T_SWITCH_INFO, A_SWITCH_ID,
                                              switch_id=tm.switch_id if tm.enabled else 0))
    for qp in sorted(set(watch_qps)):
        d.entries.append(names.table_entry(T_TELEMETRY_WATCH, {"dest_qp": (qp, 0xFFFFFF)}, A_WATCH_POSTCARD,
                                           priority=1))
    if postcards:
        d.pre.append(clone_session(POSTCARD_SESSION, sp.cpu_port))
    return d



def port_admin_entities(names: P4Names, port: int) -> list[p4runtime_pb2.Entity]:
    """The two entries that hold ``port`` administratively down (delete them to bring it up)."""
    return [names.table_entry(T_PORT_RX_ADMIN, {"port": (port,)}, A_RX_DOWN),
            names.table_entry(T_PORT_TX_ADMIN, {"port": (port,)}, A_TX_DOWN)]
