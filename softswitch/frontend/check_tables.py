"""Tables: keys, actions lists, default actions, const entries, implementations and direct resources."""
from __future__ import annotations

import dataclasses

from lark import Tree

from . import ir
from .checkbase import (
    CheckerBase,
    _ActionRef,
    _Ctx,
    _key_name,
    _name,
    _Named,
    _p4info_name,
    _print_expr,
    _print_tree,
    _tok,
    _tree,
    _trees,
)
from .types import BOOL, InfIntT, show

# the keyset forms an entry may give each match kind, as p4c's bmv2 back end converts them
_KEYSET_FORMS = {"ternary": ("value", "mask", "default"), "lpm": ("value", "mask", "default"),
                 "range": ("value", "range", "default"), "optional": ("value", "default")}
_KEYSET_TEXT = {"value": "a value", "mask": "a value &&& mask", "range": "a range lo .. hi", "default": "_"}
# core.p4's and v1model.p4's match kinds: those bmv2 (and P4Runtime's FieldMatch) implement
_TARGET_MATCH_KINDS = ("exact", "ternary", "lpm", "range", "optional", "selector")


class TableChecker(CheckerBase):
    """Tables."""

    # ------------------------------------------------------------ tables
    def _key_effect_positions(self, k: Tree) -> None:
        """A table key may call functions, also ones with out/inout parameters: p4c's
        KeySideEffect computes such keys into temporaries before each lookup, in key order.  Inside
        the key expression a call with effects may stand where a statement's expression may have
        one (check_stmt); the key is checked as the expression of a call statement."""
        self._no_side_effects_in_conditionals(Tree("call_stmt", [k], meta=k.meta))  # type: ignore[attr-defined]

    def _key_writes(self, pre: list[ir.Stmt]) -> list:
        """The lvalue paths the function calls of a key's computation write (their out/inout
        arguments)."""
        from .check_blocks import _lvalue_path
        out = []
        for c in ir.iter_nodes(pre):
            if isinstance(c, ir.ActionCall) and c.action in self.actions:
                for a, p in zip(c.args, self.actions[c.action].params):
                    if p.direction in ("out", "inout"):
                        out.append(_lvalue_path(a))
        return out

    def table(self, t: Tree, ctx: _Ctx, pfx: str, internal_name: str | None = None) -> ir.Table:
        """``internal_name``: the name the table goes by until unused tables are removed, for a
        second table with another's control-plane name (check_blocks.settle_table_names)."""
        local = _name(t)
        anns = self.annotations(_tree(t, "annotations"))
        pname = internal_name or _p4info_name(anns, pfx, local)
        loc = self.loc(t)
        keys: list[ir.TableKey] = []
        actions: list[ir.TableActionRef] = []
        default: ir.DefaultAction | None = None
        entries_t: Tree | None = None
        entries_const = False
        size, size_given = 1024, False
        impl = counters = meters = None
        support_timeout = False
        prio_order: tuple[bool, int] = (True, 1)  # largest_priority_wins, priority_delta
        seen: set[str] = set()
        key_pre: dict[int, list[ir.Stmt]] = {}  # id(key expression) -> the function calls it makes
        for p in _trees(t):
            if p.data in ("annotations", "name"):
                continue
            pk = {"key_prop": "key", "actions_prop": "actions", "entries_prop": "entries"}.get(p.data)
            if pk is None:
                pk = _name(p)
            if pk in seen:
                raise self.err(p, f"table '{local}' has two '{pk}' properties")
            seen.add(pk)
            if p.data == "key_prop":
                for ke in _trees(p, "key_elem"):
                    self.key_subexprs = subexprs = {}
                    self._key_effect_positions(_trees(ke)[0])
                    saved_pre, ctx.prelude = ctx.prelude, []
                    try:
                        e = self.expr(_trees(ke)[0], ctx, None)
                    finally:
                        self.key_subexprs = None
                        pre, ctx.prelude = ctx.prelude, saved_pre
                    key_pre[id(e)] = pre
                    mk = str(_tree(ke, "name").children[0])
                    if mk not in self.match_kinds:
                        raise self.err(ke, f"unknown match kind '{mk}'")
                    if mk not in _TARGET_MATCH_KINDS:  # a program's own match_kind: P4Runtime/bmv2 have none
                        raise self.unsupported(ke, f"match kind '{mk}' declared by the program (bmv2 and "
                                                   f"softswitch match only {', '.join(_TARGET_MATCH_KINDS)})")
                    if isinstance(e.type, InfIntT) or not isinstance(e.type, (ir.BitT, ir.IntT, ir.BoolT,
                                                                                ir.EnumT, ir.ErrorT)):
                        raise self.err(ke, f"table key must be bit<W>/int<W>/bool/enum, not {show(e.type)}")
                    if isinstance(e.type, (ir.BitT, ir.IntT)) and e.type.width == 0:
                        raise self.err(ke, "a table key of width 0 matches nothing (P4Runtime has no 0-bit field)")
                    if isinstance(e.type, ir.EnumT) and e.type.underlying is None:
                        # P4Runtime has no bit width for them (p4c gives them a type name); not done
                        raise self.unsupported(ke, f"table key of type {show(e.type)} (use a bit<W> "
                                                   "or serializable enum key)")
                    kanns = self.annotations(_tree(ke, "annotations"))
                    nm = ir.find_annotation(kanns, "name")
                    if nm is not None and nm.args:
                        kname = str(nm.args[0])
                    else:  # named as p4c names it; p4c rejects what it cannot name
                        kname = _key_name(_trees(ke)[0], lambda lhs, f, seen=subexprs: key_field_name(seen.get(id(lhs)), f))
                        if kname is None:
                            raise self.err(ke, f"complex key expression '{_print_tree(_trees(ke)[0])}' "
                                               f"requires a @name annotation (as p4c requires)")
                    keys.append(ir.TableKey(e, mk, kname, kanns, self.loc(ke)))  # type: ignore[arg-type]
            elif p.data == "actions_prop":
                for ai in _trees(p, "action_item"):
                    aanns = self.annotations(_tree(ai, "annotations"))
                    ar = _tree(ai, "action_ref") or _tree(ai, "dot_action_ref")
                    an = _name(ar)
                    ent = self.lookup(an, ctx) if ar.data == "action_ref" else self.globals.get(an)
                    if not isinstance(ent, _ActionRef):
                        raise self.err(ai, f"'{an}' is not an action")
                    bound: list[ir.Expr] = []
                    if _tree(ar, "args") is not None and _trees(_tree(ar, "args")):
                        bound = self.bound_action_args(ai, ent.name, _trees(_tree(ar, "args")), ctx)
                    else:
                        unbound = next((p for p in self.actions[ent.name].params if p.direction), None)
                        if unbound is not None:  # p4c: "Parameter ... must be bound"
                            raise self.err(ai, f"parameter '{unbound.name}' of action '{an}' has a direction "
                                               f"({unbound.direction}): it must be bound in the actions list, "
                                               f"e.g. '{an}(...)'")
                    scope = "TABLE_AND_DEFAULT"
                    if ir.find_annotation(aanns, "defaultonly"):
                        scope = "DEFAULT_ONLY"
                    elif ir.find_annotation(aanns, "tableonly"):
                        scope = "TABLE_ONLY"
                    if any(a.action == ent.name for a in actions):
                        raise self.err(ai, f"action '{an}' listed twice")
                    pn = self.actions[ent.name].name
                    if any(self.actions[a.action].name == pn for a in actions):
                        raise self.err(ai, f"table '{local}' lists two actions named '{pn}'")
                    actions.append(ir.TableActionRef(ent.name, scope, aanns, self.loc(ai),  # type: ignore
                                                     args=bound))
            elif p.data == "entries_prop":
                entries_t = p
                entries_const = _tok(p, "CONST") is not None
            else:
                val_t = _trees(p)[-1]
                is_const = _tok(p, "CONST") is not None
                if pk == "default_action":
                    default = self.default_action(val_t, ctx, actions, is_const, local)
                elif pk == "size":
                    c = self.expr(val_t, ctx, None)
                    if not isinstance(c, ir.Const) or int(c.value) < 0:
                        raise self.err(p, "table size must be a constant >= 0")
                    # 0: p4c's default, 1024, in the bmv2 JSON and in P4Info alike
                    size, size_given = (int(c.value) or 1024), True
                elif pk == "implementation":
                    impl = self.table_extern(p, val_t, ctx, ("action_profile", "action_selector"), local)
                elif pk == "counters":
                    counters = self.table_extern(p, val_t, ctx, ("direct_counter",), local)
                elif pk == "meters":
                    meters = self.table_extern(p, val_t, ctx, ("direct_meter",), local)
                elif pk == "support_timeout":
                    c = self.expr(val_t, ctx, BOOL)
                    support_timeout = bool(getattr(c, "value", False))
                elif pk == "largest_priority_wins":
                    c = self.expr(val_t, ctx, BOOL)
                    if not isinstance(c, ir.Const):
                        raise self.err(p, "largest_priority_wins must be true or false")
                    prio_order = (bool(c.value), prio_order[1])
                elif pk == "priority_delta":
                    c = self.expr(val_t, ctx, None)
                    if not isinstance(c, ir.Const) or int(c.value) <= 0:
                        raise self.err(p, "priority_delta must be a positive constant")
                    prio_order = (prio_order[0], int(c.value))
                elif pk in ("psa_direct_counter", "psa_direct_meter", "psa_implementation"):
                    raise self.unsupported(p, f"table property '{pk}'")
                else:
                    self.warnings.append(f"{self.loc(p)}: warning: unknown table property '{pk}' ignored")
        sel_keys = [k for k in keys if k.match_kind == "selector"]
        if sel_keys and (impl is None or self.extern_kind(impl, ctx) != "action_selector"):
            # p4c accepts this (its issue1560-bmv2 sample): such keys are no match fields in its
            # P4Info and its bmv2 back end leaves them out of the table, so they are never read
            self.warnings.append(f"{sel_keys[0].loc}: warning: table '{local}' has selector keys but no "
                                 "action_selector implementation; they are ignored, as p4c ignores them")
            keys = [k for k in keys if k.match_kind != "selector"]
            sel_keys = []
        key_stmts: list[ir.Stmt] = []
        if any(key_pre.get(id(k.expr)) for k in keys):
            # p4c's KeySideEffect computes every key into a temporary before the apply when one
            # key calls a function; its LocalCopyPropagation then puts a key whose value is an
            # lvalue (a field, a slice of one) back into the table. So the other keys are
            # computed here, in key order, and a field key stays a field (read as 0 while its
            # header is invalid, as bmv2 reads it)
            from .check_blocks import _lvalue_path, _paths_overlap
            for i, k in enumerate(keys):
                if not key_pre.get(id(k.expr)) and _plain_lvalue(k.expr):
                    # copy propagation cannot move it past a later key's call that writes it:
                    # then it stays a temporary, read before that call
                    later = [w for k2 in keys[i + 1:] for w in self._key_writes(key_pre.get(id(k2.expr), []))]
                    if not any(_paths_overlap(_lvalue_path(k.expr), w) for w in later):
                        continue
                v = self.temp_var(k.expr.type, ctx, k.loc)
                key_stmts += key_pre.get(id(k.expr), [])
                key_stmts.append(ir.Assign(k.loc, v, k.expr))
                k.expr = v
        if default is None:
            if "NoAction" not in [self.actions[a.action].local_name for a in actions]:
                actions.append(ir.TableActionRef("NoAction", "DEFAULT_ONLY",
                                                 (ir.Annotation("defaultonly"),), loc, implicit=True))
            na = next(a.action for a in actions if self.actions[a.action].local_name == "NoAction")
            default = ir.DefaultAction(na, [], False, loc)
        elif impl is not None:
            self.warnings.append(f"{default.loc}: warning: table '{local}' is implemented with an action"
                                 f" profile/selector; default_action is not supported on this target "
                                 f"and is ignored (a miss runs no action, as on bmv2)")
        tbl = ir.Table(pname, local, keys, actions, default, None, entries_const, size, size_given, impl,
                       counters, meters, support_timeout, anns, loc, ir.id_annotation(anns), key_stmts)
        if entries_t is not None:
            if not tbl.keys and _trees(entries_t, "entry"):  # p4c: "Entries cannot be specified for a table with no key"
                raise self.err(entries_t, f"table '{local}' has entries but no key")
            tbl.const_entries = self.entries(entries_t, tbl, ctx, *prio_order)
        if sum(k.match_kind == "lpm" for k in keys) > 1:  # p4c's bmv2 back end (control.cpp)
            raise self.err(t, f"table '{local}' has more than one lpm key (not supported on this target, as "
                              "p4c's bmv2 back end says: one longest-prefix key per table)")
        for ref in (impl, counters, meters):
            if ref is not None:  # one direct resource per table, one selector's inputs: checked on the
                # tables that remain (check_shared_table_resources), as p4c's back end checks them
                self.extern_by_name(ref, ctx).tables.append(pname)
        return tbl

    def check_shared_table_resources(self, controls: list[ir.Control]) -> None:
        """A direct counter or meter attached to two tables, or an action selector shared by
        tables with different selector inputs, is an error -- among the tables p4c's back end
        sees, after its front end removed the unused ones: an unapplied table that shares one is
        no conflict (checked when each table was declared until 2026-12-06)."""
        tables = {t.name: t for c in controls for t in c.tables.values()}
        externs = {id(e): e for c in controls for e in c.externs.values()}
        for e in externs.values():
            if e.kind in ("direct_counter", "direct_meter") and len(e.tables) > 1:
                # p4c: "Direct counters cannot be attached to multiple tables"
                raise self.err(tables[e.tables[1]].loc, f"direct {e.kind.split('_')[-1]} '{e.name}' is already "
                                                        f"attached to table '{e.tables[0]}': a direct counter or "
                                                        "meter belongs to one table")
        first: dict[str, tuple[list[str], ir.Loc]] = {}
        for t in tables.values():
            if t.selector_keys and t.implementation is not None:
                inputs = [_print_expr(k.expr) for k in t.selector_keys]
                prev = first.setdefault(t.implementation, (inputs, t.loc))
                if prev[0] != inputs:
                    raise self.err(t.loc, f"action selector '{t.implementation}' is shared by tables with "
                                          f"different selector inputs (first used at {prev[1]})")

    def extern_kind(self, name: str, ctx: _Ctx) -> str:
        return self.extern_by_name(name, ctx).kind

    def extern_by_name(self, name: str, ctx: _Ctx) -> ir.ExternInstance:
        for _, e in ctx.block.externs:  # type: ignore[union-attr]
            if e.name == name:
                return e
        return self.global_externs[name]

    def table_extern(self, p: Tree, val_t: Tree, ctx: _Ctx, kinds: tuple[str, ...], table: str) -> str:
        """The P4Info name of the extern a table property names, or constructs in place."""
        if val_t.data == "ctor_call":
            return self.anonymous_table_extern(p, val_t, ctx, kinds, table)
        e = self.expr(val_t, ctx, None)
        if not isinstance(e, _Named) or not isinstance(e.entry, ir.ExternInstance) or e.entry.kind not in kinds:
            raise self.err(val_t, f"expected a {' or '.join(kinds)} instance")
        return e.entry.name

    def anonymous_table_extern(self, p: Tree, val_t: Tree, ctx: _Ctx, kinds: tuple[str, ...],
                               table: str) -> str:
        """``implementation = action_selector(...)``, ``counters = direct_counter(...)``: an
        instance of the table's own.  As in p4c, it takes its control-plane name from the
        property's ``@name`` (as written, without the control's prefix; a leading dot dropped),
        and its other annotations (``@max_group_size``...) from the property; without ``@name``
        P4Runtime has no name for it, which p4c rejects.  A direct meter constructed in place
        is what p4c's bmv2 back end rejects (it takes only a reference to a declaration)."""
        prop = _name(p)
        head = val_t.children[0]
        if isinstance(head, Tree):  # specialized_type: T<...>
            tname = str(head.children[0])
            targs = tuple(self.type_ref(x) for x in _trees(_tree(head, "type_args")))
        else:
            tname, targs = str(head), ()
        if tname not in kinds:
            raise self.err(val_t, f"expected a {' or '.join(kinds)} instance")
        if tname == "direct_meter":
            raise self.unsupported(val_t, f"a direct_meter constructed in the 'meters' property of table "
                                          f"'{table}' (declare it and refer to it by name; p4c's bmv2 "
                                          "back end rejects it too)")
        anns = self.annotations(_tree(p, "annotations"))
        nm = ir.find_annotation(anns, "name")
        if nm is None or not nm.args:
            raise self.unsupported(val_t, f"an anonymous '{prop}' of table '{table}' without a @name "
                                          "annotation (P4Runtime has no name for it; p4c rejects it too)")
        pname = str(nm.args[0]).removeprefix(".")
        arg_trees = _trees(_tree(val_t, "args")) if _tree(val_t, "args") is not None else []
        inst = self.extern_object(val_t, tname, targs, arg_trees, anns, pname, pname, ctx)  # type: ignore
        blk = ctx.block
        blk.externs.append((getattr(ctx, "table_key", ()), inst))  # type: ignore[union-attr]
        return inst.name

    def bound_action_args(self, ai: Tree, aname: str, arg_trees: list[Tree], ctx: _Ctx) -> list[ir.Expr]:
        """Arguments of an action in a table's actions list: they bind the action's leading
        directional parameters (P4_16 spec, table actions); directionless ones stay for the
        control plane."""
        act = self.actions[aname]
        if len(arg_trees) > len(act.params):
            raise self.err(ai, f"action '{act.local_name}' takes {len(act.params)} arguments")
        out = []
        for a, p in zip(arg_trees, act.params):
            if p.direction == "":
                raise self.err(a, f"parameter '{p.name}' of '{act.local_name}' is set by the control "
                                  "plane and cannot be bound in the actions list")
            e = self.expr(a, ctx, p.type)
            if p.direction in ("out", "inout"):
                self.check_lvalue(e, e.loc)
            out.append(e)
        if any(p.direction for p in act.params[len(out):]):
            raise self.err(ai, f"every directional parameter of '{act.local_name}' must be bound here")
        return out

    def _data_arg_trees(self, arg_trees: list[Tree], ref: ir.TableActionRef, ctx: _Ctx,
                        t: Tree | None = None) -> list[Tree]:
        """A default action or entry naming an action with bound arguments may repeat them (they
        must then be the same expressions as in the actions list, as p4c requires); named
        arguments (``a(y = 1, x = 2)``) are put in parameter order, the bound ones left out."""
        act = self.actions[ref.action]
        if any(a.data == "named_arg" for a in arg_trees):
            names = [p.name for p in act.params]
            bound = {p.name for p in act.params[:len(ref.args)]} if ref.args else set()
            given = {_name(a) for a in arg_trees if a.data == "named_arg"}
            if not bound & given:  # only the data parameters are named
                names = [n for n in names if n not in bound]
            ordered = self.positional_args(arg_trees, names, t if t is not None else arg_trees[0])
            if bound & given:
                self._same_as_bound(ordered[:len(bound)], ref, ctx)
                return ordered[len(bound):]
            return ordered
        if ref.args and len(arg_trees) == len(act.params):
            self._same_as_bound(arg_trees[:len(ref.args)], ref, ctx)
            return arg_trees[len(ref.args):]
        return arg_trees

    def _same_as_bound(self, arg_trees: list[Tree], ref: ir.TableActionRef, ctx: _Ctx) -> None:
        """Arguments that repeat an action's bound ones must be what the actions list binds."""
        act = self.actions[ref.action]
        for a, bound, p in zip(arg_trees, ref.args, act.params):
            if not _same_expr(self.expr(a, ctx, p.type), bound):
                raise self.err(a, f"argument '{_print_tree(a)}' for parameter '{p.name}' of "
                                  f"'{act.local_name}' does not match '{_print_expr(bound)}', its binding in the "
                                  "table's actions list")

    def default_action(self, val_t: Tree, ctx: _Ctx, actions: list[ir.TableActionRef], is_const: bool,
                       table: str) -> ir.DefaultAction:
        if val_t.data in ("call_expr",):
            callee = _trees(val_t)[0]
            arg_trees = _trees(_tree(val_t, "args")) if _tree(val_t, "args") is not None else []
        else:
            callee, arg_trees = val_t, []
        if callee.data not in ("ident", "dot_ident"):
            raise self.err(val_t, "default_action must be an action call")
        an = str(_tree(callee, "name").children[0])
        ent = self.lookup(an, ctx) if callee.data == "ident" else self.globals.get(an)
        if not isinstance(ent, _ActionRef):
            raise self.err(val_t, f"'{an}' is not an action")
        ref = next((a for a in actions if a.action == ent.name), None)
        if ref is None:
            raise self.err(val_t, f"default action '{an}' is not in the actions of table '{table}'")
        if ref.scope == "TABLE_ONLY":
            raise self.err(val_t, f"action '{an}' is @tableonly and cannot be the default action")
        act = self.actions[ent.name]
        dps = act.data_params
        arg_trees = self._data_arg_trees(arg_trees, ref, ctx, val_t)
        if len(arg_trees) != len(dps):
            raise self.err(val_t, f"action '{an}' takes {len(dps)} arguments, {len(arg_trees)} given")
        args = []
        for a, p in zip(arg_trees, dps):
            c = self.expr(a, ctx, p.type)
            if not isinstance(c, ir.Const):
                raise self.err(a, "default action arguments must be constants")
            args.append(c)
        return ir.DefaultAction(ent.name, args, is_const, self.loc(val_t))

    def entries(self, p: Tree, tbl: ir.Table, ctx: _Ctx, largest_wins: bool = True,
                delta: int = 1) -> list[ir.TableEntry]:
        mkeys = tbl.match_keys
        out = []
        n = len(_trees(p, "entry"))
        needs_prio = any(k.match_kind in ("ternary", "range", "optional") for k in mkeys)
        annotated: list[bool] = []
        given: list[int | None] = []  # 'priority = N:' of each entry
        bmv2_prio: list[tuple[int, int]] = []
        for i, en in enumerate(_trees(p, "entry")):
            kids = [c for c in _trees(en) if c.data not in ("annotations",)]
            prio_t = _tree(en, "entry_priority")
            kids = [c for c in kids if c.data != "entry_priority"]
            ks_t, ar = kids[0], kids[1]
            if ks_t.data == "tuple_keyset":
                comps = _trees(ks_t)
            elif ks_t.data == "list_expr":
                # a list expression is the entry's keys as they are (p4c keeps an entry's keyset
                # as a list of components and unifies its type with the key's tuple): a one-key
                # table's entry may be written `{(a ++ b)} : act(...)` (p4c's action-two-params)
                comps = _trees(_tree(ks_t, "expr_list"))
            else:
                comps = [ks_t]
            if len(comps) != len(mkeys):
                if len(comps) == 1 and comps[0].data == "default_keyset":
                    comps = comps * len(mkeys)
                else:
                    raise self.err(en, f"entry has {len(comps)} keys, table has {len(mkeys)}")
            kss = []
            for c, k in zip(comps, mkeys):
                ks = self.keyset(c, k.expr.type, ctx)
                allowed = _KEYSET_FORMS.get(k.match_kind)
                if allowed is not None and ks.kind not in allowed:
                    # p4c's bmv2 back end ("unsupported ternary/LPM/range/optional key expression"); a
                    # range on a ternary key matched its low bound only, a mask on a range key its value
                    raise self.err(c, f"'{_print_tree(c)}' cannot match the {k.match_kind} key '{k.name}': "
                                      f"{'an' if k.match_kind[0] in 'aeiou' else 'a'} {k.match_kind} key takes "
                                      f"{' or '.join(_KEYSET_TEXT[f] for f in allowed)}")
                if k.match_kind == "lpm":
                    w = k.width
                    if ks.kind == "mask":
                        m = ks.mask
                        plen = m.bit_count()
                        if m != ((1 << w) - 1) ^ ((1 << (w - plen)) - 1):
                            raise self.err(c, "lpm mask is not a prefix")
                        ks = ir.KeySet("lpm", ks.value, m, prefix_len=plen, loc=ks.loc)
                    elif ks.kind == "value":
                        ks = ir.KeySet("lpm", ks.value, (1 << w) - 1, prefix_len=w, loc=ks.loc)
                    elif ks.kind == "default":
                        ks = ir.KeySet("lpm", 0, 0, prefix_len=0, loc=ks.loc)
                elif k.match_kind == "exact" and ks.kind != "value":
                    raise self.err(c, "exact key needs a value")
                elif k.match_kind == "range" and ks.kind == "range":
                    w = k.width
                    lo, hi = ks.value & ((1 << w) - 1), ks.hi & ((1 << w) - 1)
                    if lo > hi:
                        # bmv2 (and P4Runtime) hold a range as two bit patterns, low <= high: a signed
                        # range across zero (-2 .. 2) has low 0xfe > high 0x02, and an empty one
                        # (5 .. 2) cannot be installed either; bmv2 refuses both when it loads the JSON
                        t = k.expr.type.underlying if isinstance(k.expr.type, ir.EnumT) else k.expr.type
                        half = 1 << (w - 1)
                        signed = isinstance(t, ir.IntT) and (lo ^ half) - half <= (hi ^ half) - half
                        raise self.unsupported(c, "a range entry whose bounds, as the key's bits, have low > high ("
                                               + ("a signed range across zero: split it at 0, e.g. -2 .. -1 and 0 .. 2"
                                                  if signed else "an empty range") + ")")
                kss.append(ks)
            an = _name(ar)
            ent = self.lookup(an, ctx) if ar.data == "action_ref" else self.globals.get(an)
            if not isinstance(ent, _ActionRef):
                raise self.err(ar, f"'{an}' is not an action")
            ref = next((a for a in tbl.actions if a.action == ent.name), None)
            if ref is None:
                raise self.err(ar, f"action '{an}' is not an action of table '{tbl.local_name}'")
            if ref.scope == "DEFAULT_ONLY":
                raise self.err(ar, f"action '{an}' is @defaultonly and cannot be used in an entry")
            act = self.actions[ent.name]
            arg_trees = _trees(_tree(ar, "args")) if _tree(ar, "args") is not None else []
            arg_trees = self._data_arg_trees(arg_trees, ref, ctx, ar)
            if len(arg_trees) != len(act.data_params):
                raise self.err(ar, f"action '{an}' takes {len(act.data_params)} arguments")
            args = []
            for a, prm in zip(arg_trees, act.data_params):
                c = self.expr(a, ctx, prm.type)
                if not isinstance(c, ir.Const):
                    raise self.err(a, "entry action arguments must be constants")
                args.append(c)
            # annotations may stand before the entry or after its action ('... : a(1) @priority(3);')
            eanns = tuple(x for at in _trees(en, "annotations") for x in self.annotations(at))
            pa = ir.find_annotation(eanns, "priority")
            annotated.append(pa is not None)
            if prio_t is not None:
                if tbl.entries_const:
                    # p4c's EntryPriorities pass: priorities belong to 'entries' without const
                    raise self.err(prio_t, f"table '{tbl.local_name}' has const entries, which cannot have "
                                           "priorities (declare 'entries' without const)")
                pc = self.expr(_trees(prio_t)[0], ctx, None)
                if not isinstance(pc, ir.Const) or int(pc.value) < 0:
                    raise self.err(prio_t, "priority must be a non-negative constant")
                prio = int(pc.value)
                given.append(prio)
            else:
                given.append(None)
                # p4c's bmv2 back end: an entry's bmv2 priority is its @priority(N), otherwise its
                # position (1, 2, ...); bmv2 lets the smallest number win
                prio = i + 1
                if pa is not None and pa.args:
                    try:
                        prio = int(str(pa.args[0]), 0)
                    except ValueError:
                        raise self.err(en, f"@priority needs an integer, not '{pa.args[0]}'") from None
                bmv2_prio.append((prio, i))
            out.append(ir.TableEntry(kss, ent.name, args, prio, self.loc(en),
                                     is_const=_tok(en, "CONST") is not None))
        if any(g is not None for g in given):
            self._entry_priorities(p, tbl, out, given, annotated, needs_prio, largest_wins, delta)
        elif needs_prio and (tbl.entries_const or any(annotated)):
            # const entries (p4c assigns no priorities to them) or @priority annotations, which
            # p4c's bmv2 back end takes as bmv2 priorities: P4Runtime priorities (higher wins) in
            # bmv2's order, smallest @priority first, the others by position, ties in textual order
            for rank, (_, i) in enumerate(sorted(bmv2_prio)):
                out[i].priority = n - rank
        elif needs_prio:
            # 'entries' without any priority: p4c numbers them from 1 in steps of priority_delta,
            # the first entry ranking highest either way (P4 spec, "Entry priorities")
            for i, e in enumerate(out):
                e.priority = 1 + (n - 1 - i) * delta
        else:
            for e in out:
                e.priority = 0
        for e in out:
            if not 0 <= e.priority < 1 << 31:  # a P4Runtime priority is an int32
                raise self.err(e.loc, f"entry priority {e.priority} does not fit P4Runtime's 32-bit priority")
        return out

    def _entry_priorities(self, p: Tree, tbl: ir.Table, out: list[ir.TableEntry],
                          given: list[int | None], annotated: list[bool], needs_prio: bool,
                          largest_wins: bool, delta: int) -> None:
        """Entries with 'priority = N:' (P4_16 spec "Entry priorities", as p4c's EntryPriorities
        pass computes them): the first entry must have one; an entry without one gets the previous
        entry's minus ``priority_delta`` (``largest_priority_wins``, the default) or plus it.  The
        P4Runtime priority (higher wins) is the P4 one when the largest wins, else mirrored."""
        if not needs_prio:
            raise self.err(p, f"table '{tbl.local_name}': its key match kinds (exact/lpm) do not use "
                              "priorities, but entries give them")
        if any(annotated):
            raise self.unsupported(p, "@priority annotations together with 'priority =' in one table's "
                                      "entries")
        if given[0] is None:
            raise self.err(p, f"table '{tbl.local_name}': the first entry must have a priority "
                              "(some entries give one)")
        prios: list[int] = []
        cur = 0
        seen: dict[int, int] = {}
        for i, g in enumerate(given):
            if g is not None:
                cur = g
                if prios and (cur > prios[-1] if largest_wins else cur < prios[-1]):
                    self.warnings.append(f"{out[i].loc}: warning: entry priorities out of order: {prios[-1]} "
                                         f"then {cur} (largest_priority_wins = {str(largest_wins).lower()})")
            elif cur < 1:
                raise self.err(p, f"table '{tbl.local_name}': priority overflow: an entry after priority "
                                  f"{prios[-1]} would get {cur} with priority_delta {delta}")
            if cur in seen:
                self.warnings.append(f"{out[i].loc}: warning: entries {seen[cur] + 1} and {i + 1} of table "
                                     f"'{tbl.local_name}' have the same priority {cur}")
            seen.setdefault(cur, i)
            prios.append(cur)
            cur = cur - delta if largest_wins else cur + delta
        if min(prios) < 1:
            raise self.err(p, f"table '{tbl.local_name}': priority 0 cannot be installed (P4Runtime "
                              "priorities start at 1)")
        lo, hi = min(prios), max(prios)
        for e, pr in zip(out, prios):
            e.priority = pr if largest_wins else lo + hi - pr


def _plain_lvalue(e: ir.Expr) -> bool:
    """A variable or a field, stack element (constant index) or slice of one: the keys p4c's copy
    propagation puts back into a table after its KeySideEffect lifted them."""
    while isinstance(e, (ir.Member, ir.Slice, ir.StackIndex)):
        if isinstance(e, ir.StackIndex):
            if not isinstance(e.index, ir.Const):
                return False
            e = e.stack
        else:
            e = e.expr
    return isinstance(e, (ir.Var, ir.ActionParam))


def key_field_name(base: ir.Expr | None, field: str) -> str:
    """A key member's name part: the field's own @name (p4c's external name) when the member's
    base ``base`` (as the key's check made it) is a header or struct with one, else the field."""
    t = base.type if base is not None else None
    for f in t.fields if isinstance(t, (ir.StructT, ir.HeaderT)) else ():
        if f.name == field:
            nm = ir.find_annotation(f.annotations, "name")
            return str(nm.args[0]) if nm is not None and nm.args else field
    return field


def _same_expr(a: object, b: object) -> bool:
    """Whether two IR expressions are the same expression (node by node; types and locations
    aside)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_expr(x, y) for x, y in zip(a, b))
    if not dataclasses.is_dataclass(a):
        return a == b
    return all(_same_expr(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
               if f.name not in ("loc", "type"))
