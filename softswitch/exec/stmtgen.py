"""Statement code generation: assignments, control flow, calls of actions/externs/builtins and
the parser's extract/advance/verify and the deparser's emit."""
from __future__ import annotations

from softswitch.contract import DROP_PORT
from softswitch.exec import layout
from softswitch.exec.exprgen import (
    PE_HEADER_TOO_SHORT,
    PE_PACKET_TOO_SHORT,
    PE_PARSER_INVALID_ARGUMENT,
    PE_STACK_OUT_OF_BOUNDS,
    ExprGen,
    Out,
    bitmask,
    bits_code,
    compile_error,
    signed_code,
)
from softswitch.exec.layout import signed_width
from softswitch.exec.usage import local_root, meter_locals
from softswitch.frontend import ir

# A P4 for loop that has not ended after this many rounds drops the packet (as a failed assert
# does): P4 loops over header stacks and bit<W> counters end far sooner.
MAX_LOOP_ITERATIONS = 1 << 20


def _to_type(masked: str, t: ir.Type) -> str:
    """``masked``, a value already cut to its destination's width, as that destination holds it:
    an int<W> destination holds the two's-complement value signed (as the register read does)."""
    w = signed_width(t)
    return signed_code(masked, w, masked=True) if w else masked


def colour_to(code: str, t: ir.Type) -> str:
    """A meter's colour (0 GREEN, 1 YELLOW, 2 RED) as a ``bit<W>``/``int<W>`` destination holds it:
    cut to W bits, as bmv2's ``Field::set`` cuts it (RED in a ``bit<1>`` reads 0, in an ``int<2>`` -2)."""
    if (isinstance(t, ir.BitT) and t.width < 2) or (isinstance(t, ir.IntT) and t.width <= 2):
        return _to_type(f"({code} & {bitmask(t.width):#x})", t)
    return code


class StmtGen(ExprGen):
    """Statements (the table-apply hooks ``_inline_apply``/``table_fn`` come from the subclass)."""

    # ------------------------------------------------------------------ statements

    def block(self, b: ir.Block | None, out: Out, ind: int) -> None:
        n = len(out.lines)
        if b is not None:
            for s in b.stmts:
                self.stmt(s, out, ind)
        if len(out.lines) == n:
            out.add(ind, "pass")

    def stmt(self, s: ir.Stmt, out: Out, ind: int) -> None:
        m = getattr(self, "st_" + type(s).__name__, None)
        if m is None:
            raise compile_error(s.loc, f"unsupported: statement {type(s).__name__}")
        m(s, out, ind)

    def st_Block(self, s: ir.Block, out: Out, ind: int) -> None:
        for x in s.stmts:
            self.stmt(x, out, ind)

    def st_Assign(self, s: ir.Assign, out: Out, ind: int) -> None:
        if isinstance(s.lhs.type, ir.VarbitT):  # the value and its current width
            out.add(ind, f"{self.ex(s.lhs.expr)}.vbw = {self.ex(s.rhs.expr)}.vbw")
        if self.track_len and isinstance(s.lhs.type, ir.HeaderT) and isinstance(s.rhs, ir.StructInit) \
                and s.lhs.type.varbit is None:
            # '{ f = 1 }' makes the header valid: p4c puts a setValid() before the stores, and bmv2's
            # add_header counts the header's bytes into the packet length when it was invalid
            out.add(ind, f"if not {self.ex(s.lhs)}.valid:")
            out.add(ind + 1, f"C.dlen += {_fixed_bytes(s.lhs.type)}")
        self.assign(s.lhs, self.ex(s.rhs), out, ind)

    def st_VarDecl(self, s: ir.VarDecl, out: Out, ind: int) -> None:
        tgt = self.ex(s.var)
        t = s.var.type
        if s.init is None:
            out.add(ind, f"{tgt} = {layout.zero_code(t, self.names)}")
            for dest in self._meter_destinations(s.var):
                # the table wrote this packet's colour into it at the hit (codegen, C.mcol): bmv2's
                # action-local field, which a declaration without an initialiser leaves as it is
                self.assign(dest, colour_to("C.mcol", dest.type), out, ind)
        elif self._is_aggregate(t):
            init = self.ex(s.init)
            fresh = isinstance(s.init, (ir.StructInit, ir.InvalidHeader))
            out.add(ind, f"{tgt} = {init}" if fresh else f"{tgt} = {init}.copy()")
        else:
            out.add(ind, f"{tgt} = {self.ex(s.init)}")

    def _meter_destinations(self, var: ir.Var) -> list[ir.Expr]:
        """The lvalues in local ``var`` of the current action that a ``direct_meter.read()`` of
        the action writes."""
        act = self.action
        if act is None or not isinstance(self.cur_block, ir.Control):
            return []
        externs = self.cur_block.externs
        return [dest for meter, dest in meter_locals(act)
                if getattr(externs.get(meter), "kind", None) == "direct_meter" and local_root(dest, act) == var.name]

    def _extract_only_member(self, e: ir.Expr) -> str | None:
        """The member of the headers struct that header ``e`` is (an element of, for a stack) when
        only extract writes it (``usage.extract_only_headers``), else None."""
        if isinstance(e, (ir.StackNext, ir.StackIndex)):
            e = e.stack
        if isinstance(e, ir.Member) and isinstance(e.expr, ir.Var) and e.expr.type == self.hdr_t \
                and e.field in self.extract_only:
            return e.field
        return None

    def _inline_apply(self, name: str, out: Out, ind: int) -> tuple[str, str]:
        tbl = self.cur_block.tables[name]
        return self.table_code(self.cur_block, tbl, out, ind)

    def st_If(self, s: ir.If, out: Out, ind: int) -> None:
        c = s.cond
        neg = isinstance(c, ir.Unary) and c.op == "!"
        inner = c.operand if neg else c
        if isinstance(inner, ir.ApplyTable) and inner.result in ("hit", "miss"):
            _, entry = self._inline_apply(inner.table, out, ind)
            hit = (inner.result == "hit") != neg
            out.add(ind, f"if {entry} is {'not ' if hit else ''}None:")
        else:
            out.add(ind, f"if {self.ex(s.cond)}:")
        saved = self.known_valid
        self.known_valid = saved | self._tested_valid(c)
        self.block(s.then, out, ind + 1)
        self.known_valid = saved
        if s.else_ is not None and s.else_.stmts:
            out.add(ind, "else:")
            self.block(s.else_, out, ind + 1)

    def _tested_valid(self, c: ir.Expr) -> frozenset[tuple[str, str]]:
        """Headers (of ``stay_valid``) that condition ``c`` being true shows valid:
        ``hdr.h.isValid()``, alone or in a chain of ``&&``; as (the variable's code, member)."""
        if isinstance(c, ir.Binary) and c.op == "&&":
            return self._tested_valid(c.left) | self._tested_valid(c.right)
        if isinstance(c, ir.IsValid) and isinstance(c.header, ir.Member) and isinstance(c.header.expr, ir.Var) \
                and c.header.expr.type == self.hdr_t and c.header.field in self.stay_valid:
            # keyed by the variable too: a local of the headers type has its own ``h``, and its
            # validity says nothing about the packet's (a store into the packet's guarded by it
            # lost its mark and leaked into the next packet on the loop's recycled objects)
            return frozenset(((self.ex(c.header.expr), c.header.field),))
        return frozenset()

    def st_SwitchActionRun(self, s: ir.SwitchActionRun, out: Out, ind: int) -> None:
        v, _ = self._inline_apply(s.table, out, ind)
        self._cases(v, s.cases, out, ind, lambda lab: repr(self.res.action_id(lab)))

    def st_SwitchValue(self, s: ir.SwitchValue, out: Out, ind: int) -> None:
        v = self.t()
        out.add(ind, f"{v} = {self.ex(s.expr)}")
        self._cases(v, s.cases, out, ind, lambda lab: self.ex(lab))

    def _cases(self, v: str, cases: list[ir.SwitchCase], out: Out, ind: int, label) -> None:
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

    def st_For(self, s: ir.For, out: Out, ind: int) -> None:
        """A bounded Python loop: the update runs before every test but the first, so a P4
        ``continue`` is Python's; running past ``MAX_LOOP_ITERATIONS`` fails the packet."""
        for x in s.init:
            self.stmt(x, out, ind)
        it = self.t()
        out.add(ind, f"for {it} in range({MAX_LOOP_ITERATIONS}):")
        if s.update:
            out.add(ind + 1, f"if {it}:")
            for x in s.update:
                self.stmt(x, out, ind + 2)
        for x in s.cond_pre:
            self.stmt(x, out, ind + 1)
        if s.cond is not None:
            out.add(ind + 1, f"if not ({self.ex(s.cond)}):")
            out.add(ind + 2, "break")
        self.block(s.body, out, ind + 1)
        out.add(ind, "else:")
        out.add(ind + 1, f"raise _AssertFail({f'for loop at {s.loc} ran {MAX_LOOP_ITERATIONS} times'!r})")

    def st_Break(self, s: ir.Break, out: Out, ind: int) -> None:
        out.add(ind, "break")

    def st_Continue(self, s: ir.Continue, out: Out, ind: int) -> None:
        out.add(ind, "continue")

    def st_Exit(self, s: ir.Exit, out: Out, ind: int) -> None:
        out.add(ind, "raise _Exit()")

    def st_CopyOutOnExit(self, s: ir.CopyOutOnExit, out: Out, ind: int) -> None:
        out.add(ind, "try:")
        self.block(s.body, out, ind + 1)
        out.add(ind, "except _Exit:")
        for c in s.copy_out:
            self.stmt(c, out, ind + 1)
        out.add(ind + 1, "raise")

    def st_Return(self, s: ir.Return, out: Out, ind: int) -> None:
        out.add(ind, f"return {self._action_outs()}" if self.action is not None else "return")

    def _action_outs(self) -> str:
        a = self.action
        outs = [f"a{i}" for i, p in enumerate(a.params) if p.direction in ("out", "inout")]
        return f"({', '.join(outs)},)" if outs else "None"

    def st_ExprStmt(self, s: ir.ExprStmt, out: Out, ind: int) -> None:
        e = s.expr
        if isinstance(e, ir.SetValid):
            if self.track_len:  # bmv2's add_header adds the header's bytes when it was invalid
                out.add(ind, f"if {self.ex(e.header)}.set_valid():")
                out.add(ind + 1, f"C.dlen += {_fixed_bytes(e.header.type)}")
            else:
                out.add(ind, f"{self.ex(e.header)}.set_valid()")
        elif isinstance(e, ir.SetInvalid):
            if self.track_len and not e.sibling:  # and remove_header takes them off when it was valid
                h = self.ex(e.header)
                out.add(ind, f"if {h}.valid:")
                vb = getattr(e.header.type, "varbit", None) is not None
                # a varbit header counts its current varbit bytes too (get_nbytes_packet)
                out.add(ind + 1, f"C.dlen -= ({e.header.type.width} + {h}.vbw) // 8" if vb
                        else f"C.dlen -= {_fixed_bytes(e.header.type)}")
            out.add(ind, f"{self.ex(e.header)}.valid = False")
            hdr = self.dirty_header(e.header)
            if hdr is not None:  # its fields stay as they were (read while invalid, as bmv2's)
                out.add(ind, f"{hdr}.dirty = True")
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

    def action_call(self, e: ir.ActionCall, out: Out, ind: int) -> None:
        act = self.p.actions[e.action]
        fn = self.action_fn[(self.ctl_index, e.action)]
        args = [self.arg_code(p, a) for p, a in zip(act.params, e.args)]
        outs = [(i, a) for i, (p, a) in enumerate(zip(act.params, e.args)) if p.direction in ("out", "inout")]
        call = f"{fn}(H, M, S, L, C{''.join(', ' + x for x in args)})"
        if not outs:
            out.add(ind, call)
            return
        r = self.t()
        out.add(ind, "try:")
        out.add(ind + 1, f"{r} = {call}")
        out.add(ind, "except _Exit as _x:")
        for k, (_, a) in enumerate(outs):
            self.assign(a, f"_x.outs[{k}]", out, ind + 1)
        out.add(ind + 1, "raise")
        for k, (_, a) in enumerate(outs):
            self.assign(a, f"{r}[{k}]", out, ind)

    def arg_code(self, p: ir.Param, a: ir.Expr) -> str:
        """The value parameter ``p`` of a called action or function starts with, for argument ``a``
        (a direct call, or an argument bound in a table's actions list): an out parameter a fresh
        value (headers invalid, P4_16 "Calling conventions"), not the argument's -- which may not
        even have one yet (a function's hidden result variable); an aggregate a copy."""
        if p.direction == "out":
            return layout.zero_code(p.type, self.names)
        code = self.ex(a)
        return f"{code}.copy()" if self._is_aggregate(p.type) else code

    def extern_call(self, e: ir.ExternCall, out: Out, ind: int) -> None:
        inst = self.cur_block.externs.get(e.instance) if isinstance(self.cur_block, ir.Control) else None
        if inst is None:
            raise compile_error(e.loc, f"unknown extern instance {e.instance}")
        kind, meth, args = inst.kind, e.method, e.args
        if kind == "direct_counter" and meth == "count":
            return  # counted by the table on every hit, as bmv2 does
        if kind == "direct_meter" and meth == "read":
            return  # the colour is written by the table on a hit, as bmv2 does
        obj = self.res.extern(inst.name)
        g = self.g(obj, "X")
        size = inst.size if inst.size is not None else 0
        # The index guard below is the array's bound (indices are unsigned), so when the runtime
        # object's size is that same bound its cells are updated in its value lists directly:
        # the same stores its ``count`` / ``read`` / ``write`` make, without a call per packet
        # (the lists are never replaced, only written in place, so binding them is exact).
        direct = getattr(obj, "size", None) == size
        if kind == "counter" and meth == "count":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[0])}")
            out.add(ind, f"if {i} < {size}:")
            if direct and isinstance(getattr(obj, "cells", None), list):
                # one packed cell (``counters.pack_cell``): bytes and a packet in one addition
                out.add(ind + 1, f"{self.g(obj.cells, 'XC')}[{i}] += C.ncount")
            else:
                out.add(ind + 1, f"{g}.count({i}, C.nbytes)")
            return
        if kind == "meter" and meth == "execute_meter":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[0])}")
            out.add(ind, f"if {i} < {size}:")
            self.assign(args[1], colour_to(f"{g}.execute({i}, C.nbytes, C.now)", args[1].type), out, ind + 1)
            return
        if kind == "register" and meth == "read":
            i = self.t()
            out.add(ind, f"{i} = {self.ex(args[1])}")
            out.add(ind, f"if {i} < {size}:")
            direct_regs = direct and isinstance(getattr(obj, "values", None), list)
            rd = f"{self.g(obj.values, 'XV')}[{i}]" if direct_regs else f"{g}.read({i})"
            et = inst.type_args[0] if inst.type_args else None
            if sw := signed_width(et):
                rd = signed_code(rd, sw, masked=True)
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
            if direct and isinstance(getattr(obj, "values", None), list) and isinstance(getattr(obj, "mask", None), int):
                at = args[1].type  # a bit<W> value of the register's width is in range already
                if not (isinstance(at, ir.BitT) and (1 << at.width) - 1 == obj.mask):
                    val = f"({val}) & {obj.mask:#x}"
                out.add(ind + 1, f"{self.g(obj.values, 'XV')}[{i}] = {val}")
            else:
                out.add(ind + 1, f"{g}.write({i}, {val})")
            return
        raise compile_error(e.loc, f"unsupported: {kind}.{meth}")

    def builtin_call(self, e: ir.BuiltinCall, out: Out, ind: int) -> None:
        n, a = e.name, e.args
        if n == "mark_to_drop":
            sm = self.ex(a[0]) if a else "S"  # mark_to_drop(): the packet's standard_metadata
            out.add(ind, f"{sm}.f_egress_spec = {DROP_PORT}")
            out.add(ind, f"{sm}.f_mcast_grp = 0")
        elif n == "hash":
            fn = self.algo(a[1])
            w = ir.type_width(a[0].type)
            h = f"{fn}({self.pack_code(a[3])})"
            base, mx = a[2], a[4]
            # bmv2 computes ``h % max + base`` in 64 bits: a base or max past 2^64 - 1 reads as
            # 2^64 - 1 (Data::get<uint64_t>) and the sum wraps at 2^64 (only a result wider than
            # 64 bits shows the wrap; narrower ones are cut below it anyway)
            b = self.ex(base)
            if ir.type_width(base.type) > 64:
                b = f"min({b}, {bitmask(64):#x})"
            if isinstance(mx, ir.Const):
                m = min(int(mx.value), bitmask(64))
                r = b if m == 0 else f"({b} + {h} % {m})"
            else:
                r = f"_hash_offset({h}, {b}, {self.ex(mx)})"
            self.assign(a[0], _to_type(f"({r} & {bitmask(min(w, 64)):#x})", a[0].type), out, ind)
        elif n == "random":
            w = ir.type_width(a[0].type)
            self.assign(a[0], _to_type(f"(_randint({self.ex(a[1])}, {self.ex(a[2])}) & {bitmask(w):#x})", a[0].type),
                        out, ind)
        elif n == "digest":
            t = e.type_args[0] if e.type_args else a[1].type
            did = self.res.digest_id(e.digest or t.name)
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
        elif n == "truncate":  # the smallest length wins (bmv2's Packet::truncate keeps the minimum)
            tv = self.t()
            out.add(ind, f"{tv} = {self.ex(a[0])}")
            out.add(ind, f"if C.truncate < 0 or {tv} < C.truncate:")
            out.add(ind + 1, f"C.truncate = {tv}")
        elif n in ("verify_checksum", "verify_checksum_with_payload"):
            fn, data, _w = self._checksum_parts(n, a)
            # as bmv2's Checksum::verify: no verification while the checksum field's header is
            # invalid, and the computed value compared whole (not cut to the field's width)
            target = a[2]
            valid = (f"{self.ex(target.expr)}.valid and " if isinstance(target, ir.Member)
                     and isinstance(target.expr.type, ir.HeaderT) else "")
            out.add(ind, f"if {valid}{self.ex(a[0])} and {fn}({data}) != {self.ex(target)}:")
            out.add(ind + 1, "C.checksum_error = 1")
            if self.trace:
                out.add(ind + 1, f"TR('checksum verification failed at {e.loc}')")
        elif n in ("update_checksum", "update_checksum_with_payload"):
            fn, data, w = self._checksum_parts(n, a)
            out.add(ind, f"if {self.ex(a[0])}:")
            self.assign(a[2], f"({fn}({data}) & {bitmask(w):#x})", out, ind + 1)
        elif n in ("assert", "assume"):
            out.add(ind, f"if not {self.ex(a[0])}:")
            out.add(ind + 1, f"raise _AssertFail({(str(e.loc) + ': ' + n + ' failed')!r})")
        elif n == "log_msg":
            fmt = self.ex(a[0])
            vals = "()"
            if len(a) > 1:
                vals = "(" + "".join(f"{self.ex(x)}, " for x, _ in self._flatten(a[1])) + ")"
            out.add(ind, f"C.log({fmt}, {vals})")
        else:
            raise compile_error(e.loc, f"unsupported: {n}")

    def _checksum_parts(self, n: str, a: list) -> tuple[str, str, int]:
        """Hash function, input-bytes code and checksum width of a verify/update_checksum call."""
        fn = self.algo(a[3])
        data = self.pack_code(a[1])
        if n.endswith("payload"):
            data = f"{data} + C.payload"
        return fn, data, ir.type_width(a[2].type)

    def _digest_values(self, data: ir.Expr) -> str:
        leaves = [x for x, _ in self._flatten(data)]
        parts = []
        for x in leaves:
            parts.append(bits_code(self.ex(x), x.type))  # the field's bits, as bmv2 sends them
        return "(" + "".join(p + ", " for p in parts) + ")"

    # parser statements

    def _extract_varbit(self, s: ir.Extract, out: Out, ind: int) -> None:
        """Two-argument extract: the fixed fields and ``bits`` bits of the varbit field.  Like
        bmv2: more bits than the maximum is HeaderTooShort, a header that does not end on a byte
        is ParserInvalidArgument, then PacketTooShort."""
        t = s.header.type
        fields = layout.header_fields(t)
        vi = next(i for i, (_, _, k) in enumerate(fields) if k == "varbit")
        post = None
        h = s.header
        if isinstance(h, ir.StackNext):  # stack.next: StackOutOfBounds first, as bmv2
            st = self.t()
            out.add(ind, f"{st} = {self.ex(h.stack)}")
            out.add(ind, f"if {st}.nxt >= {h.stack.type.size}:")
            out.add(ind + 1, f"raise _PE({PE_STACK_OUT_OF_BOUNDS})")
            target = f"{st}.arr[{st}.nxt]"
            post = f"{st}.nxt += 1"
        else:
            target = self.ex(h)
        after = sum(w for _, w, _ in fields[vi + 1:])
        n, nb, v, hv = self.t(), self.t(), self.t(), self.t()
        out.add(ind, f"{n} = {self.ex(s.bits)}")
        # bmv2's order (parser.cpp extract_VL, and the spec's extract pseudocode): a size that is no
        # whole number of bytes, then the packet's length, then the field's maximum
        out.add(ind, f"if ({t.width} + {n}) & 7:")
        out.add(ind + 1, f"raise _PE({PE_PARSER_INVALID_ARGUMENT})")
        out.add(ind, f"{nb} = ({t.width} + {n}) >> 3")
        out.add(ind, f"if off + {nb} > dlen:")
        out.add(ind + 1, f"raise _PE({PE_PACKET_TOO_SHORT})")
        out.add(ind, f"if {n} > {fields[vi][1]}:")
        out.add(ind + 1, f"raise _PE({PE_HEADER_TOO_SHORT})")
        out.add(ind, f"{hv} = {target}")
        out.add(ind, f"{v} = int.from_bytes(data[off:off + {nb}], 'big')")

        def put(attr: str, w: int, kind: str, shift: str) -> None:
            e = f"({v} >> ({shift})) & {(1 << w) - 1:#x}"
            if kind == "int":
                e = f"(({e}) ^ {1 << (w - 1):#x}) - {1 << (w - 1):#x}"
            elif kind == "bool":
                e = f"({e}) != 0"
            out.add(ind, f"{hv}.{attr} = {e}")
        shift = after
        for attr, w, kind in fields[vi + 1:]:
            shift -= w
            put(attr, w, kind, str(shift))
        out.add(ind, f"{hv}.{fields[vi][0]} = ({v} >> {after}) & ((1 << {n}) - 1)")
        shift = after
        for attr, w, kind in reversed(fields[:vi]):
            put(attr, w, kind, f"{shift} + {n}")
            shift += w
        out.add(ind, f"{hv}.vbw = {n}")
        out.add(ind, f"{hv}.valid = {hv}.dirty = True")
        out.add(ind, f"off += {nb}")
        if post:
            out.add(ind, post)
        if self.trace:
            out.add(ind, f"TR('extract {t.name}: ' + repr({hv}))")

    def st_Extract(self, s: ir.Extract, out: Out, ind: int) -> None:
        if s.bits is not None:
            self._extract_varbit(s, out, ind)
            return
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
        elif isinstance(h, ir.Member) and isinstance(h.expr, ir.StackNext):
            # stack_of_unions.next.member: like bmv2's union-stack extract, StackOutOfBounds
            # first, then the member of the next union is extracted, its siblings become
            # invalid, and only then does the stack move on
            st, u = self.t(), self.t()
            stack = h.expr.stack
            out.add(ind, f"{st} = {self.ex(stack)}")
            out.add(ind, f"if {st}.nxt >= {stack.type.size}:")
            out.add(ind + 1, f"raise _PE({PE_STACK_OUT_OF_BOUNDS})")
            out.add(ind, f"{u} = {st}.arr[{st}.nxt]")
            target = f"{u}.f_{h.field}"
            t = h.type
            sibs = [f.name for f in h.expr.type.fields if f.name != h.field]
            post = "; ".join([f"{u}.f_{n}.valid = False" for n in sibs] + [f"{st}.nxt += 1"])
        else:
            target = self.ex(h)
            t = h.type
            post = None
        if not isinstance(t, ir.HeaderT):
            raise compile_error(s.loc, "unsupported: extract of a non-header")
        if t.width % 8:
            raise compile_error(s.loc, f"unsupported: header {t.name} is not a whole number of bytes")
        nb = t.width // 8
        # the header and the unpacked words are named alike in every extract (each is read only
        # by this extract's own lines): a parse function copies many extracts into one body, and
        # CPython sets up and clears every local slot of a frame on each call
        hv = "_xh"
        # valid implies dirty (one flag for the reset to test), except for a header only extract
        # writes: its reset tests ``valid`` and never looks at ``dirty``
        eo = self._extract_only_member(h)
        mark = eo is None
        out.add(ind, f"if off + {nb} > dlen:")
        out.add(ind + 1, f"raise _PE({PE_PACKET_TOO_SHORT})")
        out.add(ind, f"{hv} = {target}")
        if nb:  # struct codes per byte-aligned field group: no header-wide integer
            stn = self.g(layout.header_struct(t), "ST")
            skip = frozenset() if mark else frozenset(f"f_{n}" for n in self.unread.get(eo, ()))
            for line in layout.unpack_struct_lines(t, hv, stn, "data", "off", "_xw", mark, skip):
                out.add(ind, line)
            if not mark:  # nothing but extract writes it: the deparser emits these bytes (st_Emit)
                out.add(ind, f"{hv}.raw = data[off:off + {nb}]")
        else:
            out.add(ind, f"{hv}.valid = {hv}.dirty = True" if mark else f"{hv}.valid = True")
        out.add(ind, f"off += {nb}")
        if post:
            out.add(ind, post)
        if self.trace:
            out.add(ind, f"TR('extract {t.name}: ' + repr({hv}))")

    def st_Advance(self, s: ir.Advance, out: Out, ind: int) -> None:
        b = self.t()
        out.add(ind, f"{b} = {self.ex(s.bits)}")
        out.add(ind, f"if {b} & 7:")
        out.add(ind + 1, f"raise _PE({PE_PARSER_INVALID_ARGUMENT})")
        out.add(ind, f"if off + ({b} >> 3) > dlen:")
        out.add(ind + 1, f"raise _PE({PE_PACKET_TOO_SHORT})")
        out.add(ind, f"off += {b} >> 3")

    def st_Verify(self, s: ir.Verify, out: Out, ind: int) -> None:
        out.add(ind, f"if not {self.ex(s.cond)}:")
        out.add(ind + 1, f"raise _PE({self.ex(s.error)})")

    def st_Emit(self, s: ir.Emit, out: Out, ind: int) -> None:
        t = s.header.type
        if not isinstance(t, ir.HeaderT):
            raise compile_error(s.loc, "unsupported: emit of a non-header")
        h = "_eh"  # named alike in every emit, as extract's temporaries (st_Extract)
        e = s.header
        plain = all(type(n) in (ir.Member, ir.Var, ir.Const) or (type(n) is ir.StackIndex and type(n.index) is ir.Const)
                    for n in ir.iter_nodes(e))  # attribute and constant-index reads only
        code = self.ex(e)
        arrs = getattr(self, "emit_arrays", None)
        if arrs is not None and ind == self.emit_top and isinstance(e, ir.StackIndex) \
                and isinstance(e.index, ir.Const):
            # the deparser's top level (it cannot write the headers): a stack's element list
            # bound once for all its emits
            stack = self.ex(e.stack)
            if stack not in arrs:
                arrs[stack] = self.t()
                out.add(ind, f"{arrs[stack]} = {stack}.arr")
            code = f"{arrs[stack]}[{e.index.value}]"
        if plain:  # named only when valid (most headers of a packet are not)
            out.add(ind, f"if {code}.valid:")
            out.add(ind + 1, f"{h} = {code}")
        else:
            out.add(ind, f"{h} = {code}")
            out.add(ind, f"if {h}.valid:")
        if t.varbit is not None:
            size = f"({t.width} + {h}.vbw) // 8"
            out.add(ind + 1, f"OUT.append(({layout.pack_expr(t, h)}).to_bytes({size}, 'big'))")
        elif t.width and t.width % 8 == 0:
            lines, expr = layout.pack_struct_lines(t, h, self.g(layout.header_struct(t), "ST"), "_ew")
            if self._extract_only_member(e) is not None:
                # only extract writes it: while valid, its fields are the bytes it was extracted
                # from (``raw``, kept by st_Extract), unless setValid made it valid (raw None)
                r = "_er"
                out.add(ind + 1, f"{r} = {h}.raw")
                out.add(ind + 1, f"if {r} is None:")
                for line in lines:
                    out.add(ind + 2, line)
                out.add(ind + 2, f"{r} = {expr}")
                out.add(ind + 1, f"OUT.append({r})")
                return
            for line in lines:
                out.add(ind + 1, line)
            out.add(ind + 1, f"OUT.append({expr})")
        elif t.width == 0:
            out.add(ind + 1, "pass")  # a header without fields emits nothing
        else:  # the front end rejects such headers (check_header_widths)
            raise compile_error(s.loc, f"unsupported: header {t.name} is not a whole number of bytes")


def _fixed_bytes(t: ir.HeaderT) -> int:
    """A header's bytes as bmv2's add_header/remove_header count them (its fixed fields)."""
    return t.width // 8
