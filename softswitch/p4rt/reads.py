"""Split a ReadRequest into small units so a Read never holds the server lock for long.

A wildcard Read (``counter_id = 0``, a whole table, every register cell...) used to be answered
in one piece under the server lock: one Read of 100 counter wildcards held it for 28 s and a
Write from the primary waited behind it.  ``read_units`` turns each requested entity into a
sequence of units, each one small (one table, one action profile, or at most ``cells`` cells of
one counter/meter/register array).  The server takes the lock per unit and streams the entities
of each unit as soon as it has them, so a Write waits for at most one unit.

The result is not one atomic snapshot across units (the P4Runtime spec does not require one: a
Read is answered as a stream of ReadResponses); every single entity is consistent.

``answer`` reads one unit, as encoded entities (``SwitchState.read_wire``) or as messages.  The
cells of a wildcard counter Read are a unit of their own kind (``Cells``): encoded, they are read
at once, without a request message per cell (one took ~20 us to build, more than the cell's answer).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from softswitch.runtime import SwitchState

CELLS_PER_UNIT = 256  # counter/meter/register cells read under the lock at a time

# indirect arrays: entity kind -> (SwitchState attribute, id field)
_ARRAYS = {"counter_entry": ("counters", "counter_id"), "meter_entry": ("meters", "meter_id"),
           "register_entry": ("registers", "register_id")}


@dataclass(frozen=True, slots=True)
class Cells:
    """Cells ``lo`` .. ``hi - 1`` of the counter ``counter_id``, of the wildcard Read ``request`` (a
    CounterEntry, whose other fields each cell's request keeps)."""

    request: p4runtime_pb2.CounterEntry
    counter_id: int
    lo: int
    hi: int

    def entities(self) -> list[p4runtime_pb2.Entity]:
        """The request entity of each cell (what the message path reads)."""
        unit = []
        for i in range(self.lo, self.hi):
            e = p4runtime_pb2.Entity()
            e.counter_entry.CopyFrom(self.request)
            e.counter_entry.counter_id = self.counter_id
            e.counter_entry.index.index = i
            unit.append(e)
        return unit


Unit = list[p4runtime_pb2.Entity] | Cells


def answer(state: SwitchState, unit: Unit, encoded: bool) -> list:
    """The entities answering ``unit``: encoded Entity messages (``encoded``) or Entity messages."""
    if isinstance(unit, Cells):
        if encoded:
            return state.read_counter_cells_wire(unit.counter_id, unit.lo, unit.hi)
        unit = unit.entities()
    read = state.read_wire if encoded else state.read
    out: list = []
    for e in unit:
        out += read(e)
    return out


def read_units(state: SwitchState, ent: p4runtime_pb2.Entity, cells: int = CELLS_PER_UNIT) -> Iterator[Unit]:
    """Yield units (lists of request entities, or ``Cells``); reading each under the lock answers
    part of ``ent`` (``answer``).

    Invalid requests are passed through unchanged so that ``SwitchState.read`` reports them."""
    kind = ent.WhichOneof("entity")
    if kind in _ARRAYS:
        attr, id_field = _ARRAYS[kind]
        sub = getattr(ent, kind)
        oid = getattr(sub, id_field)
        if sub.HasField("index") and oid:  # with id 0 the index is no filter: every cell of every array
            yield [ent]
            return
        named = getattr(state, attr)
        if oid and oid not in named:
            yield [ent]  # NOT_FOUND from the state
            return
        for arr in ([named[oid]] if oid else list(named.values())):
            for lo in range(0, arr.size, cells):
                if kind == "counter_entry":
                    yield Cells(sub, arr.id, lo, min(lo + cells, arr.size))
                    continue
                unit = []
                for i in range(lo, min(lo + cells, arr.size)):
                    e = p4runtime_pb2.Entity()
                    s = getattr(e, kind)
                    s.CopyFrom(sub)
                    setattr(s, id_field, arr.id)
                    s.index.index = i
                    unit.append(e)
                yield unit
        return
    if kind == "table_entry" and ent.table_entry.table_id == 0 and not len(ent.table_entry.match) \
            and not ent.table_entry.is_default_action:
        for tid, table in list(state.tables.items()):
            e = p4runtime_pb2.Entity()
            e.table_entry.CopyFrom(ent.table_entry)
            e.table_entry.table_id = tid
            if not table.idle_timeout:  # a wildcard read asks it only of the tables that have it
                e.table_entry.ClearField("time_since_last_hit")
            yield [e]
        return
    if kind in ("direct_counter_entry", "direct_meter_entry"):
        te = getattr(ent, kind).table_entry
        if te.table_id == 0 and not len(te.match) and not te.is_default_action:
            attr = kind.removesuffix("_entry")
            for tid, table in list(state.tables.items()):
                if getattr(table, attr) is None:
                    continue
                e = p4runtime_pb2.Entity()
                getattr(e, kind).CopyFrom(getattr(ent, kind))
                getattr(e, kind).table_entry.table_id = tid
                yield [e]
            return
    yield [ent]
