"""Match-action tables: P4Runtime write/read semantics on top of the lookup structures.

``TableState.lookup(key, sel_hash=0) -> (action_id, args, entry_or_None)`` is the data plane's
call: ``key`` holds the match-field values in P4Info order (selector fields are not in P4Info and
only feed ``sel_hash``); ``entry`` is None when the default action ran (a miss).
"""
from __future__ import annotations

import heapq
import time
from typing import NamedTuple

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from . import wire
from .action_profiles import ActionProfileState
from .actions import ActionInfo, ActionSet
from .counters import DirectCounterState, fill_counter_data
from .entry import Entry
from .errors import P4InfoError, denied, exhausted, exists, invalid, not_found
from .handles import Handles
from .lookup import ExactIndex, TupleSpaceIndex, needs_priority
from .match import EXACT, LPM, field_infos, parse_match, spec_to_proto
from .meters import DirectMeterState, parse_config

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE


class InlineIndex(NamedTuple):
    kind: str  # "exact" or "lpm"
    get: object  # exact: the dict's get, keyed by the field's value
    index: object  # lpm: the TupleSpaceIndex (read its ``walk`` per packet: writes replace it)


_HANDLE_BITS = 32  # a table holds fewer entries than this: ranks of one priority never overlap another's


class TableState:
    """One table: entries, default entry, direct resources, and its ``lookup`` function."""

    def __init__(self, info: p4info_pb2.Table, actions: dict[int, ActionInfo],
                 profile: ActionProfileState | None = None) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.what = f"table '{self.name}'"
        self.fields = field_infos(info)
        self._field_by_id = {f.id: i for i, f in enumerate(self.fields)}
        self.size = int(info.size)
        self.is_const = info.is_const_table
        self.const_default_action_id = info.const_default_action_id
        self.idle_timeout = info.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL
        self.requires_priority = needs_priority(self.fields)
        self.action_set = ActionSet(self.what, info.action_refs, actions)
        for r in info.action_refs:
            if r.id not in actions:
                raise P4InfoError(f"{self.what}: action id {r.id} is not in the P4Info")
        if info.implementation_id and profile is None:
            raise P4InfoError(f"{self.what}: implementation id {info.implementation_id} is not an "
                              "action profile of the P4Info")
        self.profile = profile
        self.direct_counter: DirectCounterState | None = None
        self.direct_meter: DirectMeterState | None = None
        self._entries: dict[tuple, Entry] = {}  # (spec, priority) -> entry, in insertion order
        # bmv2's entry handles (its HandleMgr: the lowest number not in use), which break ties
        # between entries of equal priority: the lowest handle wins (match_units.cpp walks the
        # entries by handle and takes only a strictly better priority)
        self._handles = Handles()
        # entries with an idle timeout (idle_timeout_ns > 0) and a heap of (due_ns, seq, entry):
        # the idle scan pops only what is due, never walks the table. An item is live while its
        # seq is its entry's ``idle_seq``; ``due_ns`` is a lower bound (hits only postpone).
        self._timed: set[Entry] = set()
        self._idle_heap: list[tuple[int, int, Entry]] = []
        self._idle_seq = 0
        self._lpm_field = next((i for i, f in enumerate(self.fields) if f.kind == LPM), None)
        if not self.fields:
            self._index = None
        elif all(f.kind == EXACT for f in self.fields):
            self._index = ExactIndex()
        else:
            self._index = TupleSpaceIndex(self.fields)
        # initial default action (P4Info ``initial_default_action``; NoAction when absent)
        ida = info.initial_default_action
        aid = ida.action_id or info.const_default_action_id
        if info.implementation_id:
            # a table implemented with an action profile or selector: p4c's bmv2 back end leaves the
            # program's default action out ("Target does not support default_action ... due to action
            # profiles"), so on bmv2 a miss runs no action; the P4Info keeps it, as p4c's does
            aid = 0
        if aid:
            if aid not in actions:
                raise P4InfoError(f"{self.what}: default action id {aid} is not in the P4Info")
            args = actions[aid].parse_args(
                [p4runtime_pb2.Action.Param(param_id=a.param_id, value=a.value) for a in ida.arguments],
                f"{self.what} initial default action")
        else:
            noaction = next((a for a in actions.values() if a.name == "NoAction"), None)
            aid, args = (noaction.id, ()) if noaction else (0, ())
        self.initial_default = (aid, args)
        self.default_entry = Entry((), 0, 0)
        self.default_hit: tuple = (aid, args, None)
        self._set_default_msg()
        self.lookup = self._make_lookup()
        # one-field exact or LPM tables: the same lookup taking the value itself (None otherwise)
        self.lookup1 = self._index.make_lookup1(self) if len(self.fields) == 1 else None

    def inline_index(self) -> InlineIndex | None:
        """What generated code needs to do ``lookup1``'s work itself (one-field exact or LPM
        tables; None for the others): the exact dict's ``get`` or the LPM index (its ``walk``)."""
        if self.lookup1 is None:
            return None
        if isinstance(self._index, ExactIndex):
            return InlineIndex("exact", self._index.d1.get, None)
        return InlineIndex("lpm", None, self._index)

    def occupancy(self) -> tuple[object, str] | None:
        """For generated code: an object and an attribute suffix (``""`` or ``".walk"``) whose
        value is true exactly while the table holds an entry (``lookup`` can only return the
        default otherwise); None for a table without key fields."""
        if isinstance(self._index, ExactIndex):
            return self._index.d, ""
        if isinstance(self._index, TupleSpaceIndex):
            return self._index, ".walk"
        return None

    def _make_lookup(self):
        if self._index is None:
            table = self

            def lookup(key, sel_hash=0):
                return table.default_hit

            return lookup
        return self._index.make_lookup(self)

    def lookup(self, key: tuple[int, ...], sel_hash: int = 0):
        """Data plane: -> (action_id, args, entry or None on a miss). Replaced in ``__init__``."""
        raise NotImplementedError

    @property
    def is_indirect(self) -> bool:
        return self.profile is not None

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[Entry]:
        return list(self._entries.values())

    # ---- writes -------------------------------------------------------------------------------
    def write(self, utype: int, te: p4runtime_pb2.TableEntry) -> None:
        """Apply one P4Runtime update of a TableEntry (raises P4RuntimeError)."""
        if te.is_const:
            raise invalid(f"{self.what}: is_const must be false in writes")
        if te.HasField("time_since_last_hit"):
            raise invalid(f"{self.what}: time_since_last_hit must be unset in writes")
        if te.is_default_action:
            self._write_default(utype, te)
            return
        spec, prio = self._key(te)
        if utype != DELETE:  # a DELETE considers the key only (spec "Table Entry")
            if te.idle_timeout_ns and not self.idle_timeout:
                raise invalid(f"{self.what} does not support idle timeout (idle_timeout_ns must be 0)")
            if te.idle_timeout_ns < 0:
                raise invalid(f"{self.what}: idle_timeout_ns must be >= 0")
        ident = (spec, prio)
        cur = self._entries.get(ident)
        if utype == INSERT:
            if self.is_const:
                raise denied(f"{self.what} is const: entries cannot be inserted")
            if not self.fields:
                raise invalid(f"{self.what} has no match key: only its default entry can be written")
            if cur is not None:
                raise exists(f"{self.what}: entry already exists")
            if self.size and len(self._entries) >= self.size:
                raise exhausted(f"{self.what} is full ({self.size} entries)")
            self._insert(spec, prio, te, is_const=False)
        elif utype == MODIFY:
            if cur is None:
                raise not_found(f"{self.what}: entry not found")
            self._modify(cur, te)
        elif utype == DELETE:
            if self.is_const:  # spec "Constant Tables": nothing but MODIFY of direct resources
                raise denied(f"{self.what} is const: entries cannot be deleted")
            if cur is None:
                raise not_found(f"{self.what}: entry not found")
            if cur.is_const:
                raise denied(f"{self.what}: const entries cannot be deleted")
            self._delete(cur)
        else:
            raise invalid(f"{self.what}: update type unspecified")

    def add_const_entry(self, te: p4runtime_pb2.TableEntry, is_const: bool = True) -> Entry:
        """Install an entry of the program (``const entries`` / ``entries``), bypassing const checks.

        For tables with ternary/range/optional keys give priorities like p4c: N for the first of
        N entries, decreasing by one.
        """
        spec, prio = self._key(te)
        if (spec, prio) in self._entries:
            raise exists(f"{self.what}: duplicate initial entry")
        if not te.HasField("action"):
            raise invalid(f"{self.what}: initial entry without action")
        return self._insert(spec, prio, te, is_const=is_const)

    def _key(self, te: p4runtime_pb2.TableEntry) -> tuple[tuple, int]:
        spec = parse_match(self.fields, self._field_by_id, te.match, self.what)
        prio = te.priority
        if self.requires_priority:
            if prio <= 0:
                raise invalid(f"{self.what}: entries need a priority > 0 (ternary/range/optional key)")
        elif prio != 0:
            raise invalid(f"{self.what}: priority must be 0 (no ternary/range/optional key)")
        return spec, prio

    def _rank(self, spec: tuple, prio: int, handle: int = 0) -> int:
        """Lookup rank, higher wins: the priority, then the lower handle (bmv2's tie-break), or an
        LPM field's prefix length."""
        if self.requires_priority:
            return (prio << _HANDLE_BITS) - handle
        if self._lpm_field is not None:
            s = spec[self._lpm_field]
            return 0 if s is None else s[1]
        return 0

    def _insert(self, spec: tuple, prio: int, te: p4runtime_pb2.TableEntry, is_const: bool) -> Entry:
        if not te.HasField("action"):
            raise invalid(f"{self.what}: INSERT needs an action")
        # everything that can refuse the entry first: a refused INSERT holds no handle, member,
        # group or one-shot selector state
        self._check_direct_resources(te)
        meter = parse_config(te.meter_config, self.what) if te.HasField("meter_config") else None
        handle = self._handles.take()
        e = Entry(spec, prio, self._rank(spec, prio, handle))
        e.handle = handle
        e.is_const = is_const
        try:
            self._set_action(e, te.action)
        except Exception:
            self._handles.give(handle)
            raise
        if te.HasField("counter_data"):
            e.counter = [te.counter_data.byte_count, te.counter_data.packet_count]
        e.meter = meter
        e.since_ns = e.notified_ns = time.monotonic_ns()  # idle timer starts at the insert
        self._store_msg(e, te)
        self._entries[(spec, prio)] = e
        assert self._index is not None
        self._index.add(e)
        self._idle_track(e)
        return e

    def _modify(self, e: Entry, te: p4runtime_pb2.TableEntry) -> None:
        self._check_direct_resources(te)
        if _key_only(te):
            # spec "Action Specification": a MODIFY with the action unset that modifies no direct
            # resource is a no-op; the one direct-resource rule that still applies is "Direct
            # Resources": meter_config unset in a MODIFY resets the direct meter.  The entry's
            # metadata, controller_metadata and idle timeout stay (they were cleared until 2026-12-07)
            e.meter = None
            return
        meter = parse_config(te.meter_config, self.what) if te.HasField("meter_config") else None  # before any change
        if e.is_const and (te.controller_metadata or te.metadata or te.idle_timeout_ns):
            # spec "Constant Tables": a const entry takes a MODIFY of its direct resources only
            raise denied(f"{self.what}: a const entry's controller_metadata, metadata and idle timeout cannot "
                         "be modified (only its direct counter and meter)")
        if te.HasField("action"):
            if e.is_const:
                raise denied(f"{self.what}: the action of a const entry cannot be modified")
            self._release(e)
            try:
                self._set_action(e, te.action)
            except Exception:
                self._reacquire(e)
                raise
        if te.HasField("counter_data"):
            e.counter = [te.counter_data.byte_count, te.counter_data.packet_count]
        e.meter = meter
        if not e.is_const:
            self._store_msg(e, te)
            self._idle_track(e)

    def _delete(self, e: Entry) -> None:
        assert self._index is not None
        self._index.remove(e)
        del self._entries[(e.spec, e.priority)]
        self._handles.give(e.handle)
        self._release(e)
        if e in self._timed:
            self._timed.discard(e)
            e.idle_seq = 0
            self._idle_compact()

    def _check_direct_resources(self, te: p4runtime_pb2.TableEntry) -> None:
        if te.HasField("counter_data") and self.direct_counter is None:
            raise invalid(f"{self.what} has no direct counter")
        if te.HasField("meter_config") and self.direct_meter is None:
            raise invalid(f"{self.what} has no direct meter")
        if te.HasField("meter_counter_data"):
            if self.direct_meter is None:  # p4runtime.proto TableEntry: a direct resource the table lacks
                raise invalid(f"{self.what} has no direct meter (meter_counter_data must be unset)")
            mcd = te.meter_counter_data
            if any(c.byte_count or c.packet_count for c in (mcd.green, mcd.yellow, mcd.red)):
                raise invalid(f"{self.what}: meter_counter_data can only be written as zeros")

    def _set_action(self, e: Entry, ta: p4runtime_pb2.TableAction) -> None:
        kind = ta.WhichOneof("type")
        what = self.what
        prof = self.profile
        if kind is None:
            raise invalid(f"{what}: table action is empty")
        if prof is None:
            if kind != "action":
                raise invalid(f"{what} is a direct table: it takes an action, not {kind}")
            aid, args = self.action_set.parse(ta.action, default=False, what=what)
            e.member = e.group = None
            e.oneshot = False
            e.hit = (aid, args, e)
            return
        if kind == "action":
            raise invalid(f"{what} is implemented by '{prof.name}': use a member, group or action set")
        if kind == "action_profile_member_id":
            m = prof.members.get(ta.action_profile_member_id)
            if m is None:
                raise not_found(f"{what}: member {ta.action_profile_member_id} of '{prof.name}' does not exist")
            m.entry_refs += 1
            e.member, e.group, e.oneshot = m, None, False
        elif kind == "action_profile_group_id":
            if not prof.with_selector:
                raise invalid(f"{what}: '{prof.name}' is not a selector, it has no groups")
            g = prof.groups.get(ta.action_profile_group_id)
            if g is None:
                raise not_found(f"{what}: group {ta.action_profile_group_id} of '{prof.name}' does not exist")
            g.entry_refs += 1
            e.member, e.group, e.oneshot = None, g, False
        else:
            g = prof.oneshot(ta.action_profile_action_set, what)
            e.member, e.group, e.oneshot = None, g, True
        e.hit = None

    def _release(self, e: Entry) -> None:
        if e.member is not None:
            e.member.entry_refs -= 1
        elif e.group is not None:
            if e.oneshot:
                self.profile.release_oneshot(e.group)  # type: ignore[union-attr]
            else:
                e.group.entry_refs -= 1

    def _reacquire(self, e: Entry) -> None:
        if e.member is not None:
            e.member.entry_refs += 1
        elif e.group is not None:
            if e.oneshot:
                prof = self.profile
                assert prof is not None
                prof.reacquire_oneshot(e.group)
            else:
                e.group.entry_refs += 1

    def _store_msg(self, e: Entry, te: p4runtime_pb2.TableEntry) -> None:
        msg = p4runtime_pb2.TableEntry(table_id=self.id, priority=e.priority,
                                       controller_metadata=te.controller_metadata,
                                       metadata=te.metadata, idle_timeout_ns=te.idle_timeout_ns,
                                       is_const=e.is_const)
        spec_to_proto(self.fields, e.spec, msg.match)
        if not te.HasField("action"):
            msg.action.CopyFrom(e.msg.action)
        elif e.hit is not None:
            aid, args, _ = e.hit
            self.action_set.actions[aid].to_proto(args, msg.action.action)
        elif e.member is not None:
            msg.action.action_profile_member_id = e.member.id
        elif e.oneshot:
            for a in te.action.action_profile_action_set.action_profile_actions:
                pa = msg.action.action_profile_action_set.action_profile_actions.add(weight=a.weight)
                aid, args = self.action_set.parse(a.action, default=False, what=self.what)
                self.action_set.actions[aid].to_proto(args, pa.action)
        elif e.group is not None:
            msg.action.action_profile_group_id = e.group.id
        e.msg = msg

    # ---- default entry ------------------------------------------------------------------------
    def _write_default(self, utype: int, te: p4runtime_pb2.TableEntry) -> None:
        what = f"{self.what} default entry"
        if utype != MODIFY:
            raise invalid(f"{what}: only MODIFY is allowed on the default entry")
        if len(te.match) or te.priority:
            raise invalid(f"{what}: match must be empty and priority 0")
        if te.idle_timeout_ns:
            raise invalid(f"{what}: idle timeout is not supported on default entries")
        self._check_direct_resources(te)
        d = self.default_entry
        # setting or resetting (a MODIFY without an action) a const default action is PERMISSION_DENIED
        # (spec, "Default Entry"; PI refuses both before it looks at the action)
        if self.const_default_action_id:
            raise denied(f"{what}: the default action is const")
        if self.profile is not None:
            raise denied(f"{what}: tables with an action profile keep their default action "
                         "(P4Runtime restricts it to a constant NoAction)")
        if te.HasField("action"):
            if te.action.WhichOneof("type") != "action":
                raise invalid(f"{what}: the default entry takes an action")
            aid, args = self.action_set.parse(te.action.action, default=True, what=what)
            meter = parse_config(te.meter_config, what) if te.HasField("meter_config") else None  # may fail
            self.default_hit = (aid, args, None)  # nothing changes before every part is checked
            d.counter = [te.counter_data.byte_count, te.counter_data.packet_count] \
                if te.HasField("counter_data") else d.counter
            d.meter = meter
            self._set_default_msg(te)
            return
        # action unset: reset to the program's default (with metadata and direct resources)
        self.default_hit = (self.initial_default[0], self.initial_default[1], None)
        d.counter = [0, 0]
        d.meter = None
        self._set_default_msg()

    def _set_default_msg(self, te: p4runtime_pb2.TableEntry | None = None) -> None:
        # p4runtime.proto, TableEntry.is_const: true for "the default entry read from a table declared
        # with `const default_action`" (it cannot be modified)
        msg = p4runtime_pb2.TableEntry(table_id=self.id, is_default_action=True,
                                       is_const=bool(self.const_default_action_id))
        if te is not None:
            msg.controller_metadata = te.controller_metadata
            msg.metadata = te.metadata
        aid, args, _ = self.default_hit
        # a table with an action profile has no default action a client could name (p4c's bmv2 back end
        # gives it none; its miss runs nothing): its default entry reads back without one, as from
        # bmv2's PI server, not as the NoAction that a write of it would be refused
        if aid in self.action_set.actions and self.profile is None:
            self.action_set.actions[aid].to_proto(args, msg.action.action)
        self.default_entry.msg = msg

    def set_initial_default(self, action_id: int, args: tuple[int, ...]) -> None:
        """Set the program's default action (with arguments) when P4Info did not carry it.

        Used by the pipeline builder before any P4Runtime write; a MODIFY of the default entry
        without an action resets to this."""
        if action_id not in self.action_set.actions:
            raise KeyError(f"{self.what}: action id {action_id} is not in the P4Info")
        self.initial_default = (action_id, tuple(args))
        self.default_hit = (action_id, tuple(args), None)
        self.default_entry.counter = [0, 0]
        self.default_entry.meter = None
        self._set_default_msg()

    def reset_entries(self) -> None:
        """Remove every entry (used when a pipeline is replaced); the default stays."""
        for e in list(self._entries.values()):
            self._delete(e)

    # ---- reads --------------------------------------------------------------------------------
    def find(self, te: p4runtime_pb2.TableEntry) -> Entry:
        """The entry ``te`` designates (match+priority, or the default entry) or NOT_FOUND."""
        if te.is_default_action:
            return self.default_entry
        spec, prio = self._key(te)
        e = self._entries.get((spec, prio))
        if e is None:
            raise not_found(f"{self.what}: entry not found")
        return e

    def _selected(self, req: p4runtime_pb2.TableEntry) -> list[Entry]:
        """Entries selected by a (possibly wildcard) TableEntry of a ReadRequest."""
        if req.is_default_action and (len(req.match) or req.priority):
            raise invalid(f"{self.what} default entry: match must be empty and priority 0")
        if req.HasField("time_since_last_hit"):
            if not self.idle_timeout:
                raise invalid(f"{self.what} does not support idle timeout: time_since_last_hit cannot be read")
            if req.is_default_action:
                raise invalid(f"{self.what} default entry: idle timeout is not supported on default entries")
        if req.is_default_action:
            selected = [self.default_entry]
        elif len(req.match):
            spec, prio = self._key(req)
            e = self._entries.get((spec, prio))
            selected = [] if e is None else [e]
        else:
            selected = list(self._entries.values())
            if req.priority:
                selected = [e for e in selected if e.priority == req.priority]
        if req.controller_metadata:
            selected = [e for e in selected if e.msg.controller_metadata == req.controller_metadata]
        if req.metadata:
            selected = [e for e in selected if e.msg.metadata == req.metadata]
        if req.HasField("action") and req.action.WhichOneof("type") == "action" and req.action.action.action_id:
            aid = req.action.action.action_id
            selected = [e for e in selected if e.msg.action.action.action_id == aid]
        return selected

    def read(self, req: p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.Entity]:
        """Entries selected by a (possibly wildcard) TableEntry of a ReadRequest."""
        return self._entities(self._selected(req), req)

    def read_wire(self, req: p4runtime_pb2.TableEntry) -> list[bytes]:
        """``read`` as encoded Entity messages (``wire``): an entry's kept encoding when the request
        asks for none of the per-read fields (counter data, meter config and counters, time since
        the last hit), else the messages ``read`` builds, serialized."""
        selected = self._selected(req)
        if req.HasField("counter_data") or req.HasField("meter_config") or req.HasField("meter_counter_data") \
                or req.HasField("time_since_last_hit"):
            return [ent.SerializeToString() for ent in self._entities(selected, req)]
        return [wire.field(wire.TAG_TABLE_ENTRY, wire.table_entry_bytes(e)) for e in selected]

    def _entities(self, selected: list[Entry], req: p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.Entity]:
        out = []
        now = time.monotonic_ns()
        for e in selected:
            ent = p4runtime_pb2.Entity()
            t = ent.table_entry
            t.CopyFrom(e.msg)
            if req.HasField("counter_data") and self.direct_counter is not None:
                fill_counter_data(t.counter_data, self.direct_counter.unit, e.counter[0], e.counter[1])
            if req.HasField("meter_config") and e.meter is not None:
                e.meter.to_proto(t.meter_config)
            if req.HasField("meter_counter_data") and self.direct_meter is not None:
                mcd = t.meter_counter_data  # per-colour counts are not kept: all three read as 0
                for c in (mcd.green, mcd.yellow, mcd.red):
                    c.SetInParent()
            if req.HasField("time_since_last_hit"):
                t.time_since_last_hit.elapsed_ns = max(0, now - e.since_ns)
            out.append(ent)
        return out

    # ---- idle timeout -------------------------------------------------------------------------
    def _idle_track(self, e: Entry) -> None:
        """After an insert or modify: ``e`` is in the idle heap when it has an idle timeout (due
        its TTL after its last hit or notification), out of it otherwise."""
        ttl = e.msg.idle_timeout_ns
        if ttl > 0 and self.idle_timeout:
            self._timed.add(e)
            self._idle_push(e, max(e.since_ns, e.notified_ns) + ttl)
        elif e in self._timed:
            self._timed.discard(e)
            e.idle_seq = 0
        self._idle_compact()

    def _idle_push(self, e: Entry, due_ns: int) -> None:
        self._idle_seq += 1
        e.idle_seq = self._idle_seq
        heapq.heappush(self._idle_heap, (due_ns, self._idle_seq, e))

    def _idle_compact(self) -> None:
        """Drop the dead items (deleted entries, replaced deadlines) once they outnumber the live
        ones: the heap stays O(timed entries) whatever the write churn."""
        if len(self._idle_heap) <= 2 * len(self._timed) + 64:
            return
        self._idle_heap = []
        for e in self._timed:
            self._idle_seq += 1
            e.idle_seq = self._idle_seq
            self._idle_heap.append((max(e.since_ns, e.notified_ns) + e.msg.idle_timeout_ns, self._idle_seq, e))
        heapq.heapify(self._idle_heap)

    def idle_next_due(self) -> int | None:
        """A lower bound of the time (monotonic ns) the next entry can expire; None: no entry has
        an idle timeout. Cheap, for deciding whether a scan is needed at all."""
        try:  # read without the server lock by the idle timer: only that thread pops
            return self._idle_heap[0][0]
        except IndexError:
            return None

    def idle_expired(self, now_ns: int) -> list[p4runtime_pb2.TableEntry]:
        """Entries with an ``idle_timeout_ns`` not hit for that long since their last hit or last
        notification (spec "Table Idle Timeout Notification"); their notification timer restarts.
        Looks only at heap items due by ``now_ns``: an entry hit since it was queued goes back
        with its later deadline; entries without an idle timeout are never looked at."""
        out = []
        heap = self._idle_heap
        while heap and heap[0][0] <= now_ns:
            _, seq, e = heapq.heappop(heap)
            if e.idle_seq != seq:  # deleted, modified or requeued since
                continue
            ttl = e.msg.idle_timeout_ns
            due = max(e.since_ns, e.notified_ns) + ttl
            if due > now_ns:  # hit since it was queued
                self._idle_push(e, due)
                continue
            e.notified_ns = now_ns
            self._idle_push(e, now_ns + ttl)
            t = p4runtime_pb2.TableEntry(table_id=self.id, priority=e.priority,
                                         controller_metadata=e.msg.controller_metadata,
                                         metadata=e.msg.metadata, idle_timeout_ns=ttl)
            t.match.extend(e.msg.match)
            t.time_since_last_hit.elapsed_ns = max(0, now_ns - e.since_ns)
            out.append(t)
        return out


def _key_only(te: p4runtime_pb2.TableEntry) -> bool:
    """A TableEntry that carries its key and nothing else: no action, no direct resource, no
    metadata, no idle timeout (what a MODIFY leaves unchanged)."""
    return not (te.HasField("action") or te.HasField("counter_data") or te.HasField("meter_config")
                or te.HasField("meter_counter_data") or te.controller_metadata or te.metadata
                or te.idle_timeout_ns)
