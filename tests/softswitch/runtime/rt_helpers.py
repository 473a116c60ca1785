"""Helpers for runtime tests: load the reference P4Info files and build P4Runtime messages by name."""
from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

DATA = Path(__file__).parent / "data"
FEATURES = DATA / "p4info_features.p4info.txtpb"
BENCH4 = DATA / "bench4.p4info.txtpb"

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE


def load_p4info(path: Path = FEATURES) -> p4info_pb2.P4Info:
    return text_format.Parse(path.read_text(), p4info_pb2.P4Info())


def b(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


class Builder:
    """Build TableEntry/Action/... protos from P4Info names."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables = {t.preamble.name: t for t in p4info.tables}
        self.tables.update({t.preamble.alias: t for t in p4info.tables})
        self.actions = {a.preamble.name: a for a in p4info.actions}
        self.actions.update({a.preamble.alias: a for a in p4info.actions})

    def tid(self, name: str) -> int:
        return self.tables[name].preamble.id

    def aid(self, name: str) -> int:
        return self.actions[name].preamble.id

    def pid(self, kind: str, name: str) -> int:
        for obj in getattr(self.p4info, kind):
            if name in (obj.preamble.name, obj.preamble.alias):
                return obj.preamble.id
        raise KeyError(name)

    def action(self, name: str, **params: int) -> p4runtime_pb2.Action:
        a = self.actions[name]
        msg = p4runtime_pb2.Action(action_id=a.preamble.id)
        for p in a.params:
            if p.name in params:
                msg.params.add(param_id=p.id, value=b(params[p.name]))
        return msg

    def entry(self, table: str, match: dict | None = None, action: p4runtime_pb2.Action | None = None,
              priority: int = 0, **kw) -> p4runtime_pb2.TableEntry:
        t = self.tables[table]
        te = p4runtime_pb2.TableEntry(table_id=t.preamble.id, priority=priority, **kw)
        fields = {f.name: f for f in t.match_fields}
        for name, val in (match or {}).items():
            f = fields[name]
            fm = te.match.add(field_id=f.id)
            if f.match_type == p4info_pb2.MatchField.EXACT:
                fm.exact.value = b(val)
            elif f.match_type == p4info_pb2.MatchField.OPTIONAL:
                fm.optional.value = b(val)
            elif f.match_type == p4info_pb2.MatchField.LPM:
                fm.lpm.value, fm.lpm.prefix_len = b(val[0]), val[1]
            elif f.match_type == p4info_pb2.MatchField.TERNARY:
                fm.ternary.value, fm.ternary.mask = b(val[0]), b(val[1])
            else:
                fm.range.low, fm.range.high = b(val[0]), b(val[1])
        if action is not None:
            te.action.action.CopyFrom(action)
        return te


def update(utype: int, **entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=utype, entity=p4runtime_pb2.Entity(**entity))
