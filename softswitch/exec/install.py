"""Install the program's ``entries``/``const entries`` and default actions into runtime state."""
from __future__ import annotations

from p4.v1 import p4runtime_pb2

from softswitch.frontend import ir
from softswitch.runtime import bytestrings
from softswitch.runtime.match import EXACT, LPM, OPTIONAL, RANGE, TERNARY


def _mask(w: int) -> int:
    return (1 << w) - 1


def entry_proto(table: ir.Table, ts, entry: ir.TableEntry, actions: dict) -> p4runtime_pb2.TableEntry:
    """P4Runtime TableEntry for one program entry, in the table's P4Info field order."""
    te = p4runtime_pb2.TableEntry(table_id=ts.id)
    for key, info, ks in zip(table.match_keys, ts.fields, entry.keys):
        w = info.bitwidth
        enc = bytestrings.encode
        if ks.kind == "default":
            continue
        fm = te.match.add(field_id=info.id)
        if info.kind == EXACT:
            fm.exact.value = enc(ks.value & _mask(w))
        elif info.kind == OPTIONAL:
            fm.optional.value = enc(ks.value & _mask(w))
        elif info.kind == LPM:
            plen = ks.prefix_len if ks.kind == "lpm" else w
            if ks.kind == "mask":
                plen = (ks.mask & _mask(w)).bit_count()
            if plen == 0:
                te.match.pop()
                continue
            pm = _mask(w) ^ _mask(w - plen)
            fm.lpm.value = enc(ks.value & pm)
            fm.lpm.prefix_len = plen
        elif info.kind == TERNARY:
            m = ks.mask & _mask(w) if ks.kind == "mask" else _mask(w)
            if m == 0:
                te.match.pop()
                continue
            fm.ternary.value = enc(ks.value & m)
            fm.ternary.mask = enc(m)
        elif info.kind == RANGE:
            lo, hi = (ks.value, ks.hi) if ks.kind == "range" else (ks.value, ks.value)
            if lo == 0 and hi == _mask(w):
                te.match.pop()
                continue
            fm.range.low = enc(lo & _mask(w))
            fm.range.high = enc(hi & _mask(w))
    if ts.requires_priority:
        te.priority = entry.priority
    ainfo = actions[entry.action]
    ainfo.to_proto(tuple(int(a.value) & _mask(p.bitwidth) for a, p in zip(entry.args, ainfo.params)),
                   te.action.action)
    return te


def install_program_entries(program: ir.Program, state) -> None:
    """Program entries into ``state`` (before any P4Runtime write), and defaults with arguments."""
    by_name = {a.name: a for a in state.actions.values()}
    by_key = {k: by_name[a.name] for k, a in program.actions.items() if a.name in by_name}
    for table in program.all_tables():
        ts = state.table(table.name)
        if table.const_entries:
            for e in table.const_entries:
                ts.add_const_entry(entry_proto(table, ts, e, by_key), is_const=table.entries_const or e.is_const)
        da = table.default_action
        ainfo = by_key.get(da.action)
        if ainfo is None or ts.profile is not None:
            continue
        args = tuple(int(a.value) & _mask(p.bitwidth) for a, p in zip(da.args, ainfo.params))
        if ts.initial_default != (ainfo.id, args):
            # the P4Info carried no (or another) initial default: the program's is the truth
            ts.set_initial_default(ainfo.id, args)
