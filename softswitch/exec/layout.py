"""Python classes for P4 headers, structs and header stacks, generated once per program.

Every header/struct becomes a ``__slots__`` class; header fields are attributes ``f_<name>`` and
the validity bit is ``valid``; a stack holds ``arr`` (its elements) and ``nxt`` (nextIndex).
Header extract/emit code works on one big integer per header with precomputed shifts and masks.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from softswitch.frontend import ir


def signed_width(t: ir.Type | None) -> int | None:
    """The width W if softswitch holds values of ``t`` signed (two's complement, as Python ints
    below zero): ``int<W>``, and a serializable enum over ``int<W>`` (its constants are its
    underlying type's values, so storage of the enum type must hold them the same way); else None."""
    if isinstance(t, ir.EnumT) and isinstance(t.underlying, ir.IntT):
        t = t.underlying
    return t.width if isinstance(t, ir.IntT) else None


def zero_code(t: ir.Type, names: TypeNames) -> str:
    """Python expression for a fresh zero/invalid value of ``t``."""
    if isinstance(t, ir.BoolT):
        return "False"
    if isinstance(t, (ir.HeaderT, ir.StructT, ir.StackT)):
        return f"{names.cls(t)}()"
    if isinstance(t, ir.TupleT):  # a tuple value is a Python tuple of its elements
        return "(" + "".join(zero_code(x, names) + ", " for x in t.elems) + ")"
    return "0"


@dataclass
class TypeNames:
    """Maps each aggregate type to the name of its generated class, and emits class sources."""

    classes: dict[object, str] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def cls(self, t: ir.Type) -> str:
        """Class name for a header/struct/stack type, generating it on first use."""
        key = t
        name = self.classes.get(key)
        if name is not None:
            return name
        name = f"T{len(self.classes)}"
        self.classes[key] = name
        if isinstance(t, ir.HeaderT):
            self.sources.append(_header_source(name, t, self))
        elif isinstance(t, ir.StructT):
            self.sources.append(_struct_source(name, t, self))
        elif isinstance(t, ir.StackT):
            self.sources.append(_stack_source(name, t, self))
        else:
            raise TypeError(f"no class for type {t}")
        return name


def header_fields(t: ir.HeaderT) -> list[tuple[str, int, str]]:
    """(attribute, width, kind) per field on the wire, in order; kind is 'bit', 'int', 'bool' or
    'varbit' (width: the maximum; the current width is the object's ``vbw``).  A struct-typed
    field (allowed in a header when it holds only such fields, nested) contributes its leaves,
    as p4c's bmv2 back end flattens it: the attribute is a path, ``f_row.f_alt0``."""
    out: list[tuple[str, int, str]] = []

    def leaves(fields: tuple[ir.Field, ...], prefix: str) -> None:
        for f in fields:
            if isinstance(f.type, ir.VarbitT):
                out.append((f"{prefix}f_{f.name}", f.type.max_width, "varbit"))
            elif isinstance(f.type, ir.StructT):
                leaves(f.type.fields, f"{prefix}f_{f.name}.")
            else:
                w = ir.type_width(f.type)
                kind = "int" if signed_width(f.type) else "bool" if isinstance(f.type, ir.BoolT) else "bit"
                out.append((f"{prefix}f_{f.name}", w, kind))

    leaves(t.fields, "")
    return out


def _field_expr(value: str, w: int, kind: str, shift: int, total: int) -> str:
    """Expression for a ``w``-bit field at bit ``shift`` of the ``total``-bit integer ``value``
    (signed for ``int``, a bool for ``bool``): one place for the integer and the struct paths."""
    m = (1 << w) - 1
    if shift == 0:
        e = value if w == total else f"{value} & {m:#x}"
    elif shift + w == total:
        e = f"{value} >> {shift}"
    else:
        e = f"({value} >> {shift}) & {m:#x}"
    if kind == "int":
        h = 1 << (w - 1)
        e = f"((({e}) ^ {h:#x}) - {h:#x})"
    elif kind == "bool":
        e = f"({e}) != 0"
    return e


def unpack_lines(t: ir.HeaderT, target: str, value: str, indent: str) -> list[str]:
    """Lines assigning every field of header object ``target`` from the integer ``value``."""
    lines = []
    total = t.width
    shift = total
    for attr, w, kind in header_fields(t):
        shift -= w
        lines.append(f"{indent}{target}.{attr} = {_field_expr(value, w, kind, shift, total)}")
    lines.append(f"{indent}{target}.valid = True")
    return lines


def pack_expr(t: ir.HeaderT, src: str) -> str:
    """Expression for the header object's fields packed into one integer (MSB first)."""
    if t.varbit is not None:
        return _pack_varbit_expr(t, src)
    parts = []
    shift = t.width
    for attr, w, kind in header_fields(t):
        shift -= w
        v = f"{src}.{attr}"
        if kind == "int":
            v = f"({v} & {(1 << w) - 1:#x})"
        elif kind == "bool":
            v = f"int({v})"
        parts.append(f"({v} << {shift})" if shift else v)
    return " | ".join(parts) if parts else "0"


def _pack_varbit_expr(t: ir.HeaderT, src: str) -> str:
    """``pack_expr`` for a header with a varbit field: fields before it shift by its current
    width ``src.vbw``."""
    fields = header_fields(t)
    vi = next(i for i, (_, _, k) in enumerate(fields) if k == "varbit")
    after = sum(w for _, w, _ in fields[vi + 1:])
    parts = []
    shift = after
    for attr, w, kind in reversed(fields[:vi]):
        v = f"{src}.{attr}"
        if kind == "int":
            v = f"({v} & {(1 << w) - 1:#x})"
        elif kind == "bool":
            v = f"int({v})"
        parts.append(f"({v} << ({shift} + {src}.vbw))")
        shift += w
    parts.append(f"({src}.{fields[vi][0]} << {after})")
    shift = after
    for attr, w, kind in fields[vi + 1:]:
        shift -= w
        v = f"{src}.{attr}"
        if kind == "int":
            v = f"({v} & {(1 << w) - 1:#x})"
        elif kind == "bool":
            v = f"int({v})"
        parts.append(f"({v} << {shift})" if shift else v)
    return " | ".join(parts)


def _zero_lines(attrs: list[str], zero: dict[str, str], indent: str) -> list[str]:
    """Zero every field, with one chained assignment per immutable zero value: fewer bytecodes
    than one statement per field, and header/metadata objects are created for every packet."""
    lines = [f"{indent}self.{a} = {zero[a]}" for a in attrs if zero[a] not in ("0", "False")]
    for z in ("0", "False"):  # only these are shared: any other zero value may be mutable
        same = [a for a in attrs if zero[a] == z]
        if same:
            lines.append(indent + " = ".join(f"self.{a}" for a in same) + f" = {z}")
    return lines


def _header_source(name: str, t: ir.HeaderT, names: TypeNames) -> str:
    fields = header_fields(t)  # the wire's leaves (paths into nested structs)
    leaves = [a for a, _, _ in fields]
    # the object's own attributes: one per declared field; a struct-typed field holds an object
    attrs = [f"f_{f.name}" for f in t.fields]
    nested = {f"f_{f.name}" for f in t.fields if isinstance(f.type, ir.StructT)}
    zero = {f"f_{f.name}": zero_code(f.type, names) for f in t.fields}
    nbytes = (t.width + 7) // 8
    vb = t.varbit is not None
    state = attrs + (["vbw"] if vb else [])  # vbw: the varbit field's current width in bits
    zero["vbw"] = "0"
    L = [f"class {name}:",
         f"    \"\"\"header {t.name}\"\"\"",
         # dirty: set by the generated code when a field is stored or the header is set invalid
         # (``usage.field_written_headers``), and whenever it becomes valid (extract, setValid,
         # copy_from), so the reset tests one flag and skips a clean invalid header
         # raw: the bytes the last extract read, for the deparser to emit as they are; read only
         # for a header of the headers struct that only extract writes (``usage.extract_only_headers``),
         # and only while it is valid: extract sets it, and anything else that makes a header
         # valid (setValid of an invalid one, an assignment, an initialiser) clears it
         f"    __slots__ = {tuple(['valid', 'dirty', 'raw'] + state)!r}",
         f"    P4NAME = {t.name!r}",
         f"    NBYTES = {nbytes}",
         "    def __init__(self):",
         "        self.valid = self.dirty = False",
         "        self.raw = None"]
    L += _zero_lines(state, zero, "        ")
    L += ["    def copy(self):",
          f"        n = {name}.__new__({name})",
          "        n.valid = self.valid",
          "        n.dirty = self.dirty",
          "        n.raw = self.raw"]
    L += [f"        n.{a} = self.{a}.copy()" if a in nested else f"        n.{a} = self.{a}" for a in state]
    L += ["        return n",
          # bmv2's assign_header: from an invalid header only the validity is copied (the
          # destination keeps its fields); p4c lowers a header assignment, {#} included, to it
          "    def copy_from(self, o):",
          "        self.dirty = True",
          "        self.raw = None",
          "        if not o.valid:",
          "            self.valid = False",
          "            return",
          "        self.valid = True"]
    L += [f"        self.{a}.copy_from(o.{a})" if a in nested else f"        self.{a} = o.{a}" for a in state]
    L += ["    def set_valid(self):",  # True when it was invalid (bmv2 then counts its bytes)
          "        if not self.valid:",
          "            self.valid = self.dirty = True",
          "            self.raw = None"]
    L += _zero_lines(state, zero, "            ")
    L += ["            return True"]
    L += ["    def eq(self, o):",
          "        if self.valid != o.valid:",
          "            return False",
          "        return not self.valid or ("
          + (" and ".join(f"self.{a}.eq(o.{a})" if a in nested else f"self.{a} == o.{a}" for a in state)
             or "True") + ")",
          "    @staticmethod",
          f"    def make({', '.join(['_v'] + [f'a{i}' for i in range(len(attrs))])}):",
          f"        n = {name}.__new__({name})",
          "        n.valid = _v",
          "        n.dirty = True",
          "        n.raw = None"]
    L += [f"        n.{a} = a{i}" for i, a in enumerate(attrs)]
    L += ["        n.vbw = 0"] if vb else []
    L += ["        return n",
          "    def to_int(self):",
          f"        return {pack_expr(t, 'self')}",
          "    def emit(self):",
          f"        return ({pack_expr(t, 'self')}).to_bytes("
          + (f"({t.width} + self.vbw) // 8" if vb else f"{nbytes}") + ", 'big')"]
    if not vb:  # lookahead<H>(): every field from the header's bits (MSB first)
        L += ["    def set_int(self, v):", "        self.dirty = True", "        self.raw = None"]
        L += unpack_lines(t, "self", "v", "        ")
    L += ["    def values(self):",
          "        return (" + "".join(f"self.{a}, " for a in leaves) + ")",
          "    def __repr__(self):",
          f"        names = {tuple(a[2:].replace('.f_', '.') for a in leaves)!r}",
          "        body = ', '.join(n + '=' + hex(v) for n, v in zip(names, self.values()))",
          f"        return '{t.name}(' + ('' if self.valid else 'invalid ') + body + ')'"]
    return "\n".join(L) + "\n"


def _struct_source(name: str, t: ir.StructT, names: TypeNames) -> str:
    attrs = [(f"f_{f.name}", f.type) for f in t.fields]
    inits = [(a, zero_code(ft, names)) for a, ft in attrs]
    aggregate = {a for a, ft in attrs if isinstance(ft, (ir.HeaderT, ir.StructT, ir.StackT))}
    L = [f"class {name}:",
         f"    \"\"\"struct {t.name}\"\"\"",
         f"    __slots__ = {tuple(a for a, _ in attrs)!r}",
         f"    P4NAME = {t.name!r}",
         "    def __init__(self):"]
    scalars = {a: z for a, z in inits if a not in aggregate}
    L += [f"        self.{a} = {z}" for a, z in inits if a in aggregate]
    L += _zero_lines(list(scalars), scalars, "        ")  # one chained assignment per zero value
    if not inits:
        L.append("        pass")
    L += ["    def copy(self):",
          f"        n = {name}.__new__({name})"]
    L += [f"        n.{a} = self.{a}.copy()" if a in aggregate else f"        n.{a} = self.{a}" for a, _ in attrs]
    # with_next: a header stack inside keeps its source's nextIndex (an assignment in a parser)
    L += ["        return n",
          "    def copy_from(self, o, with_next=False):"]
    L += [(f"        self.{a}.copy_from(o.{a})" if isinstance(ft, ir.HeaderT)
           else f"        self.{a}.copy_from(o.{a}, with_next)") if a in aggregate else f"        self.{a} = o.{a}"
          for a, ft in attrs] or ["        pass"]
    L += ["    def eq(self, o):",
          "        return " + (" and ".join(f"self.{a}.eq(o.{a})" if a in aggregate else f"self.{a} == o.{a}"
                                          for a, _ in attrs) or "True"),
          "    @staticmethod",
          f"    def make({', '.join(f'a{i}' for i in range(len(attrs)))}):",
          f"        n = {name}.__new__({name})"]
    L += [f"        n.{a} = a{i}" for i, (a, _) in enumerate(attrs)]
    L += ["        return n",
          "    def __repr__(self):",
          f"        return '{t.name}(' + ', '.join(k[2:] + '=' + repr(getattr(self, k)) for k in self.__slots__) + ')'"]
    return "\n".join(L) + "\n"


def _stack_source(name: str, t: ir.StackT, names: TypeNames) -> str:
    ec = names.cls(t.elem)
    # marking an element invalid, fields kept: a header's own flag, or every member of a union
    if isinstance(t.elem, ir.HeaderT):
        invalidate = ["            e.valid = False", "            e.dirty = True"]
    else:  # a union: every member (the spec's invalid union; what bmv2 does there is not settled here)
        invalidate = [line for f in t.elem.fields
                      for line in (f"            e.f_{f.name}.valid = False", f"            e.f_{f.name}.dirty = True")]
    L = [f"class {name}:",
         f"    \"\"\"{t.elem.name}[{t.size}]\"\"\"",
         "    __slots__ = ('arr', 'nxt')",
         f"    SIZE = {t.size}",
         f"    ELEM = {ec}",
         "    def __init__(self):",
         f"        self.arr = [{', '.join([f'{ec}()'] * t.size)}]",  # unrolled: built per packet
         "        self.nxt = 0",
         "    def copy(self):",
         f"        n = {name}.__new__({name})",
         "        n.arr = [e.copy() for e in self.arr]",
         "        n.nxt = self.nxt",
         "        return n",
         # outside a parser p4c assigns a stack element by element (nextIndex is not copied:
         # its copyStructures pass); in a parser bmv2's assign_header_stack copies it too
         "    def copy_from(self, o, with_next=False):",
         "        for a, b in zip(self.arr, o.arr):",
         "            a.copy_from(b)",
         "        if with_next:",
         "            self.nxt = o.nxt",
         "    def eq(self, o):",
         "        return all(a.eq(b) for a, b in zip(self.arr, o.arr))",
         # as bmv2's StackP4_16: elements move by swapping with the one n places away, and the
         # n freed ones are marked invalid keeping what they held (stacks.cpp)
         "    def push_front(self, n):",
         f"        n = min(n, {t.size})",
         "        a = list(self.arr)",
         f"        for i in range({t.size} - 1, n - 1, -1):",
         "            a[i], a[i - n] = a[i - n], a[i]",
         "        for e in a[:n]:",
         *invalidate,
         "        self.arr = a",
         f"        self.nxt = min(self.nxt + n, {t.size})",
         "    def pop_front(self, n):",
         f"        n = min(n, {t.size})",
         "        a = list(self.arr)",
         f"        for i in range(n, {t.size}):",
         "            a[i], a[i - n] = a[i - n], a[i]",
         f"        for e in a[{t.size} - n:]:",
         *invalidate,
         "        self.arr = a",
         "        self.nxt = max(self.nxt - n, 0)",
         "    def __repr__(self):",
         "        return repr(self.arr)"]
    return "\n".join(L) + "\n"


# ---------------------------------------------------------------- struct-based extract / emit
# A header is cut at the byte boundaries where a field starts; each piece (a "segment": one or
# more whole fields) is read with struct codes of 8/4/2/1 bytes.  Fields then come out of
# integers of at most 64 bits (a few CPython digits) instead of one integer as wide as the
# header, which is what made extract/emit of wide headers (IPv6: 320 bits) slow.
_CODES = ((8, "Q"), (4, "I"), (2, "H"), (1, "B"))
_STRUCTS: dict[str, object] = {}
# the names the lines of ``unpack_struct_lines`` need in their module besides the structs
STRUCT_NS = {"_ifb": int.from_bytes}


@dataclass
class _Segment:
    codes: list[tuple[int, str]]  # (bytes, struct code), most significant first
    fields: list[tuple[str, int, str, int]]  # (attribute, width, kind, shift inside the segment)

    @property
    def bits(self) -> int:
        return 8 * sum(n for n, _ in self.codes)


def _segments(t: ir.HeaderT) -> list[_Segment]:
    fields = header_fields(t)
    segs: list[_Segment] = []
    pos = 0
    cur: list[tuple[str, int, str, int]] = []  # (attr, width, kind, bit offset in segment)
    start = 0
    for attr, w, kind in fields:
        if pos % 8 == 0 and cur:
            segs.append(_close(cur, pos - start))
            cur, start = [], pos
        cur.append((attr, w, kind, pos - start))
        pos += w
    if cur:
        segs.append(_close(cur, pos - start))
    return segs


def _close(cur: list[tuple[str, int, str, int]], bits: int) -> _Segment:
    n = bits // 8
    if len(cur) == 1 and cur[0][2] == "bit" and bits > 64 and bits % 8 == 0:
        # one unsigned field wider than 64 bits (an IPv6 address): its bytes as they are
        # (``int.from_bytes`` / ``to_bytes``, see ``unpack_struct_lines``), not 8-byte words shifted and or-ed together
        # through integers past 64 bits
        return _Segment([(n, f"{n}s")], [(a, w, k, bits - off - w) for a, w, k, off in cur])
    codes = []
    while n:
        for size, code in _CODES:
            if size <= n:
                codes.append((size, code))
                n -= size
                break
    return _Segment(codes, [(a, w, k, bits - off - w) for a, w, k, off in cur])


def header_struct(t: ir.HeaderT):
    """The cached ``struct.Struct`` reading/writing header ``t`` (byte-multiple width)."""
    import struct
    fmt = "!" + "".join(c for s in _segments(t) for _n, c in s.codes)
    st = _STRUCTS.get(fmt)
    if st is None:
        st = _STRUCTS[fmt] = struct.Struct(fmt)
    return st


def unpack_struct_lines(t: ir.HeaderT, target: str, st_name: str, data: str, off: str,
                        tmp: str, mark: bool = True, skip: frozenset[str] = frozenset()) -> list[str]:
    """Lines setting every field of ``target`` from ``data`` at ``off`` with the struct
    ``st_name`` (from ``header_struct``); temporaries are named ``tmp`` + a number.  ``mark``:
    set ``dirty`` with ``valid`` (a valid header is always dirty, see ``recycle.make_reset``).
    ``skip``: attributes (``f_name``) left unset, as nothing reads them (``usage.unread_fields``);
    with every one skipped nothing is unpacked.  The lines need ``STRUCT_NS`` in their globals."""
    segs = _segments(t)
    words = [f"{tmp}{i}" for i in range(sum(len(s.codes) for s in segs))]
    lines = [", ".join(words) + ("," if len(words) == 1 else "") + f" = {st_name}.unpack_from({data}, {off})"]
    if all(attr in skip for s in segs for attr, _w, _k, _sh in s.fields):
        lines = []
    k = 0
    for si, s in enumerate(segs):
        ws = words[k:k + len(s.codes)]
        k += len(s.codes)
        if all(attr in skip for attr, _w, _k, _sh in s.fields):
            continue
        if s.codes[0][1].endswith("s"):  # one wide field's bytes (``_close``)
            # ``_ifb`` is ``int.from_bytes`` bound once (``int.from_bytes`` looks the method up and
            # makes a bound method per call); big-endian is its default, as ``to_bytes``' (3.11)
            lines.append(f"{target}.{s.fields[0][0]} = _ifb({ws[0]})")
            continue
        if len(ws) == 1:
            sv = ws[0]
        else:
            acc = ws[0]
            for w, (n, _c) in zip(ws[1:], s.codes[1:]):
                acc = f"(({acc}) << {8 * n}) | {w}"
            if len(s.fields) == 1 and s.fields[0][2] == "bit":  # one wide field: no temporary
                lines.append(f"{target}.{s.fields[0][0]} = {acc}")
                continue
            sv = f"{tmp}s{si}"
            lines.append(f"{sv} = {acc}")
        total = s.bits
        for attr, w, kind, shift in s.fields:
            if attr not in skip:
                lines.append(f"{target}.{attr} = {_field_expr(sv, w, kind, shift, total)}")
    lines.append(f"{target}.valid = {target}.dirty = True" if mark else f"{target}.valid = True")
    return lines


def pack_struct_lines(t: ir.HeaderT, src: str, st_name: str, tmp: str) -> tuple[list[str], str]:
    """(lines, expression): the lines compute wide segments into temporaries, the expression is
    the header's bytes packed with struct ``st_name``."""
    lines: list[str] = []
    args: list[str] = []
    for si, s in enumerate(_segments(t)):
        if s.codes[0][1].endswith("s"):  # one wide field's bytes (``_close``)
            args.append(f"{src}.{s.fields[0][0]}.to_bytes({s.codes[0][0]})")
            continue
        parts = []
        for attr, w, kind, shift in s.fields:
            v = f"{src}.{attr}"
            if kind == "int":
                v = f"({v} & {(1 << w) - 1:#x})"
            elif kind == "bool":
                v = f"int({v})"
            parts.append(f"({v} << {shift})" if shift else v)
        expr = " | ".join(parts)
        if len(s.codes) == 1:
            args.append(expr)
            continue
        if len(parts) > 1:
            sv = f"{tmp}{si}"
            lines.append(f"{sv} = {expr}")
        else:
            sv = f"{src}.{s.fields[0][0]}" if s.fields[0][2] == "bit" else f"({expr})"
        rest = s.bits
        for n, _c in s.codes:
            rest -= 8 * n
            m = (1 << (8 * n)) - 1
            if rest == 0:
                args.append(f"{sv} & {m:#x}")
            elif rest + 8 * n == s.bits:
                args.append(f"{sv} >> {rest}")
            else:
                args.append(f"({sv} >> {rest}) & {m:#x}")
    return lines, f"{st_name}.pack({', '.join(args)})"
