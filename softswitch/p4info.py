"""P4Info generation from the checked IR, reproducing p4c's (p4c-bm2-ss, v1model) output.

Ids are ``(prefix << 24) | (jenkins_one_at_a_time(name) & 0xffffff)`` with linear probing on
collisions, names taken in sorted order as p4c does, ``@id`` honoured; aliases are the shortest dot-suffix unique among all entities.
"""
from __future__ import annotations

import re
from typing import Any

from p4.config.v1 import p4info_pb2, p4types_pb2

from softswitch.frontend import ir
from softswitch.frontend.errors import P4InfoError
from softswitch.frontend.types import show

PREFIX = {"action": 0x01, "table": 0x02, "value_set": 0x03, "controller_header": 0x04,
          "action_profile": 0x11, "counter": 0x12, "direct_counter": 0x13, "meter": 0x14,
          "direct_meter": 0x15, "register": 0x16, "digest": 0x17}
# annotations p4c consumes instead of copying into P4Info
_CONSUMED = {"name", "id", "brief", "description", "max_group_size", "selector_size_semantics",
             "max_member_weight", "defaultonly", "tableonly"}
_MATCH = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
          "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
          "optional": p4info_pb2.MatchField.OPTIONAL}


def jenkins_hash(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash of the UTF-8 name (what p4c uses for P4Info ids)."""
    h = 0
    for b in name.encode("utf-8"):
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class _Ids:
    """Assigns ids as p4c's P4RuntimeSymbolTable: every @id first, then, kind by kind, the
    other names in sorted order (a std::map keyed by name, strcmp order), each the hash of its
    name with linear probing on a taken id -- so of two names whose hashes collide, the one that
    sorts first gets the hash and the other the next free id."""

    def __init__(self) -> None:
        self.taken: set[int] = set()
        self.ids: dict[tuple[str, str], int] = {}

    def reserve(self, kind: str, name: str, given: int | None, loc: ir.Loc) -> None:
        if given is None:
            return
        if given >> 24 == 0:  # p4c puts the kind's prefix on an @id given without one
            given |= PREFIX[kind] << 24
        if given >> 24 != PREFIX[kind]:
            raise P4InfoError(loc, f"@id 0x{given:08x} of {kind} '{name}' has the wrong 8-bit prefix "
                                   f"(0x{PREFIX[kind]:02x} for a {kind})")
        if given in self.taken and self.ids.get((kind, name)) != given:
            raise P4InfoError(loc, f"@id 0x{given:08x} of {kind} '{name}' is already used")
        self.taken.add(given)
        self.ids[(kind, name)] = given

    def assign(self, kind: str, names) -> None:
        """Ids for every name of ``kind`` not reserved, in p4c's order (UTF-8 byte order)."""
        for name in sorted(set(names), key=lambda n: n.encode("utf-8")):
            self.get(kind, name)

    def get(self, kind: str, name: str) -> int:
        key = (kind, name)
        if key in self.ids:
            return self.ids[key]
        low = jenkins_hash(name) & 0xFFFFFF
        while True:
            i = (PREFIX[kind] << 24) | low
            if i not in self.taken:
                break
            low = (low + 1) & 0xFFFFFF
        self.taken.add(i)
        self.ids[key] = i
        return i


def field_ids(annotations: list[tuple[ir.Annotation, ...]]) -> list[int]:
    """Ids of fields (match fields, action parameters, packet metadata, value-set fields), given
    each one's annotations in order, as p4c's FieldIdAllocator gives them: every ``@id`` first;
    then, counting positions from 1, each other field the position's number or, when an ``@id``
    took it, the next free one (a field with an ``@id`` still counts as a position)."""
    given = [ir.id_annotation(a) for a in annotations]
    taken = {g for g in given if g is not None}
    out, index = [], 1
    for g in given:
        if g is not None:
            out.append(g)
            index += 1
            continue
        while index in taken:
            index += 1
        out.append(index)
        taken.add(index)
    return out


def _annotations(anns: tuple[ir.Annotation, ...]) -> list[str]:
    return [a.p4info_text() for a in anns if a.name not in _CONSUMED and a.structured is None]


def _structured(repeated: Any, anns: tuple[ir.Annotation, ...]) -> None:
    """Adds the structured annotations ``@name[...]`` as p4c does: a key-value list, or an
    expression list; strings, integers (int64) and booleans as such; ``@name[]`` only a name."""
    for a in anns:
        if a.structured is None:
            continue
        sa = repeated.add()
        sa.name = a.name
        if a.structured and a.structured[0][0] is not None:
            for k, v in a.structured:
                kv = sa.kv_pair_list.kv_pairs.add()
                kv.key = k
                _expression(kv.value, v)
        else:
            for _, v in a.structured:
                _expression(sa.expression_list.expressions.add(), v)


def _expression(e: Any, v: str | int | bool) -> None:
    if isinstance(v, bool):
        e.bool_value = v
    elif isinstance(v, int):
        e.int64_value = v
    else:
        e.string_value = v


def _preamble(pre: p4info_pb2.Preamble, pid: int, name: str, alias: str,
              anns: tuple[ir.Annotation, ...]) -> None:
    pre.id = pid
    pre.name = name
    pre.alias = alias
    pre.annotations.extend(_annotations(anns))
    _structured(pre.structured_annotations, anns)
    _doc(pre, anns)


def _doc(msg: p4info_pb2.Preamble | p4info_pb2.MatchField | p4info_pb2.Action.Param | p4info_pb2.PkgInfo,
         anns: tuple[ir.Annotation, ...]) -> None:
    """@brief / @description of an entity (its preamble), match field, action parameter or the
    package, which p4c writes to ``doc`` and not to ``annotations``."""
    brief = ir.find_annotation(anns, "brief")
    desc = ir.find_annotation(anns, "description")
    if brief is not None and brief.args:
        msg.doc.brief = str(brief.args[0])
    if desc is not None and desc.args:
        msg.doc.description = str(desc.args[0])


def _user_type(t: ir.Type, info: p4info_pb2.P4TypeInfo) -> None:
    """p4c describes the user-defined type of a match field, action parameter or controller
    header field in type_info: serializable enums and newtypes."""
    if (isinstance(t, ir.EnumT) and t.underlying is not None) or (isinstance(t, ir.BitT) and t.newtype is not None):
        _type_spec(p4types_pb2.P4DataTypeSpec(), t, info)


def _typed_width(msg: p4info_pb2.MatchField | p4info_pb2.Action.Param | p4info_pb2.ControllerPacketMetadata.Metadata,
                 t: ir.Type) -> None:
    """bitwidth and type_name as p4c sets them: a newtype is named, and one with a
    @p4runtime_translation has the translated width (none for a string)."""
    nt = t.newtype if isinstance(t, ir.BitT) else None
    if nt is None:
        msg.bitwidth = ir.type_width(t)
        return
    msg.type_name.name = nt.name
    if nt.translation is None:
        msg.bitwidth = nt.underlying.width
    elif nt.translation[1] is not None:
        msg.bitwidth = nt.translation[1]


def _new_type(info: p4info_pb2.P4TypeInfo, nt: ir.NewType) -> None:
    if nt.name in info.new_types:
        return
    spec = info.new_types[nt.name]
    if nt.translation is None:
        spec.original_type.bitstring.bit.bitwidth = nt.underlying.width
    else:
        spec.translated_type.uri = nt.translation[0]
        if nt.translation[1] is None:
            spec.translated_type.sdn_string.SetInParent()
        else:
            spec.translated_type.sdn_bitwidth = nt.translation[1]


_PKGINFO_KEYS = ("name", "version", "organization", "contact", "url", "arch")
_KV = re.compile(r'\s*(\w+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,]*?)\s*(?:,|$)')


def _pkg_info(pkg: p4info_pb2.PkgInfo, anns: tuple[ir.Annotation, ...]) -> None:
    """arch, then the keys of @pkginfo(name="...", version="...", ...) on the main package (a
    user's arch replaces the compiler's, as in p4c; unknown keys are ignored), its other
    annotations, and its @brief/@description as doc."""
    pkg.arch = "v1model"
    for a in anns:
        if a.name != "pkginfo" or not a.body:
            continue
        pos = 0
        while pos < len(a.body):
            m = _KV.match(a.body, pos)
            if m is None or m.end() == pos:
                raise P4InfoError(a.loc, f"@pkginfo: cannot read '{a.body[pos:]}' (expected key=\"value\")")
            pos = m.end()
            key, value = m.group(1), m.group(2)
            if key not in _PKGINFO_KEYS:
                continue
            if not value.startswith('"'):
                raise P4InfoError(a.loc, f"@pkginfo: the value of '{key}' is not a string")
            setattr(pkg, key, value[1:-1].replace('\\"', '"'))
    pkg.annotations.extend(x for x in _annotations(anns) if not x.startswith("@pkginfo"))
    _doc(pkg, anns)


def _aliases(names: list[str]) -> dict[str, str]:
    """Shortest dot-separated suffix of each name that is not a suffix of any other name."""
    parts = {n: n.split(".") for n in set(names)}
    counts: dict[str, int] = {}
    for p in parts.values():
        for k in range(1, len(p) + 1):
            s = ".".join(p[-k:])
            counts[s] = counts.get(s, 0) + 1
    out = {}
    for n, p in parts.items():
        out[n] = n
        for k in range(1, len(p) + 1):
            s = ".".join(p[-k:])
            if counts[s] == 1:
                out[n] = s
                break
    return out


def _type_spec(spec: p4info_pb2.P4DataTypeSpec, t: ir.Type, info: p4info_pb2.P4TypeInfo,
               loc: ir.Loc | None = None) -> None:
    if isinstance(t, ir.BitT) and t.newtype is not None:
        spec.new_type.name = t.newtype.name
        _new_type(info, t.newtype)
    elif isinstance(t, ir.BitT):
        spec.bitstring.bit.bitwidth = t.width
    elif isinstance(t, ir.IntT):
        spec.bitstring.int.bitwidth = t.width
    elif isinstance(t, ir.BoolT):
        spec.bool.SetInParent()
    elif isinstance(t, ir.StructT):
        spec.struct.name = t.name
        _add_struct(info, t, loc)
    elif isinstance(t, ir.HeaderT):
        spec.header.name = t.name
        if t.name not in info.headers:
            h = info.headers[t.name]
            for name, ft, _anns in header_leaves(t):
                m = h.members.add()
                m.name = name
                if isinstance(ft, ir.VarbitT):
                    m.type_spec.varbit.max_bitwidth = ft.max_width
                elif isinstance(ft, ir.IntT):
                    m.type_spec.int.bitwidth = ft.width  # p4c: the field's bitstring, int<W> too
                else:
                    m.type_spec.bit.bitwidth = ir.type_width(ft)
    elif isinstance(t, ir.EnumT) and t.underlying is not None:
        spec.serializable_enum.name = t.name
        _add_ser_enum(info, t)
    elif isinstance(t, ir.EnumT):  # a plain enum: by name, its members listed in type_info
        spec.enum.name = t.name
        if t.name not in info.enums:
            en = info.enums[t.name]
            for n in t.members:
                en.members.add().name = n
    elif isinstance(t, ir.ErrorT):
        spec.error.SetInParent()
        info.error.SetInParent()  # its members: every error, filled in by build_p4info
    elif isinstance(t, ir.TupleT):
        spec.tuple.SetInParent()
        for x in t.elems:
            _type_spec(spec.tuple.members.add(), x, info, loc)
    else:
        raise P4InfoError(loc, f"type {show(t)} cannot appear in P4Info")


def header_leaves(t: ir.HeaderT) -> list[tuple[str, ir.Type, tuple[ir.Annotation, ...]]]:
    """The fields of a header as P4Info lists them: a struct-typed field (allowed in a header
    when it holds only bit/int/bool/serializable-enum fields, nested) is flattened into its
    leaves, named by their path (``row.alt0.valid``), as p4c's control-plane flattening names
    them; a leaf's annotations are merged from the path, the innermost winning, as p4c does.
    In a header without struct fields a field's ``@name`` is its name, as p4c has it."""
    out: list[tuple[str, ir.Type, tuple[ir.Annotation, ...]]] = []

    def walk(fields: tuple[ir.Field, ...], prefix: str, anns: tuple[ir.Annotation, ...]) -> None:
        for f in fields:
            if isinstance(f.type, ir.StructT):
                walk(f.type.fields, f"{prefix}{f.name}.", f.annotations + anns)
            else:
                merged: list[ir.Annotation] = []
                for a in f.annotations + anns:  # innermost first: a name seen already is skipped
                    if all(a.name != b.name for b in merged):
                        merged.append(a)
                out.append((prefix + f.name, f.type, tuple(merged)))

    walk(t.fields, "", ())
    if not any(isinstance(f.type, ir.StructT) for f in t.fields):
        out = [(_control_name(a, n), ft, a) for n, ft, a in out]
    return out


def _add_ser_enum(info: p4info_pb2.P4TypeInfo, t: ir.Type) -> None:
    """Describes a serializable enum in ``type_info`` (once).  p4c does this for every one a
    register, digest, match field or action parameter uses; the field or parameter itself
    only carries its bitwidth."""
    if not isinstance(t, ir.EnumT) or t.underlying is None or t.name in info.serializable_enums:
        return
    se = info.serializable_enums[t.name]
    se.underlying_type.bitwidth = t.underlying.width
    for n, v in zip(t.members, t.values):
        m = se.members.add()
        m.name = n
        m.value = (v & ((1 << t.underlying.width) - 1)).to_bytes(max(1, (t.underlying.width + 7) // 8), "big")  # two's complement when signed


def _add_struct(info: p4info_pb2.P4TypeInfo, t: ir.StructT, loc: ir.Loc | None = None) -> None:
    if t.name in info.structs:
        return
    s = info.structs[t.name]
    for f in t.fields:
        m = s.members.add()
        m.name = _control_name(f.annotations, f.name)
        _type_spec(m.type_spec, f.type, info, loc)


def _selector_annotations(ap: p4info_pb2.ActionProfile, e: ir.ExternInstance) -> None:
    """@max_group_size, and @selector_size_semantics("sum_of_weights" | "sum_of_members") with
    @max_member_weight (read only with sum_of_members), as p4c reads them on a selector."""
    def int32(a: ir.Annotation, what: str) -> int:
        v = int(a.args[0])
        if not 0 <= v < 1 << 31:  # an int32 in P4Info
            raise P4InfoError(a.loc if a.loc is not ir.NO_LOC else e.loc,
                              f"@{what}({v}) of '{e.name}' does not fit P4Info's 32-bit field")
        return v

    mgs = ir.find_annotation(e.annotations, "max_group_size")
    if mgs is not None and mgs.args:
        ap.max_group_size = int32(mgs, "max_group_size")
    sem = ir.find_annotation(e.annotations, "selector_size_semantics")
    if sem is None:
        return
    value = str(sem.args[0]).lower() if len(sem.args) == 1 else ""
    if value == "sum_of_weights":
        ap.sum_of_weights.SetInParent()
    elif value == "sum_of_members":
        ap.sum_of_members.SetInParent()
        mmw = ir.find_annotation(e.annotations, "max_member_weight")
        if mmw is not None and mmw.args:
            ap.sum_of_members.max_member_weight = int32(mmw, "max_member_weight")
    else:
        raise P4InfoError(sem.loc if sem.loc is not ir.NO_LOC else e.loc,
                          f"@selector_size_semantics of '{e.name}' must be \"sum_of_weights\" or "
                          f"\"sum_of_members\", not {sem.body}")


def _bytes(value: int, width: int) -> bytes:
    """``value`` as P4Runtime's bytestring of a ``width``-bit field: its low ``width`` bits (a
    negative int<W> value as its two's-complement bits, not the whole bytes' pattern)."""
    n = max(1, (width + 7) // 8)
    return (value & ((1 << width) - 1) if width else 0).to_bytes(n, "big")


def _control_name(anns: tuple[ir.Annotation, ...], declared: str) -> str:
    """A parameter's or field's control-plane name: its ``@name``, else its declared name."""
    a = ir.find_annotation(anns, "name")
    return str(a.args[0]) if a is not None and a.args else declared


def _is_hidden(anns: tuple[ir.Annotation, ...]) -> bool:
    return any(a.name == "hidden" for a in anns)


def build_p4info(program: ir.Program, private: bool = False) -> p4info_pb2.P4Info:
    """The P4Info p4c would produce for ``program``.

    As p4c's P4RuntimeSerializer, it leaves out ``@hidden`` tables (with their direct counters
    and meters, and an action profile only they use) and ``@hidden`` actions; they still take part in id assignment and aliases, as in p4c's
    symbol table.  ``private=True`` keeps them: the switch's own description of its runtime
    state (hidden tables still run, with their entries and default actions), never published."""
    p = p4info_pb2.P4Info()
    _pkg_info(p.pkg_info, program.main_annotations)
    # in p4c's order: its front end has inlined every control instance (see the control's
    # lowering), so tables, externs and actions come control by control, each control's in the
    # order of its flattened locals; top-level extern instances first
    tables = program.all_tables()
    externs = program.all_externs()
    ordered = [(ci, i, an) for ci, c in enumerate(program.controls) for i, an in enumerate(c.actions)]
    # used actions once per P4Info name: actions may share one (p4c lists the name once and
    # bmv2 resolves it in each table's own list), if they take the same control-plane data
    by_name: dict[str, ir.Action] = {}
    used: set[str] = set()
    for c in program.controls:
        used |= {r.action for t in c.tables.values() for r in t.actions}
        # an action the apply block calls directly: p4c wraps the call in a hidden table and lists
        # the action, unless it is @hidden (ONOS fabric.p4's egress_next.set_mpls: absent from
        # p4c's P4Info, left out below with every @hidden action)
        used |= set(ir.actions_called_in_order(c.body, live=True))
    for _, _, an in ordered:
        a = program.actions[an]
        if an not in used or a.function:
            continue
        first = by_name.setdefault(a.name, a)
        if [(q.name, q.type) for q in first.data_params] != [(q.name, q.type) for q in a.data_params]:
            raise P4InfoError(a.loc, f"actions named '{a.name}' at {first.loc} and here take different "
                                     "parameters; P4Info can list only one")
        if None not in (first.id, a.id) and first.id != a.id:
            raise P4InfoError(a.loc, f"actions named '{a.name}' at {first.loc} and here have different @id")
    actions = list(by_name.values())
    hidden_tables = {t.name for t in tables if _is_hidden(t.annotations)}
    hidden_actions = {a.name for a in actions if _is_hidden(a.annotations)}
    if not private:
        for t in tables:
            if t.name in hidden_tables:
                continue
            for an in [r.action for r in t.actions] + [t.default_action.action]:
                a = program.actions[an]
                if a.name in hidden_actions:
                    raise P4InfoError(t.loc, f"table '{t.name}' uses the @hidden action '{a.name}': p4c leaves "
                                             "the action out of P4Info but not the table's reference to it; "
                                             "unsupported (drop @hidden from the action, or hide the table)")
    ids = _Ids()
    kinds_of = {"counter": "counter", "direct_counter": "direct_counter", "meter": "meter",
                "direct_meter": "direct_meter", "register": "register", "action_profile": "action_profile",
                "action_selector": "action_profile"}
    for t in tables:
        ids.reserve("table", t.name, t.id, t.loc)
    for a in actions:
        ids.reserve("action", a.name, a.id, a.loc)
    for e in externs:
        ids.reserve(kinds_of[e.kind], e.name, e.id, e.loc)
    for ch in program.controller_headers:
        ids.reserve("controller_header", ch.header.name, ch.id, ch.loc)
    # value sets and digests as p4c's front end leaves them: not a value set no reachable parser
    # state names, nor a digest only an action it removes calls (the switch's private description
    # keeps them, its generated code being made from every declaration; ids after the others')
    live_vs = ir.live_value_sets(program.parser)
    value_sets = program.parser.value_sets if private else live_vs
    live_d = ir.live_digests(program)
    digests = [d for d in program.digests if private or d.name in live_d]
    for vs in value_sets:
        ids.reserve("value_set", vs.name, vs.id, vs.loc)
    all_names = [t.name for t in tables] + [a.name for a in actions] + [e.name for e in externs] + \
        [ch.header.name for ch in program.controller_headers] + [d.name for d in digests if d.name in live_d] + \
        [vs.name for vs in live_vs]
    alias = _aliases(all_names)
    for n in [vs.name for vs in value_sets] + [d.name for d in digests]:
        alias.setdefault(n, n)
    # every symbol p4c's symbol table holds takes an id, shown in P4Info or not (@hidden ones)
    ids.assign("table", [t.name for t in tables])
    ids.assign("action", [a.name for a in actions])
    for kind in sorted(set(kinds_of.values())):
        ids.assign(kind, [e.name for e in externs if kinds_of[e.kind] == kind])
    ids.assign("controller_header", [ch.header.name for ch in program.controller_headers])
    ids.assign("value_set", [vs.name for vs in live_vs])
    ids.assign("value_set", [vs.name for vs in value_sets])
    ids.assign("digest", [d.name for d in digests if d.name in live_d])
    ids.assign("digest", [d.name for d in digests])

    for t in tables:
        if t.name in hidden_tables and not private:
            continue
        pt = p.tables.add()
        _preamble(pt.preamble, ids.get("table", t.name), t.name, alias[t.name], t.annotations)
        # ids over every key element, selector inputs too (p4c allocates them, then skips those)
        key_ids = dict(zip(map(id, t.keys), field_ids([k.annotations for k in t.keys])))
        for k in t.match_keys:
            mf = pt.match_fields.add()
            mf.id = key_ids[id(k)]
            mf.name = k.name
            mf.annotations.extend(_annotations(k.annotations))
            _structured(mf.structured_annotations, k.annotations)
            _doc(mf, k.annotations)
            if isinstance(k.expr.type, ir.BitT) and k.expr.type.newtype is not None:
                _typed_width(mf, k.expr.type)
            else:
                mf.bitwidth = k.width
            mf.match_type = _MATCH[k.match_kind]
            _user_type(k.expr.type, p.type_info)
        for r in t.actions:
            ar = pt.action_refs.add()
            ar.id = ids.get("action", program.actions[r.action].name)
            scope = {"DEFAULT_ONLY": "defaultonly", "TABLE_ONLY": "tableonly"}.get(r.scope)
            if scope == "defaultonly":
                ar.scope = p4info_pb2.ActionRef.DEFAULT_ONLY
            elif scope == "tableonly":
                ar.scope = p4info_pb2.ActionRef.TABLE_ONLY
            # the reference's annotations in source order, @defaultonly/@tableonly among them
            texts = [f"@{a.name}" if a.name in ("defaultonly", "tableonly") else a.p4info_text()
                     for a in r.annotations if a.structured is None
                     and (a.name in ("defaultonly", "tableonly") or a.name not in _CONSUMED)]
            if scope is not None and f"@{scope}" not in texts:
                texts.insert(0, f"@{scope}")
            ar.annotations.extend(texts)
            _structured(ar.structured_annotations, r.annotations)
        da = t.default_action
        da_id = ids.get("action", program.actions[da.action].name)
        if da.const:
            pt.const_default_action_id = da_id
        pt.initial_default_action.action_id = da_id
        act = program.actions[da.action]
        for pid, prm, c in zip(field_ids([q.annotations for q in act.data_params]), act.data_params, da.args):
            arg = pt.initial_default_action.arguments.add()
            arg.param_id = pid
            arg.value = _bytes(int(c.value), ir.type_width(prm.type))
        if t.implementation is not None:
            pt.implementation_id = ids.get("action_profile", t.implementation)
        for res, kind in ((t.counters, "direct_counter"), (t.meters, "direct_meter")):
            if res is not None:
                pt.direct_resource_ids.append(ids.get(kind, res))
        pt.size = t.size
        if t.support_timeout:
            pt.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if t.const_entries is not None:
            if t.entries_const:
                pt.is_const_table = True
            pt.has_initial_entries = True

    for a in actions:
        if a.name in hidden_actions and not private:
            continue
        pa = p.actions.add()
        _preamble(pa.preamble, ids.get("action", a.name), a.name, alias[a.name], a.annotations)
        for i, prm in zip(field_ids([q.annotations for q in a.data_params]), a.data_params):
            if isinstance(prm.type, ir.EnumT) and prm.type.underlying is None:
                # p4c lists it by type name with the enum in type_info, but neither bmv2's
                # P4Runtime server nor softswitch's runtime can carry a value without a width
                raise P4InfoError(prm.loc, f"unsupported: action parameter '{prm.name}' of '{a.name}' has the "
                                           f"plain enum type '{prm.type.name}' (give the enum a bit<W> type)")
            pp = pa.params.add()
            pp.id = i
            pp.name = _control_name(prm.annotations, prm.name)
            pp.annotations.extend(_annotations(prm.annotations))
            _structured(pp.structured_annotations, prm.annotations)
            _doc(pp, prm.annotations)
            _typed_width(pp, prm.type)
            _user_type(prm.type, p.type_info)

    def ext(kind: str) -> list[ir.ExternInstance]:
        return [e for e in externs if e.kind == kind]

    def shown(tn: str) -> bool:
        return private or tn not in hidden_tables

    profiles = [e for e in externs if e.kind in ("action_profile", "action_selector")]
    for e in profiles:
        if e.tables and not any(shown(tn) for tn in e.tables):
            continue  # only hidden tables use it
        ap = p.action_profiles.add()
        _preamble(ap.preamble, ids.get("action_profile", e.name), e.name, alias[e.name], e.annotations)
        # p4c collects them in a set of table names: in name order
        ap.table_ids.extend(ids.get("table", tn) for tn in sorted(e.tables, key=lambda n: n.encode("utf-8"))
                            if shown(tn))
        if e.kind == "action_selector":
            ap.with_selector = True
        ap.size = e.size or 0
        if e.kind == "action_selector":  # p4c ignores these three on a plain action_profile
            _selector_annotations(ap, e)
    unit_c = {"PACKETS": p4info_pb2.CounterSpec.PACKETS, "BYTES": p4info_pb2.CounterSpec.BYTES,
              "BOTH": p4info_pb2.CounterSpec.BOTH}
    unit_m = {"PACKETS": p4info_pb2.MeterSpec.PACKETS, "BYTES": p4info_pb2.MeterSpec.BYTES}
    # counters and meters, indexed or direct: same preamble + unit, then a size or a table
    for kind, repeated, units in (("counter", p.counters, unit_c),
                                  ("direct_counter", p.direct_counters, unit_c),
                                  ("meter", p.meters, unit_m),
                                  ("direct_meter", p.direct_meters, unit_m)):
        insts = ext(kind)
        if kind.startswith("direct_"):  # p4c adds one with its table (addTableProperties)
            tpos = {t.name: i for i, t in enumerate(tables)}
            insts.sort(key=lambda e: tpos.get(e.tables[0], -1) if e.tables else -1)
        for e in insts:
            if kind.startswith("direct_") and not (e.tables and shown(e.tables[0])):
                continue  # no table uses it (p4c's unused-counter-bmv2 sample), or a hidden one
            msg = repeated.add()
            _preamble(msg.preamble, ids.get(kind, e.name), e.name, alias[e.name], e.annotations)
            msg.spec.unit = units[e.unit or "PACKETS"]
            if not kind.startswith("direct_"):
                msg.size = e.size or 0
            elif e.tables:
                msg.direct_table_id = ids.get("table", e.tables[0])
    for ch in program.controller_headers:
        if _is_hidden(ch.annotations) or any(_is_hidden(fa) for _, _, fa in header_leaves(ch.header)):
            # p4c leaves such a header or field out of P4Info, but PacketIn/PacketOut metadata are
            # laid out from P4Info (here and in bmv2's P4Runtime server): it would misparse them
            raise P4InfoError(ch.loc, f"unsupported: @hidden on controller header '{ch.name}' or one of its "
                                      "fields (P4Runtime packet metadata are laid out from P4Info)")
        cm = p.controller_packet_metadata.add()
        # p4c names and aliases it by the @controller_header string, while its symbol table (ids,
        # the suffixes every alias is chosen among) holds the header type's name
        _preamble(cm.preamble, ids.get("controller_header", ch.header.name), ch.name, ch.name,
                  ch.annotations)
        leaves = header_leaves(ch.header)
        for i, (fname, ftype, fanns) in zip(field_ids([fa for _, _, fa in leaves]), leaves):
            if isinstance(ftype, ir.VarbitT):
                raise P4InfoError(ch.loc, f"controller header '{ch.name}' cannot have a varbit field")
            md = cm.metadata.add()
            md.id = i
            md.name = fname
            md.annotations.extend(_annotations(fanns))
            _structured(md.structured_annotations, fanns)
            _typed_width(md, ftype)
            _user_type(ftype, p.type_info)
    for vs in value_sets:  # p4c: a bit<W> set has one unnamed exact field, a struct set one per field
        pv = p.value_sets.add()
        _preamble(pv.preamble, ids.get("value_set", vs.name), vs.name, alias[vs.name], vs.annotations)
        members = {f.name: f for f in vs.type.fields} if isinstance(vs.type, ir.StructT) else {}
        vs_ids = field_ids([members[f.name].annotations if f.name in members else () for f in vs.fields])
        for i, f in zip(vs_ids, vs.fields):
            mf = pv.match.add()
            mf.id = i
            if f.name:
                mf.name = _control_name(members[f.name].annotations, f.name) if f.name in members else f.name
            mf.bitwidth = f.width
            mf.match_type = _MATCH[f.match_kind]
            if f.name in members:  # a struct member's annotations but @match, and its doc
                anns = members[f.name].annotations
                mf.annotations.extend(a for a in _annotations(anns) if not a.startswith(("@match(", "@match ")))
                _doc(mf, anns)
        pv.size = vs.size
    for e in ext("register"):
        pr = p.registers.add()
        _preamble(pr.preamble, ids.get("register", e.name), e.name, alias[e.name], e.annotations)
        _type_spec(pr.type_spec, e.type_args[0], p.type_info, e.loc)
        pr.size = e.size or 0
    for d in digests:
        pd = p.digests.add()
        _preamble(pd.preamble, ids.get("digest", d.name), d.name, alias[d.name], ())
        _type_spec(pd.type_spec, d.type, p.type_info, d.loc)
    if p.type_info.HasField("error"):  # p4c lists every error, in declaration order
        p.type_info.error.members.extend(program.errors)
    if _p4c_touches_type_info(program, p, used):
        p.type_info.SetInParent()
    return p


def _p4c_touches_type_info(program: ir.Program, p: p4info_pb2.P4Info, used: set[str]) -> bool:
    """Does p4c's P4Info have a ``type_info`` (maybe empty)?  p4c creates it on the way
    (``mutable_type_info()``) when it adds a table (``addTableProperties``), an extern instance
    (``addExternInstance``, before it looks at the kind), an action parameter (``addAction``) or
    an extern function called in a control's apply block or in one of its actions
    (``analyzeControl``: ``mark_to_drop``, ``hash``, ``digest``, ``verify_checksum`` ...); a
    program with none of them has no ``type_info`` (p4c's issue2498-bmv2 sample).  Controller
    headers and value sets are counted too."""
    if p.tables or program.all_externs() or p.controller_packet_metadata or p.value_sets or p.digests:
        return True
    if any(a.params for a in p.actions) or p.type_info.ListFields():
        return True
    seen: set[str] = set()
    roots: list[object] = [c.body for c in program.controls] + \
        [program.actions[an].body for an in used if an in program.actions]
    while roots:
        for n in ir.live_nodes(roots.pop()):
            if isinstance(n, ir.BuiltinCall):
                return True
            if isinstance(n, ir.ActionCall) and n.action not in seen and n.action in program.actions:
                seen.add(n.action)
                roots.append(program.actions[n.action].body)
    return False


def p4info_text(p4info: p4info_pb2.P4Info) -> str:
    """P4Info in text format with p4c's header comments."""
    from google.protobuf import text_format

    return ("# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"
            + text_format.MessageToString(p4info))
