"""Compile the checked IR of a v1model program into Python source, once, at load time.

One Python function is generated per parser state, action, table apply and top-level block;
they take the packet's objects ``(H, M, S, L, C)`` -- headers, user metadata, standard
metadata, the block's locals and the per-packet context -- so no tree is walked per packet.
``CompiledBlocks`` holds the resulting functions.  With ``trace=True`` trace calls are compiled
in; without it the generated code contains none.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from softswitch.exec import hashes, layout, support
from softswitch.frontend import ir

PE_PACKET_TOO_SHORT = 1
PE_NO_MATCH = 2
PE_STACK_OUT_OF_BOUNDS = 3
PE_HEADER_TOO_SHORT = 4
PE_PARSER_TIMEOUT = 5
PE_PARSER_INVALID_ARGUMENT = 6

MAX_PARSER_STATES = 1000  # states visited per packet before ParserTimeout (bmv2 has no limit)


class CompileError(Exception):
    """The program uses something the execution core cannot run (``file:line:col: message``)."""


def _err(loc: ir.Loc, msg: str) -> CompileError:
    return CompileError(f"{loc}: {msg}")


def _mask(w: int) -> int:
    return (1 << w) - 1


@dataclass
class Resources:
    """Run-time objects the generated code calls, supplied by the pipeline builder.

    ``table(name)`` returns the runtime table state (``lookup(key, sel_hash)``); ``extern(name)``
    the counter/meter/register/direct state; ``action_id``/``digest_id`` map P4Info names to ids.
    """

    table: Callable[[str], object]
    extern: Callable[[str], object]
    action_id: Callable[[str], int]
    digest_id: Callable[[str], int]


@dataclass
class CompiledBlocks:
    """The generated functions and the source they came from (kept for debugging)."""

    parser: Callable
    verify_checksum: Callable | None  # None when the control is empty
    ingress: Callable
    egress: Callable | None
    compute_checksum: Callable | None
    deparser: Callable
    header_cls: type
    meta_cls: type
    std_cls: type
    source: str
    namespace: dict = field(repr=False, default_factory=dict)


def _walk(node, visit) -> None:
    """Call ``visit`` on every IR node under ``node`` (lists and slotted dataclasses)."""
    if isinstance(node, list):
        for x in node:
            _walk(x, visit)
        return
    if not hasattr(node, "__slots__") or isinstance(node, (str, int)):
        return
    visit(node)
    for klass in type(node).__mro__:
        for a in getattr(klass, "__slots__", ()):
            if a not in ("loc", "type"):
                _walk(getattr(node, a, None), visit)


def _contains(node, classes: tuple) -> bool:
    found = []
    _walk(node, lambda n: found.append(n) if isinstance(n, classes) else None)
    return bool(found)


def _inlinable_states(prs: ir.Parser) -> set[str]:
    """States with one predecessor that are not on a loop: their code goes into the caller."""
    succ: dict[str, set[str]] = {}
    for name, st in prs.states.items():
        tr = st.transition
        targets = {tr.next_state} if tr.next_state is not None else {c.next_state for c in tr.cases}
        succ[name] = {t for t in targets if t in prs.states}
    preds: dict[str, int] = dict.fromkeys(prs.states, 0)
    for targets in succ.values():
        for t in targets:
            preds[t] += 1

    def on_loop(start: str) -> bool:
        seen: set[str] = set()
        todo = list(succ[start])
        while todo:
            n = todo.pop()
            if n == start:
                return True
            if n not in seen:
                seen.add(n)
                todo.extend(succ[n])
        return False

    return {n for n in prs.states if n != "start" and preds[n] == 1 and not on_loop(n)}


class _Out:
    """Indented line buffer."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)


class Compiler:
    """Generates and compiles the Python source of one program."""

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
            raise _err(e.loc, f"unsupported: expression {type(e).__name__}")
        return m(e)

    def ex_Const(self, e: ir.Const) -> str:
        if isinstance(e.value, bool):
            return "True" if e.value else "False"
        if isinstance(e.value, str):
            return repr(e.value)
        v = e.value
        if isinstance(e.type, ir.BitT):
            v &= _mask(e.type.width)
        return repr(v) if v < 1 << 16 or v < 0 else hex(v)

    def ex_Var(self, e: ir.Var) -> str:
        try:
            return self.var_map[e.name]
        except KeyError:
            raise _err(e.loc, f"unknown variable {e.name}") from None

    def ex_ActionParam(self, e: ir.ActionParam) -> str:
        return f"a{e.index}"

    def ex_Member(self, e: ir.Member) -> str:
        return f"{self.ex(e.expr)}.f_{e.field}"

    def ex_StackIndex(self, e: ir.StackIndex) -> str:
        s = self.ex(e.stack)
        if isinstance(e.index, ir.Const):
            return f"{s}.arr[{e.index.value}]"
        return f"_stk_get({s}, {self.ex(e.index)})"

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
            return f"({base} & {_mask(w):#x})"
        return f"(({base} >> {e.lo}) & {_mask(w):#x})"

    def ex_Unary(self, e: ir.Unary) -> str:
        a = self.ex(e.operand)
        t = e.type
        if e.op == "!":
            return f"(not {a})"
        if e.op == "~":
            if isinstance(t, ir.BitT):
                return f"({a} ^ {_mask(t.width):#x})"
            return f"(~{a})"
        if e.op == "-":
            if isinstance(t, ir.BitT):
                return f"((-{a}) & {_mask(t.width):#x})"
            return self._wrap_signed(f"(-{a})", t.width)
        raise _err(e.loc, f"unsupported: unary {e.op}")

    @staticmethod
    def _wrap_signed(code: str, w: int) -> str:
        h = 1 << (w - 1)
        return f"((({code}) + {h:#x}) & {_mask(w):#x}) - {h:#x}"

    def _is_aggregate(self, t: ir.Type) -> bool:
        return isinstance(t, (ir.HeaderT, ir.StructT, ir.StackT))

    def ex_Binary(self, e: ir.Binary) -> str:
        op = e.op
        lt = e.left.type
        if op in ("&&", "||"):
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
        m = _mask(w)
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
        raise _err(e.loc, f"unsupported: binary operator {op}")

    def ex_Concat(self, e: ir.Concat) -> str:
        wl = ir.type_width(e.left.type)
        wr = ir.type_width(e.right.type)
        a = f"({self.ex(e.left)} & {_mask(wl):#x})" if isinstance(e.left.type, ir.IntT) else self.ex(e.left)
        b = f"({self.ex(e.right)} & {_mask(wr):#x})" if isinstance(e.right.type, ir.IntT) else self.ex(e.right)
        r = f"(({a} << {wr}) | {b})"
        if isinstance(e.type, ir.IntT):
            h = 1 << (wl + wr - 1)
            return f"(({r} ^ {h:#x}) - {h:#x})"
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
            return f"({a} & {_mask(dst.width):#x})"
        if isinstance(dst, ir.IntT):
            if isinstance(src, ir.IntT) and src.width <= dst.width:
                return a
            h = 1 << (dst.width - 1)
            return f"((({a} & {_mask(dst.width):#x}) ^ {h:#x}) - {h:#x})"
        if isinstance(dst, ir.EnumT) and dst.underlying is not None:
            return f"({a} & {_mask(dst.underlying.width):#x})"
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
                args.append(f"{self.ex(fe)}.copy()" if not isinstance(fe, ir.StructInit) else self.ex(fe))
            else:
                args.append(self.ex(fe))
        if isinstance(e.type, ir.HeaderT):
            args.insert(0, "True")
        return f"{cls}.make({', '.join(args)})"

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
        if isinstance(t, ir.IntT):
            h = 1 << (w - 1)
            return f"(({v} ^ {h:#x}) - {h:#x})"
        if isinstance(t, ir.BoolT):
            return f"({v} != 0)"
        return v

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
        if isinstance(t, ir.StackT):
            out = []
            for i in range(t.size):
                out += self._flatten(ir.StackIndex(t.elem, e.loc, e, ir.Const(ir.BitT(32), e.loc, i)))
            return out
        if isinstance(t, ir.HeaderT):
            return [(e, f"{self.ex(e)}.valid")]
        cond = None
        if isinstance(e, ir.Member) and isinstance(e.expr.type, ir.HeaderT):
            cond = f"{self.ex(e.expr)}.valid"
        return [(e, cond)]

    def pack_code(self, data: ir.Expr) -> str:
        """Expression giving the bytes bmv2 feeds a hash/checksum for this data list."""
        leaves = self._flatten(data)
        items = []
        any_cond = False
        for x, cond in leaves:
            t = x.type
            if isinstance(t, ir.HeaderT):
                v, w = f"{self.ex(x)}.to_int()", t.width
            else:
                w = ir.type_width(t)
                v = self.ex(x)
                if isinstance(t, ir.BoolT):
                    v = f"int({v})"
                elif isinstance(t, ir.IntT):
                    v = f"({v} & {_mask(w):#x})"
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
            raise _err(e.loc, "unsupported: hash algorithm must be a HashAlgorithm constant")
        name = e.type.members[e.value]
        fn = hashes.ALGORITHMS.get(name)
        if fn is None:
            raise _err(e.loc, f"unsupported: hash algorithm {name}")
        return self.g(fn, f"H_{name}_")

    # ------------------------------------------------------------------ lvalues

    def assign(self, lhs: ir.Expr, code: str, out: _Out, ind: int) -> None:
        t = lhs.type
        if isinstance(lhs, ir.Slice):
            base = lhs.expr
            bw = ir.type_width(base.type)
            w = lhs.hi - lhs.lo + 1
            m = _mask(w) << lhs.lo
            cur = self.ex(base)
            if isinstance(base.type, ir.IntT):
                cur = f"({cur} & {_mask(bw):#x})"
            new = f"(({cur} & {(_mask(bw) ^ m):#x}) | ((({code}) & {_mask(w):#x}) << {lhs.lo}))"
            if isinstance(base.type, ir.IntT):
                h = 1 << (bw - 1)
                new = f"(({new} ^ {h:#x}) - {h:#x})"
            self.assign(base, new, out, ind)
            return
        if self._is_aggregate(t):
            out.add(ind, f"{self.ex(lhs)}.copy_from({code})")
            return
        if isinstance(lhs, ir.StackIndex) and not isinstance(lhs.index, ir.Const):
            raise _err(lhs.loc, "unsupported: scalar stack element assignment")
        out.add(ind, f"{self.ex(lhs)} = {code}")

    # ------------------------------------------------------------------ statements

    def block(self, b: ir.Block | None, out: _Out, ind: int) -> None:
        n = len(out.lines)
        if b is not None:
            for s in b.stmts:
                self.stmt(s, out, ind)
        if len(out.lines) == n:
            out.add(ind, "pass")

    def stmt(self, s: ir.Stmt, out: _Out, ind: int) -> None:
        m = getattr(self, "st_" + type(s).__name__, None)
        if m is None:
            raise _err(s.loc, f"unsupported: statement {type(s).__name__}")
        m(s, out, ind)

    def st_Block(self, s: ir.Block, out: _Out, ind: int) -> None:
        for x in s.stmts:
            self.stmt(x, out, ind)

    def st_Assign(self, s: ir.Assign, out: _Out, ind: int) -> None:
        self.assign(s.lhs, self.ex(s.rhs), out, ind)

    def st_VarDecl(self, s: ir.VarDecl, out: _Out, ind: int) -> None:
        tgt = self.ex(s.var)
        t = s.var.type
        if s.init is None:
            out.add(ind, f"{tgt} = {layout.zero_code(t, self.names)}")
        elif self._is_aggregate(t):
            init = self.ex(s.init)
            out.add(ind, f"{tgt} = {init}" if isinstance(s.init, ir.StructInit) else f"{tgt} = {init}.copy()")
        else:
            out.add(ind, f"{tgt} = {self.ex(s.init)}")

    def _inline_apply(self, name: str, out: _Out, ind: int) -> tuple[str, str]:
        tbl = self.cur_block.tables[name]
        return self.table_code(self.cur_block, tbl, out, ind)

    def st_If(self, s: ir.If, out: _Out, ind: int) -> None:
        c = s.cond
        neg = isinstance(c, ir.Unary) and c.op == "!"
        inner = c.operand if neg else c
        if isinstance(inner, ir.ApplyTable) and inner.result in ("hit", "miss"):
            _, entry = self._inline_apply(inner.table, out, ind)
            hit = (inner.result == "hit") != neg
            out.add(ind, f"if {entry} is {'not ' if hit else ''}None:")
        else:
            out.add(ind, f"if {self.ex(s.cond)}:")
        self.block(s.then, out, ind + 1)
        if s.else_ is not None and s.else_.stmts:
            out.add(ind, "else:")
            self.block(s.else_, out, ind + 1)

    def st_SwitchActionRun(self, s: ir.SwitchActionRun, out: _Out, ind: int) -> None:
        v, _ = self._inline_apply(s.table, out, ind)
        self._cases(v, s.cases, out, ind, lambda lab: repr(self.res.action_id(lab)))

    def st_SwitchValue(self, s: ir.SwitchValue, out: _Out, ind: int) -> None:
        v = self.t()
        out.add(ind, f"{v} = {self.ex(s.expr)}")
        self._cases(v, s.cases, out, ind, lambda lab: self.ex(lab))

    def _cases(self, v: str, cases: list[ir.SwitchCase], out: _Out, ind: int, label) -> None:
        first = True
        default = None
        for c in cases:
            if c.default:
                default = c
                if not c.labels:
                    continue
            conds = " or ".join(f"{v} == {label(lab)}" for lab in c.labels) or "False"
            out.add(ind, f"{'if' if first else 'elif'} {conds}:")
            first = False
            self.block(c.body, out, ind + 1)
        if default is not None:
            if first:
                self.block(default.body, out, ind)
            else:
                out.add(ind, "else:")
                self.block(default.body, out, ind + 1)

    def st_Exit(self, s: ir.Exit, out: _Out, ind: int) -> None:
        out.add(ind, "raise _Exit()")

    def st_Return(self, s: ir.Return, out: _Out, ind: int) -> None:
        out.add(ind, f"return {self._action_outs()}" if self.action is not None else "return")

    def _action_outs(self) -> str:
        a = self.action
        outs = [f"a{i}" for i, p in enumerate(a.params) if p.direction in ("out", "inout")]
        return f"({', '.join(outs)},)" if outs else "None"

    def st_ExprStmt(self, s: ir.ExprStmt, out: _Out, ind: int) -> None:
        e = s.expr
        if isinstance(e, ir.SetValid):
            out.add(ind, f"{self.ex(e.header)}.set_valid()")
        elif isinstance(e, ir.SetInvalid):
            out.add(ind, f"{self.ex(e.header)}.valid = False")
        elif isinstance(e, ir.PushFront):
            out.add(ind, f"{self.ex(e.stack)}.push_front({e.count})")
        elif isinstance(e, ir.PopFront):
            out.add(ind, f"{self.ex(e.stack)}.pop_front({e.count})")
        elif isinstance(e, ir.ApplyTable):
            self._inline_apply(e.table, out, ind)
        elif isinstance(e, ir.ActionCall):
            self.action_call(e, out, ind)
        elif isinstance(e, ir.ExternCall):
            self.extern_call(e, out, ind)
        elif isinstance(e, ir.BuiltinCall):
            self.builtin_call(e, out, ind)
        else:
            out.add(ind, self.ex(e))

    def action_call(self, e: ir.ActionCall, out: _Out, ind: int) -> None:
        act = self.p.actions[e.action]
        fn = self.action_fn[(self.ctl_index, e.action)]
        args = []
        for p, a in zip(act.params, e.args):
            code = self.ex(a)
            if self._is_aggregate(p.type):
                code = f"{code}.copy()"
            args.append(code)
        outs = [(i, a) for i, (p, a) in enumerate(zip(act.params, e.args)) if p.direction in ("out", "inout")]
        call = f"{fn}(H, M, S, L, C{''.join(', ' + x for x in args)})"
        if not outs:
            out.add(ind, call)
            return
        r = self.t()
        out.add(ind, f"{r} = {call}")
        for k, (_, a) in enumerate(outs):
            self.assign(a, f"{r}[{k}]", out, ind)

    def extern_call(self, e: ir.ExternCall, out: _Out, ind: int) -> None:
        inst = self.cur_block.externs.get(e.instance) if isinstance(self.cur_block, ir.Control) else None
        if inst is None:
            raise _err(e.loc, f"unknown extern instance {e.instance}")
        kind, meth, args = inst.kind, e.method, e.args
        if kind == "direct_counter" and meth == "count":
            return  # counted by the table on every hit, as bmv2 does
        if kind == "direct_meter" and meth == "read":
            return  # the colour is written by the table on a hit, as bmv2 does
        obj = self.res.extern(inst.name)
        g = self.g(obj, "X")
        size = inst.size if inst.size is not None else 0
        if kind == "counter" and meth == "count":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[0])}")
            out.add(ind, f"if {i} < {size}:")
            out.add(ind + 1, f"{g}.count({i}, C.nbytes)")
            return
        if kind == "meter" and meth == "execute_meter":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[0])}")
            out.add(ind, f"if {i} < {size}:")
            self.assign(args[1], f"{g}.execute({i}, C.nbytes, C.now)", out, ind + 1)
            return
        if kind == "register" and meth == "read":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[1])}")
            out.add(ind, f"if {i} < {size}:")
            rd = f"{g}.read({i})"
            et = inst.type_args[0] if inst.type_args else None
            if isinstance(et, ir.IntT):
                h = 1 << (et.width - 1)
                rd = f"(({rd} ^ {h:#x}) - {h:#x})"
            elif isinstance(et, ir.BoolT):
                rd = f"({rd} != 0)"
            self.assign(args[0], rd, out, ind + 1)
            return
        if kind == "register" and meth == "write":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[0])}")
            out.add(ind, f"if {i} < {size}:")
            val = self.ex(args[1])
            if isinstance(args[1].type, ir.BoolT):
                val = f"int({val})"
            out.add(ind + 1, f"{g}.write({i}, {val})")
            return
        raise _err(e.loc, f"unsupported: {kind}.{meth}")

    def builtin_call(self, e: ir.BuiltinCall, out: _Out, ind: int) -> None:
        n, a = e.name, e.args
        if n == "mark_to_drop":
            sm = self.ex(a[0])
            out.add(ind, f"{sm}.f_egress_spec = 511")
            out.add(ind, f"{sm}.f_mcast_grp = 0")
        elif n == "hash":
            fn = self.algo(a[1])
            w = ir.type_width(a[0].type)
            h = f"{fn}({self.pack_code(a[3])})"
            base, mx = a[2], a[4]
            if isinstance(mx, ir.Const):
                r = self.ex(base) if mx.value == 0 else f"({self.ex(base)} + {h} % {mx.value})"
            else:
                r = f"_hash_offset({h}, {self.ex(base)}, {self.ex(mx)})"
            self.assign(a[0], f"({r} & {_mask(w):#x})", out, ind)
        elif n == "random":
            w = ir.type_width(a[0].type)
            self.assign(a[0], f"(_randint({self.ex(a[1])}, {self.ex(a[2])}) & {_mask(w):#x})", out, ind)
        elif n == "digest":
            t = e.type_args[0] if e.type_args else a[1].type
            did = self.res.digest_id(t.name)
            vals = self._digest_values(a[1])
            out.add(ind, f"C.digest = ({did}, {vals})")
        elif n == "clone":
            out.add(ind, f"C.clone = ({self.ex(a[1])}, -1)")
        elif n == "clone_preserving_field_list":
            out.add(ind, f"C.clone = ({self.ex(a[1])}, {self.ex(a[2])})")
        elif n == "resubmit_preserving_field_list":
            out.add(ind, f"C.resubmit = {self.ex(a[0])}")
        elif n == "recirculate_preserving_field_list":
            out.add(ind, f"C.recirculate = {self.ex(a[0])}")
        elif n == "truncate":
            out.add(ind, f"C.truncate = {self.ex(a[0])}")
        elif n in ("verify_checksum", "verify_checksum_with_payload"):
            fn = self.algo(a[3])
            data = self.pack_code(a[1])
            if n.endswith("payload"):
                data = f"{data} + C.payload"
            w = ir.type_width(a[2].type)
            out.add(ind, f"if {self.ex(a[0])} and ({fn}({data}) & {_mask(w):#x}) != {self.ex(a[2])}:")
            out.add(ind + 1, "C.checksum_error = 1")
            if self.trace:
                out.add(ind + 1, f"TR('checksum verification failed at {e.loc}')")
        elif n in ("update_checksum", "update_checksum_with_payload"):
            fn = self.algo(a[3])
            data = self.pack_code(a[1])
            if n.endswith("payload"):
                data = f"{data} + C.payload"
            w = ir.type_width(a[2].type)
            out.add(ind, f"if {self.ex(a[0])}:")
            self.assign(a[2], f"({fn}({data}) & {_mask(w):#x})", out, ind + 1)
        elif n in ("assert", "assume"):
            out.add(ind, f"if not {self.ex(a[0])}:")
            out.add(ind + 1, f"raise _AssertFail({(str(e.loc) + ': ' + n + ' failed')!r})")
        elif n == "log_msg":
            fmt = self.ex(a[0])
            vals = "()"
            if len(a) > 1:
                vals = "(" + "".join(f"{self.ex(x)}, " for x, _ in self._flatten(a[1])) + ")"
            out.add(ind, f"C.log(_format_log({fmt}, {vals}))")
        else:
            raise _err(e.loc, f"unsupported: {n}")

    def _digest_values(self, data: ir.Expr) -> str:
        leaves = [x for x, _ in self._flatten(data)]
        parts = []
        for x in leaves:
            v = self.ex(x)
            if isinstance(x.type, ir.BoolT):
                v = f"int({v})"
            parts.append(v)
        return "(" + "".join(p + ", " for p in parts) + ")"

    # parser statements

    def st_Extract(self, s: ir.Extract, out: _Out, ind: int) -> None:
        h = s.header
        if isinstance(h, ir.StackNext):
            st = self.t()
            size = h.stack.type.size
            out.add(ind, f"{st} = {self.ex(h.stack)}")
            out.add(ind, f"if {st}.nxt >= {size}:")
            out.add(ind + 1, f"raise _PE({PE_STACK_OUT_OF_BOUNDS})")
            target = f"{st}.arr[{st}.nxt]"
            t = h.stack.type.elem
            post = f"{st}.nxt += 1"
        else:
            target = self.ex(h)
            t = h.type
            post = None
        if not isinstance(t, ir.HeaderT):
            raise _err(s.loc, "unsupported: extract of a non-header")
        if t.width % 8:
            raise _err(s.loc, f"unsupported: header {t.name} is not a whole number of bytes")
        nb = t.width // 8
        hv = self.t()
        out.add(ind, f"if off + {nb} > len(data):")
        out.add(ind + 1, f"raise _PE({PE_PACKET_TOO_SHORT})")
        out.add(ind, f"{hv} = {target}")
        v = self.t()
        out.add(ind, f"{v} = int.from_bytes(data[off:off + {nb}], 'big')")
        for line in layout.unpack_lines(t, hv, v, ""):
            out.add(ind, line)
        out.add(ind, f"off += {nb}")
        out.add(ind, "C.off = off")
        if post:
            out.add(ind, post)
        if self.trace:
            out.add(ind, f"TR('extract {t.name}: ' + repr({hv}))")

    def st_Advance(self, s: ir.Advance, out: _Out, ind: int) -> None:
        b = self.t()
        out.add(ind, f"{b} = {self.ex(s.bits)}")
        out.add(ind, f"if {b} & 7:")
        out.add(ind + 1, f"raise _PE({PE_PARSER_INVALID_ARGUMENT})")
        out.add(ind, f"if off + ({b} >> 3) > len(data):")
        out.add(ind + 1, f"raise _PE({PE_PACKET_TOO_SHORT})")
        out.add(ind, f"off += {b} >> 3")
        out.add(ind, "C.off = off")

    def st_Verify(self, s: ir.Verify, out: _Out, ind: int) -> None:
        out.add(ind, f"if not {self.ex(s.cond)}:")
        out.add(ind + 1, f"raise _PE({self.ex(s.error)})")

    def st_Emit(self, s: ir.Emit, out: _Out, ind: int) -> None:
        t = s.header.type
        if not isinstance(t, ir.HeaderT):
            raise _err(s.loc, "unsupported: emit of a non-header")
        h = self.t()
        out.add(ind, f"{h} = {self.ex(s.header)}")
        out.add(ind, f"if {h}.valid:")
        out.add(ind + 1, f"OUT.append(({layout.pack_expr(t, h)}).to_bytes({(t.width + 7) // 8}, 'big'))")

    # ------------------------------------------------------------------ blocks

    def _bind_block(self, blk, param_objs: list[str | None]) -> str:
        """Set up variable names for a block; returns the locals class name (or '')."""
        self.cur_block = blk
        self.var_map = {}
        for p, o in zip(blk.params, param_objs):
            if o is not None:
                self.var_map[p.name] = o
        if not blk.locals:
            return ""
        lname = f"Loc{self.ctl_index}"
        attrs = []
        for i, (name, t) in enumerate(blk.locals.items()):
            attr = f"l{i}"
            attrs.append((attr, t))
            self.var_map[name] = f"L.{attr}"
        src = [f"class {lname}:", f"    __slots__ = {tuple(a for a, _ in attrs)!r}", "    def __init__(self):"]
        src += [f"        self.{a} = {layout.zero_code(t, self.names)}" for a, t in attrs]
        self.funcs.append("\n".join(src) + "\n")
        return lname

    def gen_actions(self, ctl: ir.Control) -> None:
        for name, act in self.p.actions.items():
            if act.owner is not None and act.owner != ctl.name:
                continue
            fn = f"act{self.ctl_index}_{len(self.action_fn)}"
            self.action_fn[(self.ctl_index, name)] = fn
        for name, act in self.p.actions.items():
            key = (self.ctl_index, name)
            if key not in self.action_fn:
                continue
            self.action = act
            out = _Out()
            params = "".join(f", a{i}" for i in range(len(act.params)))
            out.add(0, f"def {self.action_fn[key]}(H, M, S, L, C{params}):")
            if self.trace:
                shown = " + ', ' + ".join(f"str(a{i})" for i, p in enumerate(act.params) if p.direction == "")
                out.add(1, f"TR('action {name}(' + {shown or repr('')} + ')')")
            self._param_prologue(act, out, 1)
            self.block(act.body, out, 1)
            if any(p.direction in ("out", "inout") for p in act.params):
                out.add(1, f"return {self._action_outs()}")
            self.funcs.append("\n".join(out.lines) + "\n")
            self.action = None

    def gen_tables(self, ctl: ir.Control) -> None:
        for tname in ctl.tables:
            self.table_fn[tname] = f"tbl{self.ctl_index}_{len(self.table_fn)}"
        # direct meter result targets: the lvalues of direct_meter.read() in the table's actions
        for tname, tbl in ctl.tables.items():
            self.gen_table(ctl, tbl)

    def _meter_targets(self, tbl: ir.Table) -> list[ir.Expr]:
        """The lvalues of ``direct_meter.read()`` calls in the table's actions."""
        found: list[ir.Expr] = []

        def visit(n) -> None:
            if isinstance(n, ir.ExternCall) and n.instance == tbl.meters and n.method == "read":
                found.append(n.args[0])
        for ref in tbl.actions:
            _walk(self.p.actions[ref.action].body, visit)
        return found

    def gen_table(self, ctl: ir.Control, tbl: ir.Table) -> None:
        fn = self.table_fn[tbl.name]
        out = _Out()
        out.add(0, f"def {fn}(H, M, S, L, C):")
        aid, entry = self.table_code(ctl, tbl, out, 1)
        out.add(1, f"return {aid}, {entry} is not None")
        self.funcs.append("\n".join(out.lines) + "\n")

    def table_code(self, ctl: ir.Control, tbl: ir.Table, out: _Out, ind: int) -> tuple[str, str]:
        """Lookup, direct resources and action dispatch of one apply; returns the names of the
        action-id and entry variables it leaves behind."""
        ts = self.res.table(tbl.name)
        g = self.g(ts, "TS")
        keys = []
        for k in tbl.match_keys:
            code = self.ex(k.expr)
            keys.append(f"int({code})" if isinstance(k.expr.type, ir.BoolT) else code)
        key = "(" + "".join(k + ", " for k in keys) + ")"
        sel = ""
        if tbl.selector_keys:
            impl = ctl.externs.get(tbl.implementation) if tbl.implementation else None
            if impl is None or impl.algorithm is None:
                raise _err(tbl.loc, f"table {tbl.name} has selector keys but no action_selector")
            alg = hashes.ALGORITHMS.get(impl.algorithm)
            if alg is None:
                raise _err(impl.loc, f"unsupported: selector algorithm {impl.algorithm}")
            lst = ir.ListExpr(ir.TupleT(tuple(k.expr.type for k in tbl.selector_keys)), tbl.loc,
                              [k.expr for k in tbl.selector_keys])
            sel = f", {self.g(alg, 'H_sel_')}({self.pack_code(lst)})"
        aid, args, entry = self.t(), self.t(), self.t()
        out.add(ind, f"{aid}, {args}, {entry} = {g}.lookup({key}{sel})")
        if self.trace:
            out.add(ind, f"TR('table {tbl.name}: ' + ('hit entry ' + _entry_text({entry}) if {entry} is not None else 'miss')"
                         f" + ' key=' + _key_text({key}) + ' -> ' + ANAMES.get({aid}, str({aid})) + _key_text({args}))")
        hit_lines = []
        if tbl.counters:
            dc = self.g(self.res.extern(tbl.counters), "X")
            hit_lines.append(f"{dc}.count({entry}, C.nbytes)")
        if tbl.meters:
            dm = self.g(self.res.extern(tbl.meters), "X")
            targets = self._meter_targets(tbl)
            if targets and not any(isinstance(t, ir.ActionParam) for t in targets):
                col = self.t()
                hit_lines.append(f"{col} = {dm}.execute({entry}, C.nbytes, C.now)")
                tmp = _Out()
                for tgt in targets:
                    self.assign(tgt, col, tmp, 0)
                hit_lines += tmp.lines
            else:
                hit_lines.append(f"{dm}.execute({entry}, C.nbytes, C.now)")
        if hit_lines:
            out.add(ind, f"if {entry} is not None:")
            for line in hit_lines:
                out.add(ind + 1, line)
        first = True
        for ref in tbl.actions:
            act = self.p.actions[ref.action]
            out.add(ind, f"{'if' if first else 'elif'} {aid} == {self.res.action_id(ref.action)}:")
            first = False
            if self._inlinable(act):
                self.inline_action(act, args, out, ind + 1)
            else:
                out.add(ind + 1, f"{self.action_fn[(self.ctl_index, ref.action)]}(H, M, S, L, C, *{args})")
        return aid, entry

    def _inlinable(self, act: ir.Action) -> bool:
        """Actions without return or directional parameters are inlined into table applies."""
        if any(p.direction for p in act.params):
            return False
        return not _contains(act.body, (ir.Return,))

    def inline_action(self, act: ir.Action, args: str, out: _Out, ind: int) -> None:
        n = len(act.params)
        if n:
            out.add(ind, f"{''.join(f'a{i}, ' for i in range(n))}= {args}")
        self._param_prologue(act, out, ind)
        if self.trace:
            shown = " + ', ' + ".join(f"str(a{i})" for i in range(n))
            out.add(ind, f"TR('action {act.name}(' + {shown or repr('')} + ')')")
        saved, self.action = self.action, act
        self.block(act.body, out, ind)
        self.action = saved

    def _param_prologue(self, act: ir.Action, out: _Out, ind: int) -> None:
        for i, prm in enumerate(act.params):
            if prm.direction == "" and isinstance(prm.type, ir.IntT):
                h = 1 << (prm.type.width - 1)
                out.add(ind, f"a{i} = (a{i} ^ {h:#x}) - {h:#x}")
            elif prm.direction == "" and isinstance(prm.type, ir.BoolT):
                out.add(ind, f"a{i} = a{i} != 0")

    def gen_control(self, ctl: ir.Control, objs: list[str | None], fname: str) -> None:
        self.ctl_index += 1
        lname = self._bind_block(ctl, objs)
        self.gen_actions(ctl)
        self.gen_tables(ctl)
        out = _Out()
        out.add(0, f"def {fname}(H, M, S, C):")
        out.add(1, f"L = {lname}()" if lname else "L = None")
        if ctl is self.p.deparser:
            out.add(1, "OUT = []")
            self.block(ctl.body, out, 1)
            out.add(1, "return OUT")
        else:
            out.add(1, "try:")
            self.block(ctl.body, out, 2)
            out.add(1, "except _Exit:")
            out.add(2, "pass")
        self.funcs.append("\n".join(out.lines) + "\n")

    def gen_parser(self, prs: ir.Parser) -> None:
        self.ctl_index += 1
        lname = self._bind_block(prs, [None, "H", "M", "S"])
        names = {n: f"ps_{i}" for i, n in enumerate(prs.states)}
        inline = _inlinable_states(prs)

        def emit_state(sname: str, out: _Out, ind: int) -> None:
            state = prs.states[sname]
            if self.trace:
                out.add(ind, f"TR('parser state {sname}')")
            for s in state.stmts:
                self.stmt(s, out, ind)
            self._transition(state.transition, goto, out, ind)

        def goto(target: str, out: _Out, ind: int) -> None:
            if target in ("accept", "reject"):
                out.add(ind, "return None")
            elif target in inline:
                emit_state(target, out, ind)  # single predecessor, not on a loop: inlined
            else:
                out.add(ind, f"return {names[target]}")

        for sname in prs.states:
            if sname in inline:
                continue
            out = _Out()
            out.add(0, f"def {names[sname]}(H, M, S, L, C):")
            out.add(1, "data = C.data")
            out.add(1, "off = C.off")
            emit_state(sname, out, 1)
            self.funcs.append("\n".join(out.lines) + "\n")
        out = _Out()
        out.add(0, "def parse(H, M, S, C):")
        out.add(1, f"L = {lname}()" if lname else "L = None")
        out.add(1, f"st = {names['start']}")
        out.add(1, "try:")
        out.add(2, f"for _ in range({MAX_PARSER_STATES}):")
        out.add(3, "st = st(H, M, S, L, C)")
        out.add(3, "if st is None:")
        out.add(4, "return 0")
        out.add(2, f"return {PE_PARSER_TIMEOUT}")
        out.add(1, "except _PE as e:")
        if self.trace:
            out.add(2, "TR('parser error ' + ERRNAMES.get(e.code, str(e.code)))")
        out.add(2, "return e.code")
        self.funcs.append("\n".join(out.lines) + "\n")

    def _transition(self, tr: ir.Transition, goto, out: _Out, ind: int) -> None:
        if tr.next_state is not None:
            goto(tr.next_state, out, ind)
            return
        ks = []
        for k in tr.keys:
            v = self.t()
            code = self.ex(k)
            if isinstance(k.type, ir.BoolT):
                code = f"int({code})"
            out.add(ind, f"{v} = {code}")
            ks.append(v)
        for case in tr.cases:
            conds = []
            for v, kset in zip(ks, case.keysets):
                if kset.kind == "default":
                    continue
                if kset.kind == "value":
                    conds.append(f"{v} == {kset.value}")
                elif kset.kind == "mask":
                    conds.append(f"{v} & {kset.mask:#x} == {kset.value & kset.mask:#x}")
                elif kset.kind == "range":
                    conds.append(f"{kset.value} <= {v} <= {kset.hi}")
                else:
                    raise _err(kset.loc, f"unsupported: {kset.kind} keyset in select")
            if not conds:
                goto(case.next_state, out, ind)
                return
            out.add(ind, f"if {' and '.join(conds)}:")
            goto(case.next_state, out, ind + 1)
        out.add(ind, f"raise _PE({PE_NO_MATCH})")

    # ------------------------------------------------------------------ top level

    def compile(self) -> CompiledBlocks:
        p = self.p
        hdr_t = p.parser.params[1].type
        meta_t = p.parser.params[2].type
        std_t = p.parser.params[3].type
        hc, mc, sc = self.names.cls(hdr_t), self.names.cls(meta_t), self.names.cls(std_t)
        self.gen_parser(p.parser)
        self.gen_control(p.verify_checksum, ["H", "M"], "blk_verify")
        self.gen_control(p.ingress, ["H", "M", "S"], "blk_ingress")
        self.gen_control(p.egress, ["H", "M", "S"], "blk_egress")
        self.gen_control(p.compute_checksum, ["H", "M"], "blk_compute")
        self.gen_control(p.deparser, [None, "H"], "blk_deparse")
        source = "\n".join(self.names.sources + self.funcs)
        ns: dict[str, object] = {
            "_PE": support.ParserError, "_Exit": support.ExitControl,
            "_AssertFail": support.AssertionFailed,
            "_sat_add_u": support.sat_add_u, "_sat_sub_u": support.sat_sub_u,
            "_sat_add_s": support.sat_add_s, "_sat_sub_s": support.sat_sub_s,
            "_shl": support.shl, "_shl_s": support.shl_s,
            "_divmod_d": support.div, "_divmod_m": support.mod,
            "_stk_get": support.stack_get, "_stk_next": support.stack_next,
            "_stk_last": support.stack_last, "_la_bits": support.lookahead_bits,
            "_la_hdr": support.lookahead_header, "_pack_opt": support.pack_optional,
            "_hash_offset": hashes.hash_offset, "_randint": support.randint,
            "_format_log": support.format_log, "_entry_text": support.entry_text,
            "_key_text": support.key_text,
            "ERRNAMES": dict(enumerate(p.errors)),
        }
        ns.update(self.globals)
        code = compile(source, f"<p4:{p.source_file}>", "exec")
        exec(code, ns)  # noqa: S102 - the source is generated by this module from checked IR
        def used(ctl: ir.Control, fn: str):
            # an empty control is not called at all (None)
            return ns[fn] if ctl.body.stmts else None

        return CompiledBlocks(
            parser=ns["parse"], verify_checksum=used(p.verify_checksum, "blk_verify"),
            ingress=ns["blk_ingress"], egress=used(p.egress, "blk_egress"),
            compute_checksum=used(p.compute_checksum, "blk_compute"), deparser=ns["blk_deparse"],
            header_cls=ns[hc], meta_cls=ns[mc], std_cls=ns[sc], source=source, namespace=ns)
