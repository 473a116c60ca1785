"""Match keys: P4Runtime ``FieldMatch`` validation (spec "Match Format") and canonical specs.

A canonical spec has one item per P4Info match field, in P4Info order: ``None`` for don't care,
``v`` for exact/optional, ``(v, prefix_len)`` for lpm, ``(v, mask)`` for ternary and
``(low, high)`` for range. Together with the priority it identifies an entry.
"""
from __future__ import annotations

from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from . import bytestrings
from .errors import P4InfoError, invalid

EXACT = p4info_pb2.MatchField.EXACT
LPM = p4info_pb2.MatchField.LPM
TERNARY = p4info_pb2.MatchField.TERNARY
RANGE = p4info_pb2.MatchField.RANGE
OPTIONAL = p4info_pb2.MatchField.OPTIONAL
_ONEOF = {EXACT: "exact", LPM: "lpm", TERNARY: "ternary", RANGE: "range", OPTIONAL: "optional"}


@dataclass(frozen=True, slots=True)
class FieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: int


def field_infos(table: p4info_pb2.Table) -> tuple[FieldInfo, ...]:
    out = []
    for mf in table.match_fields:
        if mf.match_type not in _ONEOF:
            raise P4InfoError(f"table '{table.preamble.name}': match field '{mf.name}' has an "
                              f"unsupported match type {mf.other_match_type or mf.match_type}")
        if mf.bitwidth <= 0:
            raise P4InfoError(f"table '{table.preamble.name}': match field '{mf.name}' has no bitwidth")
        out.append(FieldInfo(mf.id, mf.name, mf.bitwidth, mf.match_type))
    return tuple(out)


def parse_match(fields: tuple[FieldInfo, ...], by_id: dict[int, int], matches, what: str) -> tuple:
    """Validate the repeated ``FieldMatch`` of a TableEntry -> canonical spec tuple."""
    spec: list = [None] * len(fields)
    seen = set()
    for fm in matches:
        i = by_id.get(fm.field_id)
        if i is None:
            raise invalid(f"{what}: unknown match field id {fm.field_id}")
        if i in seen:
            raise invalid(f"{what}: match field '{fields[i].name}' given twice")
        seen.add(i)
        f = fields[i]
        kind = fm.WhichOneof("field_match_type")
        if kind != _ONEOF[f.kind]:
            raise invalid(f"{what}: match field '{f.name}' is {_ONEOF[f.kind]}, got {kind}")
        fw = f"{what}: match field '{f.name}'"
        if f.kind == EXACT:
            spec[i] = bytestrings.decode(fm.exact.value, f.bitwidth, fw)
        elif f.kind == OPTIONAL:
            spec[i] = bytestrings.decode(fm.optional.value, f.bitwidth, fw)
        elif f.kind == LPM:
            plen = fm.lpm.prefix_len
            v = bytestrings.decode(fm.lpm.value, f.bitwidth, fw)
            if plen <= 0 or plen > f.bitwidth:
                raise invalid(f"{fw}: prefix_len {plen} must be in 1..{f.bitwidth} (omit the field "
                              "for a don't-care match)")
            if v & ((1 << (f.bitwidth - plen)) - 1):
                raise invalid(f"{fw}: value has bits set beyond the /{plen} prefix")
            spec[i] = (v, plen)
        elif f.kind == TERNARY:
            v = bytestrings.decode(fm.ternary.value, f.bitwidth, fw)
            m = bytestrings.decode(fm.ternary.mask, f.bitwidth, fw + " mask")
            if m == 0:
                raise invalid(f"{fw}: mask 0 is a don't-care match, omit the field instead")
            if v & ~m:
                raise invalid(f"{fw}: value 0x{v:x} has bits outside mask 0x{m:x}")
            spec[i] = (v, m)
        else:  # RANGE
            lo = bytestrings.decode(fm.range.low, f.bitwidth, fw + " low")
            hi = bytestrings.decode(fm.range.high, f.bitwidth, fw + " high")
            if lo > hi:
                raise invalid(f"{fw}: low {lo} > high {hi}")
            if lo == 0 and hi == (1 << f.bitwidth) - 1:
                raise invalid(f"{fw}: full range is a don't-care match, omit the field instead")
            spec[i] = (lo, hi)
    for i, f in enumerate(fields):
        if f.kind == EXACT and spec[i] is None:
            raise invalid(f"{what}: exact match field '{f.name}' is missing")
    return tuple(spec)


def spec_to_proto(fields: tuple[FieldInfo, ...], spec: tuple, out) -> None:
    """Append canonical ``FieldMatch`` messages for ``spec`` to the repeated field ``out``."""
    enc = bytestrings.encode
    for f, s in zip(fields, spec):
        if s is None:
            continue
        fm: p4runtime_pb2.FieldMatch = out.add(field_id=f.id)
        if f.kind == EXACT:
            fm.exact.value = enc(s)
        elif f.kind == OPTIONAL:
            fm.optional.value = enc(s)
        elif f.kind == LPM:
            fm.lpm.value, fm.lpm.prefix_len = enc(s[0]), s[1]
        elif f.kind == TERNARY:
            fm.ternary.value, fm.ternary.mask = enc(s[0]), enc(s[1])
        else:
            fm.range.low, fm.range.high = enc(s[0]), enc(s[1])
