"""Statements: blocks, assignments, local variables, if, switch, calls as statements."""
from __future__ import annotations

from typing import Any

from lark import Token, Tree

from . import ir
from .checkbase import (
    _BINOPS,
    CheckerBase,
    _ActionRef,
    _Ctx,
    _Inlined,
    _name,
    _StmtMarker,
    _tree,
    _trees,
    _type_child,
    _VerifyMarker,
)
from .types import BOOL, InfIntT, show


class StmtChecker(CheckerBase):
    """Statements."""

    # ------------------------------------------------------------ statements
    def block(self, t: Tree, ctx: _Ctx) -> ir.Block:
        ctx.scope.append({})  # type: ignore[attr-defined]
        try:
            stmts: list[ir.Stmt] = []
            for s in _trees(t):
                stmts += self.stmt(s, ctx)
            return ir.Block(self.loc(t), stmts)
        finally:
            ctx.scope.pop()  # type: ignore[attr-defined]

    def stmt(self, s: Tree, ctx: _Ctx) -> list[ir.Stmt]:
        """Lower one statement; calls of user functions in its expressions come first (their
        results are read from fresh variables), as p4c orders side effects."""
        saved = ctx.prelude
        ctx.prelude = []
        self._no_side_effects_in_conditionals(s)
        try:
            out = self._stmt(s, ctx)
        finally:
            pre, ctx.prelude = ctx.prelude, saved
        return pre + out if pre else out

    def _no_side_effects_in_conditionals(self, s: Tree) -> None:
        """Hoisting a call before its statement keeps the meaning when the function only reads
        its arguments.  A function with out/inout parameters is accepted where the lowering keeps
        p4c's evaluation order: a whole statement, right-hand side, initialiser, condition,
        return value or loop condition, and inside those under operators whose earlier operands
        are taken into temporaries first (binary operators, lists, struct initialisers, call
        arguments), under ``&&``/``||``/``?:`` (lowered into ifs), casts, slices, unary
        operators, members and stack indices; elsewhere it is rejected by name."""
        allowed: set[int] = set()
        calls = []

        def allow(x: Tree) -> None:
            # through casts: '(T) f(x)' evaluates nothing before the call; through '||', '&&'
            # and '?:', which are lowered into ifs (operands evaluated in order into temporaries)
            if not isinstance(x, Tree):
                return
            if x.data == "cast" and _trees(x):
                allow(_trees(x)[-1])
            elif x.data in ("bin_or", "bin_and", "mux"):
                for k_ in _trees(x):
                    allow(k_)
            elif x.data.startswith("bin_") and x.data != "bin_concat" and len(_trees(x)) == 2:
                # the left operand is evaluated first; before a call in the right one it is
                # taken into a temporary (check_expr.left_operand)
                allow(_trees(x)[0])
                allow(_trees(x)[1])
            elif x.data == "bin_concat" and len(_trees(x)) == 2:
                # as any binary operator: the left operand is taken into a temporary before a
                # call with effects on the right (check_expr, 'bin_concat')
                allow(_trees(x)[0])
                allow(_trees(x)[1])
            elif x.data == "slice" and _trees(x):
                allow(_trees(x)[0])  # 'f(x)[15:0]': the bounds are constants
            elif x.data in ("not_", "bnot", "neg", "member") and _trees(x):
                allow(_trees(x)[0])  # '-f(x)', 'f(x).a': nothing is read before the operand
            elif x.data == "index" and len(_trees(x)) == 2:
                # 's[f(x)]': the stack is a reference (p4c's DismantleExpression reads it after
                # the index's temporary, as the statement here does)
                allow(_trees(x)[0])
                allow(_trees(x)[1])
            elif x.data in ("call_expr", "generic_call") and _tree(x, "args") is not None:
                # 'g(a, f(a))': arguments in order; check_expr.call takes an earlier argument
                # into a temporary (copy-in) before a later one's call with effects
                allowed.add(id(x))
                for a_ in _trees(_tree(x, "args")):
                    allow(_trees(a_)[-1] if a_.data == "named_arg" else a_)
            elif x.data == "list_expr":
                # '{a, f(a)}': elements in order, earlier ones taken into temporaries before a
                # call with effects (check_expr.elements)
                for el in _trees(x, "expr_list"):
                    for k_ in _trees(el):
                        allow(k_)
            elif x.data == "struct_expr":
                for kv in _trees(x, "kv_pair"):
                    allow(kv.children[-1])
            else:
                allowed.add(id(x))

        def allow_lhs_indices(x: Tree) -> None:
            # 'a[f(x)].b = e': an lvalue is evaluated before the right-hand side, its base is a
            # reference (no value read), so a call that is a whole index of it runs first anyway
            while isinstance(x, Tree) and x.data in ("member", "index", "slice"):
                kids_ = _trees(x)
                if x.data == "index" and len(kids_) == 2:
                    allow(kids_[1])
                x = kids_[0] if kids_ else None

        for sub in s.iter_subtrees():
            kids = _trees(sub)
            if sub.data == "call_stmt" and kids:
                allow(kids[0])
            elif sub.data in ("assign_stmt", "opassign_stmt") and len(kids) > 1:
                # 'a op= f(x)' is 'a = a op f(x)': a is read into a temporary before the call
                allow(kids[1])
                allow_lhs_indices(kids[0])
            elif sub.data == "return_stmt" and kids:
                allow(kids[0])
            elif sub.data == "for_var" and kids:  # 'for (T i = f(x); ...)': before the loop
                allow(kids[-1])
            elif sub.data == "for_cond" and kids:  # evaluated again before each round (cond_pre)
                allow(kids[0])
            elif sub.data == "var_decl" and len(kids) > 3:
                allow(kids[-1])
            elif sub.data == "if_stmt" and kids:
                allow(kids[0])
            elif sub.data == "switch_stmt" and kids:
                # evaluated once, before any case (p4c's DoSimplifyExpressions on a switch)
                allow(kids[0])
            elif sub.data == "select_expr":  # each key is evaluated in order, into a temporary
                for k_ in _trees(_tree(sub, "expr_list")):
                    allow(k_)
            elif sub.data in ("for_in_stmt", "for_in_range_stmt"):
                # the collection or the bounds are evaluated once, before the first round,
                # into temporaries: a whole-expression call there runs in order
                for k_ in kids[4:-1]:  # after the loop's and the variable's annotations, type, name
                    allow(k_)
            elif sub.data in ("call_expr", "generic_call") and kids:
                calls.append(sub)
        for c in calls:
            if id(c) in allowed:
                continue
            nm = _tree(_trees(c)[0], "name")
            ent = self.globals.get(str(nm.children[0])) if nm is not None else None
            if self.fn_writes(ent):
                raise self.unsupported(c, f"call of function '{ent.name}' (it has out/inout "
                                          "parameters) inside a larger expression")

    def _stmt(self, s: Tree, ctx: _Ctx) -> list[ir.Stmt]:
        k = s.data
        loc = self.loc(s)
        if k == "empty_stmt":
            return []
        if k == "block_stmt":
            return [self.block(_tree(s, "block"), ctx)]
        if k == "assign_stmt":
            lhs = self.expr(_trees(s)[0], ctx, None)
            self.check_lvalue(lhs, loc)
            if isinstance(lhs.type, ir.VarbitT):
                rhs = self.expr(_trees(s)[1], ctx, None)
                if rhs.type != lhs.type or not isinstance(rhs, ir.Member):
                    raise self.err(s, f"a {show(lhs.type)} field can only be assigned another "
                                      f"{show(lhs.type)} header field")
                return [ir.Assign(loc, lhs, rhs)]
            rhs = self.expr(_trees(s)[1], ctx, lhs.type)
            sibs = ir.union_siblings(lhs)
            if sibs:  # a valid header written into a header_union member invalidates the others
                return [ir.Assign(loc, lhs, rhs), ir.If(loc, ir.IsValid(BOOL, loc, lhs), ir.Block(loc, [
                    ir.ExprStmt(loc, ir.SetInvalid(ir.VoidT(), loc, x, sibling=True)) for x in sibs]), None)]
            return [ir.Assign(loc, lhs, rhs)]
        if k == "opassign_stmt":  # 'a op= b' is 'a = a op b' (P4_16 1.2.5)
            lv, rhs_t = _trees(s)
            op = next(str(c) for c in s.children if not isinstance(c, Tree))[:-1]
            binop = {v: k_ for k_, v in _BINOPS.items()}[op]
            # the lvalue is evaluated once (its calls too): bound to a name no program can write
            lhs = self.expr(lv, ctx, None)
            self.check_lvalue(lhs, loc)
            ref = Tree("ident", [Tree("name", [Token("IDENT", "$lhs")], meta=lv.meta)], meta=lv.meta)
            ctx.scope.append({"$lhs": lhs})  # type: ignore[attr-defined]
            try:
                return self._stmt(Tree("assign_stmt", [ref, Tree(binop, [ref, rhs_t], meta=s.meta)],
                                       meta=s.meta), ctx)
            finally:
                ctx.scope.pop()  # type: ignore[attr-defined]
        if k == "call_stmt":
            e = self.expr(_trees(s)[0], ctx, None)
            return self.call_as_stmt(e, loc, ctx)
        if k == "var_decl":
            t = self.type_ref(_type_child(s))
            name = _name(s)
            init_t = _trees(s)[-1] if len(_trees(s)) > 3 else None
            init = self.expr(init_t, ctx, t) if init_t is not None else None
            return [self.declare_var(name, t, init, ctx, loc)]
        if k == "const_decl":
            name = _name(s)
            t = self.type_ref(_type_child(s))
            e = self.expr(s.children[-1], ctx, t)
            if not isinstance(e, ir.Const):
                raise self.err(s, f"constant '{name}' is not a compile-time constant")
            if name in ctx.scope[-1]:  # type: ignore[attr-defined]
                raise self.err(s, f"'{name}' is declared twice in this block (p4c: \"Duplicates declaration\")")
            ctx.scope[-1][name] = e  # type: ignore[attr-defined]
            return []
        if k == "if_stmt":
            kids = _trees(s)
            c = self.expr(kids[0], ctx, BOOL)
            then = self.dead_if(isinstance(c, ir.Const) and not c.value, self.as_block, kids[1], ctx)
            els = self.dead_if(isinstance(c, ir.Const) and bool(c.value), self.as_block, kids[2], ctx) \
                if len(kids) > 2 else None
            return [ir.If(loc, c, then, els)]
        if k == "switch_stmt":
            return [self.switch(s, ctx)]
        if k == "for_stmt":
            return [self.for_loop(s, ctx)]
        if k in ("for_in_stmt", "for_in_range_stmt"):
            return [self.for_in_loop(s, ctx)]
        if k in ("break_stmt", "continue_stmt"):
            if not getattr(ctx, "loop_depth", 0):
                raise self.err(s, f"{k[:-5]} outside a for loop")
            return [ir.Break(loc) if k == "break_stmt" else ir.Continue(loc)]
        fn_ret = getattr(ctx, "fn_ret", None)
        if k == "exit_stmt":
            if fn_ret is not None:
                raise self.err(s, "exit is not allowed in a function")
            return [ir.Exit(loc)]
        if k == "return_stmt":
            if _trees(s):
                if not fn_ret:
                    raise self.err(s, "return with a value outside a function returning one")
                return [ir.Assign(loc, fn_ret, self.expr(_trees(s)[0], ctx, fn_ret.type)), ir.Return(loc)]
            if fn_ret:
                raise self.err(s, "return without a value in a function returning one")
            return [ir.Return(loc)]
        raise self.unsupported(s, k.replace("_", " "))

    def for_loop(self, s: Tree, ctx: _Ctx) -> ir.Stmt:
        """``for (init; cond; update) stmt``; the loop's variables are scoped to the loop.  Calls
        of functions in the condition are re-run before each test (``cond_pre``); a call with
        out/inout parameters there is an error, as in p4c."""
        init_t, cond_t, upd_t, body_t = _trees(s)[1:]  # after the loop's annotations
        ctx.scope.append({})  # type: ignore[attr-defined]
        try:
            init: list[ir.Stmt] = []
            for item in _trees(init_t):
                if item.data == "for_var":
                    t = self.type_ref(_type_child(item))
                    init.append(self.declare_var(_name(item), t, self.expr(_trees(item)[-1], ctx, t),
                                                 ctx, self.loc(item)))
                else:
                    init += self.stmt(item, ctx)
            cond = None
            saved, ctx.prelude = ctx.prelude, []
            try:
                if _trees(cond_t):
                    cond = self.expr(_trees(cond_t)[0], ctx, BOOL)
                cond_pre = ctx.prelude
            finally:
                ctx.prelude = saved
            writer = next((n.action for n in ir.iter_nodes(cond_pre) if isinstance(n, ir.ActionCall)
                           and n.action in self.actions
                           and any(p.direction in ("out", "inout") and p.name != "$ret"
                                   for p in self.actions[n.action].params)), None)
            if writer is not None:  # p4c refuses it; it would run before each round
                raise self.err(_trees(cond_t)[0], "Side effects in for condition not supported "
                               f"(a call of '{writer}', which has out/inout parameters; p4c "
                               "refuses it too)")
            update: list[ir.Stmt] = []
            for item in _trees(upd_t):
                if item.data == "for_var":
                    raise self.err(item, "a declaration in a for loop's update")
                update += self.stmt(item, ctx)
            depth = getattr(ctx, "loop_depth", 0)
            ctx.loop_depth = depth + 1  # type: ignore[attr-defined]
            try:
                body = self.as_block(body_t, ctx)
            finally:
                ctx.loop_depth = depth  # type: ignore[attr-defined]
        finally:
            ctx.scope.pop()  # type: ignore[attr-defined]
        return ir.For(self.loc(s), init, cond_pre, cond, update, body)

    def for_in_loop(self, s: Tree, ctx: _Ctx) -> ir.Stmt:
        """``for (T v in lo .. hi)``, ``for (T v in stack)`` and ``for (T v in {a, b})`` (P4_16
        1.2.5), lowered to an ``ir.For`` over a hidden counter.  The bounds (or the list's elements) are evaluated
        once, before the first round.  A range includes both ends and is empty when lo > hi;
        the counter stops by comparing with hi before it steps, so a range ending at the
        type's largest value ends too.  ``v`` is a fresh copy each round (as p4c unrolls it):
        writing it changes neither the counter nor the collection.  A header stack gives every
        element, index 0 to size-1, valid or not."""
        loc = self.loc(s)
        kids = _trees(s)
        t = self.type_ref(_type_child(s))
        vname = _name(s)
        body_t = kids[-1]
        coll = kids[4:-1]  # after the loop's and the variable's annotations, type, name
        ctx.scope.append({})  # type: ignore[attr-defined]
        try:
            init: list[ir.Stmt] = []
            if s.data == "for_in_range_stmt":
                if not isinstance(t, (ir.BitT, ir.IntT)):
                    raise self.err(s, f"a for-in range needs a bit<W> or int<W> loop variable, "
                                      f"not {show(t)}")
                bounds = []
                for b_t in coll:
                    b = self.expr(b_t, ctx, t)
                    if b.type != t:
                        raise self.err(b_t, f"a bound of type {show(b.type)} in a range of {show(t)}")
                    tv = self.temp_var(t, ctx, b.loc)  # type: ignore[attr-defined]
                    init.append(ir.VarDecl(b.loc, tv, b))
                    bounds.append(tv)
                lo, hi = bounds
                cnt = self.temp_var(t, ctx, loc)  # type: ignore[attr-defined]
                done = self.temp_var(BOOL, ctx, loc)  # type: ignore[attr-defined]
                init += [ir.VarDecl(loc, cnt, lo), ir.VarDecl(loc, done, ir.Binary(BOOL, loc, ">", lo, hi))]
                cond: ir.Expr = ir.Unary(BOOL, loc, "!", done)
                update: list[ir.Stmt] = [
                    ir.Assign(loc, done, ir.Binary(BOOL, loc, "==", cnt, hi)),
                    ir.If(loc, done, ir.Block(loc, []), ir.Block(loc, [
                        ir.Assign(loc, cnt, ir.Binary(t, loc, "+", cnt, ir.Const(t, loc, 1)))]))]
                value: ir.Expr = cnt
            else:
                if coll[0].data == "list_expr":  # each element typed as the loop variable
                    el_ts = [k_ for el in _trees(coll[0], "expr_list") for k_ in _trees(el)]
                    if not el_ts:
                        raise self.unsupported(coll[0], "for-in loop over an empty list")
                    c = ir.ListExpr(ir.VoidT(), loc, [self.expr(x, ctx, t) for x in el_ts])
                else:
                    c = self.expr(coll[0], ctx, None)
                k32 = ir.BitT(32)
                cnt = self.temp_var(k32, ctx, loc)  # type: ignore[attr-defined]
                if isinstance(c.type, ir.StackT):
                    size = c.type.size
                    value = ir.StackIndex(c.type.elem, loc, c, cnt)
                elif isinstance(c, ir.ListExpr):
                    elems = []
                    for e in c.elems:
                        e = self.coerce(e, t, coll[0])  # type: ignore[attr-defined]
                        if e.type != t:
                            raise self.err(coll[0], f"a list element of type {show(e.type)} in a "
                                                    f"loop over {show(t)}")
                        tv = self.temp_var(t, ctx, e.loc)  # type: ignore[attr-defined]
                        init.append(ir.VarDecl(e.loc, tv, e))
                        elems.append(tv)
                    size = len(elems)
                    value = elems[-1]
                    for i in range(len(elems) - 2, -1, -1):
                        value = ir.Mux(t, loc, ir.Binary(BOOL, loc, "==", cnt, ir.Const(k32, loc, i)),
                                       elems[i], value)
                else:
                    raise self.unsupported(coll[0], f"for-in loop over a value of type {show(c.type)} "
                                                    "(only ranges, header stacks and lists)")
                if isinstance(c.type, ir.StackT) and c.type.elem != t:
                    raise self.err(s, f"loop variable of type {show(t)} over a stack of "
                                      f"{show(c.type.elem)}")
                init.append(ir.VarDecl(loc, cnt, ir.Const(k32, loc, 0)))
                cond = ir.Binary(BOOL, loc, "<", cnt, ir.Const(k32, loc, size))
                update = [ir.Assign(loc, cnt, ir.Binary(k32, loc, "+", cnt, ir.Const(k32, loc, 1)))]
            depth = getattr(ctx, "loop_depth", 0)
            ctx.loop_depth = depth + 1  # type: ignore[attr-defined]
            try:
                decl = self.declare_var(vname, t, value, ctx, self.loc(s))
                body = self.as_block(body_t, ctx)
            finally:
                ctx.loop_depth = depth  # type: ignore[attr-defined]
        finally:
            ctx.scope.pop()  # type: ignore[attr-defined]
        return ir.For(loc, init, [], cond, update, ir.Block(body.loc, [decl, body]))

    def as_block(self, t: Tree, ctx: _Ctx) -> ir.Block:
        ctx.scope.append({})  # type: ignore[attr-defined]
        try:
            stmts = self.stmt(t, ctx)
        finally:
            ctx.scope.pop()  # type: ignore[attr-defined]
        if len(stmts) == 1 and isinstance(stmts[0], ir.Block):
            return stmts[0]
        return ir.Block(self.loc(t), stmts)

    def declare_var(self, name: str, t: ir.Type, init: ir.Expr | None, ctx: _Ctx, loc: ir.Loc) -> ir.Stmt:
        if isinstance(t, (ir.ExternT, ir.VoidT, ir.StringT, InfIntT)):
            raise self.err(loc, f"cannot declare a variable of type {show(t)}")
        if name in ctx.scope[-1]:  # type: ignore[attr-defined]
            raise self.err(loc, f"'{name}' is declared twice in this block (p4c: \"Duplicates declaration\")")
        store = ctx.block if ctx.block is not None else ctx.action_block
        prefix = getattr(ctx, "var_prefix", "")
        if isinstance(t, ir.VarbitT):
            # a local varbit keeps its current width with its value, as a header's varbit field
            # does: it lives in a one-field header of its own, and the name stands for the field
            box = ir.HeaderT(f"varbit<{t.max_width}>", (ir.Field("v", t),))
            bv = ir.Var(box, loc, store.fresh(prefix + name, box))
            ctx.scope[-1][name] = ir.Member(t, loc, bv, "v")  # type: ignore[attr-defined]
            if init is not None:
                raise self.unsupported(loc, "an initialiser on a varbit variable (assign it)")
            return ir.VarDecl(loc, bv, None)
        uname = store.fresh(prefix + name, t)
        v = ir.Var(t, loc, uname)
        ctx.scope[-1][name] = v  # type: ignore[attr-defined]
        return ir.VarDecl(loc, v, init)

    def call_as_stmt(self, e: ir.Expr, loc: ir.Loc, ctx: _Ctx | None = None) -> list[ir.Stmt]:
        if isinstance(e, _StmtMarker):
            st = e.stmt
            return list(st.stmts) if isinstance(st, ir.Block) else [st]
        if isinstance(e, _VerifyMarker):
            return [ir.Verify(loc, e.args[0], e.args[1])]
        if isinstance(e, _Inlined):
            return e.stmts
        if (isinstance(e, ir.Var) and e.name in self.fn_results) or type(e).__name__ == "_FnVoid":
            return []  # a function called for its side effects: the call is in the prelude
        if isinstance(e, ir.ApplyTable) and e.result != "none":  # t.apply().hit; -- still applies
            return [ir.ExprStmt(loc, ir.ApplyTable(ir.VoidT(), e.loc, e.table))]
        if isinstance(e, (ir.ApplyTable, ir.ActionCall, ir.ExternCall, ir.BuiltinCall, ir.SetValid,
                          ir.SetInvalid, ir.PushFront, ir.PopFront)):
            return [ir.ExprStmt(loc, e)]
        if isinstance(e, ir.IsValid):
            return []  # h.isValid(); reads nothing that matters
        if isinstance(e, ir.Const) and isinstance(e.type, ir.BoolT):
            return []  # static_assert(...); checked at load time, its value is true
        if isinstance(e, ir.Lookahead) and ctx is not None:
            # the value is dropped; a packet too short for it still fails (PacketTooShort)
            bits = ir.BitT(ir.type_width(e.type))  # only its length matters
            tv = self.temp_var(bits, ctx, loc)  # type: ignore[attr-defined]
            return [ir.VarDecl(loc, tv, ir.Lookahead(bits, e.loc))]
        raise self.err(loc, "expression is not a statement")

    def switch(self, s: Tree, ctx: _Ctx) -> ir.Stmt:
        loc = self.loc(s)
        sel_t = _trees(s)[0]
        # switch (t.apply().action_run)
        table = None
        if sel_t.data == "member" and str(_tree(sel_t, "mname").children[0]) == "action_run":
            inner = self.expr(_trees(sel_t)[0], ctx, None)
            if not isinstance(inner, ir.ApplyTable):
                raise self.err(s, "action_run needs table.apply()")
            table = inner.table
        cases: list[ir.SwitchCase] = []
        pending: list[Any] = []
        sel = None if table is not None else self.expr(sel_t, ctx, None)
        if sel is not None and not isinstance(sel.type, (ir.BitT, ir.IntT, ir.EnumT, ir.ErrorT)):
            raise self.err(s, f"cannot switch on a value of type {show(sel.type)}")
        seen: set = set()
        after_default = False
        for c in _trees(s, "switch_case"):
            lab = _trees(c)[0]
            body_t = _tree(c, "block")
            is_default = lab.data == "default_label"
            if after_default:  # p4c: "switch label ... follows 'default' label"
                raise self.err(lab, "a switch label after 'default' (default must come last)")
            if is_default:
                after_default = True  # `default:` matches whatever no other label did
            elif table is not None:
                if lab.data != "ident":
                    raise self.err(lab, "switch label must be an action name")
                an = str(_tree(lab, "name").children[0])
                ent = self.lookup(an, ctx)
                if not isinstance(ent, _ActionRef):
                    raise self.err(lab, f"'{an}' is not an action")
                tbl = self.find_table(table, ctx)
                if ent.name not in [a.action for a in tbl.actions]:
                    raise self.err(lab, f"action '{an}' is not an action of table '{tbl.local_name}'")
                if ent.name in seen:
                    raise self.err(lab, f"switch label '{an}' appears twice (p4c: \"'switch' label duplicates\")")
                seen.add(ent.name)
                pending.append(ent.name)
            else:
                v = self.expr(lab, ctx, sel.type)  # type: ignore[union-attr]
                if not isinstance(v, ir.Const):
                    raise self.err(lab, "switch label must be a constant")
                if v.value in seen:
                    raise self.err(lab, "switch label appears twice (p4c: \"'switch' label duplicates\")")
                seen.add(v.value)
                pending.append(v)
            if body_t is not None or is_default:
                body = self.block(body_t, ctx) if body_t is not None else ir.Block(self.loc(c), [])
                cases.append(ir.SwitchCase(pending, is_default, body, self.loc(c)))
                pending = []
        if pending:
            cases.append(ir.SwitchCase(pending, False, ir.Block(loc, []), loc))
        if table is not None:
            return ir.SwitchActionRun(loc, table, cases)
        return ir.SwitchValue(loc, sel, cases)  # type: ignore[arg-type]

    def lookup(self, name: str, ctx: _Ctx) -> Any:
        for s in reversed(getattr(ctx, "scope", [])):
            if name in s:
                return s[name]
        return self.globals.get(name)

    def find_table(self, name: str, ctx: _Ctx) -> ir.Table:
        for _, tb in ctx.block.tables:  # type: ignore[union-attr]
            if tb.name == name:
                return tb
        raise KeyError(name)
