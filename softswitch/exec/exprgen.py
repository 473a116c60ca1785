"""Expression, hash-input packing and lvalue code generation (Python source text from IR).

Values follow ``ir``'s conventions: ``bit<W>`` is an int in ``[0, 2**W)``, ``int<W>`` a signed int,
``bool`` a bool; every generated operation re-normalises its result, so no value ever leaves
its range.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from softswitch.exec import hashes, layout
from softswitch.exec.usage import (
    extract_only_headers,
    field_written_headers,
    next_only_stacks,
    std_fields_used,
    tracked_header,
    tracks_length,
    unread_fields,
)
from softswitch.frontend import ir

PE_PACKET_TOO_SHORT = 1
PE_NO_MATCH = 2
PE_STACK_OUT_OF_BOUNDS = 3
PE_HEADER_TOO_SHORT = 4
PE_PARSER_TIMEOUT = 5
PE_PARSER_INVALID_ARGUMENT = 6

MAX_PARSER_STATES = 1000  # loop-head visits per packet, past the packet's bytes' worth, before ParserTimeout (bmv2 has no limit)


class CompileError(Exception):
    """The program uses something the execution core cannot run (``file:line:col: message``)."""


def compile_error(loc: ir.Loc, msg: str) -> CompileError:
    return CompileError(f"{loc}: {msg}")


def bitmask(w: int) -> int:
    return (1 << w) - 1


def signed_code(code: str, width: int, masked: bool = False) -> str:
    """Python reading the low ``width`` bits of ``code`` as a two's-complement int<width> (how
    softswitch holds a signed value); ``masked``: ``code`` is already within ``width`` bits."""
    h = 1 << (width - 1)
    v = code if masked else f"({code} & {bitmask(width):#x})"
    return f"(({v} ^ {h:#x}) - {h:#x})"


def bits_code(code: str, t: ir.Type) -> str:
    """Python for a value as the bits bmv2 holds and matches, digests and writes out: a bool as
    0/1, a signed value (int<W>, or a serializable enum over one) as its two's-complement bits
    rather than the negative number softswitch computes with; any other value as it is."""
    if isinstance(t, ir.BoolT):
        return f"int({code})"
    w = layout.signed_width(t)
    return f"({code} & {bitmask(w):#x})" if w else code



@dataclass
class Resources:
    """Run-time objects the generated code calls, supplied by the pipeline builder.

    ``table(name)`` returns the runtime table state (``lookup(key, sel_hash)``); ``extern(name)``
    the counter/meter/register/direct state; ``action_id``/``digest_id`` map P4Info names to ids;
    ``value_set(name)`` a parser value set's runtime state (``match(keys)``).
    """

    table: Callable[[str], object]
    extern: Callable[[str], object]
    action_id: Callable[[str], int]
    digest_id: Callable[[str], int]
    value_set: Callable[[str], object] | None = None



def contains(node, classes: tuple) -> bool:
    """Whether any IR node under ``node`` (``node`` itself included) is one of ``classes``."""
    return any(isinstance(n, classes) for n in ir.iter_nodes(node))



class Out:
    """Indented line buffer."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)



class ExprGen:
    """Per-program code generation state, and expressions/lvalues."""

    def __init__(self, program: ir.Program, res: Resources, trace: bool = False) -> None:
        self.p = program
        self.res = res
        self.trace = trace
        self.names = layout.TypeNames()
        self.globals: dict[str, object] = {}
        self.funcs: list[str] = []
        self.tmp = 0
        self.gcount = 0
        self._gobj: dict[int, str] = {}
        # per-block state
        self.cur_block = None
        self.var_map: dict[str, str] = {}
        self.local_types: dict[str, ir.Type] = {}
        self.action: ir.Action | None = None
        self.ctl_index = 0
        self.action_fn: dict[tuple[int, str], str] = {}
        self.table_fn: dict[str, str] = {}
        self.loc_zero: dict[str, dict[str, str]] = {}  # a block's locals class: attribute -> zero code
        # headers marked ``dirty`` at every field store and setInvalid (their reset is skipped
        # while they are invalid and clean: ``usage.field_written_headers``)
        self.hdr_t = program.parser.params[1].type
        self.dirty_tracked = field_written_headers(program)
        self.guards: dict[str, str] = {}  # Compiler._checksum_guard, by block function name
        # setValid/setInvalid count the header's bytes into C.dlen (bmv2's packet-length register,
        # egress's packet_length) when the program can read it
        self.track_len = tracks_length(std_fields_used(program))
        self.extract_only = extract_only_headers(program)
        self.next_only = next_only_stacks(program)  # stacks with no valid element while nextIndex is 0
        self.emit_top = 1  # the deparser's indentation at which a stack's element list is bound once
        # fields of those headers that nothing reads: extract leaves them unstored (the deparser
        # emits such a header's extracted bytes); all of them are stored when tracing, whose log
        # shows every field
        self.unread = {} if trace else unread_fields(program)
        # a store inside ``if (hdr.h.isValid())`` needs no mark: h was valid earlier in this
        # packet, so it is still valid or something made it invalid, and setInvalid and copy_from
        # (the only ways a plain header becomes invalid) set the flag themselves.  Not for stack
        # elements: push/pop put other objects at an index.  ``known_valid``: the headers tested
        # valid around the code being written.
        self.stay_valid = frozenset(
            f.name for f in getattr(self.hdr_t, "fields", ()) if f.name in self.dirty_tracked and isinstance(f.type, ir.HeaderT))
        self.known_valid: frozenset[tuple[str, str]] = frozenset()  # (the variable's code, member)

    def dirty_header(self, e: ir.Expr) -> str | None:
        """Code of the header ``e`` (``hdr.h`` or ``hdr.s[i]``) when it is one the generated code
        marks dirty."""
        if self.dirty_tracked and tracked_header(e, self.hdr_t) in self.dirty_tracked:
            return self.ex(e)
        return None


    # ------------------------------------------------------------------ helpers

    def g(self, obj: object, prefix: str = "G") -> str:
        """Global name bound to ``obj`` in the generated module."""
        key = id(obj)
        name = self._gobj.get(key)
        if name is None:
            name = f"{prefix}{self.gcount}"
            self.gcount += 1
            self.globals[name] = obj
            self._gobj[key] = name
        return name

    def t(self) -> str:
        self.tmp += 1
        return f"_t{self.tmp}"

    # ------------------------------------------------------------------ expressions

    def ex(self, e: ir.Expr) -> str:
        m = getattr(self, "ex_" + type(e).__name__, None)
        if m is None:
            raise compile_error(e.loc, f"unsupported: expression {type(e).__name__}")
        return m(e)

    def ex_Const(self, e: ir.Const) -> str:
        if isinstance(e.value, bool):
            return "True" if e.value else "False"
        if isinstance(e.value, str):
            return repr(e.value)
        v = e.value
        if isinstance(e.type, ir.BitT):
            v &= bitmask(e.type.width)
        return repr(v) if v < 1 << 16 or v < 0 else hex(v)

    def ex_Var(self, e: ir.Var) -> str:
        try:
            return self.var_map[e.name]
        except KeyError:
            raise compile_error(e.loc, f"unknown variable {e.name}") from None

    def ex_ActionParam(self, e: ir.ActionParam) -> str:
        return f"a{e.index}"

    def ex_Member(self, e: ir.Member) -> str:
        return f"{self.ex(e.expr)}.f_{e.field}"

    def ex_StackIndex(self, e: ir.StackIndex) -> str:
        s = self.ex(e.stack)
        if isinstance(e.index, ir.Const):
            return f"{s}.arr[{e.index.value}]"
        return f"_stk_get({s}, {self.ex(e.index)})"

    def ex_ListExpr(self, e: ir.ListExpr) -> str:
        """A tuple value (a ``tuple<...>`` local's initialiser): a Python tuple of its items."""
        if any(isinstance(x.type, (ir.HeaderT, ir.StructT, ir.StackT)) for x in e.elems):
            raise compile_error(e.loc, "unsupported: a tuple of headers/structs as a value")
        return "(" + "".join(f"{self.ex(x)}, " for x in e.elems) + ")"

    def ex_TupleElem(self, e: ir.TupleElem) -> str:
        return f"{self.ex(e.expr)}[{e.index}]"

    def ex_StackNext(self, e: ir.StackNext) -> str:
        return f"_stk_next({self.ex(e.stack)})"

    def ex_StackLast(self, e: ir.StackLast) -> str:
        return f"_stk_last({self.ex(e.stack)})"

    def ex_StackLastIndex(self, e: ir.StackLastIndex) -> str:
        return f"(({self.ex(e.stack)}.nxt - 1) & 0xffffffff)"

    def ex_Slice(self, e: ir.Slice) -> str:
        w = e.hi - e.lo + 1
        base = self.ex(e.expr)
        if e.lo == 0:
            return f"({base} & {bitmask(w):#x})"
        return f"(({base} >> {e.lo}) & {bitmask(w):#x})"

    def ex_Unary(self, e: ir.Unary) -> str:
        a = self.ex(e.operand)
        t = e.type
        if e.op == "!":
            return f"(not {a})"
        if e.op == "~":
            if isinstance(t, ir.BitT):
                return f"({a} ^ {bitmask(t.width):#x})"
            return f"(~{a})"
        if e.op == "-":
            if isinstance(t, ir.BitT):
                return f"((-{a}) & {bitmask(t.width):#x})"
            return self._wrap_signed(f"(-{a})", t.width)
        raise compile_error(e.loc, f"unsupported: unary {e.op}")

    @staticmethod
    def _wrap_signed(code: str, w: int) -> str:
        h = 1 << (w - 1)
        return f"(((({code}) + {h:#x}) & {bitmask(w):#x}) - {h:#x})"

    def _is_aggregate(self, t: ir.Type) -> bool:
        return isinstance(t, (ir.HeaderT, ir.StructT, ir.StackT))

    def ex_Binary(self, e: ir.Binary) -> str:
        op = e.op
        lt = e.left.type
        if op in ("&&", "||"):
            member = self._membership(e)
            if member is not None:
                return member
            return f"({self.ex(e.left)} {'and' if op == '&&' else 'or'} {self.ex(e.right)})"
        a, b = self.ex(e.left), self.ex(e.right)
        if op in ("==", "!="):
            if self._is_aggregate(lt):
                r = f"{a}.eq({b})"
                return r if op == "==" else f"(not {r})"
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        t = e.type
        signed = isinstance(t, ir.IntT)
        w = ir.type_width(t) if isinstance(t, (ir.BitT, ir.IntT)) else 0
        m = bitmask(w)
        if op in ("+", "-", "*"):
            if signed:
                return self._wrap_signed(f"{a} {op} {b}", w)
            return f"(({a} {op} {b}) & {m:#x})"
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("/", "%"):
            return f"_divmod_{'d' if op == '/' else 'm'}({a}, {b})"
        if op == "|+|":
            return f"_sat_add_s({a}, {b}, {w})" if signed else f"_sat_add_u({a}, {b}, {w})"
        if op == "|-|":
            return f"_sat_sub_s({a}, {b}, {w})" if signed else f"_sat_sub_u({a}, {b})"
        if op == "<<":
            if isinstance(e.right, ir.Const):
                n = e.right.value
                if n >= w:
                    return "0"
                if signed:
                    return self._wrap_signed(f"{a} << {n}", w)
                return f"(({a} << {n}) & {m:#x})"
            if signed:
                return f"_shl_s({a}, {b}, {w})"
            return f"_shl({a}, {b}, {w})"
        if op == ">>":
            if isinstance(e.right, ir.Const) and e.right.value >= w and not signed:
                return "0"
            return f"({a} >> {b})"
        raise compile_error(e.loc, f"unsupported: binary operator {op}")

    def _pure(self, e: ir.Expr) -> bool:
        """True when ``e``'s code reads a value with no side effect and no failure: a variable,
        an action parameter or a field of one (evaluated once or several times, the same)."""
        while isinstance(e, ir.Member):
            e = e.expr
        return isinstance(e, (ir.Var, ir.ActionParam))

    def _membership(self, e: ir.Binary) -> str | None:
        """``x == c1 || x == c2 ...`` as ``x in {c1, c2, ...}`` and ``x != c1 && x != c2 ...`` as
        ``x not in {...}``, for one side-effect-free integer ``x`` and integer constants: one
        read of ``x`` and one set test (a frozenset constant) instead of a read, a compare and
        a jump per term.  Equal for every value: ``x`` is an int and ``==`` on ints is what a
        set test of ints compares.  None when the chain is not of that form."""
        cmp = "==" if e.op == "||" else "!="
        leaves: list[ir.Expr] = []
        todo = [e]
        while todo:
            n = todo.pop()
            if isinstance(n, ir.Binary) and n.op == e.op:
                todo += [n.right, n.left]
            else:
                leaves.append(n)
        if len(leaves) < 2:
            return None
        code = None
        consts: list[str] = []
        for n in leaves:
            if not (isinstance(n, ir.Binary) and n.op == cmp):
                return None
            x, c = (n.left, n.right) if isinstance(n.right, ir.Const) else (n.right, n.left)
            if not (isinstance(c, ir.Const) and type(c.value) is int and self._pure(x)
                    and isinstance(x.type, (ir.BitT, ir.IntT, ir.ErrorT, ir.EnumT))):
                return None
            xc = self.ex(x)
            if code is None:
                code = xc
            elif xc != code:
                return None
            consts.append(self.ex(c))
        return f"({code} {'in' if cmp == '==' else 'not in'} {{{', '.join(consts)}}})"

    def ex_Concat(self, e: ir.Concat) -> str:
        wl = ir.type_width(e.left.type)
        wr = ir.type_width(e.right.type)
        a = f"({self.ex(e.left)} & {bitmask(wl):#x})" if isinstance(e.left.type, ir.IntT) else self.ex(e.left)
        b = f"({self.ex(e.right)} & {bitmask(wr):#x})" if isinstance(e.right.type, ir.IntT) else self.ex(e.right)
        if isinstance(e.right, ir.Const) and isinstance(e.right.type, ir.BitT) and not e.right.value & bitmask(wr):
            r = f"({a} << {wr})"  # ``x ++ 0``: nothing to or in (one operation less on a wide value)
        else:
            r = f"(({a} << {wr}) | {b})"
        if isinstance(e.type, ir.IntT):
            return signed_code(r, wl + wr, masked=True)
        return r

    def ex_Cast(self, e: ir.Cast) -> str:
        src, dst = e.expr.type, e.type
        a = self.ex(e.expr)
        if isinstance(dst, ir.BoolT):
            if isinstance(src, ir.BoolT):
                return a
            return f"({a} != 0)"
        if isinstance(src, ir.BoolT):
            return f"(1 if {a} else 0)"
        if isinstance(dst, ir.BitT):
            sw = ir.type_width(src) if isinstance(src, (ir.BitT, ir.IntT)) else None
            if isinstance(src, ir.BitT) and sw is not None and sw <= dst.width:
                return a
            return f"({a} & {bitmask(dst.width):#x})"
        if isinstance(dst, ir.IntT):
            if isinstance(src, ir.IntT) and src.width <= dst.width:
                return a
            return signed_code(a, dst.width)
        if isinstance(dst, ir.EnumT) and dst.underlying is not None:
            u = dst.underlying
            if isinstance(u, ir.IntT):  # a signed enum holds its value signed, as its constants are
                if isinstance(src, ir.IntT) and src.width <= u.width:
                    return a
                return signed_code(a, u.width)
            return f"({a} & {bitmask(u.width):#x})"
        return a

    def ex_Mux(self, e: ir.Mux) -> str:
        return f"({self.ex(e.then)} if {self.ex(e.cond)} else {self.ex(e.else_)})"

    def ex_StructInit(self, e: ir.StructInit) -> str:
        cls = self.names.cls(e.type)
        byname = dict(e.fields)
        args = []
        for f in e.type.fields:
            fe = byname.get(f.name)
            if fe is None:
                args.append(layout.zero_code(f.type, self.names))
            elif self._is_aggregate(f.type):
                fresh = isinstance(fe, (ir.StructInit, ir.InvalidHeader))
                args.append(self.ex(fe) if fresh else f"{self.ex(fe)}.copy()")
            else:
                args.append(self.ex(fe))
        if isinstance(e.type, ir.HeaderT):
            args.insert(0, "True")
        return f"{cls}.make({', '.join(args)})"

    def ex_InvalidHeader(self, e: ir.InvalidHeader) -> str:
        return layout.zero_code(e.type, self.names)  # a fresh header/union/stack: all invalid

    def ex_IsValid(self, e: ir.IsValid) -> str:
        return f"{self.ex(e.header)}.valid"

    def ex_ApplyTable(self, e: ir.ApplyTable) -> str:
        fn = self.table_fn[e.table]
        call = f"{fn}(H, M, S, L, C)"
        if e.result == "hit":
            return f"{call}[1]"
        if e.result == "miss":
            return f"(not {call}[1])"
        return call

    def ex_Lookahead(self, e: ir.Lookahead) -> str:
        t = e.type
        if isinstance(t, ir.HeaderT):
            return f"_la_hdr(data, off, {self.names.cls(t)}, {t.width})"
        w = ir.type_width(t)
        v = f"_la_bits(data, off, {w})"
        if isinstance(t, ir.StructT):  # the bits read once, then cut into the fields, first field first
            return f"(lambda _la: {self._bits_to_struct(t, '_la', w)})({v})"
        if isinstance(t, ir.IntT):
            return signed_code(v, w, masked=True)
        if isinstance(t, ir.BoolT):
            return f"({v} != 0)"
        return v

    def _bits_to_struct(self, t: ir.StructT, v: str, below: int) -> str:
        """``t.make(...)`` from the bits in ``v``; ``t``'s fields end ``below`` bits above bit 0."""
        args = []
        for f in t.fields:
            fw = ir.type_width(f.type)
            below -= fw
            if isinstance(f.type, ir.StructT):
                args.append(self._bits_to_struct(f.type, v, below + fw))
                continue
            bits = f"(({v} >> {below}) & {bitmask(fw):#x})"
            ft = f.type.underlying if isinstance(f.type, ir.EnumT) else f.type
            if isinstance(ft, ir.IntT):
                bits = signed_code(bits, fw, masked=True)
            elif isinstance(ft, ir.BoolT):
                bits = f"({bits} != 0)"
            args.append(bits)
        return f"{self.names.cls(t)}.make({', '.join(args)})"

    # ------------------------------------------------------------------ packing (hash inputs)

    def _flatten(self, e: ir.Expr) -> list[tuple[ir.Expr, str | None]]:
        """Leaves of a hash/checksum data list with the validity condition bmv2 applies."""
        if isinstance(e, ir.ListExpr):
            out = []
            for x in e.elems:
                out += self._flatten(x)
            return out
        if isinstance(e, ir.StructInit) and isinstance(e.type, ir.StructT):
            out = []
            for _, x in e.fields:
                out += self._flatten(x)
            return out
        t = e.type
        if isinstance(t, ir.StructT):
            out = []
            for f in t.fields:
                out += self._flatten(ir.Member(f.type, e.loc, e, f.name))
            return out
        if isinstance(t, ir.TupleT):  # a tuple local: a Python tuple of its elements
            out = []
            for i, x in enumerate(t.elems):
                out += self._flatten(ir.TupleElem(x, e.loc, e, i))
            return out
        if isinstance(t, ir.StackT):
            out = []
            for i in range(t.size):
                out += self._flatten(ir.StackIndex(t.elem, e.loc, e, ir.Const(ir.BitT(32), e.loc, i)))
            return out
        if isinstance(t, ir.HeaderT):
            return [(e, f"{self.ex(e)}.valid")]
        cond = None
        h = e
        while isinstance(h, ir.Member) and isinstance(h.expr.type, ir.StructT) and not h.expr.type.union:
            h = h.expr  # a leaf of a struct-typed header field: the header's validity applies
        if isinstance(h, ir.Member) and isinstance(h.expr.type, ir.HeaderT):
            cond = f"{self.ex(h.expr)}.valid"
        return [(e, cond)]

    def pack_code(self, data: ir.Expr) -> str:
        """Expression giving the bytes bmv2 feeds a hash/checksum for this data list."""
        leaves = self._flatten(data)
        items = []
        any_cond = False
        for x, cond in leaves:
            t = x.type
            if isinstance(t, ir.HeaderT) and t.varbit is not None:  # width known per packet
                v, w = f"{self.ex(x)}.to_int()", f"{t.width} + {self.ex(x)}.vbw"
                cond = cond or "True"
            elif isinstance(t, ir.VarbitT):
                v, w = self.ex(x), f"{self.ex(x.expr)}.vbw"  # type: ignore[attr-defined]
                cond = cond or "True"
            elif isinstance(t, ir.HeaderT):
                v, w = f"{self.ex(x)}.to_int()", t.width
            elif isinstance(t, ir.ErrorT) or (isinstance(t, ir.EnumT) and t.underlying is None):
                # p4c's mid end makes a plain enum bit<32> (its member index, EnumOn32Bits) and bmv2
                # holds an error in 32 bits (its number): those bits are hashed
                v, w = self.ex(x), ir.ERROR_KEY_WIDTH
            else:
                w = ir.type_width(t)
                v = bits_code(self.ex(x), t)  # a bool as 0/1, a signed value (or enum over one) as its bits
            items.append((v, w, cond))
            any_cond = any_cond or cond is not None
        if not items:
            return "b''"
        if not any_cond:
            total = sum(w for _, w, _ in items)
            nb = (total + 7) // 8
            acc = items[0][0]
            for v, w, _ in items[1:]:
                acc = f"(({acc}) << {w}) | {v}"
            pad = nb * 8 - total
            if pad:
                acc = f"(({acc}) << {pad})"
            return f"({acc}).to_bytes({nb}, 'big')"
        parts = ", ".join(f"({cond or 'True'}, {v}, {w})" for v, w, cond in items)
        return f"_pack_opt(({parts},))"

    def algo(self, e: ir.Expr) -> str:
        if not isinstance(e, ir.Const) or not isinstance(e.type, ir.EnumT):
            raise compile_error(e.loc, "unsupported: hash algorithm must be a HashAlgorithm constant")
        name = e.type.members[e.value]
        fn = hashes.ALGORITHMS.get(name)
        if fn is None:
            raise compile_error(e.loc, f"unsupported: hash algorithm {name}")
        return self.g(fn, f"H_{name}_")

    # ------------------------------------------------------------------ lvalues

    def assign(self, lhs: ir.Expr, code: str, out: Out, ind: int) -> None:
        t = lhs.type
        if isinstance(lhs, ir.Slice):
            base = lhs.expr
            bw = ir.type_width(base.type)
            w = lhs.hi - lhs.lo + 1
            m = bitmask(w) << lhs.lo
            cur = self.ex(base)
            if isinstance(base.type, ir.IntT):
                cur = f"({cur} & {bitmask(bw):#x})"
            # the right-hand side first: a table applied in it may write other bits of the base
            # (p4c's side-effect ordering evaluates it before the slice is written)
            new = f"(((({code}) & {bitmask(w):#x}) << {lhs.lo}) | ({cur} & {(bitmask(bw) ^ m):#x}))"
            if isinstance(base.type, ir.IntT):
                new = signed_code(new, bw, masked=True)
            self.assign(base, new, out, ind)
            return
        if isinstance(lhs, ir.TupleElem):  # tuples are Python tuples: rebuild, then assign the base
            i = lhs.index
            new = f"(lambda v_, t_: t_[:{i}] + (v_,) + t_[{i + 1}:])({code}, {self.ex(lhs.expr)})"
            self.assign(lhs.expr, new, out, ind)
            return
        if self._is_aggregate(t):
            # in a parser p4c keeps a stack's assignment whole (bmv2's assign_header_stack copies
            # nextIndex), also for a stack inside a struct assigned there
            in_parser = isinstance(t, (ir.StackT, ir.StructT)) and isinstance(self.cur_block, ir.Parser)
            out.add(ind, f"{self.ex(lhs)}.copy_from({code}{', True' if in_parser else ''})")
            return
        if isinstance(lhs, ir.StackIndex) and not isinstance(lhs.index, ir.Const):
            raise compile_error(lhs.loc, "unsupported: scalar stack element assignment")
        out.add(ind, f"{self.ex(lhs)} = {code}")
        hdr = self.dirty_header(lhs.expr) if isinstance(lhs, ir.Member) else None
        if hdr is not None and not (isinstance(lhs.expr, ir.Member) and isinstance(lhs.expr.expr, ir.Var)
                                    and (self.ex(lhs.expr.expr), lhs.expr.field) in self.known_valid):  # a field stored while the header may be invalid: reset it for the next packet
            out.add(ind, f"{hdr}.dirty = True")
