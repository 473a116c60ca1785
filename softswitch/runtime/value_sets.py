"""Parser value sets (``value_set<T>(size)``): members written by the controller, matched by the parser.

P4Runtime (spec, "ValueSetEntry"): a write is a ``MODIFY`` that replaces every member of the set at
once; ``INSERT`` and ``DELETE`` are ``INVALID_ARGUMENT``; more members than the set's size is
``RESOURCE_EXHAUSTED``. Each member is a list of ``FieldMatch`` in the set's P4Info match fields,
validated as a table entry's are (``match.parse_match``: exact fields present, no don't-care masks).
The parser matches a ``select`` key tuple against the members in the order they were written.
"""
from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .errors import P4InfoError, exhausted, exists, invalid
from .match import EXACT, LPM, OPTIONAL, RANGE, TERNARY, FieldInfo, parse_match, spec_to_proto

MODIFY = p4runtime_pb2.Update.MODIFY


def _fields(info: p4info_pb2.ValueSet) -> tuple[FieldInfo, ...]:
    out = []
    for mf in info.match:
        if mf.match_type not in (EXACT, LPM, TERNARY, RANGE, OPTIONAL) or mf.bitwidth <= 0:
            raise P4InfoError(f"value set '{info.preamble.name}': match field {mf.id} has an unsupported "
                              "match type or no bitwidth")
        out.append(FieldInfo(mf.id, mf.name or f"#{mf.id}", mf.bitwidth, mf.match_type))
    if not out:
        raise P4InfoError(f"value set '{info.preamble.name}' has no match field")
    return tuple(out)


def _matcher(fields: tuple[FieldInfo, ...], spec: tuple):
    """A function of the key tuple that is true when ``spec`` (canonical, per field) matches it."""
    tests = []
    for i, (f, s) in enumerate(zip(fields, spec)):
        if s is None:
            continue
        if f.kind in (EXACT, OPTIONAL):
            tests.append(lambda k, i=i, v=s: k[i] == v)
        elif f.kind == TERNARY:
            tests.append(lambda k, i=i, v=s[0], m=s[1]: k[i] & m == v)
        elif f.kind == LPM:
            shift = f.bitwidth - s[1]
            tests.append(lambda k, i=i, v=s[0] >> shift, sh=shift: k[i] >> sh == v)
        else:  # RANGE
            tests.append(lambda k, i=i, lo=s[0], hi=s[1]: lo <= k[i] <= hi)
    return lambda k: all(t(k) for t in tests)


class ValueSetState:
    """One value set: its members as canonical specs (for reads) and as matchers (for the parser)."""

    def __init__(self, info: p4info_pb2.ValueSet) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.size = int(info.size)
        self.fields = _fields(info)
        self._by_id = {f.id: i for i, f in enumerate(self.fields)}
        self._all_exact = all(f.kind == EXACT for f in self.fields)
        self.members: list[tuple] = []
        self._exact: set[tuple] = set()
        self._tests: list = []

    # ---- data plane -----------------------------------------------------------------------------
    def match(self, keys: tuple) -> bool:
        """Is the select key tuple (one int per match field) a member?"""
        if self._all_exact:
            return keys in self._exact
        for t in self._tests:
            if t(keys):
                return True
        return False

    # ---- P4Runtime ------------------------------------------------------------------------------
    def write(self, utype: int, vse: p4runtime_pb2.ValueSetEntry) -> None:
        if utype != MODIFY:
            raise invalid(f"value set '{self.name}': only MODIFY is allowed (it replaces every member)")
        if len(vse.members) > self.size:
            raise exhausted(f"value set '{self.name}': {len(vse.members)} members, its size is {self.size}")
        specs = []
        for n, m in enumerate(vse.members):
            spec = parse_match(self.fields, self._by_id, m.match, f"value set '{self.name}' member {n}")
            if spec in specs:  # spec "ValueSetEntry": duplicate members are ALREADY_EXISTS
                raise exists(f"value set '{self.name}': member {n} repeats member {specs.index(spec)}")
            specs.append(spec)
        self.members = specs  # all or nothing: nothing changes when a member is malformed
        self._exact = {tuple(s) for s in specs} if self._all_exact else set()
        self._tests = [_matcher(self.fields, s) for s in specs]

    def read(self) -> p4runtime_pb2.Entity:
        ent = p4runtime_pb2.Entity()
        vse = ent.value_set_entry
        vse.value_set_id = self.id
        for s in self.members:
            spec_to_proto(self.fields, s, vse.members.add().match)
        return ent
