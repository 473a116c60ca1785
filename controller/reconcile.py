"""Read a switch, diff it against the desired entities, write only the difference.

Entities are compared in canonical form (shortest byte strings, LPM values masked, don't-care
fields omitted), so a switch that answers reads in canonical form and a plan written in any form
agree.  Write order follows dependencies: clone sessions, members, groups, table entries (extra
entries deleted first), default actions; extra groups and then extra members are deleted last.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import grpc
from p4.v1 import p4runtime_pb2

from .mapping import DesiredState, canonical_bytes
from .p4rt import describe_entity, no_answer, replica_port
from .session import SessionError, SwitchSession

INSERT, MODIFY, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE


@dataclass
class ReconcileResult:
    """What one reconcile pass did on one switch."""

    switch: str
    inserted: int = 0
    modified: int = 0
    deleted: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def written(self) -> int:
        return self.inserted + self.modified + self.deleted


def _match_key(fm: p4runtime_pb2.FieldMatch) -> tuple:
    kind = fm.WhichOneof("field_match_type")
    if kind == "exact":
        return fm.field_id, kind, canonical_bytes(fm.exact.value)
    if kind == "lpm":
        return fm.field_id, kind, canonical_bytes(fm.lpm.value), fm.lpm.prefix_len
    if kind == "ternary":
        return fm.field_id, kind, canonical_bytes(fm.ternary.value), canonical_bytes(fm.ternary.mask)
    if kind == "range":
        return fm.field_id, kind, canonical_bytes(fm.range.low), canonical_bytes(fm.range.high)
    if kind == "optional":
        return fm.field_id, kind, canonical_bytes(fm.optional.value)
    return fm.field_id, kind, fm.SerializeToString(deterministic=True)


def _action_value(a: p4runtime_pb2.Action) -> tuple:
    return a.action_id, tuple(sorted((p.param_id, canonical_bytes(p.value)) for p in a.params))


def _table_action(ta: p4runtime_pb2.TableAction) -> tuple:
    kind = ta.WhichOneof("type")
    if kind == "action":
        return kind, _action_value(ta.action)
    if kind == "action_profile_group_id":
        return kind, ta.action_profile_group_id
    if kind == "action_profile_member_id":
        return kind, ta.action_profile_member_id
    return kind, ta.SerializeToString(deterministic=True)


def entity_key(e: p4runtime_pb2.Entity) -> tuple:
    """Identity of an entity (what a DELETE names)."""
    kind = e.WhichOneof("entity")
    if kind == "table_entry":
        t = e.table_entry
        return ("table_entry", t.table_id, tuple(sorted(_match_key(m) for m in t.match)), t.priority,
                t.is_default_action)
    if kind == "action_profile_member":
        return kind, e.action_profile_member.action_profile_id, e.action_profile_member.member_id
    if kind == "action_profile_group":
        return kind, e.action_profile_group.action_profile_id, e.action_profile_group.group_id
    if kind == "packet_replication_engine_entry":
        pre = e.packet_replication_engine_entry
        if pre.HasField("clone_session_entry"):
            return "clone_session", pre.clone_session_entry.session_id
        return "multicast_group", pre.multicast_group_entry.multicast_group_id
    raise ValueError(f"reconcile does not manage {kind}")


def entity_value(e: p4runtime_pb2.Entity) -> tuple:
    """What an entity holds beyond its identity (a difference means MODIFY)."""
    kind = e.WhichOneof("entity")
    if kind == "table_entry":
        return _table_action(e.table_entry.action)
    if kind == "action_profile_member":
        return _action_value(e.action_profile_member.action)
    if kind == "action_profile_group":
        return tuple(sorted((m.member_id, m.weight or 1) for m in e.action_profile_group.members))
    pre = e.packet_replication_engine_entry
    if pre.HasField("clone_session_entry"):
        cs = pre.clone_session_entry
        return (tuple(sorted((replica_port(r), r.instance) for r in cs.replicas)), cs.class_of_service,
                cs.packet_length_bytes)
    mg = pre.multicast_group_entry
    return tuple(sorted((replica_port(r), r.instance) for r in mg.replicas))


def _key_only(e: p4runtime_pb2.Entity) -> p4runtime_pb2.Entity:
    """The entity stripped to what a DELETE needs."""
    out = p4runtime_pb2.Entity()
    out.CopyFrom(e)
    kind = out.WhichOneof("entity")
    if kind == "table_entry":
        te = out.table_entry
        for f in ("action", "counter_data", "meter_config", "meter_counter_data", "time_since_last_hit"):
            te.ClearField(f)
    elif kind == "action_profile_member":
        out.action_profile_member.ClearField("action")
    elif kind == "action_profile_group":
        out.action_profile_group.ClearField("members")
    return out


@dataclass
class SwitchContents:
    """What a switch holds, keyed by ``entity_key``."""

    pre: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    members: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    groups: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    entries: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    defaults: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(d) for d in (self.pre, self.members, self.groups, self.entries, self.defaults))


def _index(ents: list[p4runtime_pb2.Entity]) -> dict[tuple, p4runtime_pb2.Entity]:
    return {entity_key(e): e for e in ents}


def read_contents(s: SwitchSession, desired: DesiredState) -> SwitchContents:
    """Read every table entry, member and group (wildcards), plus the desired clone sessions and defaults.
    Entries the control plane cannot change are left out: a default entry (compared one by one, below)
    and a ``const entries`` entry (``is_const``, P4Runtime "Constant Tables"), which a reconcile
    would otherwise try to delete -- refused, so the switch would never converge."""
    c = SwitchContents()
    ent = p4runtime_pb2.Entity()
    ent.table_entry.SetInParent()
    const_tables = {t.preamble.id for t in s.names.p4info.tables if t.is_const_table} if s.names else set()
    c.entries = {k: e for k, e in _index(s.read([ent])).items()
                 if not e.table_entry.is_default_action and not e.table_entry.is_const
                 and e.table_entry.table_id not in const_tables}  # PI may not mark them is_const
    m = p4runtime_pb2.Entity()
    m.action_profile_member.SetInParent()
    c.members = _index(s.read([m]))
    g = p4runtime_pb2.Entity()
    g.action_profile_group.SetInParent()
    c.groups = _index(s.read([g]))
    for want in desired.pre:
        probe = p4runtime_pb2.Entity()
        probe.CopyFrom(want)
        cs = probe.packet_replication_engine_entry.clone_session_entry
        cs.ClearField("replicas")
        try:
            c.pre.update(_index(s.read([probe])))
        except SessionError as e:
            if e.code != grpc.StatusCode.NOT_FOUND:  # no such clone session yet: nothing to compare
                raise
    for want in desired.defaults:
        probe = p4runtime_pb2.Entity()
        probe.table_entry.table_id = want.table_entry.table_id
        probe.table_entry.is_default_action = True
        c.defaults.update(_index(s.read([probe])))
    return c


def _update(kind: int, e: p4runtime_pb2.Entity) -> p4runtime_pb2.Update:
    u = p4runtime_pb2.Update(type=kind)
    u.entity.CopyFrom(_key_only(e) if kind == DELETE else e)
    return u


def plan_updates(desired: DesiredState, have: SwitchContents) -> list[tuple[str, list[p4runtime_pb2.Update]]]:
    """The ordered write phases turning ``have`` into ``desired`` (empty phases omitted)."""
    def upserts(want: list[p4runtime_pb2.Entity], cur: dict[tuple, p4runtime_pb2.Entity],
                allow_insert: bool = True) -> list[p4runtime_pb2.Update]:
        out = []
        for e in want:
            k = entity_key(e)
            old = cur.get(k)
            if old is None:
                out.append(_update(INSERT if allow_insert else MODIFY, e))
            elif entity_value(old) != entity_value(e):
                out.append(_update(MODIFY, e))
        return out

    def extras(want: list[p4runtime_pb2.Entity], cur: dict[tuple, p4runtime_pb2.Entity]) -> list:
        keys = {entity_key(e) for e in want}
        return [_update(DELETE, e) for k, e in sorted(cur.items(), key=lambda kv: repr(kv[0])) if k not in keys]

    phases = [
        ("clone_sessions", upserts(desired.pre, have.pre)),
        ("members", upserts(desired.members, have.members)),
        ("groups", upserts(desired.groups, have.groups)),
        ("delete_entries", extras(desired.entries, have.entries)),
        ("entries", upserts(desired.entries, have.entries)),
        ("defaults", upserts(desired.defaults, have.defaults, allow_insert=False)),
        ("delete_groups", extras(desired.groups, have.groups)),
        ("delete_members", extras(desired.members, have.members)),
    ]
    return [(name, ups) for name, ups in phases if ups]


DRIFT_LOG_MAX = 20  # per pass: the first updates of a repair are logged one by one, then a count


def reconcile(s: SwitchSession, desired: DesiredState, log: logging.Logger | None = None,
              drift_level: int = logging.WARNING, planned: frozenset[tuple] = frozenset()) -> ReconcileResult:
    """Make the switch hold exactly ``desired``; a converged switch gets zero writes.

    When the switch held entities already (a repair, not the first fill of an empty switch), every
    update is logged (``drift``: switch, op, entity, and what the switch held for a MODIFY), at most
    ``DRIFT_LOG_MAX`` a pass, so an operator sees what was changed behind the controller's back.
    ``drift_level``: the level of those lines (the daemon lowers it for a pass that repeats a refused
    one: what it would log is what the switch refused last time, already reported).  ``planned``: the
    ``entity_key`` of every entity the caller changed in the plan on purpose (an operator's port
    admin change); an update of one is logged as ``planned change`` at INFO, not as drift."""
    log = log or logging.getLogger("controller.reconcile")
    t0 = time.monotonic()
    have = read_contents(s, desired)
    res = ReconcileResult(s.name)
    phases = plan_updates(desired, have)
    if phases and (have.entries or have.members or have.groups or have.pre):
        current = {**have.pre, **have.members, **have.groups, **have.entries, **have.defaults}
        ups_all = [u for _, ups in phases for u in ups]
        drifted = [u for u in ups_all if entity_key(u.entity) not in planned]
        for u in ups_all:
            if entity_key(u.entity) in planned:  # a DELETE names its key: describe what is removed
                shown = current.get(entity_key(u.entity)) if u.type == DELETE else None
                log.info("planned change", extra={"fields": {
                    "switch": s.name, "op": p4runtime_pb2.Update.Type.Name(u.type),
                    "entity": describe_entity(shown if shown is not None else u.entity, s.names)}})
        for u in drifted[:DRIFT_LOG_MAX]:
            op = p4runtime_pb2.Update.Type.Name(u.type)
            fields = {"switch": s.name, "op": op}
            old = current.get(entity_key(u.entity))
            if u.type == DELETE and old is not None:
                fields["entity"] = describe_entity(old, s.names)  # what is removed, with its action
            else:
                fields["entity"] = describe_entity(u.entity, s.names)
                if u.type == MODIFY and old is not None:
                    fields["was"] = describe_entity(old, s.names)
            log.log(drift_level, "drift", extra={"fields": fields})
        if len(drifted) > DRIFT_LOG_MAX:
            log.log(drift_level, "drift", extra={"fields": {"switch": s.name,
                                                            "more_updates": len(drifted) - DRIFT_LOG_MAX}})
    for i, (phase, ups) in enumerate(phases):
        try:
            s.write(ups)
        except SessionError as e:
            # the tables' defaults depend on no other phase (direct actions, no group or member): a
            # failed phase (a full table, say) must not also leave the switch without them -- its
            # switch id, its routing misses -- so they are written before the error goes up; not to a
            # switch that did not answer (a hung one would hold that write for the whole RPC timeout too)
            later = dict(phases[i + 1:]).get("defaults")
            if later and not no_answer(e.code):
                try:
                    s.write(later)
                except SessionError as e2:
                    log.warning("defaults not written", extra={"fields": {"switch": s.name, "error": str(e2)}})
            raise
        res.by_kind[phase] = len(ups)
        for u in ups:
            if u.type == INSERT:
                res.inserted += 1
            elif u.type == MODIFY:
                res.modified += 1
            else:
                res.deleted += 1
    res.unchanged = len(desired) - res.inserted - res.modified
    res.seconds = time.monotonic() - t0
    log.info("reconciled", extra={"fields": {
        "switch": s.name, "written": res.written, "inserted": res.inserted, "modified": res.modified,
        "deleted": res.deleted, "unchanged": res.unchanged, "read": len(have), "seconds": round(res.seconds, 3),
        **({"phases": res.by_kind} if res.by_kind else {})}})
    return res
