"""Actions, the V1Switch main, parsers and controls (sub-controls inlined, extern instances)."""
from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from lark import Tree

from . import ir
from .checkbase import (
    _EXTERN_KINDS,
    CheckerBase,
    _ActionRef,
    _apply_arg_lists,
    _apply_counts,
    _Block,
    _Ctx,
    _Decl,
    _declared_in,
    _direction,
    _FuncRef,
    _GenericFuncRef,
    _Inlined,
    _name,
    _p4info_name,
    _param_default,
    _param_names,
    _ParamEntry,
    _same_text_same_storage,
    _SubControl,
    _TableRef,
    _tree,
    _trees,
    _type_child,
    _type_name_text,
    _type_params,
)
from .errors import P4Error
from .types import BOOL, InfIntT, show


def _always_returns(b: ir.Stmt | None) -> bool:
    """True when every path through ``b`` ends in ``return`` (p4c rejects a function that can
    fall off its end)."""
    if b is None:
        return False
    if isinstance(b, ir.Return):
        return True
    if isinstance(b, ir.Block):
        return any(_always_returns(s) for s in b.stmts)
    if isinstance(b, ir.If):
        return _always_returns(b.then) and _always_returns(b.else_)
    if isinstance(b, (ir.SwitchValue, ir.SwitchActionRun)):  # one case runs: with a default, every path is a case's
        return any(c.default for c in b.cases) and all(_always_returns(c.body) for c in b.cases)
    return False


def _invalidate_headers(e: ir.Expr, loc: ir.Loc) -> list[ir.Stmt]:
    """Statements making every header in lvalue ``e`` invalid (a header, union or stack whole; a
    struct member by member); nothing for other values."""
    t = e.type
    if isinstance(t, (ir.HeaderT, ir.StackT)) or (isinstance(t, ir.StructT) and t.union):
        return [ir.Assign(loc, e, ir.InvalidHeader(t, loc))]
    if isinstance(t, ir.StructT):
        return [s for f in t.fields for s in _invalidate_headers(ir.Member(f.type, loc, e, f.name), loc)]
    return []


def _aliased_args(args: list[tuple[int, Any]]) -> set[int]:
    """Indices of the out/inout arguments that may overlap another one: the same lvalue, one a
    member, element or slice of the other (``hdr`` and ``hdr.ipv4``), slices sharing a bit,
    stack elements whose indices may be equal, members of one header_union. Compared on the
    lvalues' structure, not their text; what cannot be told apart counts as overlapping."""
    out: set[int] = set()
    paths = [(i, _lvalue_path(e)) for i, e in args]
    for n, (i, a) in enumerate(paths):
        for j, b in paths[n + 1:]:
            if _paths_overlap(a, b):
                out.update((i, j))
    return out


# One step of an lvalue's access path, from its root variable outwards:
#   ("field", name, in_union)  a member (``in_union``: of a header_union, whose members overlap)
#   ("index", k, x)            a stack element, ``k`` None when the index is not a constant;
#                              ``x`` then its index expression (None for ``.last``/``.next``)
#   ("bits", lo, hi)           a slice, as bits of the value it was taken of (nested ones folded)
_Step = tuple


def _lvalue_path(e: Any) -> tuple[str, list[_Step]] | None:
    """``(root, steps)`` of an lvalue (the root: its variable's or action parameter's name), or
    None for an expression of any other form."""
    steps: list[_Step] = []
    while True:
        if isinstance(e, ir.Slice):
            lo, hi = e.lo, e.hi
            while isinstance(e.expr, ir.Slice):  # x[a:b][c:d] is x[b+c : b+d]
                e = e.expr
                lo, hi = lo + e.lo, hi + e.lo
            steps.append(("bits", lo, hi))
            e = e.expr
        elif isinstance(e, ir.Member):
            base_t = e.expr.type
            steps.append(("field", e.field, isinstance(base_t, ir.StructT) and base_t.union))
            e = e.expr
        elif isinstance(e, ir.StackIndex):
            const = isinstance(e.index, ir.Const)
            steps.append(("index", int(e.index.value) if const else None, None if const else e.index))
            e = e.stack
        elif isinstance(e, (ir.StackLast, ir.StackNext)):  # an element known at run time only
            steps.append(("index", None, None))
            e = e.stack
        elif isinstance(e, (ir.Var, ir.ActionParam)):
            return ("var:" if isinstance(e, ir.Var) else "param:") + e.name, steps[::-1]
        else:
            return None


def _paths_overlap(a: tuple[str, list[_Step]] | None, b: tuple[str, list[_Step]] | None) -> bool:
    """May two lvalue paths name storage in common? (Unknown forms: yes.)"""
    if a is None or b is None:
        return True
    if a[0] != b[0]:
        return False
    for x, y in zip(a[1], b[1]):
        if x[0] != y[0]:  # cannot happen for one root's type; be conservative
            return True
        if x[0] == "field" and x[1] != y[1]:
            return x[2]  # other fields are disjoint, except the members of a header_union
        if x[0] == "index" and x[1] is not None and y[1] is not None and x[1] != y[1]:
            return False
        if x[0] == "bits":
            return x[1] <= y[2] and y[1] <= x[2]
    return True  # one path is the other or a prefix of it


def _same_lvalue(a: Any, b: Any) -> bool:
    """Do two lvalues name the same storage whenever both are evaluated with the same state? The
    same root, fields, slices, constant indices, and run-time indices that are the same
    expression (``_same_expr``); ``.last``/``.next`` and any other form: no."""
    pa, pb = _lvalue_path(a), _lvalue_path(b)
    if pa is None or pb is None or pa[0] != pb[0] or len(pa[1]) != len(pb[1]):
        return False
    for x, y in zip(pa[1], pb[1]):
        if x[0] != y[0]:
            return False
        if x[0] == "field" and x[1] != y[1]:
            return False
        if x[0] == "bits" and x[1:] != y[1:]:
            return False
        if x[0] == "index":
            if x[1] is not None or y[1] is not None:
                if x[1] != y[1]:
                    return False
            elif x[2] is None or y[2] is None or not _same_expr(x[2], y[2]):
                return False
    return True


# expression forms whose value depends on nothing but the storage they read (no calls, no
# extraction, no stack-pointer moves): two such expressions with the same structure are equal
_PURE_EXPRS = (ir.Const, ir.Var, ir.ActionParam, ir.Member, ir.TupleElem, ir.StackIndex,
               ir.StackLastIndex, ir.Slice, ir.Unary, ir.Binary, ir.Concat, ir.Cast, ir.Mux, ir.IsValid)


def _same_expr(a: Any, b: Any) -> bool:
    """Structural equality of two pure expressions: node kinds, types, names, operators and
    constants, recursively; locations ignored."""
    if type(a) is not type(b) or not isinstance(a, _PURE_EXPRS):
        return False
    for f in dataclasses.fields(a):
        if f.name == "loc":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, ir.Expr) or isinstance(y, ir.Expr):
            if not _same_expr(x, y):
                return False
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y) or not all(
                    _same_expr(p, q) if isinstance(p, ir.Expr) else p == q for p, q in zip(x, y)):
                return False
        elif x != y:
            return False
    return True


# the largest counter/meter/register array or action profile: every cell is held from the start
MAX_EXTERN_SIZE = 1 << 24


def _dest_key(e: Any) -> tuple | None:
    """A read destination as p4c's ``checkSame`` compares them: a name or a chain of members."""
    if isinstance(e, ir.Var):
        return ("v", e.name)
    if isinstance(e, ir.Member):
        inner = _dest_key(e.expr)
        return None if inner is None else ("m", inner, e.field)
    return None


def _has_return(s: ir.Stmt | None) -> bool:
    """Does ``s`` contain a ``return`` (of the control apply body it is part of)?"""
    if isinstance(s, ir.Return):
        return True
    if isinstance(s, ir.Block):
        return any(_has_return(x) for x in s.stmts)
    if isinstance(s, ir.If):
        return _has_return(s.then) or _has_return(s.else_)
    if isinstance(s, (ir.SwitchActionRun, ir.SwitchValue)):
        return any(_has_return(c.body) for c in s.cases)
    if isinstance(s, ir.For):
        return _has_return(s.body)
    return False


def _returns_to_flag(stmts: list[ir.Stmt], flag: ir.Var, in_loop: bool) -> list[ir.Stmt]:
    """``stmts`` of an inlined control's apply body with each ``return`` replaced by setting
    ``flag``: what follows a statement that may return runs only while ``flag`` is false, and a
    loop it is in is left (``break``)."""
    for i, s in enumerate(stmts):
        if not _has_return(s):
            continue
        loc = s.loc
        out = list(stmts[:i])
        if isinstance(s, ir.Return):
            out.append(ir.Assign(loc, flag, ir.Const(BOOL, loc, True)))
        elif isinstance(s, ir.Block):
            out.append(ir.Block(s.loc, _returns_to_flag(s.stmts, flag, in_loop)))
        elif isinstance(s, ir.If):
            out.append(ir.If(s.loc, s.cond, ir.Block(s.then.loc, _returns_to_flag(s.then.stmts, flag, in_loop)),
                             None if s.else_ is None else
                             ir.Block(s.else_.loc, _returns_to_flag(s.else_.stmts, flag, in_loop))))
        elif isinstance(s, (ir.SwitchActionRun, ir.SwitchValue)):
            cases = [ir.SwitchCase(c.labels, c.default, ir.Block(c.body.loc,
                                                                 _returns_to_flag(c.body.stmts, flag, in_loop)),
                                   c.loc) for c in s.cases]
            out.append(ir.SwitchActionRun(s.loc, s.table, cases) if isinstance(s, ir.SwitchActionRun)
                       else ir.SwitchValue(s.loc, s.expr, cases))
        else:
            assert isinstance(s, ir.For)
            out.append(ir.For(s.loc, s.init, s.cond_pre, s.cond, s.update,
                              ir.Block(s.body.loc, _returns_to_flag(s.body.stmts, flag, True))))
        if in_loop:
            out.append(ir.If(loc, flag, ir.Block(loc, [ir.Break(loc)]), None))
        rest = _returns_to_flag(stmts[i + 1:], flag, in_loop)
        if rest:
            out.append(ir.If(loc, ir.Unary(BOOL, loc, "!", flag), ir.Block(loc, rest), None))
        return out
    return list(stmts)


def _no_warn_unused(anns: tuple[ir.Annotation, ...]) -> bool:
    """``@noWarn("unused")`` among ``anns``."""
    return any(a.name == "noWarn" and a.args == ("unused",) for a in anns)


def _fold_constant_ifs(body: ir.Block) -> None:
    """Replaces each ``if`` of ``body`` whose condition is a constant by the branch that runs (or
    nothing), as p4c's front end does (``ConstantFolding``) before it removes unused tables: a
    table applied only under ``if (false)`` -- ``if (DEBUG == 1)`` with DEBUG 0 -- is removed,
    and the apply goes with the branch."""
    blocks = [n for n in ir.iter_nodes(body) if isinstance(n, ir.Block)]
    for b in blocks:
        out: list[ir.Stmt] = []
        for st in b.stmts:
            if isinstance(st, ir.If) and isinstance(st.cond, ir.Const):
                taken = st.then if st.cond.value else st.else_
                if taken is not None:
                    _fold_constant_ifs(taken)
                    out.append(taken)
            else:
                out.append(st)
        b.stmts[:] = out


class BlockChecker(CheckerBase):
    """Actions, main, parsers, controls and their instances."""

    # ------------------------------------------------------------ actions
    def top_action(self, d: Tree) -> None:
        local = _name(d)
        anns = self.annotations(_tree(d, "annotations"))
        pname = _p4info_name(anns, "", local)
        blk = _Block(pname, "action")
        key = self.lower_action(d, pname, local, anns, _Ctx(None), blk, owner=None)
        act_locals = blk.locals
        if act_locals:
            self.action_locals[key] = act_locals
        self.declare(d, local, _ActionRef(key))

    def top_function(self, d: Tree) -> None:
        """``T f(params) { body }``: lowered to an action (never in P4Info or a table) whose return
        value, unless void, is a last ``out`` parameter ``$ret``; ``return e`` assigns it and
        returns.  Calls are hoisted before the statement that makes them (as p4c orders side
        effects), their result read from a fresh variable."""
        proto = _tree(d, "function_proto")
        name = _name(proto)
        if _tree(proto, "type_params") is not None:
            # lowered per call's type arguments (``specialise_function``)
            tps = _type_params(proto)
            if len(set(tps)) != len(tps):
                raise self.err(proto, f"function '{name}' declares a type parameter twice")
            if name in self.actions:
                raise self.err(d, f"'{name}' is declared twice")
            self.declare(d, name, _GenericFuncRef(name, d))
            return
        self.lower_function(d, name, name)

    def specialise_function(self, g: _GenericFuncRef, targs: tuple[ir.Type, ...], t: Tree) -> str:
        """The action of generic function ``g`` at type arguments ``targs`` (lowered on its
        first use, with its type parameters bound to them)."""
        key = (g.name, targs)
        if key in self.fn_specs:
            return self.fn_specs[key]
        spec = f"{g.name}<{', '.join(show(a) for a in targs)}>"
        if spec in self.actions:  # being lowered: the function calls itself
            raise self.unsupported(t, f"recursive function '{g.name}'")
        proto = _tree(g.tree, "function_proto")
        tps = _type_params(proto)
        saved = self.type_env, self.type_env_text
        self.type_env = dict(zip(tps, targs))
        self.type_env_text = {tp: _type_name_text(a) for tp, a in zip(tps, targs)}
        try:
            self.lower_function(g.tree, g.name, spec)
        finally:
            self.type_env, self.type_env_text = saved
        self.fn_specs[key] = spec
        return spec

    def lower_function(self, d: Tree, name: str, key: str) -> None:
        """Lower function ``d`` as action ``key`` (its name, or a generic one's specialisation)."""
        proto = _tree(d, "function_proto")
        rt = self.type_ref(_type_child(proto))
        if isinstance(rt, (InfIntT, ir.StringT, ir.ExternT)):  # no run-time value of these types
            raise self.err(_type_child(proto), f"function '{name}' returns {show(rt)}: a function returns a value "
                                               "with a width (bit<W>, int<W>, bool, a header or struct, ...)")
        self.check_param_names(_tree(proto, "params"), f"function '{name}'")
        params = []
        scope: dict[str, Any] = {}
        for i, p in enumerate(_trees(_tree(proto, "params"), "param")):
            pt = self.type_ref(_type_child(p))
            direc = _direction(p)
            if isinstance(pt, InfIntT) and direc:  # p4c: an int parameter must be directionless
                raise self.err(p, f"parameter '{_name(p)}' of function '{name}' has type int and a direction: "
                                  "an int parameter is directionless (a compile-time value)")
            if isinstance(pt, InfIntT):
                raise self.unsupported(p, f"a function parameter of type int ('{_name(p)}' of '{name}'): give it "
                                          "a width (bit<W>/int<W>)")
            direc = "in" if direc == "" else direc
            pn = _name(p)
            params.append(ir.Param(pn, pt, direc, self.annotations(_tree(p, "annotations")), self.loc(p),
                                   self.param_default(p, pn, pt, direc)))
            ap = ir.ActionParam(pt, self.loc(p), pn, i)
            if direc in ("out", "inout"):
                self.writable_params.add(id(ap))
            scope[pn] = _ParamEntry(ap, direc)
        ret = None
        if not isinstance(rt, ir.VoidT):
            params.append(ir.Param("$ret", rt, "out", (), self.loc(d)))
            ret = ir.ActionParam(rt, self.loc(d), "$ret", len(params) - 1)
            self.writable_params.add(id(ret))
        anns = self.annotations(_tree(d, "annotations"))
        if key in self.actions:
            raise self.err(d, f"'{name}' is declared twice")
        store = _Block(key, "function")
        ctx = _Ctx(None, in_parser=False, in_action=True)
        ctx.scope = [scope]  # type: ignore[attr-defined]
        ctx.action_block = store  # type: ignore[attr-defined]
        ctx.var_prefix = ""  # type: ignore[attr-defined]
        ctx.fn_ret = ret if ret is not None else False  # type: ignore[attr-defined]
        fn = ir.Action(key, key, params, ir.Block(self.loc(d), []), anns, self.loc(d), None, None,
                       function=True)
        self.actions[key] = fn
        if key == name:
            self.declare(d, name, _FuncRef(name))  # before the body: recursion is caught as a cycle
        fn.body = self.block(_tree(d, "block"), ctx)
        if store.locals:
            self.action_locals[key] = store.locals
        if ret is not None and not _always_returns(fn.body):
            raise self.err(d, f"function '{name}' can end without returning a value")
        if key in ir.actions_called(fn.body):
            raise self.unsupported(d, f"recursive function '{name}'")

    def param_default(self, p: Tree, pn: str, pt: ir.Type, direc: str) -> ir.Expr | None:
        """The default value of an action's or function's parameter ``T p = value`` (P4_16 spec
        6.8.2): a compile-time known value, evaluated where the action is declared, for an
        ``in`` or directionless parameter; a call may then leave the argument out."""
        dt = _param_default(p)
        if dt is None:
            return None
        if direc in ("out", "inout"):
            raise self.err(p, f"{direc} parameter '{pn}' cannot have a default value")
        v = self.expr(dt, _Ctx(None), pt)
        if not isinstance(v, ir.Const):
            raise self.err(dt, f"the default value of parameter '{pn}' must be a compile-time "
                                    "known value")
        return v

    def lower_action(self, d: Tree, pname: str, local: str, anns: tuple, outer: _Ctx, store: _Block,
                     owner: str | None) -> str:
        """Lower action ``d``; returns its key in ``self.actions``.  That is its P4Info name
        ``pname``, unless an action of that name was lowered before: then ``pname#N``.  Copies
        of one declaration share a name (one per control of a top-level action, as p4c's
        LocalizeAllActions makes them); two used declarations of one name are refused later
        (check_action_names)."""
        self.check_param_names(_tree(d, "params"), f"action '{local}'")
        params = []
        scope: dict[str, Any] = {}
        for i, p in enumerate(_trees(_tree(d, "params"), "param")):
            pt = self.type_ref(_type_child(p))
            direc = _direction(p)
            pn = _name(p)
            if direc == "" and not isinstance(pt, (ir.BitT, ir.IntT, ir.BoolT, ir.EnumT)):
                raise self.err(p, f"action data parameter '{pn}' must be bit<W>/int<W>/bool/enum")
            if isinstance(pt, (InfIntT, ir.StringT)):  # no run-time value of these types (p4c refuses them)
                raise self.err(p, f"parameter '{pn}' of action '{local}' has type {show(pt)}: give it a width "
                                  "(bit<W> or int<W>)")
            if direc and any(not q.direction for q in params):  # P4_16 spec 14.1 (p4c: "direction-less
                # action parameters have to be at the end"): the control plane supplies the last ones
                raise self.err(p, f"parameter '{pn}' of action '{local}' has a direction ({direc}) but follows a "
                                  "directionless one: directionless (action data) parameters come last")
            params.append(ir.Param(pn, pt, direc, self.annotations(_tree(p, "annotations")), self.loc(p),
                                   self.param_default(p, pn, pt, direc)))
            ap = ir.ActionParam(pt, self.loc(p), pn, i)
            if direc in ("out", "inout"):
                self.writable_params.add(id(ap))
            scope[pn] = _ParamEntry(ap, direc)
        ctx = _Ctx(outer.block, in_parser=False, in_action=True)
        ctx.scope = list(getattr(outer, "scope", [])) + [scope]  # type: ignore[attr-defined]
        ctx.action_block = store  # type: ignore[attr-defined]
        ctx.var_prefix = getattr(outer, "var_prefix", "")  # type: ignore[attr-defined]
        key, n = pname, 1
        while key in self.actions:
            if self.actions[key].function:
                raise self.err(d, f"action '{pname}' has the name of a function")
            key, n = f"{pname}#{n}", n + 1
        act = ir.Action(pname, local, params, ir.Block(self.loc(d), []), anns, self.loc(d), owner, ir.id_annotation(anns))
        self.actions[key] = act
        act.body = self.block(_tree(d, "block"), ctx)
        return key

    # ------------------------------------------------------------ main and blocks
    def lower_main(self, m: Tree) -> ir.Program:
        tref = _type_child(m)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        if tname != "V1Switch":
            raise self.unsupported(m, f"package '{tname}' (only V1Switch)")
        args = _trees(_tree(m, "args"))
        if any(a.data == "named_arg" for a in args):  # by v1model.p4's parameter names
            pkg = self.globals.get("V1Switch")
            args = self.positional_args(args, _param_names(pkg.tree)
                                        if isinstance(pkg, _Decl) else None, m)
        if len(args) != 6:
            raise self.err(m, f"V1Switch takes 6 arguments, {len(args)} given")
        kinds = ["parser", "control", "control", "control", "control", "control"]
        blocks: list[Any] = []
        spec_names = self.top_level_spec_names(args)
        for a, kind in zip(args, kinds):
            if a.data == "ident" and str(_tree(a, "name").children[0]) in self.block_instances:
                n, inst = self.block_instances[str(_tree(a, "name").children[0])]  # a top-level instance
                ctor_args, at = _trees(_tree(inst, "args")), inst
            elif a.data != "ctor_call":
                raise self.err(a, "V1Switch arguments must be parser/control instantiations")
            else:
                head = a.children[0]  # the type's name, or ``Name<args>``: a specialized_type
                n = str(head.children[0]) if isinstance(head, Tree) else str(head)
                ctor_args, at = _trees(_tree(a, "args")), a
            d = self.globals.get(n)
            if not isinstance(d, _Decl) or d.kind != kind:
                raise self.err(a, f"'{n}' is not a {kind}")
            if at is a:
                tenv = self.block_type_env(d.tree, head if isinstance(head, Tree) else None, a, ctor_args)
            else:
                tenv = self.block_instance_tenv[str(_tree(a, "name").children[0])]
            ctor = self.ctor_args(d.tree, ctor_args, _Ctx(None), at, tenv)
            pname = spec_names.get(id(at))
            with self.specialised(kind, n, tenv, at):
                blocks.append(self.lower_parser(d.tree, ctor, pname) if kind == "parser" else
                              self.lower_control(d.tree, prefix=pname, ctor=ctor))
        self.check_v1switch_signatures(blocks, args)
        self.check_header_widths(blocks)
        self.check_shared_table_resources(blocks[1:])
        for cname, cloc in self.const_decls.items():  # as p4c: a constant nothing refers to
            if cname not in self.used_consts:
                self.warnings.append(f"{cloc}: [--Wwarn=unused] warning: '{cname}' is unused")
        prog = ir.Program(self.source_file, self.errors, self.match_kinds, dict(self.named_types), blocks[0],
                          blocks[1], blocks[2], blocks[3], blocks[4], blocks[5], {},
                          self.controller_headers, list(self.digests.values()), self.loc(m), self.warnings)
        prog.data_field_lists = dict(self.data_field_lists)
        used: list[str] = []
        for c in prog.controls:
            for an in c.actions:
                if an not in used:
                    used.append(an)
        for an, a in self.actions.items():
            if an not in used and a.owner is None:
                used.append(an)
        prog.actions = {an: self.actions[an] for an in used}
        self.check_direct_meters(prog)
        self.check_packet_path_calls(prog)
        self.check_action_names(prog)
        self.check_deparser(prog, prog.deparser.body)
        prog.externs = dict(self.global_externs)
        self.warn_unused_instances(prog)
        prog.main_annotations = self.annotations(_tree(m, "annotations"))
        for an, loc in self.action_locals.items():
            if an in prog.actions:
                prog.actions[an].locals = loc  # type: ignore[attr-defined]
        return prog

    # v1model.p4's block types: (name, [(type, direction)]); H and M are V1Switch's type
    # parameters (one headers struct, one metadata struct, the same in every block)
    _V1SWITCH = (
        ("Parser", (("packet_in", ""), ("H", "out"), ("M", "inout"), ("std", "inout"))),
        ("VerifyChecksum", (("H", "inout"), ("M", "inout"))),
        ("Ingress", (("H", "inout"), ("M", "inout"), ("std", "inout"))),
        ("Egress", (("H", "inout"), ("M", "inout"), ("std", "inout"))),
        ("ComputeChecksum", (("H", "inout"), ("M", "inout"))),
        ("Deparser", (("packet_out", ""), ("H", "in"))),
    )

    def check_v1switch_signatures(self, blocks: list, args: list[Tree]) -> None:
        """Each V1Switch argument has its v1model block type's parameters (count, directions,
        packet_in/packet_out/standard_metadata_t), and H and M are one struct each throughout, as
        p4c's type checker unifies them (a block with another shape got past the checker and
        crashed when the pipeline was built or a packet ran)."""
        std = self.std_meta_type()
        bound: dict[str, ir.Type] = {}
        for blk, a, (tname, want) in zip(blocks, args, self._V1SWITCH):
            shape = ", ".join(f"{d + ' ' if d else ''}{t if t in 'HM' else t.replace('std', 'standard_metadata_t')}"
                              for t, d in want)
            where = f"'{blk.name}' does not match V1Switch's {tname}({shape})"
            if len(blk.params) != len(want):
                raise self.err(a, f"{where}: it has {len(blk.params)} parameters")
            for i, (p, (t, d)) in enumerate(zip(blk.params, want)):
                # the same direction, as p4c's type unification requires ("Cannot unify 'in'
                # parameter 'hdr' with 'inout' parameter 'hdr' because they have different
                # directions": its p4_16_bmv_errors/issue610-bmv2); a block run with the package's
                # direction instead of its own saw values its declaration says it cannot
                if p.direction != d:
                    raise self.err(p.loc, f"{where}: parameter {i + 1} '{p.name}' is "
                                          f"{repr(p.direction) if p.direction else 'directionless'}, V1Switch's "
                                          f"{tname} has it {'directionless' if not d else repr(d)}")
                if t in ("packet_in", "packet_out"):
                    ok = isinstance(p.type, ir.ExternT) and p.type.name == t
                elif t == "std":
                    ok = p.type == std
                else:
                    ok = bound.setdefault(t, p.type) == p.type
                    if ok and not isinstance(p.type, ir.StructT):
                        raise self.unsupported(p.loc, f"{where}: its {'headers' if t == 'H' else 'metadata'} "
                                                      f"parameter '{p.name}' is a {show(p.type)}, not a struct")
                    if ok and t == "H" and not p.type.union:
                        other = next((f for f in p.type.fields if not _header_like(f.type)), None)
                        if other is not None:  # p4c's bmv2 back end: "the type should be a struct of headers, stacks, or unions"
                            raise self.err(p.loc, f"{where}: its headers struct {show(p.type)} has member "
                                                  f"'{other.name}' of type {show(other.type)}; the headers struct "
                                                  "holds headers, header stacks and header unions only (put other "
                                                  "values in the metadata struct)")
                if not ok:
                    raise self.err(p.loc, f"{where}: parameter {i + 1} '{p.name}' has type {show(p.type)}"
                                          + (f", the other blocks' {t} is {show(bound[t])}" if t in bound else ""))

    _LOCAL_DECLS = ("var_decl", "const_decl", "instantiation", "action_decl", "table_decl", "value_set_decl")

    def check_local_names(self, d: Tree) -> None:
        """Two local declarations of a control or parser with one name (two actions, an action
        and a table, ...) are an error, as p4c's declaration lists refuse them; without the
        check the second silently replaced the first in the apply block's scope."""
        seen: set[str] = set()
        for lt in _trees(d):
            if lt.data in self._LOCAL_DECLS:
                n = _name(lt)
                if n in seen:
                    raise self.err(lt, f"'{n}' is declared twice in '{_name(d)}' (p4c: \"Duplicates declaration\")")
                seen.add(n)

    def check_deparser(self, prog: ir.Program, b: ir.Block) -> None:
        """p4c's bmv2 back end turns a deparser into an ordered list of emits and extern calls
        (``DeparserConverter::convertDeparserBody``) and refuses a conditional there ("IfStatement:
        not supported within a deparser on this target", a common mistake); so does softswitch, which
        ran it.  A function or sub-control the deparser calls is held to the same (p4c inlines it)."""
        for s in b.stmts:
            if isinstance(s, ir.Block):
                self.check_deparser(prog, s)
            elif isinstance(s, ir.If) and isinstance(s.cond, ir.Const):  # p4c folds it away first
                taken = s.then if s.cond.value else s.else_
                if taken is not None:
                    self.check_deparser(prog, taken)
            elif isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.ActionCall) and s.expr.action in prog.actions:
                self.check_deparser(prog, prog.actions[s.expr.action].body)
            elif isinstance(s, (ir.Exit, ir.Return)):  # p4c's bmv2 back end: "not supported within a deparser"
                raise self.unsupported(s.loc, f"'{'exit' if isinstance(s, ir.Exit) else 'return'}' in a deparser "
                                              "(bmv2's deparser is a fixed list of emits)")
            elif not isinstance(s, (ir.If, ir.SwitchValue, ir.SwitchActionRun)):
                # emits, extern calls, a sub-control's copy-in/out (p4c's inliner substitutes its
                # arguments instead); a write to the deparser's own 'in' headers is refused as such
                # (readonly_vars)
                continue
            else:
                kind = "IfStatement" if isinstance(s, ir.If) else "SwitchStatement"  # p4c's names
                raise self.err(s.loc, f"{kind}: not supported within a deparser on this target (p4c's bmv2 back "
                                      "end: a deparser only emits headers, in a fixed order; emit skips an "
                                      "invalid header, so no 'if' is needed)")

    def warn_unused_instances(self, prog: ir.Program) -> None:
        """As p4c's front end (``RemoveUnusedDeclarations``): "[--Wwarn=unused] warning: c: unused
        instance" for an extern instance that nothing left refers to -- no method call in an apply
        block, a table key or an action p4c keeps, and no table property of a table it keeps (one
        a removed table or a removed action named counts as unused).  The instance stays, in
        P4Info too, as in p4c."""
        used: set[str] = set()
        for c in prog.controls:
            roots: list[object] = [c.body] + [prog.actions[an].body for an in ir.live_actions(prog, c)]
            for t in c.tables.values():
                used.update(x for x in (t.implementation, t.counters, t.meters) if x is not None)
                roots.append([k.expr for k in t.keys] + list(t.key_stmts))
            used.update(n.instance for n in ir.iter_nodes(roots) if isinstance(n, ir.ExternCall))
        used.update(n.instance for n in ir.iter_nodes(list(prog.parser.states.values()))
                    if isinstance(n, ir.ExternCall))
        for e in prog.all_externs():
            if e.name not in used and not _no_warn_unused(e.annotations):
                self.warnings.append(f"{e.loc}: [--Wwarn=unused] warning: {e.local_name}: unused instance")

    def check_action_names(self, prog: ir.Program) -> None:
        """Two action declarations the program uses whose control-plane names are one (two
        ``@name("mark")`` actions in a control, ``@name(".foo")`` beside a top-level ``foo``) are
        an error, as p4c refuses them when it writes a P4Info ("conflicting control plane name",
        its DuplicateActionControlPlaneNameCheck and the p4_16_errors program
        actions-with-duplicate-control-plane-names1): the P4Info lists the name once, so the
        controller cannot tell the actions apart.  Copies of one declaration (a top-level action
        used in two controls) are one action."""
        used = {an for c in prog.controls for an in ir.live_actions(prog, c)}

        def pos(a: ir.Action) -> tuple:  # copies of one declaration share its position
            return a.loc.file, a.loc.line, a.loc.col

        first: dict[str, ir.Action] = {}
        for an in prog.actions:
            if an not in used:
                continue
            a = prog.actions[an]
            prev = first.setdefault(a.name, a)
            if pos(prev) != pos(a):
                later, earlier = sorted((prev, a), key=pos, reverse=True)
                raise self.err(later.loc, f"conflicting control plane name '{a.name}': the action declared at "
                                          f"line {earlier.loc.line} has it too (p4c: \"conflicting control plane "
                                          "name\"; the P4Info could list only one of them)")

    def check_packet_path_calls(self, prog: ir.Program) -> None:
        """As p4c's bmv2 back end (``simpleSwitch.cpp``, the ``ExternConverter_clone*``,
        ``_resubmit_preserving_field_list`` and ``_recirculate_preserving_field_list``
        converters): a clone of type I2E only in ingress and E2E only in egress, a resubmit
        only in ingress, a recirculate only in egress (the deprecated ``clone3``, ``resubmit`` and
        ``recirculate`` alike), the clone type and a field list index constants. Until
        2026-12-06 softswitch ran each of these: an E2E clone called in ingress cloned the
        ingress packet, a recirculate called in ingress recirculated after egress."""
        want = {"resubmit_preserving_field_list": "ingress", "recirculate_preserving_field_list": "egress"}
        for where, ctl in (("ingress", prog.ingress), ("egress", prog.egress)):
            roots: list = [ctl.body]
            # reachable actions only: p4c's front end drops a table nothing applies ("Table t is not
            # used; removing", RemoveUnusedDeclarations), then the actions only it listed
            todo: list[str] = []
            applied: set[str] = set()
            seen: set[str] = set()
            while todo or roots:
                if todo:
                    an = todo.pop()
                    a = prog.actions.get(an)
                    if an in seen or a is None:
                        continue
                    seen.add(an)
                    roots.append(a.body)
                    continue
                for n in ir.iter_nodes(roots.pop()):
                    if isinstance(n, (ir.ApplyTable, ir.SwitchActionRun)) and n.table not in applied:
                        applied.add(n.table)
                        tbl = ctl.tables.get(n.table)
                        if tbl is not None:
                            todo.extend(r.action for r in tbl.actions)
                            todo.append(tbl.default_action.action)
                            roots.append([k.expr for k in tbl.keys] + list(tbl.key_stmts))
                    if isinstance(n, ir.ActionCall):
                        todo.append(n.action)
                    if not isinstance(n, ir.BuiltinCall):
                        continue
                    if n.name in ("clone", "clone_preserving_field_list"):
                        kind = n.args[0]
                        if not isinstance(kind, ir.Const):
                            raise self.err(n.loc, f"the clone type of {n.name} must be a constant "
                                                  "(p4c's bmv2 back end: \"must be a constant on this target\")")
                        ctype = "I2E" if kind.value == 0 else "E2E"
                        if (ctype == "I2E") != (where == "ingress"):
                            block = "ingress" if ctype == "I2E" else "egress"
                            raise self.err(n.loc, f"{n.name}(CloneType.{ctype}, ...) called in {where}: p4c's bmv2 "
                                                  f"back end allows it in {block} only (\"not invoked in {block}\")")
                    elif n.name in want and want[n.name] != where:
                        raise self.err(n.loc, f"{n.name} called in {where}: p4c's bmv2 back end allows it in "
                                              f"{want[n.name]} only")
                    if n.name in ("clone_preserving_field_list", *want) and not isinstance(n.args[-1], ir.Const):
                        raise self.err(n.loc, f"the field list index of {n.name} must be a constant (p4c's bmv2 "
                                              "back end: \"expected a constant\")")

    def check_direct_meters(self, prog: ir.Program) -> None:
        """A direct meter's colour reaches the program only through its ``read``: p4c's bmv2 back end
        refuses a metered table whose meter nothing reads (after inlining actions: a read anywhere
        counts), and a ``read`` of a direct meter no table's ``meters`` names (its colour would be
        nothing)."""
        reads = {n.instance for a in prog.actions.values() for n in ir.iter_nodes(a.body)
                 if isinstance(n, ir.ExternCall) and n.method == "read"}
        dests: dict[str, tuple[Any, ir.Loc]] = {}
        dmeters = {e.name for c in prog.controls for e in c.externs.values() if e.kind == "direct_meter"}
        for a in prog.actions.values():
            for n in ir.iter_nodes(a.body):
                if isinstance(n, ir.ExternCall) and n.method == "read" and n.args and n.instance in dmeters:
                    key = _dest_key(n.args[0])
                    prev = dests.setdefault(n.instance, (key, n.loc))
                    if key is None or prev[0] != key:
                        raise self.err(n.loc, "every read of a direct meter must write to the same destination "
                                              f"(p4c's bmv2 back end: \"all meter operations must write to the "
                                              f"same destination\"); an earlier read is at line {prev[1].line}")
        for c in prog.controls:
            for tbl in c.tables.values():
                if tbl.meters and tbl.meters not in reads:  # read anywhere (p4c inlines actions first)
                    raise self.err(tbl.loc, f"table '{tbl.local_name}' has direct meter '{tbl.meters}' but nothing "
                                            "reads it (p4c: \"must have at least one action with a read method "
                                            "call\")")
            live = ir.live_actions(prog, c)  # not those only a removed table listed (p4c removes them)
            for e in c.externs.values():
                if e.kind == "direct_meter" and not e.tables:
                    for an in c.actions:
                        a = prog.actions.get(an) if an in live else None
                        n = next((n for n in ir.iter_nodes(a.body) if isinstance(n, ir.ExternCall)
                                  and n.instance == e.name and n.method == "read"), None) if a else None
                        if n is not None:
                            raise self.err(n.loc, f"direct meter '{e.local_name}' is read but no table's "
                                                  "'meters' property names it (p4c: \"direct meter is not "
                                                  "associated with any table\")")

    def top_level_spec_names(self, args: list[Tree]) -> dict[int, str]:
        """The names p4c's SpecializeAll gives the top-level parsers and controls it specialises
        (those with type or constructor arguments; DefaultArguments has filled in defaulted ones),
        by instantiation: ``Name_0``, ``Name_1``... (a ``_N`` suffix of the name is dropped first,
        a name already declared is skipped), numbered in the order p4c finds them -- top-level
        instances in declaration order, then V1Switch's arguments.  p4c's HierarchicalNames then
        prefixes the P4Info names of their tables, actions and externs with it: its sample
        issue1333 (``top(c())``, ``control c()(bit<32> binit = 4)``) names extern ``c_0.e``."""
        taken = set(self.globals) | set(self.named_types)
        out: dict[int, str] = {}
        nodes = [(tname, inst) for tname, inst in self.block_instances.values()]
        for a in args:
            if a.data == "ctor_call":
                head = a.children[0]
                nodes.append((str(head.children[0]) if isinstance(head, Tree) else str(head), a))
        for tname, node in nodes:
            d = self.globals.get(tname)
            if not isinstance(d, _Decl) or d.kind not in ("parser", "control"):
                continue
            cp = _tree(d.tree, "ctor_params")
            if _tree(d.tree, "type_params") is None and (cp is None or not _trees(_tree(cp, "params"), "param")):
                continue
            m = re.fullmatch(r"(.+)_\d+", tname)
            base = m.group(1) if m else tname
            i = 0
            while f"{base}_{i}" in taken:
                i += 1
            out[id(node)] = f"{base}_{i}"
            taken.add(out[id(node)])
        return out

    def block_params(self, d: Tree, blk: _Block) -> tuple[list[ir.Param], dict[str, Any]]:
        self.check_param_names(_tree(d, "params"), f"'{_name(d)}'")
        params, scope = [], {}
        for p in _trees(_tree(d, "params"), "param"):
            pt = self.type_ref(_type_child(p))
            pn = _name(p)
            params.append(ir.Param(pn, pt, _direction(p), self.annotations(_tree(p, "annotations")),
                                   self.loc(p)))
            blk.used_names.add(pn)
            scope[pn] = ir.Var(pt, self.loc(p), pn)
        return params, scope

    def lower_parser(self, d: Tree, ctor: dict[str, Any] | None = None, pname: str | None = None) -> ir.Parser:
        name = _name(d)
        blk = _Block(pname or name, "parser")  # pname: a specialised parser's name (its value sets')
        params, scope = self.block_params(d, blk)
        scope.update(ctor or {})  # constructor parameters: the constants given
        ctx = _Ctx(blk, in_parser=True)
        ctx.scope = [scope]  # type: ignore[attr-defined]
        ctx.value_sets = []  # type: ignore[attr-defined]
        states: dict[str, ir.ParserState] = {}
        self._parser_body(d, ctx, blk, "", "accept", states, 0)
        if "start" not in states:
            raise self.err(d, f"parser '{name}' has no 'start' state")
        states = {"start": states["start"], **{k: v for k, v in states.items() if k != "start"}}
        return ir.Parser(name, params, blk.locals, states, self.annotations(_tree(d, "annotations")), self.loc(d),
                         ctx.value_sets)  # type: ignore[attr-defined]

    _VSET_KINDS = ("exact", "ternary", "lpm", "range", "optional")

    def value_set_decl(self, t: Tree, ctx: _Ctx, parser_name: str) -> ir.ValueSet:
        """``value_set<T>(size) name;``: ``T`` is ``bit<W>`` (one exact match field without a
        name, as p4c's P4Info has it) or a struct of ``bit<W>`` fields, each an exact match field
        unless ``@match(ternary|lpm|range|optional)`` says otherwise."""
        name = _name(t)
        anns = self.annotations(_tree(t, "annotations"))
        vt = self.type_ref(_type_child(t))
        size_e = self.expr(_trees(t)[-2], ctx, None)
        if not isinstance(size_e, ir.Const) or int(size_e.value) <= 0:
            raise self.err(t, f"value_set '{name}': its size must be a positive constant")
        fields: list[ir.ValueSetField] = []
        if isinstance(vt, ir.BitT):
            fields.append(ir.ValueSetField("", vt.width, "exact"))
        elif isinstance(vt, ir.StructT) and vt.fields and all(isinstance(f.type, ir.BitT) for f in vt.fields):
            for f in vt.fields:
                m = ir.find_annotation(f.annotations, "match")
                kind = str(m.args[0]) if m is not None and m.args else "exact"
                if kind not in self._VSET_KINDS:
                    raise self.err(t, f"value_set '{name}': field '{f.name}' has @match({kind}); "
                                      f"one of {', '.join(self._VSET_KINDS)} expected")
                fields.append(ir.ValueSetField(f.name, ir.type_width(f.type), kind))  # type: ignore[arg-type]
        elif isinstance(vt, ir.StructT) and vt.fields:
            bad = next(f for f in vt.fields if not isinstance(f.type, ir.BitT))
            # p4c's P4Runtime serializer (addValueSet): "when the type parameter of a Value Set is a
            # struct, all the fields of the struct must be of type bit<W>"; no P4Info, no match fields
            raise self.unsupported(t, f"value_set of type {show(vt)}: its field '{bad.name}' has type "
                                      f"{show(bad.type)}, and P4Runtime describes only bit<W> fields "
                                      "(p4c's P4Info generation rejects it too)")
        else:
            raise self.unsupported(t, f"value_set of type {show(vt)} (only bit<W> or a struct of bit<W> fields)")
        return ir.ValueSet(_p4info_name(anns, parser_name, name), name, vt, int(size_e.value), fields, anns,
                           self.loc(t), ir.id_annotation(anns))

    def _parser_body(self, d: Tree, ctx: _Ctx, blk: _Block, prefix: str, accept: str,
                     states: dict[str, ir.ParserState], depth: int) -> None:
        """Lower parser ``d``'s locals and states into ``states`` with names prefixed by
        ``prefix``; its ``accept`` becomes ``accept``.  A sub-parser ``sp.apply(pkt, ...)`` in a
        state is inlined as p4c does: the state ends there and goes to the sub-parser's copied
        states, whose accept continues with the rest of the state; arguments are copied in at
        the call and out (``out``/``inout``) on the sub-parser's accept, so an error inside it
        leaves the caller's arguments as they were."""
        if depth > 8:
            raise self.unsupported(d, "sub-parsers nested more than 8 deep (or recursive)")
        init: list[ir.Stmt] = []
        subs: dict[str, Tree] = {}
        sub_ctors: dict[str, dict[str, Any]] = {}  # instance -> its constructor arguments
        sub_tenvs: dict[str, tuple] = {}  # instance -> its type arguments (a generic parser's)
        self.check_local_names(d)
        for loc_t in _trees(d):
            if loc_t.data == "var_decl":
                init += self.stmt(loc_t, ctx)
            elif loc_t.data == "const_decl":
                self.stmt(loc_t, ctx)
            elif loc_t.data == "value_set_decl":
                if depth:
                    raise self.unsupported(loc_t, "value_set in a sub-parser")
                vs = self.value_set_decl(loc_t, ctx, blk.name)
                ctx.scope[-1][vs.local_name] = vs  # type: ignore[attr-defined]
                ctx.value_sets.append(vs)  # type: ignore[attr-defined]
            elif loc_t.data == "instantiation":
                subs[_name(loc_t)] = self._sub_parser_decl(loc_t)
                sub_tenvs[_name(loc_t)] = self.block_type_env(subs[_name(loc_t)], _type_child(loc_t), loc_t,
                                                              _trees(_tree(loc_t, "args")), ctx)
                sub_ctors[_name(loc_t)] = self.ctor_args(subs[_name(loc_t)], _trees(_tree(loc_t, "args")),
                                                         ctx, loc_t, sub_tenvs[_name(loc_t)])
        state_trees = _trees(d, "parser_state")
        names = [_name(s) for s in state_trees]
        if "start" not in names:  # a sub-parser's too (its apply jumps to its start)
            raise self.err(d, f"parser '{_name(d)}' has no 'start' state")

        def ren(n: str) -> str:
            return accept if n == "accept" else "reject" if n == "reject" else prefix + n

        for s in state_trees:
            sn = _name(s)
            if sn in ("accept", "reject"):  # p4c: "parser state should not be implemented, it is built-in"
                raise self.err(s, f"state '{sn}' is built in and cannot be declared")
            if prefix + sn in states:
                raise self.err(s, f"duplicate state '{sn}'")
            anns = self.annotations(_tree(s, "annotations"))
            ctx.scope.append({})  # type: ignore[attr-defined]
            cur = prefix + sn
            stmts: list[ir.Stmt] = list(init) if sn == "start" else []
            tr = None
            k = 0
            for st in _trees(s):
                if st.data in ("annotations", "name"):
                    continue
                if st.data in ("direct_transition", "select_transition"):
                    # calls of functions in select keys run at the end of the state, before the
                    # select, into temporaries (p4c's DoSimplifyExpressions on a ParserState)
                    self._no_side_effects_in_conditionals(st)
                    saved_pre, ctx.prelude = ctx.prelude, []
                    try:
                        tr = self.transition(st, ctx, names)
                    finally:
                        pre, ctx.prelude = ctx.prelude, saved_pre
                    stmts += pre
                    tr.next_state = ren(tr.next_state) if tr.next_state else None
                    for c in tr.cases:
                        c.next_state = ren(c.next_state)
                    continue
                inst = self._sub_parser_call(st, subs, ctx, sub_ctors, sub_tenvs)
                if inst is None:
                    stmts += self.stmt(st, ctx)
                    continue
                k += 1
                sub_prefix = f"{cur}${inst}{k}."
                cont = f"{cur}$after{k}"
                tenv = sub_tenvs.get(inst, ({}, {}))
                copy_in, copy_out, sub_scope = self._bind_sub_parser(st, subs[inst], ctx, blk, sub_prefix, tenv)
                states[cur] = ir.ParserState(cur, stmts + copy_in, ir.Transition(self.loc(st), sub_prefix + "start"),
                                             anns, self.loc(s))
                sub_ctx = _Ctx(blk, in_parser=True)
                sub_ctx.scope = [{**sub_scope, **sub_ctors[inst]}]  # type: ignore[attr-defined]
                sub_ctx.var_prefix = sub_prefix  # type: ignore[attr-defined]
                saved_ro = self.readonly_vars  # the sub-parser's 'in' parameters are read-only
                self.readonly_vars = saved_ro | frozenset(
                    sub_scope[_name(p)].name for p in _trees(_tree(subs[inst], "params"), "param")
                    if _direction(p) == "in" and isinstance(sub_scope.get(_name(p)), ir.Var))
                try:
                    with self.specialised("parser", _name(subs[inst]), tenv, st):
                        self._parser_body(subs[inst], sub_ctx, blk, sub_prefix, cont, states, depth + 1)
                finally:
                    self.readonly_vars = saved_ro
                cur, stmts = cont, list(copy_out)
            ctx.scope.pop()  # type: ignore[attr-defined]
            if tr is None:  # P4_16 (parser states): a state without a transition goes to reject
                tr = ir.Transition(self.loc(s), next_state="reject")
            states[cur] = ir.ParserState(cur, stmts, tr, anns, self.loc(s))

    def _sub_parser_decl(self, lt: Tree) -> Tree:
        """The declaration of a parser instantiated inside a parser (anything else is rejected)."""
        tref = _type_child(lt)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        decl = self.globals.get(tname)
        if not (isinstance(decl, _Decl) and decl.kind == "parser" and not decl.builtin):
            why = "; p4c's bmv2 back end runs no counter, meter or register method in a parser: " \
                  "declare it in a control" if tname in _EXTERN_KINDS else ""
            raise self.unsupported(lt, f"instance of '{tname}' in a parser (only sub-parsers{why})")
        return decl.tree

    def _sub_parser_call(self, st: Tree, subs: dict[str, Tree], ctx: _Ctx, sub_ctors: dict[str, dict[str, Any]],
                         sub_tenvs: dict[str, tuple]) -> str | None:
        """``inst`` when ``st`` is ``inst.apply(...);`` of a sub-parser instance.  ``Sub.apply(...);``
        of a parser type (the P4 spec's direct type invocation: an instance of its own at that
        call) is taken as an instance named after the type -- each call is inlined as a copy of
        its own anyway."""
        if st.data != "call_stmt":
            return None
        call = _trees(st)[0]
        if call.data != "call_expr":
            return None
        callee = _trees(call)[0]
        if callee.data == "spec_type_member" and str(_tree(callee, "mname").children[0]) == "apply":
            # ``G<A>.apply(...)``: an instance of its own at the type arguments, one per distinct
            # arguments (as p4c's InstantiateDirectCalls then SpecializeAll)
            tref = _trees(callee)[0]
            n = str(tref.children[0])
            decl = self.globals.get(n)
            if not (isinstance(decl, _Decl) and decl.kind == "parser" and not decl.builtin):
                return None
            if _tree(decl.tree, "ctor_params") is not None:
                raise self.unsupported(st, f"direct application of parser type '{n}', which has constructor "
                                           "parameters (declare an instance)")
            tenv = self.block_type_env(decl.tree, tref, st)
            key = "_".join([n] + list(tenv[1].values()))
            subs[key], sub_ctors[key], sub_tenvs[key] = decl.tree, {}, tenv
            return key
        if callee.data != "member" or str(_tree(callee, "mname").children[0]) != "apply":
            return None
        base = _trees(callee)[0]
        if base.data != "ident":
            return None
        n = str(_tree(base, "name").children[0])
        if n in subs:
            return n
        if any(n in sc for sc in getattr(ctx, "scope", [])):
            return None
        decl = self.globals.get(n)
        if isinstance(decl, _Decl) and decl.kind == "parser" and not decl.builtin:
            if _tree(decl.tree, "ctor_params") is not None:
                raise self.unsupported(st, f"direct application of parser type '{n}', which has constructor "
                                           "parameters (declare an instance)")
            if _tree(decl.tree, "type_params") is not None:
                raise self.unsupported(st, f"direct application of generic parser '{n}' without type "
                                           f"arguments (give them: {n}<...>.apply(...))")
            subs[n], sub_ctors[n] = decl.tree, {}
            return n
        return None

    def _bind_sub_parser(self, st: Tree, sub: Tree, ctx: _Ctx, blk: _Block, prefix: str,
                         tenv: tuple = ({}, {})) -> tuple[list[ir.Stmt], list[ir.Stmt], dict[str, Any]]:
        """Copy-in statements, copy-out statements and the sub-parser's scope for one call."""
        call = _trees(st)[0]
        arg_trees = _trees(_tree(call, "args")) if _tree(call, "args") is not None else []
        self.check_param_names(_tree(sub, "params"), f"parser '{_name(sub)}'")
        prms = _trees(_tree(sub, "params"), "param")
        if any(a.data == "named_arg" for a in arg_trees):
            arg_trees = self.positional_args(arg_trees, [_name(p) for p in prms], call)
        if len(arg_trees) != len(prms):
            raise self.err(st, f"parser '{_name(sub)}' takes {len(prms)} arguments, {len(arg_trees)} given")
        copy_in: list[ir.Stmt] = []
        copy_out: list[ir.Stmt] = []
        scope: dict[str, Any] = {}
        loc = self.loc(st)
        for a, p in zip(arg_trees, prms):
            with self.type_scope(tenv):  # the sub-parser's parameter types, at its type arguments
                pt = self.type_ref(_type_child(p))
            direc = _direction(p)
            pn = _name(p)
            if isinstance(pt, ir.ExternT) and pt.name == "packet_in":
                arg = self.expr(a, ctx, None)
                if not (isinstance(arg.type, ir.ExternT) and arg.type.name == "packet_in"):
                    raise self.err(a, "a sub-parser's packet_in argument must be the parser's packet")
                scope[pn] = arg
                continue
            if direc == "":
                raise self.unsupported(p, "directionless sub-parser parameter")
            v = ir.Var(pt, loc, blk.fresh(prefix + pn, pt))
            scope[pn] = v
            arg = self.expr(a, ctx, pt)
            if direc in ("in", "inout"):
                copy_in.append(ir.Assign(loc, v, arg))
            if direc in ("out", "inout"):
                self.check_lvalue(arg, loc)
                copy_out.append(ir.Assign(loc, arg, v))
        return copy_in, copy_out, scope

    def transition(self, t: Tree, ctx: _Ctx, names: list[str]) -> ir.Transition:
        loc = self.loc(t)

        def target(n: Tree) -> str:
            sn = str(n.children[0])
            if sn not in names and sn not in ("accept", "reject"):
                raise self.err(n, f"unknown parser state '{sn}'")
            return sn

        if t.data == "direct_transition":
            return ir.Transition(loc, next_state=target(_tree(t, "name")))
        sel = _tree(t, "select_expr")
        keys = [self.expr(k, ctx, None) for k in _trees(_tree(sel, "expr_list"))]
        for i, k in enumerate(keys):
            if isinstance(k.type, InfIntT):
                raise self.err(k.loc, "select key needs a width")
            if isinstance(k.type, ir.EnumT) and k.type.underlying is None or \
                    isinstance(k.type, (ir.HeaderT, ir.StructT, ir.StackT, ir.TupleT)):
                raise self.unsupported(k.loc, f"select on a {show(k.type)} (select on bit<W>, int<W>, bool or a "
                                              "serializable enum)")
        cases = []
        for c in _trees(sel, "select_case"):
            ks_t = _trees(c)[0]
            vs = self._value_set_ref(ks_t, ctx)
            if vs is not None:
                self._check_vset_keys(c, vs, keys)
                kset = ir.KeySet("vset", loc=self.loc(ks_t), vset=vs.name)
                cases.append(ir.SelectCase([kset] * len(keys), target(_tree(c, "name")), self.loc(c)))
                continue
            comps = _trees(ks_t) if ks_t.data == "tuple_keyset" else [ks_t]
            if len(comps) != len(keys):
                if len(comps) == 1 and comps[0].data == "default_keyset":
                    comps = comps * len(keys)
                else:
                    raise self.err(c, f"select has {len(keys)} keys, case has {len(comps)}")
            kss = [self.keyset(x, k.type, ctx) for x, k in zip(comps, keys)]
            cases.append(ir.SelectCase(kss, target(_tree(c, "name")), self.loc(c)))
        return ir.Transition(loc, keys=keys, cases=cases)

    @staticmethod
    def _value_set_ref(t: Tree, ctx: _Ctx) -> ir.ValueSet | None:
        """The value set a select case's keyset names, if it is a bare name of one."""
        if t.data != "ident":
            return None
        name = str(_tree(t, "name").children[0])
        for s in reversed(getattr(ctx, "scope", [])):
            if name in s:
                return s[name] if isinstance(s[name], ir.ValueSet) else None
        return None

    def _check_vset_keys(self, c: Tree, vs: ir.ValueSet, keys: list[ir.Expr]) -> None:
        """The select keys must have the set's type: one key of its width for a ``bit<W>`` set,
        one key per field, of the field's width, for a struct set (as p4c's type check)."""
        widths = [f.width for f in vs.fields]
        got = []
        for k in keys:
            if not isinstance(k.type, ir.BitT):
                raise self.err(c, f"value_set '{vs.local_name}' matches bit<W> keys; this select key is {show(k.type)}")
            got.append(k.type.width)
        if got != widths:
            want = f"bit<{widths[0]}>" if not vs.fields[0].name else \
                "(" + ", ".join(f"bit<{w}>" for w in widths) + ")"
            have = ", ".join(f"bit<{w}>" for w in got)
            raise self.err(c, f"value_set '{vs.local_name}' of {want} cannot match a select on ({have})")

    def keyset(self, t: Tree, ty: ir.Type, ctx: _Ctx, lpm: bool = False) -> ir.KeySet:
        loc = self.loc(t)
        mask_all = (1 << ir.type_width(ty)) - 1 if not isinstance(ty, ir.ErrorT) else 0

        def const(x: Tree) -> int:
            if isinstance(ty, ir.EnumT) and ty.underlying is not None:
                # a serializable-enum key also takes values of its underlying type, as p4c does
                # ('(bit<16>) E.A &&& 0xff00')
                try:
                    e = self.expr(x, ctx, ty)
                except P4Error:
                    e = self.expr(x, ctx, ty.underlying)
            else:
                e = self.expr(x, ctx, ty)
            if not isinstance(e, ir.Const):
                raise self.err(x, "keyset value must be a constant")
            return int(e.value) & mask_all if mask_all else int(e.value)

        if t.data == "default_keyset":
            return ir.KeySet("default", loc=loc)
        if t.data == "mask_keyset":
            v, m = const(_trees(t)[0]), const(_trees(t)[1])
            return ir.KeySet("mask", v & m, m, loc=loc)
        if t.data == "range_keyset":
            return ir.KeySet("range", const(_trees(t)[0]), hi=const(_trees(t)[1]), loc=loc)
        return ir.KeySet("value", const(t), mask_all, loc=loc)

    def check_header_widths(self, blocks: list) -> None:
        """Like p4c's bmv2 back end (``Found header with fields totaling N bits``, an error since
        it stopped padding headers): a header type the program uses whose fixed fields do not
        total a multiple of 8 bits is rejected; bmv2 itself cannot hold such a header."""
        types: list[ir.Type] = []
        for b in blocks:
            types += [p.type for p in b.params] + list(b.locals.values())
        for a in self.actions.values():
            types += [p.type for p in a.params] + list(getattr(a, "locals", {}).values())
        seen: set[int] = set()
        while types:
            t = types.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            if isinstance(t, ir.StackT):
                types.append(t.elem)
            elif isinstance(t, ir.StructT):
                types += [f.type for f in t.fields]
            elif isinstance(t, ir.HeaderT) and t.varbit is None and t.width % 8:
                loc = self.type_locs.get(t.name, self.loc(self.main))
                raise self.unsupported(loc, f"header {t.name} with fields totaling {t.width} bits (bmv2 "
                                            "takes only headers whose fields total a multiple of 8 "
                                            "bits; p4c's bmv2 back end rejects it too)")

    def lower_control(self, d: Tree, prefix: str | None = None, blk: _Block | None = None,
                      bindings: dict[str, Any] | None = None, order: tuple = (),
                      var_prefix: str = "", ctor: dict[str, Any] | None = None,
                      readonly: frozenset[str] = frozenset()) -> ir.Control:
        saved = self.readonly_vars
        if blk is None:  # a top-level control: its 'in' parameters are read-only
            self.readonly_vars = frozenset(_name(p) for p in _trees(_tree(d, "params"), "param")
                                           if _direction(p) == "in")
        else:  # an inlined one: the variables its 'in' parameters are bound to
            self.readonly_vars = saved | readonly
        try:
            return self._lower_control(d, prefix, blk, bindings, order, var_prefix, ctor)
        finally:
            self.readonly_vars = saved

    def _lower_control(self, d: Tree, prefix: str | None, blk: _Block | None, bindings: dict[str, Any] | None,
                       order: tuple, var_prefix: str, ctor: dict[str, Any] | None) -> ir.Control:
        name = _name(d)
        top = blk is None
        if blk is None:
            blk = _Block(name, "control")
        pfx = name if prefix is None else prefix
        if top:
            params, scope = self.block_params(d, blk)
            scope.update(ctor or {})  # constructor parameters: the constants given
            if len(params) == 3 and params[2].type == self.std_meta_type() and \
                    isinstance(params[1].type, ir.StructT):
                blk.meta_param = params[1].name  # ingress or egress
                blk.std_param = params[2].name
        else:
            params, scope = [], dict(bindings or {})
        ctx = _Ctx(blk)
        ctx.scope = [scope]  # type: ignore[attr-defined]
        ctx.var_prefix = var_prefix  # type: ignore[attr-defined]
        ctx.p4_prefix = pfx  # type: ignore[attr-defined]
        ctx.order = order  # type: ignore[attr-defined]
        init: list[ir.Stmt] = []
        self.check_local_names(d)
        for i, lt in enumerate(_trees(d)):
            key = order + (i,)
            k = lt.data
            if k in ("annotations", "name", "type_params", "params", "ctor_params", "block"):
                continue
            if k == "var_decl":
                init += self.stmt(lt, ctx)
            elif k == "const_decl":
                self.stmt(lt, ctx)
            elif k == "instantiation":
                self.instantiate(lt, ctx, blk, pfx, key, var_prefix)
            elif k == "action_decl":
                local = _name(lt)
                anns = self.annotations(_tree(lt, "annotations"))
                pname = _p4info_name(anns, pfx, local)
                akey = self.lower_action(lt, pname, local, anns, ctx, blk, owner=blk.name)
                blk.actions.append((key, akey))
                scope[local] = _ActionRef(akey)
            elif k == "table_decl":
                ctx.table_key = key  # type: ignore[attr-defined]  # for an extern it constructs
                real = _p4info_name(self.annotations(_tree(lt, "annotations")), pfx, _name(lt))
                internal = None
                if any(x.name == real or self.dup_table_names.get(x.name) == real for _, x in blk.tables):
                    # another table of this control has its control-plane name: fine if the front
                    # end removes one of them as unused (settle_table_names), as p4c's does first
                    internal = f"{real}$dup{len(self.dup_table_names)}"
                    self.dup_table_names[internal] = real
                tb = self.table(lt, ctx, pfx, internal)
                blk.tables.append((key, tb))
                scope[_name(lt)] = _TableRef(tb)
            else:
                raise self.unsupported(lt, k.replace("_", " "))
        body_t = _tree(d, "block")
        counts = _apply_counts(body_t)
        arg_lists = _apply_arg_lists(body_t)
        declared = _declared_in(body_t)
        for n, ent in scope.items():
            if isinstance(ent, _SubControl) and n not in (bindings or {}):  # not one passed in
                # one passed to another control may be applied from there too: count it as
                # applied more than once, with arguments not seen here
                ent.applies = max(counts.get(ent.name, 0), 2 if ent.passed else 0)
                ent.same_args = ent.applies <= 1 or (not ent.passed and self._same_apply_args(
                    ent, arg_lists.get(ent.name, []), declared))
        body = self.block(body_t, ctx)
        body.stmts = init + body.stmts
        if not top:
            return ir.Control(name, params, {}, {}, {}, [], body, (), self.loc(d))
        externs = dict(self.global_externs)
        for _, e in sorted(blk.externs, key=lambda x: x[0]):
            if e.name in externs:
                raise self.err(e.loc, f"two extern instances are named '{e.name}'")
            externs[e.name] = e
        tables: dict[str, ir.Table] = {t.name: t for _, t in sorted(blk.tables, key=lambda x: x[0])}
        _fold_constant_ifs(body)  # as p4c's ConstantFolding, before unused tables are removed
        tables = self.drop_unused_tables(tables, body, externs, self.annotations(_tree(d, "annotations")))
        tables = self.settle_table_names(tables, body, externs)
        # the order of p4c's P4Info: its front end inlines every control instance (Inline, before
        # P4Info is written): a declared instance's tables, externs and actions take its place
        # among the control's locals (keys sort so), a directly applied control's go last
        # (InstantiateDirectCalls appends the instance it makes; its key sorts after the
        # others).  Then LocalizeAllActions copies the top-level actions the flattened control
        # uses to the front of its locals, in the order of their first use: by its tables (in
        # that order), then by the apply block's direct calls, inlined bodies included (a table
        # listing my_drop before NoAction gives my_drop, NoAction); then its own actions.
        actions: list[str] = []
        for t in tables.values():
            for ar in t.actions:
                if self.actions[ar.action].owner is None and ar.action not in actions:
                    actions.append(ar.action)
        for an in ir.actions_called_in_order(body, live=True):
            if self.actions[an].owner is None and an not in actions:
                actions.append(an)
        actions += [a for _, a in sorted(blk.actions, key=lambda x: x[0])]
        return ir.Control(name, params, blk.locals, externs, tables, actions, body,
                          self.annotations(_tree(d, "annotations")), self.loc(d))

    def settle_table_names(self, tables: dict[str, ir.Table], body: ir.Block,
                           externs: dict[str, ir.ExternInstance]) -> dict[str, ir.Table]:
        """Two tables with one control-plane name (``@name("fwd")`` on both) are an error only
        when both remain after unused tables are removed: p4c's front end removes an unused one
        before it checks names (``DuplicateHierarchicalNameCheck``) and writes P4Info, so two
        variants of a table chosen by a constant (``if (VERSION == 2) fwd_v2.apply(); else
        fwd_v1.apply();``) are one table ``fwd`` to the controller.  The one that remains takes
        the name back from its internal one; every table is then registered program-wide."""
        rename: dict[str, str] = {}
        for t in tables.values():
            real = self.dup_table_names.get(t.name, t.name)
            prev = self.table_names.setdefault(real, t)  # in this control or another one
            if prev is not t:  # p4c's P4Info names both alike; a controller could reach one
                raise self.unsupported(t.loc, f"two tables with the control-plane name '{real}' (the other at "
                                              f"line {prev.loc.line}; give one another @name)")
            if real != t.name:
                rename[t.name] = real
        if not rename:
            return tables
        roots: list[object] = [body] + [[k.expr for k in t.keys] + list(t.key_stmts) for t in tables.values()]
        for n in ir.iter_nodes(roots):
            if isinstance(n, (ir.ApplyTable, ir.SwitchActionRun)) and n.table in rename:
                n.table = rename[n.table]
        for e in externs.values():
            e.tables[:] = [rename.get(tn, tn) for tn in e.tables]
        out: dict[str, ir.Table] = {}
        for tn, t in tables.items():
            t.name = rename.get(tn, tn)
            out[t.name] = t
        return out

    def drop_unused_tables(self, tables: dict[str, ir.Table], body: ir.Block, externs: dict[str, ir.ExternInstance],
                           control_annotations: tuple[ir.Annotation, ...] = ()) -> dict[str, ir.Table]:
        """The tables of a control that its apply block applies (directly, in an inlined
        sub-control, or in the key of a table it applies), in declaration order.  As p4c's front
        end (``RemoveUnusedDeclarations``: "[--Wwarn=unused] warning: Table t is not used;
        removing") any other table is removed with a warning, before P4Info is made: it is not
        in P4Info, the actions only it lists are not either, and a direct counter or meter it
        had, or an action profile it used, no longer names it (an action profile stays,
        listed with the tables that remain).  ``@noWarn("unused")`` on the table or its control
        silences the warning, as in p4c (``Visitor::warning_enabled``)."""
        applied: set[str] = set()
        roots: list[object] = [body]
        while roots:
            for n in ir.live_nodes(roots.pop()):
                if isinstance(n, (ir.ApplyTable, ir.SwitchActionRun)) and n.table not in applied:
                    applied.add(n.table)
                    t = tables.get(n.table)
                    if t is not None:
                        roots.append([k.expr for k in t.keys] + list(t.key_stmts))
        removed = {tn for tn in tables if tn not in applied}
        if not removed:
            return tables
        quiet = _no_warn_unused(control_annotations)
        for t in tables.values():
            w = f"{t.loc}: [--Wwarn=unused] warning: Table {t.local_name} is not used; removing"
            # once per declaration (a sub-control's table in each instance), as p4c warns before inlining
            if t.name in removed and not quiet and not _no_warn_unused(t.annotations) and w not in self.warnings:
                self.warnings.append(w)
        for e in externs.values():
            e.tables[:] = [tn for tn in e.tables if tn not in removed]
        return {tn: t for tn, t in tables.items() if tn not in removed}

    def _same_apply_args(self, sub: _SubControl, calls: list[list[Tree]], declared: set[str]) -> bool:
        """Do all ``calls`` of ``sub`` pass the same out/inout arguments: equal trees that name
        the same storage wherever they appear (``_same_text_same_storage``)?"""
        params = _trees(_tree(sub.decl, "params"), "param")
        outs = [i for i, p in enumerate(params) if _direction(p) in ("inout", "out")]
        if not calls or any(len(c) != len(params) for c in calls):
            return False
        if any(a.data == "named_arg" for c in calls for a in c):
            outs = list(range(len(params)))  # in any order: every argument must be the same
        for i in outs:
            first = calls[0][i]
            if any(c[i] != first for c in calls[1:]) or not _same_text_same_storage([first], declared):
                return False
        return True

    def instantiate(self, lt: Tree, ctx: _Ctx, blk: _Block, pfx: str, key: tuple, var_prefix: str) -> None:
        local = _name(lt)
        tref = _type_child(lt)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        decl = self.globals.get(tname)
        if isinstance(decl, _Decl) and decl.kind == "control" and not decl.builtin:
            pname = _p4info_name(self.annotations(_tree(lt, "annotations")), pfx, local)
            sub = _SubControl(local, decl.tree, pname, key, self.loc(lt))
            sub.tenv = self.block_type_env(decl.tree, tref, lt, _trees(_tree(lt, "args")), ctx)
            sub.ctor = self.ctor_args(decl.tree, _trees(_tree(lt, "args")), ctx, lt, sub.tenv)
            ctx.scope[-1][local] = sub  # type: ignore[attr-defined]
            return
        if tname not in _EXTERN_KINDS:
            if tname in ("Checksum16",):
                raise self.unsupported(lt, "Checksum16 (deprecated)")
            raise self.unsupported(lt, f"instance of '{tname}'")
        inst = self.build_extern(lt, ctx, pfx)
        blk.externs.append((key, inst))
        ctx.scope[-1][local] = inst  # type: ignore[attr-defined]

    def block_type_env(self, d: Tree, tref: Tree | None, where: Tree, ctor_arg_trees: list[Tree] | None = None,
                       ctx: _Ctx | None = None) -> tuple:
        """The type parameters of parser/control ``d`` bound for an instance of it, as p4c's
        SpecializeAll specialises each instance: to the instance's type arguments (``tref``:
        its ``Name<A, ...>``, evaluated where the instance is), or else inferred from its
        constructor arguments (``control c<T>()(T size)``, ``c(8w9) ci;``, as p4c's generic1
        sample); ``({}, {})`` for a block that is not generic.  An instance with neither is
        rejected: p4c specialises none (its FindSpecializations skips an instance without type or
        constructor arguments), and softswitch does not infer them from apply arguments."""
        kind = "parser" if d.data == "parser_decl" else "control"
        name = _name(d)
        arg_trees = _trees(_tree(tref, "type_args")) if tref is not None and tref.data == "specialized_type" else []
        if _tree(d, "type_params") is None:
            if arg_trees:
                raise self.err(where, f"{kind} '{name}' is not generic: it takes no type arguments")
            return {}, {}
        tps = _type_params(d)
        if not arg_trees:
            return self.infer_block_type_args(d, kind, name, tps, where, ctor_arg_trees or [], ctx)
        if len(arg_trees) != len(tps):
            raise self.err(where, f"{kind} '{name}' takes {len(tps)} type arguments, {len(arg_trees)} given")
        args = [self.type_ref(a) for a in arg_trees]
        for a, at in zip(arg_trees, args):
            if isinstance(at, (InfIntT, ir.StringT, ir.VoidT, ir.ExternT)):
                raise self.err(a, f"{show(at)} cannot be a type argument of {kind} '{name}'")
        return (dict(zip(tps, args)),
                {tp: self.type_arg_text(a, at) for tp, a, at in zip(tps, arg_trees, args)})

    def infer_block_type_args(self, d: Tree, kind: str, name: str, tps: list[str], where: Tree,
                              ctor_arg_trees: list[Tree], ctx: _Ctx | None) -> tuple:
        """Each type parameter unified with the type of a constructor argument whose parameter
        type names it (an untyped integer binds no width: an error, as for a generic function)."""
        cp = _tree(d, "ctor_params")
        params = _trees(_tree(cp, "params"), "param") if cp is not None else []
        if not params:
            raise self.unsupported(where, f"an instance of generic {kind} '{name}' without type arguments "
                                          f"(they are not inferred from apply arguments; give them: {name}<...>)")
        if any(a.data == "named_arg" for a in ctor_arg_trees):
            ctor_arg_trees = self.positional_args(ctor_arg_trees, [_name(p) for p in params], where)
        if len(ctor_arg_trees) != len(params):
            raise self.err(where, f"{kind} '{name}' takes {len(params)} constructor arguments, "
                                  f"{len(ctor_arg_trees)} given")
        env: dict[str, ir.Type] = {}
        probe = copy.copy(ctx) if ctx is not None else _Ctx(None)
        probe.prelude = []
        for a, p in zip(ctor_arg_trees, params):
            pt = _type_child(p)
            if any(x.data == "named_type" and str(x.children[0]) in tps for x in pt.iter_subtrees()):
                self.unify_type(pt, self.expr(a, probe, None).type, tps, env, f"{kind} '{name}'", a)
        missing = [x for x in tps if x not in env]
        if missing:
            raise self.err(where, f"cannot infer type argument '{missing[0]}' of {kind} '{name}' from its "
                                  f"constructor arguments; give the type arguments ({name}<...>)")
        return env, {tp: _type_name_text(t) for tp, t in env.items()}

    def ctor_args(self, d: Tree, args: list[Tree], ctx: _Ctx, lt: Tree, tenv: tuple = ({}, {})) -> dict:
        """Constructor arguments of a parser or control instance, by parameter name (check_decl
        took the parameters).  A value parameter is bound to its argument, which must be a
        compile-time constant (evaluated where the instance is declared); inside the block it is
        that constant.  A control-typed parameter names a control instance of the enclosing
        control; inside, it stands for that instance -- one instance, shared by all who were
        given it.  Named arguments are bound by name, as for a function."""
        kind = "parser" if d.data == "parser_decl" else "control"
        cp = _tree(d, "ctor_params")
        params = _trees(_tree(cp, "params"), "param") if cp is not None else []
        if any(a.data == "named_arg" for a in args):
            args = self.positional_args(args, [_name(p) for p in params], lt)
        if len(args) != len(params):
            raise self.err(lt, f"{kind} '{_name(d)}' takes {len(params)} constructor arguments, "
                               f"{len(args)} given")
        out: dict[str, Any] = {}
        for p, a in zip(params, args):
            pn = _name(p)
            if kind == "control" and self.is_control_ctor_param(p):
                ent = None
                if a.data == "ident":
                    n = str(_tree(a, "name").children[0])
                    for s in reversed(getattr(ctx, "scope", [])):
                        if n in s:
                            ent = s[n]
                            break
                if not isinstance(ent, _SubControl):
                    raise self.unsupported(a, "a control constructor argument that is not a control "
                                              "instance declared in the same control")
                ent.passed = True
                out[pn] = ent
                continue
            with self.type_scope(tenv):  # the parameter's type at the instance's type arguments
                pt = self.type_ref(_type_child(p))
            if _tree(d, "type_params") is not None:
                self.check_ctor_value_type(p, kind, pn, pt)
            e = self.expr(a, ctx, pt)
            if not isinstance(e, ir.Const):
                raise self.err(a, f"constructor argument for '{pn}' of {kind} '{_name(d)}' is not a "
                                  "compile-time constant")
            out[pn] = ir.Const(pt, e.loc, e.value) if isinstance(e.type, InfIntT) else e
        return out

    def direct_apply(self, decl: _Decl, arg_trees: list[Tree], ctx: _Ctx, t: Tree,
                     tref: Tree | None = None) -> ir.Expr:
        """``Ctl.apply(...)`` of a control type: an instance of its own at this call, as the P4
        spec reads a direct application, named after the type in P4Info (as p4c names it); a
        second application of the same type in the same control gets ``_1``, and so on.  Its
        tables, actions and externs come before the control's own in P4Info, as p4c's
        InstantiateDirectCalls puts the new instances before the control's locals (p4c's P4Info
        for ONOS fabric.p4, profile fabric-int: FabricIngress.process_set_source_sink's action and
        direct counter first)."""
        if _tree(decl.tree, "ctor_params") is not None:
            raise self.unsupported(t, "direct application of a control with constructor parameters")
        if _tree(decl.tree, "type_params") is not None and tref is None:
            raise self.unsupported(t, f"direct application of generic control '{_name(decl.tree)}' without "
                                      f"type arguments (give them: {_name(decl.tree)}<...>.apply(...))")
        tenv = self.block_type_env(decl.tree, tref, t)
        name = _name(decl.tree)
        n = getattr(ctx, "direct_applies", 0)
        ctx.direct_applies = n + 1  # type: ignore[attr-defined]
        per_type = getattr(ctx, "direct_applies_of", None)
        if per_type is None:
            per_type = ctx.direct_applies_of = {}  # type: ignore[attr-defined]
        k = per_type.get(name, 0)
        per_type[name] = k + 1
        pfx = getattr(ctx, "p4_prefix", ctx.block.name if ctx.block is not None else "")
        sub = _SubControl(name, decl.tree, f"{pfx}.{name}" if k == 0 else f"{pfx}.{name}_{k}",
                          getattr(ctx, "order", ()) + (1_000_000 + n,), self.loc(t))
        sub.tenv = tenv
        return self.inline_control(sub, arg_trees, ctx, t)

    def build_extern(self, lt: Tree, ctx: _Ctx, pfx: str) -> ir.ExternInstance:
        """The v1model extern object declared by instantiation ``lt`` (P4Info prefix ``pfx``)."""
        local = _name(lt)
        anns = self.annotations(_tree(lt, "annotations"))
        tref = _type_child(lt)
        tname = str(tref.children[0])
        targs = tuple(self.type_ref(x) for x in _trees(_tree(tref, "type_args"))) \
            if tref.data == "specialized_type" else ()
        return self.extern_object(lt, tname, targs, _trees(_tree(lt, "args")), anns,
                                  _p4info_name(anns, pfx, local), local, ctx)

    def extern_object(self, lt: Tree, tname: str, targs: tuple, arg_trees: list[Tree], anns: tuple,
                      pname: str, local: str, ctx: _Ctx) -> ir.ExternInstance:
        """A v1model extern object of type ``tname`` built from constructor arguments ``arg_trees``
        (an instantiation's, or an anonymous constructor call's in a table property)."""
        if any(a.data == "named_arg" for a in arg_trees):  # bound by the names v1model.p4 declares
            decl = self.globals.get(tname)
            names = [_name(p) for cp in _trees(decl.tree, "ctor_proto")
                     for p in _trees(_tree(cp, "params"), "param")] if isinstance(decl, _Decl) else None
            arg_trees = self.positional_args(arg_trees, names, lt)
        args = [self.expr(a, ctx, None) for a in arg_trees]
        loc = self.loc(lt)
        inst = ir.ExternInstance(tname, pname, local, anns, loc, type_args=targs, id=ir.id_annotation(anns))  # type: ignore

        def cint(i: int, what: str) -> int:
            if i >= len(args) or not isinstance(args[i], ir.Const):
                raise self.err(lt, f"{tname} {what} must be a constant")
            return int(args[i].value)

        def unit(i: int, enum: str) -> str:
            if i >= len(args) or not isinstance(args[i], ir.Const) or not isinstance(args[i].type, ir.EnumT) \
                    or args[i].type.name != enum:
                raise self.err(lt, f"{tname} needs a {enum}")
            m = args[i].type.members[int(args[i].value)]
            return {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}[m]

        expect = {"counter": 2, "direct_counter": 1, "meter": 2, "direct_meter": 1, "register": 1,
                  "action_profile": 1, "action_selector": 3}[tname]
        if len(args) != expect:
            raise self.err(lt, f"{tname} takes {expect} constructor arguments, {len(args)} given")
        if tname in ("counter", "meter"):
            inst.size = cint(0, "size")
            inst.unit = unit(1, "CounterType" if tname == "counter" else "MeterType")
        elif tname == "direct_counter":
            inst.unit = unit(0, "CounterType")
        elif tname == "direct_meter":
            inst.unit = unit(0, "MeterType")
            if len(targs) != 1:
                raise self.err(lt, "direct_meter needs a result type: direct_meter<bit<W>>")
        elif tname == "register":
            inst.size = cint(0, "size")
            if not targs:
                raise self.err(lt, "register needs an element type: register<T>")
            et = targs[0]
            if not (isinstance(et, (ir.BitT, ir.IntT)) or (isinstance(et, ir.EnumT) and et.underlying is not None)):
                # p4c's bmv2 back end: "Only registers with bit or int types are currently supported"
                # (a serializable enum is its underlying bit<W> once its mid end has run)
                raise self.unsupported(lt, f"register<{show(et)}>: bmv2 has registers of bit<W>, int<W> and "
                                           "serializable enums only (p4c-bm2-ss rejects it too)")
        elif tname == "action_profile":
            inst.size = cint(0, "size")
        elif tname == "action_selector":
            a0 = args[0]
            if not isinstance(a0, ir.Const) or not isinstance(a0.type, ir.EnumT):
                raise self.err(lt, "action_selector needs a HashAlgorithm")
            inst.algorithm = a0.type.members[int(a0.value)]
            inst.size = cint(1, "size")
            inst.width = cint(2, "output width")
        size = getattr(inst, "size", None)
        if isinstance(size, int) and size > MAX_EXTERN_SIZE:  # its cells are held at once (bmv2: the same)
            raise self.unsupported(lt, f"{tname} of size {size} (softswitch holds at most {MAX_EXTERN_SIZE:,} cells or "
                                       "members per extern; P4Info's register size is a 32-bit field)")
        return inst

    def inline_control(self, sub: _SubControl, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        """Inline one ``sub.apply(args)``.  The instance's tables, actions and externs are made
        once, at its first apply; a later apply runs a copy of the same body.  An out/inout
        parameter is bound in place to its argument when every apply passes the same lvalue
        (``sub.same_args``) and the arguments do not overlap; otherwise it is bound to a
        variable of the instance's own, and each apply copies its own arguments in before the
        body and out after it (also on ``exit``), in parameter order, as the spec's
        copy-in/copy-out (P4_16 spec 6.8) says and p4c's inliner does (temporaries unless every
        call site is the same and nothing aliases)."""
        d = sub.decl
        self.check_param_names(_tree(d, "params"), f"control '{_name(d)}'")
        params = _trees(_tree(d, "params"), "param")
        if len(params) != len(arg_trees):
            raise self.err(t, f"'{sub.name}.apply' takes {len(params)} arguments, {len(arg_trees)} given")
        pre: list[ir.Stmt] = []
        bindings: dict[str, Any] = {}
        bound: list[Any] = []
        again = sub.body is not None
        for i, (p, a) in enumerate(zip(params, arg_trees)):
            with self.type_scope(sub.tenv):  # the parameter's type at the instance's type arguments
                pt = self.type_ref(_type_child(p))
            direc = _direction(p)
            e = self.expr(a, ctx, pt)
            pn = _name(p)
            if direc in ("inout", "out"):
                self.check_lvalue(e, e.loc)
                b: Any = e
            elif isinstance(e, ir.Const) and sub.applies <= 1:
                b = e
            else:
                prev = sub.applied_args[i] if again else None  # type: ignore[index]
                if isinstance(prev, ir.Const):
                    if not (isinstance(e, ir.Const) and e.value == prev.value):
                        raise self.unsupported(a, f"applying control instance '{sub.name}' again with a "
                                                  f"different value for constant argument '{pn}'")
                    b = prev
                else:
                    b = prev if isinstance(prev, ir.Var) else ir.Var(
                        pt, e.loc, ctx.block.fresh(f"{sub.prefix.split('.', 1)[-1]}.{pn}", pt))  # type: ignore
                    pre.append(ir.Assign(e.loc, b, e))
            bindings[pn] = b
            bound.append(b)
        outs = [i for i, p in enumerate(params) if _direction(p) in ("inout", "out")]
        # out/inout arguments that overlap (hdr and hdr.ipv4) cannot be bound in place: each
        # write would land in both
        aliased = _aliased_args([(i, bound[i]) for i in outs])
        if not again:
            copied = aliased if sub.same_args else set(outs)
            sub.copy_vars = {} if copied else None
        else:
            copied = set(sub.copy_vars or ())
            for i in outs:  # bound in place at the first apply: the body names that lvalue
                if i not in copied and not _same_lvalue(bound[i], sub.applied_args[i]):  # type: ignore[index]
                    raise self.unsupported(arg_trees[i], f"applying control instance '{sub.name}' again with "
                                                         f"a different {_direction(params[i])} argument for "
                                                         f"'{_name(params[i])}' (its first apply bound it in "
                                                         "place)")
            if aliased - copied:
                raise self.unsupported(t, f"applying control instance '{sub.name}' again with arguments that "
                                          "overlap where they did not before")
        for i in outs:
            if i not in copied and _direction(params[i]) == "out":
                # bound in place: the body names the argument itself, so its headers are made
                # invalid first, as a fresh out value's are (P4_16 "Calling conventions"; p4c's
                # inliner resets them the same way); its other fields keep what they hold
                pre.extend(_invalidate_headers(bound[i], bound[i].loc))
        post: list[ir.Stmt] = []
        for i in sorted(copied):
            e = self._freeze_indices(bound[i], pre, ctx)
            v = sub.copy_vars.get(i)  # type: ignore[union-attr]
            if v is None:
                v = sub.copy_vars[i] = ir.Var(e.type, e.loc, ctx.block.fresh(  # type: ignore[index,union-attr]
                    f"{sub.prefix.split('.', 1)[-1]}.{_name(params[i])}", e.type))
            # an out parameter starts as a fresh value (headers invalid), as p4c resets its temporary
            pre.append(ir.Assign(e.loc, v, e) if _direction(params[i]) == "inout" else ir.VarDecl(e.loc, v, None))
            post.append(ir.Assign(e.loc, e, v))
            bindings[_name(params[i])] = v
        if again:
            # the same instance: its tables, actions and externs are shared, the body runs again
            body = copy.deepcopy(sub.body)
        else:
            var_prefix = sub.prefix.split(".", 1)[-1] + "."
            bindings.update(sub.ctor)  # constructor parameters: constants, control instances passed
            with self.specialised("control", _name(d), sub.tenv, sub.loc):
                ctl = self.lower_control(d, prefix=sub.prefix, blk=ctx.block, bindings=bindings,
                                         order=sub.order, var_prefix=var_prefix,
                                         readonly=frozenset(b.name for p, b in zip(params, bound)
                                                            if _direction(p) == "in" and isinstance(b, ir.Var)))
            if _has_return(ctl.body):
                # 'return' leaves this control's apply only, not the control it is inlined into
                loc = ctl.body.loc
                flag = ir.Var(BOOL, loc, ctx.block.fresh(f"{var_prefix}$returned", BOOL))  # type: ignore[union-attr]
                ctl.body = ir.Block(loc, [ir.Assign(loc, flag, ir.Const(BOOL, loc, False))]
                                    + _returns_to_flag(ctl.body.stmts, flag, False))
            sub.may_exit = bool(copied) and self._may_exit(ctl.body, ctx)
            sub.body = body = ctl.body
            sub.applied_args = bound
        if post and sub.may_exit:  # exit still copies the arguments out (p4-spec PR #823)
            body = ir.CopyOutOnExit(body.loc, body, copy.deepcopy(post))  # type: ignore[union-attr]
        return _Inlined(ir.VoidT(), self.loc(t), pre + [body] + post)  # type: ignore[list-item]

    def _freeze_indices(self, e: Any, pre: list[ir.Stmt], ctx: _Ctx) -> Any:
        """Lvalue ``e`` with each run-time stack index evaluated once, into a variable assigned
        in ``pre``: the location an argument names is fixed when the control is applied, so the
        copy-out writes where the copy-in read even if the body changed the index's inputs."""
        if isinstance(e, ir.Member):
            inner = self._freeze_indices(e.expr, pre, ctx)
            return e if inner is e.expr else ir.Member(e.type, e.loc, inner, e.field)
        if isinstance(e, ir.Slice):
            inner = self._freeze_indices(e.expr, pre, ctx)
            return e if inner is e.expr else dataclasses.replace(e, expr=inner)
        if isinstance(e, ir.StackIndex):
            stack = self._freeze_indices(e.stack, pre, ctx)
            idx = e.index
            if not isinstance(idx, ir.Const):
                tmp = self.temp_var(idx.type, ctx, idx.loc)  # type: ignore[attr-defined]
                pre.append(ir.Assign(idx.loc, tmp, idx))
                idx = tmp
            return e if stack is e.stack and idx is e.index else ir.StackIndex(e.type, e.loc, stack, idx)
        return e

    def _may_exit(self, body: ir.Block, ctx: _Ctx) -> bool:
        """Can ``body`` execute ``exit`` (itself, or in an action it calls or a table it applies)?"""
        seen: set[str] = set()

        def walk(body: object) -> bool:
            for n in ir.iter_nodes(body):
                if isinstance(n, ir.Exit):
                    return True
                names: list[str] = []
                if isinstance(n, ir.ActionCall):
                    names = [n.action]
                elif isinstance(n, ir.ApplyTable):
                    tb = next((x for _, x in ctx.block.tables if x.name == n.table), None)  # type: ignore[union-attr]
                    names = [r.action for r in tb.actions] if tb is not None else []
                for a in names:
                    if a not in seen and a in self.actions:
                        seen.add(a)
                        if walk(self.actions[a].body):
                            return True
            return False

        return walk(body)


def _header_like(t: ir.Type) -> bool:
    """A header, a header union, a stack of either, or a struct of these (p4c's NestedStructs pass
    flattens it for bmv2): what a headers struct may hold."""
    if isinstance(t, ir.StackT):
        t = t.elem
    if isinstance(t, ir.StructT) and not t.union:
        return all(_header_like(f.type) for f in t.fields)
    return isinstance(t, ir.HeaderT) or (isinstance(t, ir.StructT) and t.union)
