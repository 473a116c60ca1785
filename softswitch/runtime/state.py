"""``SwitchState``: every piece of runtime state of one loaded program, built from its P4Info.

The data plane reads it directly (``tables``, ``counters``, ``registers``, ``pre``...); the
P4Runtime server applies ``Update``s with ``write`` and answers reads with ``read``. Writes must
come from one thread at a time (the server holds a lock); lookups never take a lock.
"""
from __future__ import annotations

from collections.abc import Iterable

from p4.config.v1 import p4info_pb2, p4types_pb2
from p4.v1 import p4runtime_pb2

from . import wire
from .action_profiles import ActionProfileState, profile_actions
from .actions import ActionInfo
from .counters import CounterState, DirectCounterState, fill_counter_data, unpack_cell
from .digests import DigestState
from .errors import P4InfoError, P4RuntimeError, invalid, not_found, unimplemented
from .meters import DirectMeterState, MeterState, parse_config
from .pre import PacketReplicationEngine
from .registers import RegisterState
from .tables import MODIFY, TableState
from .value_sets import ValueSetState


def _index(e) -> int | None:
    return e.index.index if e.HasField("index") else None


def _cell(e, id_: int) -> int | None:
    """The index a counter/meter/register read asks for: none (every cell) when the id is the wildcard
    0, whose scope is every cell of every array (p4runtime.proto, CounterEntry and MeterEntry)."""
    return _index(e) if id_ else None


class _Named(dict):
    """id -> object, also reachable by fully-qualified name and by alias via ``get_name``."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[str, object] = {}

    def put(self, preamble: p4info_pb2.Preamble, obj: object) -> None:
        if preamble.id in self:
            raise P4InfoError(f"duplicate P4Info id {preamble.id} ('{preamble.name}')")
        self[preamble.id] = obj
        self.names[preamble.name] = obj
        if preamble.alias:
            self.names.setdefault(preamble.alias, obj)


def _check_widths(p4info: p4info_pb2.P4Info) -> None:
    """Refuse a P4Info with a negative bitwidth (a match field, action parameter, value-set field
    or controller header field): no compiler writes one, and its values could not be encoded."""
    named = [(f"table '{t.preamble.name}' match field '{f.name}'", f.bitwidth)
             for t in p4info.tables for f in t.match_fields]
    named += [(f"action '{a.preamble.name}' parameter '{p.name}'", p.bitwidth)
              for a in p4info.actions for p in a.params]
    named += [(f"value set '{v.preamble.name}' field '{f.name}'", f.bitwidth)
              for v in p4info.value_sets for f in v.match]
    named += [(f"controller header '{c.preamble.name}' field '{m.name}'", m.bitwidth)
              for c in p4info.controller_packet_metadata for m in c.metadata]
    for what, w in named:
        if w < 0:
            raise P4InfoError(f"{what} has bitwidth {w}")


def _untyped(p4info: p4info_pb2.P4Info) -> p4info_pb2.P4Info:
    """The P4Info with each (untranslated) newtype in a register, digest or struct type spec
    replaced by the bit<W> it stands for, and a register's serializable enum by its underlying
    bit<W> (as bmv2 holds it): the data plane holds the plain value."""
    new_types = p4info.type_info.new_types
    ser_enums = p4info.type_info.serializable_enums
    if not new_types and not any(r.type_spec.HasField("serializable_enum") for r in p4info.registers):
        return p4info
    out = p4info_pb2.P4Info()
    out.CopyFrom(p4info)

    def fix(spec: p4types_pb2.P4DataTypeSpec) -> None:
        if spec.WhichOneof("type_spec") == "new_type" and spec.new_type.name in new_types:
            spec.CopyFrom(new_types[spec.new_type.name].original_type)

    for r in out.registers:
        fix(r.type_spec)
        name = r.type_spec.serializable_enum.name
        if name in ser_enums:
            r.type_spec.bitstring.bit.bitwidth = ser_enums[name].underlying_type.bitwidth
    for d in out.digests:
        fix(d.type_spec)
        for m in d.type_spec.tuple.members:
            fix(m)
    for st in out.type_info.structs.values():
        for m in st.members:
            fix(m.type_spec)
    return out


class SwitchState:
    """Runtime state of a program: tables, action profiles, counters, meters, registers, parser value
    sets, digests, packet replication engine. Raises ``P4InfoError`` for an inconsistent P4Info."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        for name, nt in sorted(p4info.type_info.new_types.items()):
            if nt.HasField("translated_type"):  # the controller's values are not the data plane's
                raise P4InfoError(f"type '{name}' has @p4runtime_translation(\"{nt.translated_type.uri}\"): "
                                  f"unsupported, softswitch does not translate P4Runtime values")
        self.p4info = p4info
        _check_widths(p4info)
        p4info = _untyped(p4info)
        self.actions: dict[int, ActionInfo] = {}
        for a in p4info.actions:
            if a.preamble.id in self.actions:
                raise P4InfoError(f"duplicate action id {a.preamble.id}")
            self.actions[a.preamble.id] = ActionInfo.from_p4info(a)
        self.action_profiles: _Named = _Named()
        for ap in p4info.action_profiles:
            self.action_profiles.put(ap.preamble, ActionProfileState(ap, profile_actions(ap, p4info, self.actions)))
        self.tables: _Named = _Named()
        for t in p4info.tables:
            prof = self.action_profiles.get(t.implementation_id) if t.implementation_id else None
            self.tables.put(t.preamble, TableState(t, self.actions, prof))
        self.idle_tables = [t for t in self.tables.values() if t.idle_timeout]  # NOTIFY_CONTROL tables
        self.counters: _Named = _Named()
        for c in p4info.counters:
            self.counters.put(c.preamble, CounterState(c))
        self.direct_counters: _Named = _Named()
        for dc in p4info.direct_counters:
            st = DirectCounterState(dc)
            table = self.tables.get(dc.direct_table_id)
            if table is None:
                raise P4InfoError(f"direct counter '{dc.preamble.name}': table {dc.direct_table_id} unknown")
            table.direct_counter = st
            self.direct_counters.put(dc.preamble, st)
        self.meters: _Named = _Named()
        for m in p4info.meters:
            self.meters.put(m.preamble, MeterState(m))
        self.direct_meters: _Named = _Named()
        for dm in p4info.direct_meters:
            st = DirectMeterState(dm)
            table = self.tables.get(dm.direct_table_id)
            if table is None:
                raise P4InfoError(f"direct meter '{dm.preamble.name}': table {dm.direct_table_id} unknown")
            table.direct_meter = st
            self.direct_meters.put(dm.preamble, st)
        self.registers: _Named = _Named()
        for r in p4info.registers:
            self.registers.put(r.preamble, RegisterState(r))
        self.value_sets: _Named = _Named()
        for vs in p4info.value_sets:
            self.value_sets.put(vs.preamble, ValueSetState(vs))
        self.digests = DigestState(p4info)
        self.digest_ids: dict[str, int] = {d.preamble.name: d.preamble.id for d in p4info.digests}
        self.pre = PacketReplicationEngine()
        # what the program runs but the controller cannot address (@hidden tables and actions,
        # their direct resources): reached by the pipeline through the name helpers only
        self.hidden: dict[str, _Named] = {k: _Named() for k in ("tables", "direct_counters", "direct_meters",
                                                                 "action_profiles", "value_sets")}
        self.action_names: dict[str, int] = {a.preamble.name: a.preamble.id for a in p4info.actions}

    def add_private(self, full: p4info_pb2.P4Info) -> None:
        """Add the entities of the switch's private P4Info (``build_p4info(program, private=True)``)
        that the published one leaves out: ``@hidden`` tables and actions, and their direct
        counters, meters and action profiles; value sets no reachable parser state names and
        digests only actions p4c removes call (the generated code has them; they never match or
        fire).  Idempotent; the published entities must have the same ids in both."""
        full = _untyped(full)
        for d in full.digests:
            self.digest_ids.setdefault(d.preamble.name, d.preamble.id)
        for vs in full.value_sets:
            if vs.preamble.name not in self.value_sets.names and vs.preamble.name not in self.hidden["value_sets"].names:
                self.hidden["value_sets"].put(vs.preamble, ValueSetState(vs))
        # actions only: a table may have an action's name (P4Info names are per entity type, as in
        # p4c; ``@name(".output")`` on both an action and a table, as p4c writes P4_14's instruct5)
        known = {a.preamble.name: a.preamble.id for a in self.p4info.actions}
        for a in full.actions:
            if a.preamble.name in known and known[a.preamble.name] != a.preamble.id:
                raise P4InfoError(f"action '{a.preamble.name}' has id {known[a.preamble.name]} in the P4Info "
                                  f"and {a.preamble.id} in the program's: the P4Info is not the program's")
            if a.preamble.id not in self.actions:
                self.actions[a.preamble.id] = ActionInfo.from_p4info(a)
                self.action_names[a.preamble.name] = a.preamble.id
        hidden = [t for t in full.tables if t.preamble.name not in self.tables.names
                  and t.preamble.name not in self.hidden["tables"].names]
        if not hidden:
            return
        ids = {t.preamble.id for t in hidden}
        for ap in full.action_profiles:
            if ap.preamble.name not in self.action_profiles.names and set(ap.table_ids) <= ids:
                self.hidden["action_profiles"].put(
                    ap.preamble, ActionProfileState(ap, profile_actions(ap, full, self.actions)))
        for t in hidden:
            prof = None
            if t.implementation_id:
                prof = self.hidden["action_profiles"].get(t.implementation_id) or \
                    self.action_profiles.get(t.implementation_id)
            self.hidden["tables"].put(t.preamble, TableState(t, self.actions, prof))
        for dc in full.direct_counters:
            if dc.direct_table_id in ids:
                st = DirectCounterState(dc)
                self.hidden["tables"][dc.direct_table_id].direct_counter = st
                self.hidden["direct_counters"].put(dc.preamble, st)
        for dm in full.direct_meters:
            if dm.direct_table_id in ids:
                st = DirectMeterState(dm)
                self.hidden["tables"][dm.direct_table_id].direct_meter = st
                self.hidden["direct_meters"].put(dm.preamble, st)

    # ---- name helpers for the compiled pipeline ----------------------------------------------
    def table(self, key: int | str) -> TableState:
        """Table by P4Info id, fully-qualified name or alias (a hidden one too)."""
        return _get(self.tables, key, "table", self.hidden["tables"])

    def counter(self, key: int | str) -> CounterState:
        return _get(self.counters, key, "counter")

    def direct_counter(self, key: int | str) -> DirectCounterState:
        return _get(self.direct_counters, key, "direct counter", self.hidden["direct_counters"])

    def meter(self, key: int | str) -> MeterState:
        return _get(self.meters, key, "meter")

    def direct_meter(self, key: int | str) -> DirectMeterState:
        return _get(self.direct_meters, key, "direct meter", self.hidden["direct_meters"])

    def register(self, key: int | str) -> RegisterState:
        return _get(self.registers, key, "register")

    def value_set(self, key: int | str) -> ValueSetState:
        return _get(self.value_sets, key, "value set", self.hidden["value_sets"])

    def action_profile(self, key: int | str) -> ActionProfileState:
        return _get(self.action_profiles, key, "action profile", self.hidden["action_profiles"])

    # ---- P4Runtime writes --------------------------------------------------------------------
    def write(self, update: p4runtime_pb2.Update) -> None:
        """Apply one update; raises ``P4RuntimeError`` with the canonical code for failures."""
        utype = update.type
        if utype not in (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE):
            raise invalid("update type must be INSERT, MODIFY or DELETE")
        ent = update.entity
        kind = ent.WhichOneof("entity")
        if kind == "table_entry":
            te = ent.table_entry
            self._lookup(self.tables, te.table_id, "table").write(utype, te)
        elif kind == "action_profile_member":
            m = ent.action_profile_member
            self._lookup(self.action_profiles, m.action_profile_id, "action profile").write_member(utype, m)
        elif kind == "action_profile_group":
            g = ent.action_profile_group
            self._lookup(self.action_profiles, g.action_profile_id, "action profile").write_group(utype, g)
        elif kind == "counter_entry":
            self._only_modify(utype, "counter entries")
            c = ent.counter_entry
            st = self._lookup(self.counters, c.counter_id, "counter")
            if c.HasField("data"):
                st.write(_index(c), c.data.byte_count, c.data.packet_count)
            elif _index(c) is not None:  # no data: the counter is not modified (spec, CounterEntry)
                st.check_index(_index(c))
        elif kind == "direct_counter_entry":
            self._only_modify(utype, "direct counter entries")
            dce = ent.direct_counter_entry
            _require_table_entry(dce, "direct counter entry")
            table = self._lookup(self.tables, dce.table_entry.table_id, "table")
            if table.direct_counter is None:
                raise invalid(f"table '{table.name}' has no direct counter")
            e = table.find(dce.table_entry)
            if dce.HasField("data"):  # else not modified (spec, DirectCounterEntry)
                e.counter = [dce.data.byte_count, dce.data.packet_count]
        elif kind == "meter_entry":
            self._only_modify(utype, "meter entries")
            me = ent.meter_entry
            st = self._lookup(self.meters, me.meter_id, "meter")
            _no_meter_counters(me, f"meter '{st.name}'")
            st.write(_index(me), me.config if me.HasField("config") else None)
        elif kind == "direct_meter_entry":
            self._only_modify(utype, "direct meter entries")
            dme = ent.direct_meter_entry
            _require_table_entry(dme, "direct meter entry")
            table = self._lookup(self.tables, dme.table_entry.table_id, "table")
            if table.direct_meter is None:
                raise invalid(f"table '{table.name}' has no direct meter")
            _no_meter_counters(dme, f"table '{table.name}' direct meter")
            e = table.find(dme.table_entry)
            e.meter = parse_config(dme.config, f"table '{table.name}'") if dme.HasField("config") else None
        elif kind == "register_entry":
            self._only_modify(utype, "register entries")
            re_ = ent.register_entry
            st = self._lookup(self.registers, re_.register_id, "register")
            idx = _index(re_)
            if idx is not None:
                st.check_index(idx)
            st.control_write(idx, st.parse_data(re_.data))
        elif kind == "value_set_entry":
            vse = ent.value_set_entry
            self._lookup(self.value_sets, vse.value_set_id, "value set").write(utype, vse)
        elif kind == "packet_replication_engine_entry":
            self.pre.write(utype, ent.packet_replication_engine_entry)
        elif kind == "digest_entry":
            self.digests.write(utype, ent.digest_entry)
        elif kind is None:
            raise invalid("update has no entity")
        else:
            raise unimplemented(f"{kind} is not supported")

    @staticmethod
    def _only_modify(utype: int, what: str) -> None:
        if utype != MODIFY:
            raise invalid(f"{what} only accept MODIFY")

    @staticmethod
    def _lookup(named: _Named, id_: int, what: str):
        obj = named.get(id_)
        if obj is None:
            raise not_found(f"{what} id {id_} is not in the P4Info")
        return obj

    # ---- P4Runtime reads ---------------------------------------------------------------------
    def read(self, ent: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """Entities matching one (possibly wildcard) entity of a ReadRequest."""
        kind = ent.WhichOneof("entity")
        out: list[p4runtime_pb2.Entity] = []
        if kind == "table_entry":
            te = ent.table_entry
            for t in self._select(self.tables, te.table_id, "table"):
                out += t.read(te)
        elif kind == "action_profile_member":
            m = ent.action_profile_member
            # action_profile_id 0 is the wildcard over the profiles: with a member id, that member of
            # each profile that has one (PI reads it so too; it was nothing at all until 2026-12-05)
            for ap in self._select(self.action_profiles, m.action_profile_id, "action profile"):
                out += ap.read_members(m.member_id)
        elif kind == "action_profile_group":
            g = ent.action_profile_group
            for ap in self._select(self.action_profiles, g.action_profile_id, "action profile"):
                if ap.with_selector:
                    out += ap.read_groups(g.group_id)
        elif kind == "counter_entry":
            c = ent.counter_entry
            for st in self._select(self.counters, c.counter_id, "counter"):
                out += self._read_counter(st, _cell(c, c.counter_id))
        elif kind == "direct_counter_entry":
            out += self._read_direct(ent.direct_counter_entry.table_entry, "direct_counter",
                                     self._read_direct_counter)
        elif kind == "meter_entry":
            me = ent.meter_entry
            _no_meter_counters(me, "meter entry read")
            for st in self._select(self.meters, me.meter_id, "meter"):
                out += self._read_meter(st, _cell(me, me.meter_id))
        elif kind == "direct_meter_entry":
            _no_meter_counters(ent.direct_meter_entry, "direct meter entry read")
            out += self._read_direct(ent.direct_meter_entry.table_entry, "direct_meter",
                                     self._read_direct_meter)
        elif kind == "register_entry":
            r = ent.register_entry
            for st in self._select(self.registers, r.register_id, "register"):
                out += self._read_register(st, _cell(r, r.register_id))
        elif kind == "value_set_entry":
            if len(ent.value_set_entry.members):  # p4runtime.proto, ValueSetEntry
                raise invalid("a ValueSetEntry read names the value set only: its members must not be set")
            out += [vs.read() for vs in self._select(self.value_sets, ent.value_set_entry.value_set_id, "value set")]
        elif kind == "packet_replication_engine_entry":
            out += self.pre.read(ent.packet_replication_engine_entry)
        elif kind == "digest_entry":
            out += self.digests.read(ent.digest_entry)
        elif kind == "extern_entry":
            out += self._read_extern(ent.extern_entry)
        elif kind is None:
            raise invalid("read entity has no type")
        else:
            raise unimplemented(f"reading {kind} is not supported")
        return out

    def read_wire(self, ent: p4runtime_pb2.Entity) -> list[bytes]:
        """``read`` as encoded Entity messages, the same bytes ``SerializeToString`` gives for each
        (the same errors, raised at the same point).  Table entries, direct counters and counters
        are encoded from kept parts (``wire``: no message objects); other kinds are ``read`` and
        serialized."""
        kind = ent.WhichOneof("entity")
        if kind == "direct_counter_entry":
            return self._read_direct(ent.direct_counter_entry.table_entry, "direct_counter",
                                     self._wire_direct_counter)
        if kind == "table_entry":
            te = ent.table_entry
            out: list[bytes] = []
            for t in self._select(self.tables, te.table_id, "table"):
                out += t.read_wire(te)
            return out
        if kind == "counter_entry":
            c = ent.counter_entry
            out = []
            for st in self._select(self.counters, c.counter_id, "counter"):
                idx = _cell(c, c.counter_id)
                if idx is not None:
                    st.check_index(idx)
                out += self._wire_counter(st, range(st.size) if idx is None else (idx,))
            return out
        return [e.SerializeToString() for e in self.read(ent)]

    def _wire_direct_counter(self, table: TableState, te: p4runtime_pb2.TableEntry) -> list[bytes]:
        unit = table.direct_counter.unit
        out = []
        for en in self._entries_for(table, te):
            b = wire.direct_counter_entity(en, unit)
            if b is None:  # a count out of the int64 range: what the message path does with it
                e = p4runtime_pb2.Entity()
                d = e.direct_counter_entry
                d.table_entry.CopyFrom(en.msg)
                fill_counter_data(d.data, unit, en.counter[0], en.counter[1])
                b = e.SerializeToString()
            out.append(b)
        return out

    def read_counter_cells_wire(self, counter_id: int, lo: int, hi: int) -> list[bytes]:
        """Cells ``lo`` .. ``hi - 1`` of a counter as ``read_wire`` answers a read of each by index."""
        st = self._lookup(self.counters, counter_id, "counter")
        if hi > lo:
            st.check_index(lo)
            st.check_index(hi - 1)
        return self._wire_counter(st, range(lo, hi))

    def _wire_counter(self, st: CounterState, indices: Iterable[int]) -> list[bytes]:
        out = []
        sid, unit, cells = st.id, st.unit, st.cells
        for i in indices:
            b = wire.counter_entity(sid, i, unit, *unpack_cell(cells[i]))
            if b is None:
                b = self._read_counter(st, i)[0].SerializeToString()
            out.append(b)
        return out

    def _read_extern(self, x: p4runtime_pb2.ExternEntry) -> list[p4runtime_pb2.Entity]:
        """ExternEntry reads: the wildcard (``extern_type_id`` 0) over no extern type answers nothing,
        as the spec's read of the entire forwarding state (section "Wildcard Reads") expects; a type
        the P4Info does not declare is NOT_FOUND; one it declares is UNIMPLEMENTED (no extern of
        the P4 subset is programmed through ExternEntry)."""
        types = {e.extern_type_id for e in self.p4info.externs}
        if x.extern_type_id == 0 and not types:
            return []
        if x.extern_type_id and x.extern_type_id not in types:
            raise not_found(f"extern type id {x.extern_type_id} is not in the P4Info")
        raise unimplemented("reading extern_entry is not supported")

    def _select(self, named: _Named, id_: int, what: str) -> list:
        if id_ == 0:
            return list(named.values())
        return [self._lookup(named, id_, what)]

    @staticmethod
    def _read_counter(st: CounterState, idx: int | None) -> list[p4runtime_pb2.Entity]:
        if idx is not None:
            st.check_index(idx)
        out = []
        for i in range(st.size) if idx is None else [idx]:
            e = p4runtime_pb2.Entity()
            c = e.counter_entry
            c.counter_id = st.id
            c.index.index = i
            fill_counter_data(c.data, st.unit, *st.get(i))
            out.append(e)
        return out

    @staticmethod
    def _entries_for(table: TableState, te: p4runtime_pb2.TableEntry):
        """The entry ``te`` names (NOT_FOUND if there is none, INVALID_ARGUMENT for a malformed key:
        spec, DirectCounterEntry / DirectMeterEntry), or every entry of ``table`` for no key."""
        if te.is_default_action or len(te.match):
            return [table.find(te)]
        return table.entries()

    def _read_direct(self, te: p4runtime_pb2.TableEntry, attr: str, read) -> list:
        """Direct counter/meter (``attr``) read of one table, or of every table having one
        when ``te.table_id`` is 0; naming a table without that resource is an error."""
        out = []
        for table in self._select(self.tables, te.table_id, "table"):
            if getattr(table, attr) is None:
                if te.table_id:
                    raise invalid(f"table '{table.name}' has no {attr.replace('_', ' ')}")
                continue
            out += read(table, te)
        return out

    def _read_direct_counter(self, table: TableState, te: p4runtime_pb2.TableEntry):
        out = []
        for en in self._entries_for(table, te):
            e = p4runtime_pb2.Entity()
            d = e.direct_counter_entry
            d.table_entry.CopyFrom(en.msg)
            fill_counter_data(d.data, table.direct_counter.unit, en.counter[0], en.counter[1])
            out.append(e)
        return out

    def _read_direct_meter(self, table: TableState, te: p4runtime_pb2.TableEntry):
        out = []
        for en in self._entries_for(table, te):
            e = p4runtime_pb2.Entity()
            d = e.direct_meter_entry
            d.table_entry.CopyFrom(en.msg)
            if en.meter is not None:
                en.meter.to_proto(d.config)
            out.append(e)
        return out

    @staticmethod
    def _read_meter(st: MeterState, idx: int | None):
        if idx is not None:
            st.check_index(idx)
        out = []
        for i in range(st.size) if idx is None else [idx]:
            e = p4runtime_pb2.Entity()
            m = e.meter_entry
            m.meter_id = st.id
            m.index.index = i
            cell = st.cells[i]
            if cell is not None:
                cell.to_proto(m.config)
            out.append(e)
        return out

    @staticmethod
    def _read_register(st: RegisterState, idx: int | None):
        if idx is not None:
            st.check_index(idx)
        out = []
        for i in range(st.size) if idx is None else [idx]:
            e = p4runtime_pb2.Entity()
            r = e.register_entry
            r.register_id = st.id
            r.index.index = i
            r.data.bitstring = st.encode(i)
            out.append(e)
        return out

    # ---- idle timeout -------------------------------------------------------------------------
    def idle_next_due(self) -> int | None:
        """A lower bound of when (monotonic ns) an entry of an idle-timeout table can next expire;
        None when no entry has an idle timeout."""
        dues = [d for d in (t.idle_next_due() for t in self.idle_tables) if d is not None]
        return min(dues) if dues else None

    def idle_expired(self, now_ns: int) -> list[list[p4runtime_pb2.TableEntry]]:
        """Per idle-timeout table, the entries due an IdleTimeoutNotification (none: empty list)."""
        out = []
        for t in self.idle_tables:
            got = t.idle_expired(now_ns)
            if got:
                out.append(got)
        return out

    # ---- pipeline replacement ----------------------------------------------------------------
    def reconcile_from(self, old: SwitchState) -> list[str]:
        """Carry the old state's forwarding state over (RECONCILE_AND_COMMIT).

        Everything the old state would answer to a wildcard read is replayed into this state in
        dependency order (PRE, digests, members, groups, entries, default entries, counters,
        meters, registers, value sets); what the new P4Info does not accept is dropped and reported.
        """
        dropped: list[str] = []
        order = [
            p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()),
            p4runtime_pb2.Entity(digest_entry=p4runtime_pb2.DigestEntry()),
            p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()),
            p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()),
        ]
        # the new state holds the program's initial (non-const) entries; a table the old pipeline
        # had gets the old forwarding state instead, as it is now (entries the controller deleted
        # stay deleted, none is inserted twice)
        for tid, t in self.tables.items():
            if tid in old.tables:
                for en in t.entries():
                    if not en.is_const:
                        t.write(p4runtime_pb2.Update.DELETE, en.msg)
        items: list[tuple[int, p4runtime_pb2.Entity]] = []
        for q in order:
            items += [(p4runtime_pb2.Update.INSERT, e) for e in old.read(q)]
        for t in old.tables.values():
            if t.is_const:
                continue
            for en in t.entries():
                if en.is_const:
                    continue
                e = p4runtime_pb2.Entity()
                e.table_entry.CopyFrom(en.msg)
                if t.direct_counter is not None:
                    e.table_entry.counter_data.byte_count = en.counter[0]
                    e.table_entry.counter_data.packet_count = en.counter[1]
                if en.meter is not None:
                    en.meter.to_proto(e.table_entry.meter_config)
                items.append((p4runtime_pb2.Update.INSERT, e))
            dm = t.default_entry.msg
            if t.default_hit[:2] != t.initial_default or dm.controller_metadata or dm.metadata:
                e = p4runtime_pb2.Entity()
                e.table_entry.CopyFrom(t.default_entry.msg)
                items.append((MODIFY, e))
        for q in (p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry()),
                  p4runtime_pb2.Entity(meter_entry=p4runtime_pb2.MeterEntry()),
                  p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry()),
                  p4runtime_pb2.Entity(value_set_entry=p4runtime_pb2.ValueSetEntry())):
            items += [(MODIFY, e) for e in old.read(q)]
        for utype, e in items:
            try:
                self.write(p4runtime_pb2.Update(type=utype, entity=e))
            except P4RuntimeError as err:
                dropped.append(f"{e.WhichOneof('entity')}: {err.message}")
        for tid, t in self.tables.items():  # a default entry's direct counter and meter carry over too
            ot = old.tables.get(tid)
            if ot is None:
                continue
            if t.direct_counter is not None and ot.direct_counter is not None:
                t.default_entry.counter = list(ot.default_entry.counter)
            if t.direct_meter is not None and ot.direct_meter is not None and ot.default_entry.meter is not None:
                cfg = p4runtime_pb2.MeterConfig()
                ot.default_entry.meter.to_proto(cfg)
                t.default_entry.meter = parse_config(cfg, t.what)
        return dropped


def _get(named: _Named, key: int | str, what: str, hidden: _Named | None = None):
    obj = named.get(key) if isinstance(key, int) else named.names.get(key)
    if obj is None and hidden is not None:
        obj = hidden.get(key) if isinstance(key, int) else hidden.names.get(key)
    if obj is None:
        raise KeyError(f"no {what} '{key}' in the P4Info")
    return obj


def iter_entities(state: SwitchState, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
    """All entities answering a list of read entities (in request order)."""
    out: list[p4runtime_pb2.Entity] = []
    for ent in entities:
        out += state.read(ent)
    return out


def _require_table_entry(msg, what: str) -> None:
    """A write of a direct resource names its table entry: p4runtime.proto says the field "is
    required" (a read without it is the wildcard over every table, as with ``table_id`` 0)."""
    if not msg.HasField("table_entry") or not msg.table_entry.table_id:
        raise invalid(f"{what} write without a table_entry naming its table (the field is required)")


def _no_meter_counters(m: p4runtime_pb2.MeterEntry | p4runtime_pb2.DirectMeterEntry, what: str) -> None:
    """Per-colour meter counters (``counter_data``) are not kept by this target: a read or write that
    sets them is UNIMPLEMENTED (spec, MeterCounterData; a table entry's ``meter_counter_data`` is
    handled with the entry)."""
    if m.HasField("counter_data"):
        raise unimplemented(f"{what}: per-colour meter counters (counter_data) are not supported")
