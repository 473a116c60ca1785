"""Expressions: typing, implicit conversions, constant folding, names, calls and methods."""
from __future__ import annotations

import copy
from typing import Any

from lark import Token, Tree

from . import ir
from .checkbase import (
    _BINOPS,
    _BUILTIN_FUNCS,
    _DEPRECATED_FUNCS,
    _PARSER_FUNCS,
    _PARSER_REASON,
    CheckerBase,
    WidthTooLarge,
    _ActionRef,
    _Ctx,
    _Decl,
    _direction,
    _ExternFunc,
    _FuncRef,
    _GenericFuncRef,
    _Inlined,
    _Method,
    _name,
    _Named,
    _param_names,
    _ParamEntry,
    _parse_int,
    _SpecBlock,
    _StmtMarker,
    _SubControl,
    _TableRef,
    _tree,
    _trees,
    _type_child,
    _type_params,
    _VerifyMarker,
)
from .types import BIT32, BOOL, INFINT, InfIntT, fold_binary, is_numeric, show, wrap

_SIZE_METHODS = ("sizeInBits", "sizeInBytes", "minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")
# the ones p4c folds for a value or type of any non-extern type (TypeInference, MethodCallExpression)
_MIN_MAX_SIZE = _SIZE_METHODS[2:]


def _size_bits(t: ir.Type, largest: bool) -> int:
    """Bits of a serializable type as p4c's ``TypeMap::widthBits`` counts them: a varbit as 0 or, with
    ``largest``, its maximum; a header_union as its widest member."""
    if isinstance(t, ir.VarbitT):
        return t.max_width if largest else 0
    if isinstance(t, ir.StructT) and t.union:
        return max((_size_bits(f.type, largest) for f in t.fields), default=0)
    if isinstance(t, (ir.HeaderT, ir.StructT)):
        return sum(_size_bits(f.type, largest) for f in t.fields)
    if isinstance(t, ir.StackT):
        return t.size * _size_bits(t.elem, largest)
    return ir.type_width(t)


def _parser_forbidden_call(node: object) -> ir.BuiltinCall | ir.ExternCall | None:
    """The first extern call under ``node`` that p4c's bmv2 back end rejects in a parser state."""
    return next((n for n in ir.iter_nodes(node) if isinstance(n, ir.ExternCall)
                 or (isinstance(n, ir.BuiltinCall) and n.name not in _PARSER_FUNCS)), None)


def _has_varbit(t: ir.Type) -> bool:
    if isinstance(t, ir.VarbitT):
        return True
    if isinstance(t, (ir.HeaderT, ir.StructT)):
        return any(_has_varbit(f.type) for f in t.fields)
    if isinstance(t, ir.StackT):
        return _has_varbit(t.elem)
    return False


def _bits_struct(t: ir.Type) -> bool:
    """A struct a ``lookahead`` can fill from the packet's next bits, as p4c's ExpandLookahead
    does: every leaf a bit<W>, int<W>, bool or serializable enum (nested structs allowed)."""
    if not isinstance(t, ir.StructT) or t.union:
        return False
    for f in t.fields:
        ft = f.type
        if not (isinstance(ft, (ir.BitT, ir.IntT, ir.BoolT)) or _bits_struct(ft)
                or (isinstance(ft, ir.EnumT) and ft.underlying is not None)):
            return False
    return True


def _is_hdr_like(t: Any) -> bool:
    """A header or a header_union: the types ``{#}`` can have."""
    return isinstance(t, ir.HeaderT) or _is_union(t)


def _is_union(t: Any) -> bool:
    return isinstance(t, ir.StructT) and t.union


def _untyped_literal(t: Any) -> bool:
    """An integer literal without a width (``1``, ``-1``), the kind p4c cannot type on both sides
    of a ``?:``."""
    if isinstance(t, Tree) and t.data == "neg":
        t = _trees(t)[0]
    if not (isinstance(t, Tree) and t.data == "number"):
        return False
    try:
        return _parse_int(str(t.children[0]))[1] is None
    except ValueError:
        return False


def _snap_tree(a: Tree) -> Tree:
    """``a`` as an argument taken into a temporary (check_expr.arg_snapshot); a list or struct
    initialiser element by element, so the callee still sees a list (hash and checksum data);
    literals and names of constants as they are."""
    if a.data in ("number", "true_", "false_", "string", "type_member", "error_member", "invalid_header",
                  "dots", "spec_type_member"):
        return a
    if a.data == "list_expr":
        el = _tree(a, "expr_list")
        if el is None:
            return a
        return Tree("list_expr", [Tree("expr_list", [_snap_tree(x) if isinstance(x, Tree) else x
                                                      for x in el.children], meta=el.meta)], meta=a.meta)
    if a.data == "struct_expr":
        kids = [Tree("kv_pair", c.children[:-1] + [_snap_tree(c.children[-1])], meta=c.meta)
                if isinstance(c, Tree) and c.data == "kv_pair" and isinstance(c.children[-1], Tree) else c
                for c in a.children]
        return Tree("struct_expr", kids, meta=a.meta)
    return Tree("arg_snap", [a], meta=a.meta)


def _is_tree(x: Any, kind: str) -> bool:
    return isinstance(x, Tree) and x.data == kind


def _has_dots(t: Tree) -> bool:
    return any(isinstance(c, Token) and c.type == "DOTS" for c in t.children)


class _FnVoid(ir.Expr):
    """The value of a void function call (the call itself is in the statement's prelude)."""

    __slots__ = ()


class ExprChecker(CheckerBase):
    """Expressions and calls."""

    # ------------------------------------------------------------ expressions
    def expr(self, t: Any, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        e = self._expr(t, ctx, expected)
        if self.key_subexprs is not None:
            self.key_subexprs[id(t)] = e
        if expected is not None:
            e = self.coerce(e, expected, t)
        return e

    def coerce(self, e: ir.Expr, expected: Any, node: Any) -> ir.Expr:
        """Give an untyped literal the expected type; check other types match."""
        if isinstance(expected, (InfIntT, ir.ExternT)):
            return e
        if isinstance(e.type, InfIntT):
            if isinstance(expected, (ir.BitT, ir.IntT)):
                assert isinstance(e, ir.Const)
                v = int(e.value)
                if isinstance(expected, ir.BitT) and v < 0:
                    v = wrap(v, expected)
                return ir.Const(expected, e.loc, wrap(v, expected))
            if isinstance(expected, ir.EnumT) and expected.underlying is not None:
                raise self.err(node, f"cannot use an integer where {show(expected)} is expected")
            raise self.err(node, f"type mismatch: expected {show(expected)}, got an integer")
        if isinstance(expected, ir.HeaderT) and isinstance(e, ir.ListExpr):
            return self.list_to_struct(e, expected, node)
        if isinstance(expected, ir.StructT) and isinstance(e, ir.ListExpr):
            return self.list_to_struct(e, expected, node)
        if isinstance(expected, (ir.HeaderT, ir.StructT)) and isinstance(e, ir.StructInit) \
                and isinstance(e.type, ir.StructT) and e.type.name == "":
            return self.list_to_struct(ir.ListExpr(e.type, e.loc, [v for _, v in e.fields]), expected, node,
                                       [n for n, _ in e.fields])
        if isinstance(e.type, ir.EnumT) and e.type.underlying is not None and e.type.underlying == expected:
            # serializable enums convert implicitly to their underlying type
            return ir.Const(expected, e.loc, e.value) if isinstance(e, ir.Const) else ir.Cast(expected, e.loc, e)
        if e.type != expected:
            raise self.err(node, f"type mismatch: expected {show(expected)}, got {show(e.type)}")
        return e

    def list_to_struct(self, e: ir.ListExpr, t: ir.HeaderT | ir.StructT, node: Any,
                       names: list[str] | None = None) -> ir.Expr:
        if names is not None:
            by = dict(zip(names, e.elems))
            if set(by) != {f.name for f in t.fields}:
                raise self.err(node, f"initializer fields do not match {t.name}")
            elems = [by[f.name] for f in t.fields]
        else:
            elems = e.elems
        if len(elems) != len(t.fields):
            raise self.err(node, f"{t.name} has {len(t.fields)} fields, initializer has {len(elems)}")
        fields = [(f.name, self.coerce(x, f.type, node)) for f, x in zip(t.fields, elems)]
        return ir.StructInit(t, e.loc, fields)

    def _expr(self, t: Any, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        if isinstance(t, Token):
            raise self.err(t, f"unexpected '{t}'")
        k = t.data
        loc = self.loc(t)
        if k == "number":
            try:
                v, ty = _parse_int(str(t.children[0]))
            except WidthTooLarge as e:
                raise self.unsupported(t, str(e)) from None
            return ir.Const(ty if ty is not None else INFINT, loc, v)  # type: ignore[arg-type]
        if k == "dontcare_arg":
            # ``_`` as an out argument: a fresh variable whose value is dropped
            store = ctx.block if ctx.block is not None else getattr(ctx, "action_block", None)
            if expected is None or store is None:
                raise self.unsupported(t, "'_' argument here (only for a parameter of known type)")
            return ir.Var(expected, loc, store.fresh(getattr(ctx, "var_prefix", "") + "$dontcare", expected))
        if k == "true_":
            return ir.Const(BOOL, loc, True)
        if k == "false_":
            return ir.Const(BOOL, loc, False)
        if k == "string":
            s = str(t.children[0])[1:-1]
            return ir.Const(ir.StringT(), loc, bytes(s, "utf-8").decode("unicode_escape"))
        if k in ("ident", "dot_ident"):
            return self.ident(t, str(_tree(t, "name").children[0]), ctx)
        if k == "type_member":
            tname = str(t.children[0])
            mem = str(_tree(t, "mname").children[0])
            e = self.globals.get(tname)
            if isinstance(e, tuple) and e[0] == "type" and isinstance(e[1], ir.EnumT) and mem in e[1].members:
                return ir.Const(e[1], loc, e[1].value_of(mem))
            if isinstance(e, tuple) and e[0] == "type" and mem in _MIN_MAX_SIZE:
                # T.minSizeInBits(): a type's size, folded (the placeholder value is never evaluated)
                return _Method(ir.VoidT(), loc, ir.Var(e[1], loc, f"${tname}"), mem)
            if isinstance(e, tuple) and e[0] == "type" and isinstance(e[1], ir.EnumT):
                raise self.err(t, f"enum {tname} has no member '{mem}'")
            raise self.err(t, f"'{tname}.{mem}' is not an enum member")
        if k == "spec_type_member":  # Name<A, ...>.apply of a generic parser or control type
            st = _trees(t)[0]
            tname = str(st.children[0])
            d = self.globals.get(tname)
            if not (isinstance(d, _Decl) and d.kind in ("control", "parser") and not d.builtin):
                raise self.err(t, f"'{tname}<...>.{_tree(t, 'mname').children[0]}' is not a parser or control "
                                  "application")
            named = _Named(ir.VoidT(), loc, tname, _SpecBlock(d, st))
            return _Method(ir.VoidT(), loc, named, str(_tree(t, "mname").children[0]))
        if k == "error_member":
            mem = str(_tree(t, "mname").children[0])
            if mem not in self.errors:
                raise self.err(t, f"unknown error '{mem}'")
            return ir.Const(ir.ErrorT(), loc, self.errors.index(mem))
        if k == "member":
            return self.member(t, ctx)
        if k == "index":
            base = self.expr(_trees(t)[0], ctx, None)
            if isinstance(base.type, ir.TupleT):
                return self.tuple_index(t, base, ctx)
            if not isinstance(base.type, ir.StackT):
                if isinstance(base.type, (ir.BitT, ir.IntT)):
                    raise self.err(t, "bit index: use a slice x[i:i]")
                raise self.err(t, f"cannot index a value of type {show(base.type)}")
            idx = self.expr(_trees(t)[1], ctx, None)
            if isinstance(idx.type, ir.EnumT) and isinstance(idx.type.underlying, ir.BitT):
                idx = ir.Const(idx.type.underlying, idx.loc, int(idx.value)) if isinstance(idx, ir.Const) \
                    else ir.Cast(idx.type.underlying, idx.loc, idx)  # p4c takes a serializable enum index
            if not isinstance(idx.type, (InfIntT, ir.BitT, ir.IntT)):  # p4c: "Array index ... must be an integer"
                raise self.err(t, f"stack index must be an integer (bit<W>, int<W> or int), not {show(idx.type)}")
            if isinstance(idx.type, ir.BitT) and idx.type.newtype is not None and not isinstance(idx, ir.Const):
                # p4c: a non-constant index must be bit<W>/int<W>/int or a serializable enum
                raise self.err(t, f"stack index must be an integer (bit<W>, int<W> or int), not the type "
                                  f"'{idx.type.newtype.name}' (p4c: \"Array index ... must be an integer\")")
            if isinstance(idx.type, InfIntT):
                idx = ir.Const(BIT32, idx.loc, int(idx.value))
            if isinstance(idx, ir.Const):
                if not 0 <= int(idx.value) < base.type.size:
                    raise self.err(t, f"index {idx.value} out of range for {show(base.type)}")
            elif not isinstance(idx.type, (ir.BitT, ir.IntT)):  # a negative int<W> is out of range
                raise self.err(t, f"stack index must be bit<W> or int<W>, not {show(idx.type)}")
            return ir.StackIndex(base.type.elem, loc, base, idx)
        if k == "slice":
            base = self.enum_value(self.expr(_trees(t)[0], ctx, None), t)
            hi = self.expr(_trees(t)[1], ctx, None)
            lo = self.expr(_trees(t)[2], ctx, None)
            if not isinstance(hi, ir.Const) or not isinstance(lo, ir.Const):
                raise self.err(t, "slice bounds must be constants")
            if not isinstance(base.type, (ir.BitT, ir.IntT)):
                raise self.err(t, f"cannot slice a value of type {show(base.type)}")
            h, lw = int(hi.value), int(lo.value)
            if not 0 <= lw <= h < base.type.width:
                raise self.err(t, f"slice [{h}:{lw}] out of range for {show(base.type)}")
            if isinstance(base, ir.Const):
                return ir.Const(ir.BitT(h - lw + 1), loc, (int(base.value) >> lw) & ((1 << (h - lw + 1)) - 1))
            return ir.Slice(ir.BitT(h - lw + 1), loc, base, h, lw)
        if k in _BINOPS:
            return self.binary(_BINOPS[k], t, ctx, expected)
        if k == "bin_concat":
            a = self.enum_value(self.left_operand(_trees(t)[0], _trees(t)[1], ctx, None), t)
            b = self.enum_value(self.expr(_trees(t)[1], ctx, None), t)
            for x in (a, b):
                if not isinstance(x.type, (ir.BitT, ir.IntT)):
                    raise self.err(t, f"'++' needs bit<W>/int<W> operands, got {show(x.type)}")
            w = a.type.width + b.type.width  # type: ignore[union-attr]
            rt = ir.IntT(w) if isinstance(a.type, ir.IntT) else ir.BitT(w)
            if isinstance(a, ir.Const) and isinstance(b, ir.Const):
                v = ((int(a.value) & ((1 << a.type.width) - 1)) << b.type.width) | \
                    (int(b.value) & ((1 << b.type.width) - 1))
                return ir.Const(rt, loc, wrap(v, rt))
            return ir.Concat(rt, loc, a, b)
        if k in ("not_", "bnot", "neg"):
            op = {"not_": "!", "bnot": "~", "neg": "-"}[k]
            # '~' takes no width from the context: p4c refuses it on an untyped integer (postorder(Cmpl))
            a = self.expr(_trees(t)[0], ctx, BOOL if op == "!" else None if op == "~" else expected)
            if op == "!":
                if not isinstance(a.type, ir.BoolT):
                    raise self.err(t, f"'!' needs a bool, got {show(a.type)}")
                if isinstance(a, ir.Const):
                    return ir.Const(BOOL, loc, not a.value)
                return ir.Unary(BOOL, loc, op, a)
            if not is_numeric(a.type):
                raise self.err(t, f"'{op}' needs a bit<W>/int<W>, got {show(a.type)}")
            if isinstance(a, ir.Const):
                if isinstance(a.type, InfIntT) and op == "~":
                    raise self.err(t, "'~' on an integer literal of unknown width")
                v = -int(a.value) if op == "-" else ~int(a.value)
                return ir.Const(a.type, loc, wrap(v, a.type))
            return ir.Unary(a.type, loc, op, a)
        if k == "cast":
            tt = self.type_ref(_trees(t)[0])
            if isinstance(tt, (ir.HeaderT, ir.StructT)) and \
                    _trees(t)[1].data in ("list_expr", "struct_expr", "invalid_header"):
                return self.expr(_trees(t)[1], ctx, tt)  # (h_t) { 1, 2 }, (h_t){#}: typed initialisers
            if _trees(t)[1].data == "dots":
                return self.expr(_trees(t)[1], ctx, tt)  # (T) ...: T's default value
            a = self.expr(_trees(t)[1], ctx, None)
            return self.cast(a, tt, t)
        if k == "mux":
            c = self.expr(_trees(t)[0], ctx, BOOL)
            if ctx.prelude is not None and not isinstance(c, ir.Const) and \
                    (self.has_effect_call(_trees(t)[1]) or self.has_effect_call(_trees(t)[2])):
                return self.mux_with_calls(c, t, ctx, expected)
            # p4c folds a constant condition first; else two untyped literals have no width
            if not isinstance(c, ir.Const) and _untyped_literal(_trees(t)[1]) and _untyped_literal(_trees(t)[2]):
                raise self.err(t, "'?:' between two arbitrary-precision integers: give one of them a width "
                                  "(p4c: \"Width must be specified for at least one of ...\")")
            const = isinstance(c, ir.Const)
            a = self.dead_if(const and not c.value, self.expr, _trees(t)[1], ctx, expected)  # type: ignore[union-attr]
            b = self.dead_if(const and bool(c.value), self.expr, _trees(t)[2], ctx, expected)  # type: ignore[union-attr]
            a, b = self.unify(a, b, t)
            if isinstance(c, ir.Const):
                return a if c.value else b
            if isinstance(a.type, InfIntT):
                raise self.err(t, "cannot infer the width of '?:' operands")
            return ir.Mux(a.type, loc, c, a, b)
        if k == "list_expr":
            el = _tree(t, "expr_list")
            items = _trees(el) if el is not None else []
            if any(_is_tree(x, "dots") for x in items):
                return self.list_with_dots(t, items, ctx, expected)
            tys: list = [None] * len(items)
            if isinstance(expected, (ir.HeaderT, ir.StructT)) and len(expected.fields) == len(items):
                tys = [f.type for f in expected.fields]  # '{ {a, 1}, b }': nested lists typed too
            if isinstance(expected, ir.TupleT):  # a list typed by its context (spec 8.12)
                if len(expected.elems) != len(items):
                    raise self.err(t, f"{show(expected)} has {len(expected.elems)} elements, the list "
                                      f"{len(items)}")
                elems = self.elements(items, list(expected.elems), ctx)
                return ir.ListExpr(expected, loc, [self.coerce(e, x, t) for e, x in zip(elems, expected.elems)])
            elems = self.elements(items, tys, ctx)
            if isinstance(expected, (ir.HeaderT, ir.StructT)):
                return self.list_to_struct(ir.ListExpr(ir.TupleT(()), loc, elems), expected, t)
            for x in elems:
                if isinstance(x.type, InfIntT):
                    raise self.err(x.loc, "cannot infer the width of an integer in a list; give it a width")
            return ir.ListExpr(ir.TupleT(tuple(x.type for x in elems)), loc, elems)
        if k == "struct_expr":
            pairs = [(_name(p), p) for p in _trees(t, "kv_pair")]
            dots = _has_dots(t)
            if dots and (not isinstance(expected, (ir.HeaderT, ir.StructT)) or _is_union(expected)):
                raise self.unsupported(t, "'...' in a structure initializer "
                                          + ("of a header_union" if _is_hdr_like(expected)
                                             else "whose type is not known (write (T){...})"))
            if isinstance(expected, (ir.HeaderT, ir.StructT)):
                names = [n for n, _ in pairs]
                fts = []
                for n, p in pairs:
                    try:
                        fts.append(expected.field_type(n))
                    except KeyError:
                        raise self.err(p, f"{expected.name} has no field '{n}'") from None
                if len(set(names)) != len(names):
                    dup = next(n for n in names if names.count(n) > 1)
                    raise self.err(t, f"field '{dup}' initialised twice")
                elems = self.elements([p.children[-1] for _, p in pairs], fts, ctx)
                if dots:  # '{a = 1, ...}': every other field gets its type's default value
                    for f in expected.fields:
                        if f.name not in names:
                            names.append(f.name)
                            elems.append(self.default_value(f.type, t))
                return self.list_to_struct(ir.ListExpr(ir.TupleT(()), loc, elems), expected, t, names)
            vals = list(zip([n for n, _ in pairs],
                            self.elements([p.children[-1] for _, p in pairs], [None] * len(pairs), ctx)))
            return ir.StructInit(ir.StructT("", tuple(ir.Field(n, v.type) for n, v in vals)), loc, vals)
        if k in ("call_expr", "generic_call"):
            return self.call(t, ctx)
        if k in ("arg_snap", "arg_snap_inout"):
            return self.arg_snapshot(t, ctx, expected)
        if k == "invalid_header":
            if _is_hdr_like(expected):
                return ir.InvalidHeader(expected, loc)  # type: ignore[arg-type]
            if expected is None:
                raise self.unsupported(t, "'{#}' where no header or header_union type is known "
                                          "(write (H){#})")
            raise self.err(t, f"'{{#}}' is an invalid header or header_union, {show(expected)} expected")
        if k == "dots":
            if expected is None:
                raise self.unsupported(t, "'...' where no type is known (write (T)...)")
            return self.default_value(expected, t)
        if k == "this_":
            raise self.unsupported(t, "'this'")
        if k == "ctor_call":
            raise self.err(t, "constructor call in an expression")
        raise self.unsupported(t, k.replace("_", " "))

    def validity(self, x: ir.Expr, loc: ir.Loc) -> ir.Expr:
        """``x.isValid()`` of a header, or of a header_union (valid when one of its members is)."""
        if isinstance(x.type, ir.HeaderT):
            return ir.IsValid(BOOL, loc, x)
        any_valid: ir.Expr | None = None
        for f in x.type.fields:  # type: ignore[union-attr]
            v = ir.IsValid(BOOL, loc, ir.Member(f.type, loc, x, f.name))
            any_valid = v if any_valid is None else ir.Binary(BOOL, loc, "||", any_valid, v)
        return any_valid if any_valid is not None else ir.Const(BOOL, loc, False)

    def invalid_compare(self, op: str, x: ir.Expr, loc: ir.Loc) -> ir.Expr:
        """``x == {#}`` is ``!x.isValid()``, ``x != {#}`` is ``x.isValid()`` (P4_16: two headers
        are equal when both are invalid, or both valid with equal fields; unions likewise)."""
        v = self.validity(x, loc)
        if op == "!=":
            return v
        if isinstance(v, ir.Const):
            return ir.Const(BOOL, loc, not v.value)
        return ir.Unary(BOOL, loc, "!", v)

    def default_value(self, ty: Any, node: Any) -> ir.Expr:
        """The default value of a type (P4_16 1.2.5, "Initializing with default values"): 0 for
        bit/int (also a serializable enum, named or not), false, the first member of a plain
        enum, error.NoError, the empty string; an invalid header or header_union, a stack of
        invalid headers; a struct or tuple of its fields' defaults.  varbit has none."""
        loc = self.loc(node)
        if isinstance(ty, (ir.BitT, ir.IntT)):
            return ir.Const(ty, loc, 0)
        if isinstance(ty, ir.BoolT):
            return ir.Const(BOOL, loc, False)
        if isinstance(ty, InfIntT):
            return ir.Const(INFINT, loc, 0)
        if isinstance(ty, ir.EnumT):
            return ir.Const(ty, loc, 0 if ty.underlying is not None else ty.value_of(ty.members[0]))
        if isinstance(ty, ir.ErrorT):
            return ir.Const(ty, loc, self.errors.index("NoError"))
        if isinstance(ty, ir.StringT):
            return ir.Const(ty, loc, "")
        if _is_hdr_like(ty) or isinstance(ty, ir.StackT):
            return ir.InvalidHeader(ty, loc)
        if isinstance(ty, ir.StructT):
            return ir.StructInit(ty, loc, [(f.name, self.default_value(f.type, node)) for f in ty.fields])
        if isinstance(ty, ir.TupleT):
            return ir.ListExpr(ty, loc, [self.default_value(x, node) for x in ty.elems])
        raise self.unsupported(node, f"'...' for a value of type {show(ty)} (it has no default value)")

    def list_with_dots(self, t: Tree, items: list, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        """``{e1, ..., ek, ...}``: the first k fields (or tuple elements) given, the others their
        type's default value.  ``...`` must come last."""
        loc = self.loc(t)
        if not _is_tree(items[-1], "dots") or sum(_is_tree(x, "dots") for x in items) > 1:
            first = next(x for x in items if _is_tree(x, "dots"))
            raise self.err(first, "'...' must be the last element of an initializer")
        given = items[:-1]
        if isinstance(expected, ir.TupleT):
            tys = list(expected.elems)
        elif isinstance(expected, (ir.HeaderT, ir.StructT)) and not _is_union(expected):
            tys = [f.type for f in expected.fields]
        else:
            raise self.unsupported(items[-1], "'...' in an initializer "
                                   + ("of a header_union" if _is_hdr_like(expected)
                                      else "whose type is not known (write (T){...})"))
        if len(given) > len(tys):
            raise self.err(t, f"{show(expected)} has {len(tys)} fields, initializer has {len(given)} and '...'")
        elems = self.elements(given, tys[:len(given)], ctx) + [self.default_value(x, items[-1])
                                                              for x in tys[len(given):]]
        if isinstance(expected, ir.TupleT):
            return ir.ListExpr(expected, loc, [self.coerce(e, x, t) for e, x in zip(elems, tys)])
        return self.list_to_struct(ir.ListExpr(ir.TupleT(()), loc, elems), expected, t)

    def enum_value(self, e: ir.Expr, node: Any) -> ir.Expr:
        """A serializable enum value as a value of its underlying type, as p4c's type inference
        takes one in arithmetic, ``++``, ordering, shifts and slices (a cast it inserts)."""
        t = e.type
        if isinstance(t, ir.EnumT) and t.underlying is not None:
            return self.cast(e, t.underlying, node)
        return e

    def unify(self, a: ir.Expr, b: ir.Expr, node: Any) -> tuple[ir.Expr, ir.Expr]:
        """Give an untyped literal the other operand's type; a serializable enum meeting its
        underlying type converts to it (``x == E.A`` with ``x: bit<W>``)."""
        if isinstance(a.type, InfIntT) and not isinstance(b.type, InfIntT):
            a = self.coerce(a, b.type, node)
        elif isinstance(b.type, InfIntT) and not isinstance(a.type, InfIntT):
            b = self.coerce(b, a.type, node)
        elif isinstance(a.type, ir.EnumT) and a.type.underlying is not None and a.type.underlying == b.type:
            a = self.coerce(a, b.type, node)
        elif isinstance(b.type, ir.EnumT) and b.type.underlying is not None and b.type.underlying == a.type:
            b = self.coerce(b, a.type, node)
        return a, b

    def binary(self, op: str, t: Tree, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        loc = self.loc(t)
        lt, rt = _trees(t)[0], _trees(t)[-1]
        if op in ("&&", "||"):
            a = self.expr(lt, ctx, BOOL)
            if isinstance(a, ir.Const) and bool(a.value) == (op == "||"):
                saved, ctx.prelude = ctx.prelude, ([] if ctx.prelude is not None else None)
                try:  # type-checked, never evaluated: its calls must not run
                    self.dead_if(True, self.expr, rt, ctx, BOOL)
                finally:
                    ctx.prelude = saved
                return ir.Const(BOOL, loc, op == "||")
            if ctx.prelude is not None and self.has_effect_call(rt):
                # 'a || f(x)': f runs only when a is false -- as p4c lowers it, into an if
                tv = self.temp_var(BOOL, ctx, loc)
                ctx.prelude.append(ir.VarDecl(loc, tv, a))
                saved, ctx.prelude = ctx.prelude, []
                try:
                    b = self.expr(rt, ctx, BOOL)
                    inner = ctx.prelude
                finally:
                    ctx.prelude = saved
                cond = tv if op == "&&" else ir.Unary(BOOL, loc, "!", tv)
                ctx.prelude.append(ir.If(loc, cond, ir.Block(loc, inner + [ir.Assign(loc, tv, b)]), None))
                return tv
            b = self.expr(rt, ctx, BOOL)
            if isinstance(a, ir.Const):
                return b
            return ir.Binary(BOOL, loc, op, a, b)
        if op in ("<<", ">>"):
            # an arbitrary-precision left operand shifted by a constant is folded at unlimited
            # precision (`1024 >> 4` is 64 wherever it goes); shifted by a run-time amount it is an
            # error, as in p4c (the width is not taken from the context)
            a = self.enum_value(self.left_operand(lt, rt, ctx, None), t)
            b = self.enum_value(self.expr(rt, ctx, None), t)
            if isinstance(a.type, InfIntT) and not isinstance(b, ir.Const):
                raise self.err(t, f"'{op}' shifts an arbitrary-precision int by an amount known only at run "
                                  "time; give the left operand a width (e.g. (bit<8>)1 << n), as p4c requires")
            if not is_numeric(a.type) or not is_numeric(b.type):
                raise self.err(t, f"'{op}' needs numeric operands")
            if isinstance(b.type, ir.IntT) and isinstance(b, ir.Const):
                # a signed constant amount that is not negative is taken as unsigned, as p4c's type
                # checker rewrites it (`x << 8s2` is `x << 8w2`)
                if int(b.value) < 0:
                    raise self.err(t, "negative shift amount")
                b = ir.Const(ir.BitT(b.type.width), b.loc, int(b.value))
            if isinstance(b.type, ir.IntT):
                raise self.err(t, "shift amount must be unsigned")
            if isinstance(b.type, ir.BitT) and b.type.width > 8 and not isinstance(a, ir.Const):
                # p4c's bmv2 back end (LowerExpressions::shift): "shift amount limited to 8 bits on this target"
                raise self.err(t, f"shift amount of type {show(b.type)}: bmv2 takes shift amounts of at most "
                                  f"8 bits (p4c refuses this); cast it, e.g. (bit<8>)")
            if isinstance(b.type, InfIntT):
                if int(b.value) < 0:  # type: ignore[union-attr]
                    raise self.err(t, "negative shift amount")
                b = ir.Const(BIT32, b.loc, int(b.value))  # type: ignore[union-attr]
            if isinstance(a, ir.Const) and isinstance(b, ir.Const):
                return ir.Const(a.type, loc, fold_binary(op, int(a.value), int(b.value), a.type))
            return ir.Binary(a.type, loc, op, a, b)
        if op in ("==", "!=") and (_is_tree(lt, "invalid_header") or _is_tree(rt, "invalid_header")):
            if _is_tree(lt, "invalid_header") and _is_tree(rt, "invalid_header"):
                raise self.unsupported(t, "'{#}' compared with '{#}' (no header type is known)")
            x = self.expr(rt if _is_tree(lt, "invalid_header") else lt, ctx, None)
            if not _is_hdr_like(x.type):
                raise self.err(t, f"cannot compare {show(x.type)} with '{{#}}' (an invalid header)")
            return self.invalid_compare(op, x, loc)
        a = self.left_operand(lt, rt, ctx, None)
        # 't == {9, 2}' with t a tuple: the list takes t's element types
        b = self.expr(rt, ctx, a.type if isinstance(a.type, ir.TupleT) and _is_tree(rt, "list_expr") else None)
        # arithmetic, bitwise and ordering: a serializable enum is its value; so it is in == and != with
        # anything but its own enum type (p4c converts both sides of a relation)
        if op not in ("==", "!=") or a.type != b.type:
            a, b = self.enum_value(a, t), self.enum_value(b, t)
        a, b = self.unify(a, b, t)
        if op in ("==", "!=") and (isinstance(a, ir.InvalidHeader) or isinstance(b, ir.InvalidHeader)) \
                and a.type == b.type and _is_hdr_like(a.type):
            if isinstance(a, ir.InvalidHeader) and isinstance(b, ir.InvalidHeader):
                return ir.Const(BOOL, loc, op == "==")
            return self.invalid_compare(op, b if isinstance(a, ir.InvalidHeader) else a, loc)
        # two arbitrary-precision operands are folded at unlimited precision and cast once where the
        # value goes (P4_16 spec: `int` arithmetic is exact; `1500 / 8` is 187 in a bit<8> field, not
        # 1500 truncated to 8 bits first); saturating operators are defined on bit<W>/int<W> only:
        # on two `int`s p4c refuses them (its constant folder: "saturating operation on untyped values")
        if isinstance(a.type, InfIntT) and isinstance(b.type, InfIntT) and op in ("|+|", "|-|"):
            raise self.err(t, f"'{op}' on two arbitrary-precision integers: a saturating operation needs "
                              "a width (give one operand a type), as p4c requires")
        if isinstance(a.type, InfIntT) and isinstance(b.type, InfIntT) and op in ("/", "%") \
                and isinstance(a, ir.Const) and isinstance(b, ir.Const) and (int(a.value) < 0 or int(b.value) < 0):
            raise self.err(t, f"'{op}' is not defined on negative arbitrary-precision integers")
        if a.type != b.type:
            raise self.err(t, f"cannot apply '{op}' to {show(a.type)} and {show(b.type)}")
        ty = a.type
        if op in ("==", "!="):
            if isinstance(ty, (ir.ExternT, ir.StringT, ir.VoidT)):
                raise self.err(t, f"cannot compare values of type {show(ty)}")
            rty: ir.Type = BOOL
        elif op in ("<", "<=", ">", ">="):
            if not is_numeric(ty):
                raise self.err(t, f"'{op}' needs bit<W>/int<W> operands, got {show(ty)}")
            rty = BOOL
        else:
            if not is_numeric(ty):
                raise self.err(t, f"'{op}' needs bit<W>/int<W> operands, got {show(ty)}")
            if op in ("/", "%") and isinstance(ty, ir.IntT):
                raise self.err(t, f"'{op}' is only defined on unsigned values")
            rty = ty
        if isinstance(a, ir.Const) and isinstance(b, ir.Const) and not isinstance(a.value, str):
            v = fold_binary(op, int(a.value), int(b.value), ty)
            if v is None:
                raise self.err(t, "division by zero")
            return ir.Const(rty, loc, v)
        if isinstance(ty, InfIntT):
            raise self.err(t, "cannot infer the width of this expression")
        if op in ("/", "%") and isinstance(b, ir.Const) and int(b.value) == 0 and not self.dead_code:
            # p4c's strength reduction: "Division by zero" / "Modulo by zero" (bmv2 would crash)
            raise self.err(t, ("division" if op == "/" else "modulo") + " by zero (a constant zero divisor; "
                              "p4c refuses it unless a constant condition leaves the code out)")
        return ir.Binary(rty, loc, op, a, b)

    def cast(self, a: ir.Expr, tt: ir.Type, node: Any) -> ir.Expr:
        loc = self.loc(node)
        st = a.type
        ok = False
        if isinstance(st, InfIntT) and isinstance(tt, (ir.BitT, ir.IntT)):
            return ir.Const(tt, loc, wrap(int(a.value), tt))  # type: ignore[union-attr]
        if isinstance(st, InfIntT) and isinstance(tt, ir.BoolT):
            if int(a.value) not in (0, 1):  # type: ignore[union-attr]
                raise self.err(node, "only 0 and 1 can be cast to bool")
            return ir.Const(BOOL, loc, bool(a.value))
        if isinstance(st, (ir.BitT, ir.IntT)) and isinstance(tt, (ir.BitT, ir.IntT)):
            ok = isinstance(st, type(tt)) or st.width == tt.width
        elif isinstance(st, ir.BoolT) and isinstance(tt, ir.BitT) and tt.width == 1 or isinstance(st, ir.BitT) and st.width == 1 and isinstance(tt, ir.BoolT) or isinstance(tt, ir.EnumT) and tt.underlying is not None and \
                (st == tt.underlying or isinstance(st, InfIntT)) or isinstance(st, ir.EnumT) and st.underlying is not None \
                and (isinstance(tt, type(st.underlying)) and tt.width == st.underlying.width
                     or isinstance(tt, ir.EnumT) and tt.underlying == st.underlying):
            # a serializable enum casts to its own underlying type or to another enum over it only
            # (p4c's canCastBetween)
            ok = True
        elif st == tt:
            return a
        elif isinstance(st, (ir.BitT, ir.IntT)) and isinstance(tt, (ir.BitT, ir.IntT)):
            ok = True
        if not ok:
            raise self.err(node, f"cannot cast {show(st)} to {show(tt)}")
        if isinstance(a, ir.Const):
            v = a.value
            if isinstance(tt, ir.BoolT):
                return ir.Const(tt, loc, bool(v))
            if isinstance(tt, ir.EnumT):
                return ir.Const(tt, loc, int(v))
            if isinstance(st, ir.EnumT) and st.underlying is not None:
                return ir.Const(tt, loc, wrap(int(v), tt))
            return ir.Const(tt, loc, wrap(int(v), tt))
        return ir.Cast(tt, loc, a)

    # ------------------------------------------------------------ names
    def ident(self, t: Tree, name: str, ctx: _Ctx) -> ir.Expr:
        scope = getattr(ctx, "scope", None)
        e = None
        if scope is not None:
            for s in reversed(scope):
                if name in s:
                    e = s[name]
                    break
        if e is None:
            e = self.globals.get(name)
            self.used_consts.add(name)
        if e is None:
            raise self.err(t, f"'{name}' is not declared")
        if isinstance(e, ir.ValueSet):
            raise self.err(t, f"value_set '{name}' can only be a keyset of a select case ('{name}: state;')")
        if isinstance(e, ir.Const):
            return ir.Const(e.type, self.loc(t), e.value)
        if isinstance(e, _ParamEntry):
            return e.param
        if isinstance(e, ir.Expr):
            return e
        return _Named(ir.VoidT(), self.loc(t), name, e)

    def called(self, callee: Any) -> Any:
        """``callee`` as a call's target: a control/parser type that took the name of an extern
        function (``control verify_checksum``) stands for the function when called."""
        if isinstance(callee, _Named) and isinstance(callee.entry, _Decl) and callee.name in self.shadowed_funcs:
            return _Named(callee.type, callee.loc, callee.name, self.shadowed_funcs[callee.name])
        return callee

    def member(self, t: Tree, ctx: _Ctx, in_method: bool = False) -> ir.Expr:
        """``base.mem``; ``in_method``: it is the callee of a call.  As p4c's type checker has it, a
        header's ``isValid``/``setValid``/``setInvalid`` (and the size methods) are the built-in
        methods when called and otherwise a field of that name, if the header has one."""
        base = self.expr(_trees(t)[0], ctx, None)
        mem = str(_tree(t, "mname").children[0])
        loc = self.loc(t)
        bt = base.type
        if not in_method and isinstance(bt, (ir.HeaderT, ir.StructT)) and \
                any(f.name == mem for f in bt.fields):
            return ir.Member(bt.field_type(mem), loc, base, mem)
        if isinstance(base, _Named):
            return _Method(ir.VoidT(), loc, base, mem)
        if isinstance(base, ir.ApplyTable) and base.result == "none":
            if mem in ("hit", "miss"):
                return ir.ApplyTable(BOOL, loc, base.table, mem)
            raise self.err(t, f"table apply result has no member '{mem}' here")
        if isinstance(bt, (ir.HeaderT, ir.StructT)):
            if mem in ("isValid", "setValid", "setInvalid") and isinstance(bt, ir.HeaderT):
                return _Method(ir.VoidT(), loc, base, mem)
            if mem == "isValid" and isinstance(bt, ir.StructT) and bt.union:
                return _Method(ir.VoidT(), loc, base, mem)
            if mem in _SIZE_METHODS:
                return _Method(ir.VoidT(), loc, base, mem)
            try:
                ft = bt.field_type(mem)
            except KeyError:
                raise self.err(t, f"{show(bt)} has no field '{mem}'") from None
            return ir.Member(ft, loc, base, mem)
        if isinstance(bt, ir.StackT):
            if mem == "size":
                return ir.Const(BIT32, loc, bt.size)
            if mem == "next":
                if not ctx.in_parser:
                    raise self.err(t, "'next' can only be used in a parser")
                return ir.StackNext(bt.elem, loc, base)
            if mem in ("last", "lastIndex") and not ctx.in_parser:  # p4c: stack 'last' only in a parser
                raise self.err(t, f"'{mem}' can only be used in a parser")
            if mem == "last":
                return ir.StackLast(bt.elem, loc, base)
            if mem == "lastIndex":
                return ir.StackLastIndex(BIT32, loc, base)
            if mem in ("push_front", "pop_front"):
                if ctx.in_parser:
                    raise self.err(t, f"'{mem}' cannot be used in a parser")
                return _Method(ir.VoidT(), loc, base, mem)
            if mem in _MIN_MAX_SIZE:
                return _Method(ir.VoidT(), loc, base, mem)
            raise self.err(t, f"header stack has no member '{mem}'")
        if isinstance(bt, ir.ExternT):
            return _Method(ir.VoidT(), loc, base, mem)
        if mem in _MIN_MAX_SIZE and (isinstance(bt, (ir.BitT, ir.IntT, ir.BoolT))
                                     or (isinstance(bt, ir.EnumT) and bt.underlying is not None)):
            return _Method(ir.VoidT(), loc, base, mem)
        raise self.err(t, f"value of type {show(bt)} has no member '{mem}'")

    # ------------------------------------------------------------ calls
    def call(self, t: Tree, ctx: _Ctx) -> ir.Expr:
        callee_t = _trees(t)[0]
        targs: tuple[ir.Type, ...] = ()
        if t.data == "generic_call":
            targs = tuple(self.type_ref(x) for x in _trees(_tree(t, "type_args")))
        arg_trees = _trees(_tree(t, "args")) if _tree(t, "args") is not None else []
        callee = self.member(callee_t, ctx, in_method=True) if callee_t.data == "member" \
            else self.expr(callee_t, ctx, None)
        if any(a.data == "named_arg" for a in arg_trees):
            names = None
            optional: set[str] = set()
            if isinstance(callee, _Named) and isinstance(callee.entry, (_ActionRef, _FuncRef)):
                prms = [p for p in self.actions[callee.entry.name].params if p.name != "$ret"]
                names = [p.name for p in prms]
                optional = {p.name for p in prms if p.default is not None}
            elif isinstance(callee, _Named) and isinstance(callee.entry, _GenericFuncRef):
                names = _param_names(_tree(callee.entry.tree, "function_proto"))
            else:
                names = self.builtin_param_names(callee, arg_trees, t)
            arg_trees = self.positional_args(arg_trees, names, t, optional)
        copy_back: list[ir.Stmt] = []
        if ctx.prelude is not None and len(arg_trees) > 1:
            arg_trees = self.snapshot_args(callee, arg_trees, copy_back, t)
        e = self.dispatch_call(callee, arg_trees, targs, ctx, t)
        if copy_back:
            assert ctx.prelude is not None
            if isinstance(e, ir.ActionCall):  # the action runs before its copy-backs
                ctx.prelude.append(ir.ExprStmt(e.loc, e))
                e = _FnVoid(ir.VoidT(), e.loc)
            ctx.prelude.extend(copy_back)  # a function's call is already in the prelude
        return e

    def callee_directions(self, callee: Any, n: int) -> list[str] | None:
        """The directions of the parameters a call of ``callee`` with ``n`` arguments binds
        (``""`` for a directionless one), or None when they are not known here."""
        def proto_dirs(fp: Tree) -> list[str]:
            return [_direction(p) for p in _trees(_tree(fp, "params"), "param")]
        callee = self.called(callee)
        if isinstance(callee, _Named):
            e = callee.entry
            if isinstance(e, (_ActionRef, _FuncRef)):
                return [p.direction for p in self.actions[e.name].params if p.name != "$ret"]
            if isinstance(e, _GenericFuncRef):
                return proto_dirs(_tree(e.tree, "function_proto"))
            if isinstance(e, _ExternFunc):
                return next((d for d in self.extern_func_dirs.get(e.name, []) if len(d) == n), None)
            return None
        if isinstance(callee, _Method):
            base, mem = callee.base, callee.method
            ext = None
            if isinstance(base, _Named) and isinstance(base.entry, ir.ExternInstance):
                ext = base.entry.kind
            elif isinstance(base.type, ir.ExternT) and base.type.name in ("packet_in", "packet_out"):
                ext = base.type.name
            elif isinstance(base, _Named) and isinstance(base.entry, _SubControl) and mem == "apply":
                return proto_dirs(base.entry.decl)
            decl = self.globals.get(ext) if ext is not None else None
            if isinstance(decl, _Decl):
                return next((proto_dirs(fp) for mp in _trees(decl.tree, "method_proto")
                             for fp in _trees(mp, "function_proto")
                             if _name(fp) == mem and len(proto_dirs(fp)) == n), None)
        return None

    def snapshot_args(self, callee: Any, arg_trees: list[Any], copy_back: list[ir.Stmt], t: Tree) -> list[Any]:
        """Arguments are evaluated left to right, each copied in when it is evaluated (P4_16 spec
        6.8 "Calling convention"): before a later argument calls a function with out/inout
        parameters, an earlier ``in`` argument is taken into a temporary, and an earlier
        ``inout`` one (of a user function or action) into a temporary copied back after the
        call -- p4c's DoSimplifyExpressions gives such arguments temporaries too (they alias what
        the later call writes).  An earlier ``out`` argument reads nothing."""
        effect = [a is not None and isinstance(a, Tree) and self.has_effect_call(a) for a in arg_trees]
        if not any(effect[1:]):
            return arg_trees
        last = max(i for i, f in enumerate(effect) if f)
        dirs = self.callee_directions(callee, len(arg_trees))
        user = isinstance(callee, _Named) and isinstance(callee.entry, (_ActionRef, _FuncRef, _GenericFuncRef))
        out = list(arg_trees)
        for i in range(last):
            a = arg_trees[i]
            if a is None or not isinstance(a, Tree) or a.data == "dontcare_arg":
                continue
            d = dirs[i] if dirs is not None and i < len(dirs) else None
            if d in ("", "in"):
                out[i] = _snap_tree(a)
            elif d == "out":
                continue
            elif d == "inout" and user:
                w = Tree("arg_snap_inout", [a], meta=a.meta)
                self.snap_copy_back[id(w)] = copy_back
                out[i] = w
            elif d == "inout":
                raise self.unsupported(arg_trees[last], "a call of a function with out/inout parameters in an "
                                                        "argument after an inout argument of a control's apply "
                                                        "or an extern (a user function's or action's is taken)")
            else:
                raise self.unsupported(arg_trees[last], "a call of a function with out/inout parameters in an "
                                                        "argument after an argument of a call whose parameter "
                                                        "directions are not known here")
        return out

    def arg_snapshot(self, t: Tree, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        """An argument evaluated before a later argument's call with effects (snapshot_args):
        its value goes into a temporary now; an inout one is copied back after the call."""
        loc = self.loc(t)
        e = self.expr(_trees(t)[0], ctx, expected)
        if t.data == "arg_snap_inout":
            self.check_lvalue(e, e.loc)
            assert ctx.prelude is not None
            e = self._freeze_indices(e, ctx.prelude, ctx)  # type: ignore[attr-defined]  # copied back there
            tv = self.temp_var(e.type, ctx, loc)
            self.lvalue_temps.add(tv.name)
            assert ctx.prelude is not None
            ctx.prelude.append(ir.VarDecl(loc, tv, e))
            self.snap_copy_back.pop(id(t)).append(ir.Assign(loc, e, tv))
            return tv
        if ctx.prelude is None or isinstance(e, (ir.Const, ir.ListExpr, ir.StructInit, ir.InvalidHeader, _Named,
                                                 _Method, _FnVoid)) \
                or not isinstance(e.type, (ir.BitT, ir.IntT, ir.BoolT, ir.EnumT, ir.ErrorT, ir.HeaderT,
                                           ir.StructT, ir.StackT, ir.TupleT)):
            return e
        tv = self.temp_var(e.type, ctx, loc)
        ctx.prelude.append(ir.VarDecl(loc, tv, e))
        return tv

    def dispatch_call(self, callee: Any, arg_trees: list[Any], targs: tuple, ctx: _Ctx, t: Tree) -> ir.Expr:
        callee = self.called(callee)
        if isinstance(callee, _Method):
            return self.method_call(callee, arg_trees, targs, ctx, t)
        if isinstance(callee, _Named):
            e = callee.entry
            if isinstance(e, _ExternFunc):
                return self.builtin_call(e.name, arg_trees, targs, ctx, t)
            if isinstance(e, _ActionRef):
                if getattr(ctx, "fn_ret", None) is not None:  # in a function (p4c: TypeInference)
                    raise self.err(t, f"a function cannot call an action ('{callee.name}'; p4c: \"Functions "
                                      "cannot call actions\")")
                return self.action_call(e.name, arg_trees, ctx, t)
            if isinstance(e, _FuncRef):
                return self.function_call(e.name, arg_trees, ctx, t)
            if isinstance(e, _GenericFuncRef):
                spec = self.specialise_function(e, self.infer_type_args(e, targs, arg_trees, ctx, t), t)
                return self.function_call(spec, arg_trees, ctx, t)
            raise self.err(t, f"'{callee.name}' cannot be called")
        if isinstance(callee, _Named) is False and isinstance(callee, ir.Expr):
            raise self.err(t, "this expression cannot be called")
        raise self.err(t, "bad call")

    def infer_type_args(self, g: _GenericFuncRef, targs: tuple[ir.Type, ...], arg_trees: list[Tree],
                        ctx: _Ctx, t: Tree) -> tuple[ir.Type, ...]:
        """The type arguments of a call of generic function ``g``: the explicit ones, or else
        each type parameter unified with the type of an argument whose parameter type names
        it (the spec's type inference).  An untyped integer literal binds no width: p4c binds
        such a parameter to ``int`` and then rejects the call, so it is an error here too."""
        proto = _tree(g.tree, "function_proto")
        tps = _type_params(proto)
        params = _trees(_tree(proto, "params"), "param")
        if targs:
            if len(targs) != len(tps):
                raise self.err(t, f"function '{g.name}' takes {len(tps)} type arguments, {len(targs)} given")
            return targs
        if len(arg_trees) != len(params):
            raise self.err(t, f"function '{g.name}' takes {len(params)} arguments, {len(arg_trees)} given")
        env: dict[str, ir.Type] = {}
        probe = copy.copy(ctx)  # the arguments' types only: their lowering here is discarded
        probe.prelude = []
        for a, p in zip(arg_trees, params):
            pt = _type_child(p)
            if not any(x.data == "named_type" and str(x.children[0]) in tps for x in pt.iter_subtrees()):
                continue
            if isinstance(a, Tree) and a.data == "arg_snap_inout":  # its type only: no copy-back here
                a = _trees(a)[0]
            self.unify_type(pt, self.expr(a, probe, None).type, tps, env, f"function '{g.name}'", a)
        missing = [x for x in tps if x not in env]
        if missing:
            raise self.err(t, f"cannot infer type argument '{missing[0]}' of function '{g.name}' from the "
                              f"arguments; give the type arguments ({g.name}<...>(...))")
        return tuple(env[x] for x in tps)

    def unify_type(self, pt: Tree, at: ir.Type, tps: list[str], env: dict[str, ir.Type], fname: str,
                   a: Tree) -> None:
        """Bind the type parameters ``tps`` named in parameter type ``pt`` so that it is ``at``
        (``fname`` says whose: ``function 'f'``, ``control 'C'``)."""
        k = pt.data
        if k == "named_type" and str(pt.children[0]) in tps:
            tv = str(pt.children[0])
            if isinstance(at, InfIntT):
                raise self.err(a, f"cannot infer a width for type parameter '{tv}' of {fname} "
                                  f"from an untyped integer literal (it would be 'int', which p4c rejects "
                                  f"too); write a typed literal such as 8w1 or give the type arguments")
            if tv in env and env[tv] != at:
                raise self.err(a, f"type parameter '{tv}' of {fname} cannot be both "
                                  f"{show(env[tv])} and {show(at)}")
            env[tv] = at
        elif k == "specialized_type":
            origin = self.spec_origin.get(getattr(at, "name", None))
            base = str(pt.children[0])
            args = _trees(_tree(pt, "type_args"))
            if origin is None or origin[0] != base or len(origin[1]) != len(args):
                raise self.err(a, f"argument of type {show(at)} where {fname} takes a {base}<...>")
            for x, y in zip(args, origin[1]):
                self.unify_type(x, y, tps, env, fname, a)
        elif k == "stack_type" and isinstance(at, ir.StackT):
            self.unify_type(_trees(pt)[0], at.elem, tps, env, fname, a)

    def action_call(self, aname: str, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        act = self.actions[aname]
        if ctx.in_parser:  # p4c's type checker: "Action calls are not allowed within parsers"
            raise self.err(t, f"action '{act.local_name}' called in a parser: action calls are not allowed "
                              "within parsers")
        args = self.with_defaults(f"action '{act.local_name}'", arg_trees, act.params, ctx, t)
        for a, p in zip(args, act.params):
            if p.direction in ("out", "inout"):
                self.check_lvalue(a, a.loc)
        return ir.ActionCall(ir.VoidT(), self.loc(t), aname, args)

    def builtin_param_names(self, callee: Any, arg_trees: list[Tree], t: Tree) -> list[str] | None:
        """The parameter names of the built-in function or method ``callee`` (as declared in
        p4include's v1model.p4/core.p4, p4c's names) for a call with named arguments; among
        overloads the one whose names are exactly the ones given.  A control instance's
        ``apply`` takes its apply parameters' names.  ``None`` when unknown (then only a
        single argument may be named)."""
        overloads: list[list[str]] | None = None
        callee = self.called(callee)
        if isinstance(callee, _Named) and isinstance(callee.entry, _ExternFunc):
            overloads = self.extern_func_params.get(callee.entry.name)
        elif isinstance(callee, _Method):
            base, mem = callee.base, callee.method
            ext = None
            if isinstance(base, _Named) and isinstance(base.entry, ir.ExternInstance):
                ext = base.entry.kind
            elif isinstance(base, _Named) and isinstance(base.entry, _SubControl) and mem == "apply":
                overloads = [_param_names(base.entry.decl)]
            elif isinstance(base, _Named) and isinstance(base.entry, _Decl) and base.entry.kind == "control" \
                    and not base.entry.builtin and mem == "apply":  # direct application
                overloads = [_param_names(base.entry.tree)]
            elif isinstance(base.type, ir.ExternT) and base.type.name in ("packet_in", "packet_out"):
                ext = base.type.name
            elif isinstance(base.type, ir.StackT) and mem in ("push_front", "pop_front"):
                overloads = [["count"]]
            decl = self.globals.get(ext) if ext is not None else None
            if isinstance(decl, _Decl):
                overloads = [_param_names(fp)
                             for mp in _trees(decl.tree, "method_proto")
                             for fp in _trees(mp, "function_proto") if _name(fp) == mem]
        if not overloads:
            return None
        given = {_name(a) for a in arg_trees if a.data == "named_arg"}
        for names in overloads:
            if set(names) == given and len(names) == len(arg_trees):
                return names
        return overloads[0] if len(overloads) == 1 else max(overloads, key=lambda o: len(given & set(o)))

    def positional_args(self, arg_trees: list[Tree], names: list[str] | None, t: Tree,
                        optional: frozenset[str] | set[str] = frozenset()) -> list[Any]:
        """Named arguments (``f(x = 1)``) in parameter order: bound by name, as the P4_16 spec
        says (they are evaluated in parameter order here; an argument cannot call a function
        with effects, check_stmt rejects that, so no evaluation can see another's effect).
        Without the parameter names only a single argument can be named.  A parameter in
        ``optional`` (it has a default value) may be left out: its place holds None."""
        if not all(a.data == "named_arg" for a in arg_trees):
            raise self.err(t, "either all arguments are named or none")
        if names is None:
            if len(arg_trees) != 1:
                raise self.unsupported(t, "named arguments for a built-in method or function with "
                                          "more than one argument")
            return [_trees(arg_trees[0])[-1]]
        given = {_name(a): _trees(a)[-1] for a in arg_trees}
        unknown = [n for n in given if n not in names]
        if unknown:
            raise self.err(t, f"no parameter named '{unknown[0]}'")
        missing = [n for n in names if n not in given and n not in optional]
        if missing:
            raise self.err(t, f"argument for '{missing[0]}' missing")
        written = list(given)
        if written != [n for n in names if n in given] and any(self.may_have_effect(x) for x in given.values()):
            # evaluated in parameter order below; the spec evaluates in written order, which a table
            # apply, an extern method or a call with out/inout arguments inside one of them can tell
            raise self.unsupported(t, "named arguments written out of parameter order with a table apply, "
                                      "an extern method or a call with out/inout arguments in one of them")
        return [given.get(n) for n in names]

    def may_have_effect(self, t: Tree) -> bool:
        """Can evaluating ``t`` change state or read something another argument changes: a call of a
        user function with out/inout parameters, or any method call but ``isValid()`` (a table's
        ``apply``, an extern's method)."""
        if self.has_effect_call(t):
            return True
        for sub in t.iter_subtrees():
            if sub.data in ("call_expr", "generic_call") and _trees(sub):
                callee = _trees(sub)[0]
                if callee.data == "member":
                    mname = _tree(callee, "mname")
                    if mname is None or str(mname.children[0]) != "isValid":
                        return True
        return False

    def with_defaults(self, what: str, arg_trees: list[Any], params: list[ir.Param],
                      ctx: _Ctx, t: Tree) -> list[ir.Expr]:
        """The arguments of a call of a user action or function: the given ones (positional, or
        named and put in order with None for those left out) typed against their parameters, and
        each parameter's default value where the call leaves it out.  Positional calls may leave
        out trailing parameters that have a default value (P4_16 spec 6.8.2)."""
        if len(arg_trees) < len(params):
            arg_trees = arg_trees + [None] * (len(params) - len(arg_trees))
        if len(arg_trees) != len(params) or any(a is None and p.default is None
                                                for a, p in zip(arg_trees, params)):
            given = sum(1 for a in arg_trees if a is not None)
            raise self.err(t, f"{what} takes {len(params)} arguments, {given} given")
        args = []
        for a, p in zip(arg_trees, params):
            if a is None:
                assert p.default is not None
                args.append(ir.Const(p.type, self.loc(t), p.default.value))
            else:
                e = self.expr(a, ctx, p.type)
                if p.direction in ("out", "inout") and ctx.prelude is not None:
                    # the l-value is saved when the argument is evaluated (P4_16 spec, "Calling
                    # convention"; p4c's DoSimplifyExpressions gives a stack index inside an
                    # argument a temporary): the copy-out writes the element the copy-in read,
                    # even if the callee or a later argument changes what the index reads
                    e = self._freeze_indices(e, ctx.prelude, ctx)  # type: ignore[attr-defined]
                args.append(e)
        return args

    def left_operand(self, lt: Tree, rt: Tree, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        """The left operand of a binary operator; when the right one calls a function with
        effects, its value is taken into a temporary first (the call may change what it reads),
        as p4c orders side effects."""
        a = self.expr(lt, ctx, expected)
        if ctx.prelude is not None and not isinstance(a, ir.Const) and self.has_effect_call(rt) \
                and not isinstance(a.type, InfIntT):
            tv = self.temp_var(a.type, ctx, a.loc)
            ctx.prelude.append(ir.VarDecl(a.loc, tv, a))
            return tv
        return a

    def elements(self, trees: list[Tree], types: list, ctx: _Ctx) -> list[ir.Expr]:
        """The elements of a list or struct initialiser, in written order; when a later element
        calls a function with effects, each earlier one that reads something is taken into a
        temporary first (the call may change what it read), as for a binary operator's left
        operand."""
        out = []
        for i, (x, ty) in enumerate(zip(trees, types)):
            e = self.expr(x, ctx, ty)
            if ctx.prelude is not None and \
                    not isinstance(e, (ir.Const, ir.ListExpr, ir.StructInit, ir.InvalidHeader)) \
                    and not isinstance(e.type, InfIntT) and any(self.has_effect_call(y) for y in trees[i + 1:]):
                tv = self.temp_var(e.type, ctx, e.loc)
                ctx.prelude.append(ir.VarDecl(e.loc, tv, e))
                e = tv
            out.append(e)
        return out

    def has_effect_call(self, t: Tree) -> bool:
        """Does ``t`` call a user function with out/inout parameters (a call with effects)?"""
        for sub in t.iter_subtrees():
            if sub.data in ("call_expr", "generic_call") and _trees(sub):
                nm = _tree(_trees(sub)[0], "name")
                ent = self.globals.get(str(nm.children[0])) if nm is not None else None
                if self.fn_writes(ent):
                    return True
        return False

    def temp_var(self, t: ir.Type, ctx: _Ctx, loc: ir.Loc) -> ir.Var:
        """A fresh local of the current block or action (for lowered expressions)."""
        store = ctx.block if ctx.block is not None else ctx.action_block  # type: ignore[attr-defined]
        return ir.Var(t, loc, store.fresh(getattr(ctx, "var_prefix", "") + "$tmp", t))

    def mux_with_calls(self, c: ir.Expr, t: Tree, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        """``c ? a : b`` where a branch calls a function with effects: only the chosen branch
        runs, lowered into an if as p4c does."""
        loc = self.loc(t)
        pre = ctx.prelude
        assert pre is not None
        branches = []
        for sub in _trees(t)[1:3]:
            ctx.prelude = []
            try:
                branches.append((self.expr(sub, ctx, expected), ctx.prelude))
            finally:
                ctx.prelude = pre
        (a, pa), (b, pb) = branches
        a, b = self.unify(a, b, t)
        if isinstance(a.type, InfIntT):
            raise self.err(t, "cannot infer the width of '?:' operands")
        if a.type != b.type:
            raise self.err(t, f"'?:' branches have different types {show(a.type)} and {show(b.type)}")
        tc = self.temp_var(BOOL, ctx, loc)
        tv = self.temp_var(a.type, ctx, loc)
        pre.append(ir.VarDecl(loc, tc, c))
        pre.append(ir.If(loc, tc, ir.Block(loc, pa + [ir.Assign(loc, tv, a)]),
                         ir.Block(loc, pb + [ir.Assign(loc, tv, b)])))
        return tv

    def function_call(self, fname: str, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        """A user function call: an ``ActionCall`` put in the statement's prelude; the value is
        a fresh variable the call's last ``out`` argument writes."""
        fn = self.actions[fname]
        params = [p for p in fn.params if p.name != "$ret"]
        if len(arg_trees) > len(params):
            raise self.err(t, f"function '{fname}' takes {len(params)} arguments, {len(arg_trees)} given")
        if ctx.prelude is None:
            raise self.unsupported(t, f"call of function '{fname}' outside a statement, a select or a "
                                      "table key (e.g. in a table's entries or default action)")
        if ctx.in_parser:
            self.check_parser_callee(fname, t)
        args = self.with_defaults(f"function '{fname}'", arg_trees, params, ctx, t)
        for a, p in zip(args, params):
            if p.direction in ("out", "inout"):
                self.check_lvalue(a, a.loc)
        loc = self.loc(t)
        if len(params) == len(fn.params):  # void
            ctx.prelude.append(ir.ExprStmt(loc, ir.ActionCall(ir.VoidT(), loc, fname, args)))
            return _FnVoid(ir.VoidT(), loc)
        rt = fn.params[-1].type
        store = ctx.block if ctx.block is not None else ctx.action_block  # type: ignore[attr-defined]
        v = ir.Var(rt, loc, store.fresh(getattr(ctx, "var_prefix", "") + f"{fname}$result", rt))
        self.fn_results.add(v.name)
        ctx.prelude.append(ir.ExprStmt(loc, ir.ActionCall(ir.VoidT(), loc, fname, args + [v])))
        return v

    def check_parser_callee(self, fname: str, t: Tree) -> None:
        """A user function called from a parser state: p4c inlines it there, so an extern call
        anywhere in it (or in a function it calls) meets the bmv2 back end's parser rules."""
        seen: set[str] = set()
        todo = [fname]
        while todo:
            fn = todo.pop()
            if fn in seen:
                continue
            seen.add(fn)
            bad = _parser_forbidden_call(self.actions[fn].body)
            if bad is not None:
                what = f"'{bad.name}'" if isinstance(bad, ir.BuiltinCall) else \
                    f"extern method '{bad.instance}.{bad.method}'"
                raise self.unsupported(t, f"call of function '{fname}' in a parser state: it calls {what} at "
                                          f"{bad.loc} ({_PARSER_REASON})")
            todo += sorted(ir.actions_called(self.actions[fn].body))

    def args(self, arg_trees: list[Tree], ctx: _Ctx, types: list[ir.Type | None], t: Tree,
             what: str) -> list[ir.Expr]:
        if len(arg_trees) != len(types):
            raise self.err(t, f"{what} takes {len(types)} arguments, {len(arg_trees)} given")
        return [self.expr(a, ctx, ty) for a, ty in zip(arg_trees, types)]

    def digest_type_name(self, t: Tree, dt: ir.StructT) -> str:
        """The P4Info name of the digest call ``t`` of struct ``dt``: its type argument as written when
        that names a typedef of the struct (``digest<learn_t>(...)``), as p4c's v1model P4Info names it
        (the declaration the type argument refers to), else the struct's name."""
        ta = _tree(t, "type_args")
        if ta is None:
            return dt.name
        tree = _trees(ta)[0]
        if tree.data not in ("named_type", "dot_named_type"):
            return dt.name
        written = str(tree.children[0])
        if tree.data == "named_type" and written in self.type_env:
            return dt.name  # a type variable of a generic function
        return written

    def builtin_call(self, name: str, arg_trees: list[Tree], targs: tuple, ctx: _Ctx, t: Tree) -> ir.Expr:
        loc = self.loc(t)
        enum = self.enum_type
        if ctx.in_parser and name not in _PARSER_FUNCS:
            raise self.unsupported(t, f"call of extern function '{name}' in a parser state ({_PARSER_REASON})")
        if name in _DEPRECATED_FUNCS:
            return self.deprecated_call(name, arg_trees, ctx, t)
        if name not in _BUILTIN_FUNCS:
            raise self.unsupported(t, f"extern function '{name}'")
        n = len(arg_trees)
        if name == "mark_to_drop":
            # v1model's deprecated mark_to_drop() acts on the packet's own standard_metadata, as
            # bmv2's legacy drop primitive does: no arguments here means "the pipeline's".
            args = self.args(arg_trees, ctx, [self.std_meta_type()], t, name) if n else []
        elif name == "hash":
            res = self.expr(arg_trees[0], ctx, None) if n == 5 else None
            if res is None:
                raise self.err(t, "hash takes 5 arguments")
            self.check_lvalue(res, res.loc)
            if not isinstance(res.type, (ir.BitT, ir.IntT)):  # bmv2 writes a number there
                raise self.err(arg_trees[0], f"hash writes its result into a bit<W>, not a {show(res.type)}")
            algo = self.expr(arg_trees[1], ctx, enum("HashAlgorithm"))
            base = self.expr(arg_trees[2], ctx, None)
            data = self.expr(arg_trees[3], ctx, None)
            mx = self.expr(arg_trees[4], ctx, None)
            if isinstance(base.type, InfIntT):
                base = self.coerce(base, mx.type if not isinstance(mx.type, InfIntT) else res.type, t)
            if isinstance(mx.type, InfIntT):
                mx = self.coerce(mx, base.type, t)
            for what, x, a in (("base", base, arg_trees[2]), ("max", mx, arg_trees[4])):
                if not isinstance(x.type, (ir.BitT, ir.IntT)):
                    raise self.err(a, f"hash's {what} is a bit<W>, not a {show(x.type)}")
            data = self.calc_data(data, t)
            args = [res, algo, base, data, mx]
        elif name == "random":
            res = self.expr(arg_trees[0], ctx, None)
            self.check_lvalue(res, res.loc)
            if not isinstance(res.type, (ir.BitT, ir.IntT)):  # v1model: random<T> with T a bit<W>
                raise self.err(arg_trees[0], f"random writes a bit<W>, not a {show(res.type)}")
            args = [res] + self.args(arg_trees[1:], ctx, [res.type, res.type], t, name)
        elif name == "digest":
            if n != 2:
                raise self.err(t, "digest takes 2 arguments")
            recv = self.expr(arg_trees[0], ctx, BIT32)
            if targs:
                data = self.expr(arg_trees[1], ctx, targs[0])
            else:
                data = self.expr(arg_trees[1], ctx, None)
            dt = data.type
            if isinstance(data, ir.ListExpr) and not targs:
                # digest(n, {a, b}): a digest of its own per call, of a tuple type, named
                # digest_0, digest_1, ... as p4c's P4Info names them
                for x in data.elems:
                    if not isinstance(x.type, ir.BitT):
                        raise self.unsupported(x.loc, f"a digest list element of type {show(x.type)} "
                                                      "(only bit<W>)")
                dname = f"digest_{sum(1 for d in self.digests.values() if isinstance(d.type, ir.TupleT))}"
                if dname in self.digests:
                    raise self.unsupported(t, f"a digest of a list beside a digest struct named '{dname}'")
                self.digests[dname] = ir.Digest(dname, dt, loc)
                return ir.BuiltinCall(ir.VoidT(), loc, name, [recv, data], (dt,), dname)
            if not isinstance(dt, ir.StructT) or not dt.name:
                raise self.err(t, "digest data must be a named struct type or a list (use digest<T>(...))")
            dname = self.digest_type_name(t, dt)
            if dname not in self.digests:
                self.digests[dname] = ir.Digest(dname, dt, loc)
            return ir.BuiltinCall(ir.VoidT(), loc, name, [recv, data], (dt,), "" if dname == dt.name else dname)
        elif name == "clone":
            args = self.args(arg_trees, ctx, [enum("CloneType"), BIT32], t, name)
        elif name == "clone_preserving_field_list":
            args = self.args(arg_trees, ctx, [enum("CloneType"), BIT32, ir.BitT(8)], t, name)
        elif name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            args = self.args(arg_trees, ctx, [ir.BitT(8)], t, name)
        elif name == "truncate":
            args = self.args(arg_trees, ctx, [BIT32], t, name)
        elif name in ("assert", "assume"):
            args = self.args(arg_trees, ctx, [BOOL], t, name)
        elif name == "verify":
            if not ctx.in_parser:
                raise self.err(t, "verify() can only be called in a parser")
            args = self.args(arg_trees, ctx, [BOOL, ir.ErrorT()], t, name)
            return _VerifyMarker(ir.VoidT(), loc, args)
        elif name == "static_assert":
            return self.static_assert(arg_trees, ctx, t)
        elif name == "log_msg":
            if n not in (1, 2):
                raise self.err(t, "log_msg takes 1 or 2 arguments")
            fmt = self.expr(arg_trees[0], ctx, ir.StringT())
            args = [fmt]
            if n == 2:
                args.append(self.as_list(self.expr(arg_trees[1], ctx, None), t))
        else:  # checksums
            if n != 4:
                raise self.err(t, f"{name} takes 4 arguments")
            cond = self.expr(arg_trees[0], ctx, BOOL)
            data = self.calc_data(self.expr(arg_trees[1], ctx, None), t)
            ck = self.expr(arg_trees[2], ctx, None)
            if name.startswith("update"):
                self.check_lvalue(ck, ck.loc)
            if not isinstance(ck.type, ir.BitT):
                raise self.err(t, f"checksum field must be bit<W>, not {show(ck.type)}")
            algo = self.expr(arg_trees[3], ctx, enum("HashAlgorithm"))
            args = [cond, data, ck, algo]
        return ir.BuiltinCall(ir.VoidT(), loc, name, args, targs)

    def static_assert(self, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        """core.p4's ``static_assert(check[, message])``: evaluated at load time, as p4c does.
        A condition that is not a compile-time constant is an error, a false one an error with
        the message at the call's position; a true one is the constant ``true``."""
        if len(arg_trees) not in (1, 2):
            raise self.err(t, f"static_assert takes 1 or 2 arguments, {len(arg_trees)} given")
        check = self.expr(arg_trees[0], ctx, BOOL)
        if not isinstance(check, ir.Const):
            raise self.err(t, "static_assert: the condition is not a compile-time constant")
        msg = "static_assert failed"
        if len(arg_trees) == 2:
            m = self.expr(arg_trees[1], ctx, ir.StringT())
            if not isinstance(m, ir.Const) or not isinstance(m.type, ir.StringT):
                raise self.err(t, "static_assert: the message must be a string literal")
            msg = f"static_assert failed: {m.value}"
        if not check.value:
            raise self.err(t, msg)
        return ir.Const(BOOL, self.loc(t), True)

    def deprecated_call(self, name: str, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        """v1model's deprecated ``resubmit(data)``, ``recirculate(data)`` and
        ``clone3(type, session, data)``: the ``_preserving_field_list`` form with a field list
        of the user-metadata fields ``data`` names (p4c's bmv2 back end makes a field list of
        them; bmv2 copies their values at the end of the pipeline, as for an index).  An empty
        list preserves nothing (index -1 here)."""
        n_data = 2 if name == "clone3" else 0
        if len(arg_trees) != n_data + 1:
            raise self.err(t, f"{name} takes {n_data + 1} arguments")
        data = self.expr(arg_trees[n_data], ctx, None)
        loc = self.loc(t)
        paths = self.data_field_list(name, data, ctx, t)
        if paths:
            index = ir.FIELD_LIST_OF_DATA + len(self.data_field_lists)
            self.data_field_lists[index] = paths
            none = ir.Const(INFINT, loc, index)
        else:
            none = ir.Const(INFINT, loc, -1)  # no @field_list index can be -1: nothing preserved
        if name == "clone3":
            args = self.args(arg_trees[:2], ctx, [self.enum_type("CloneType"), BIT32], t, name)
            return ir.BuiltinCall(ir.VoidT(), loc, "clone_preserving_field_list", args + [none], ())
        return ir.BuiltinCall(ir.VoidT(), loc, f"{name}_preserving_field_list", [none], ())

    def data_field_list(self, name: str, data: ir.Expr, ctx: _Ctx, t: Tree) -> list[tuple[str, ...]]:
        """The user-metadata paths a deprecated call's ``data`` names, in order, a struct
        expanded to its fields, and its ``standard_metadata`` fields as ``(ir.STD_META_ROOT,
        field)``: p4c's bmv2 back end puts them in the field list too and bmv2 copies them into
        the new packet (ONOS fabric.p4 keeps ``ingress_port`` in its CPU clones this way).  A
        local variable is left out: bmv2 would carry its value to a pipeline that cannot name
        it.  Anything else (headers, an action parameter, a value) is rejected by name."""
        meta = ctx.block.meta_param if ctx.block is not None else ""
        std = ctx.block.std_param if ctx.block is not None else ""
        what = _DEPRECATED_FUNCS[name] + " with a field list"
        out: list[tuple[str, ...]] = []

        def leaf(e: ir.Expr) -> None:
            if isinstance(e, ir.ListExpr):
                for x in e.elems:
                    leaf(x)
                return
            if isinstance(e, ir.StructInit) and not e.type.name:
                for _, x in e.fields:
                    leaf(x)
                return
            path: list[str] = []
            root = e
            while isinstance(root, ir.Member):
                path.insert(0, root.field)
                root = root.expr
            if not isinstance(root, ir.Var):
                raise self.unsupported(e.loc, f"{what} element that is not a variable or a field of "
                                              "the user metadata")
            if std and root.name == std:
                self.meta_paths(e.type, (ir.STD_META_ROOT, *path), out, e.loc, what)
                return
            if root.name != meta:
                if ctx.block is None or root.name not in ctx.block.locals:
                    raise self.unsupported(e.loc, f"{what} element '{root.name}' (only fields of the "
                                                  "user metadata and standard_metadata are preserved)")
                return  # a local
            self.meta_paths(e.type, tuple(path), out, e.loc, what)

        leaf(data)
        return out

    def meta_paths(self, ty: ir.Type, path: tuple[str, ...], out: list, loc: ir.Loc, what: str) -> None:
        if isinstance(ty, ir.StructT):
            for f in ty.fields:
                self.meta_paths(f.type, path + (f.name,), out, loc, what)
        elif isinstance(ty, (ir.BitT, ir.IntT, ir.BoolT, ir.EnumT, ir.ErrorT)):
            if path not in out:
                out.append(path)
        else:
            raise self.unsupported(loc, f"{what} element of type {show(ty)}")

    def calc_data(self, e: ir.Expr, t: Tree) -> ir.Expr:
        """The data list of a hash or checksum: a list, a struct or a header, as p4c's bmv2 back end
        takes it (``convertToList``); a lone field or value it refuses ("expected a struct")."""
        e = self.as_list(e, t)
        if not isinstance(e.type, (ir.TupleT, ir.StructT, ir.HeaderT)):
            raise self.err(e.loc if e.loc.line else t, f"the data of a hash or checksum is a list {{...}}, a struct or a "
                                                       f"header, not {show(e.type)} (p4c: \"expected a struct\"; "
                                                       "write {x} for one value)")
        bad = _bitless(e.type)
        if bad is not None:
            raise self.err(e.loc if e.loc.line else t, f"the data of a hash or checksum holds a {show(bad)}, which "
                                                       "has no bits to compute over")
        return e

    def as_list(self, e: ir.Expr, t: Tree) -> ir.Expr:
        if isinstance(e, ir.StructInit) and isinstance(e.type, ir.StructT) and e.type.name == "":
            return ir.ListExpr(ir.TupleT(tuple(v.type for _, v in e.fields)), e.loc, [v for _, v in e.fields])
        if isinstance(e.type, InfIntT):
            raise self.err(t, "cannot infer the width of an integer here")
        return e

    def enum_type(self, name: str) -> ir.EnumT:
        e = self.globals.get(name)
        assert isinstance(e, tuple) and isinstance(e[1], ir.EnumT), name
        return e[1]

    def std_meta_type(self) -> ir.Type:
        e = self.globals.get("standard_metadata_t")
        assert isinstance(e, tuple)
        return e[1]

    def method_call(self, m: _Method, arg_trees: list[Tree], targs: tuple, ctx: _Ctx, t: Tree) -> ir.Expr:
        loc = self.loc(t)
        base, mem = m.base, m.method
        bt = base.type
        if isinstance(base, _Named):
            e = base.entry
            if isinstance(e, _TableRef):
                if mem != "apply" or arg_trees:
                    raise self.err(t, f"table '{base.name}' has no method '{mem}'")
                if ctx.in_action:  # p4c: "tables cannot be invoked from actions"
                    raise self.err(t, f"table '{base.name}' applied in an action or function (tables cannot be "
                                      "invoked from actions)")
                return ir.ApplyTable(ir.VoidT(), loc, e.table.name)
            if isinstance(e, ir.ExternInstance):
                if ctx.in_parser:
                    raise self.unsupported(t, f"extern method call '{base.name}.{mem}' in a parser state "
                                              f"({_PARSER_REASON})")
                return self.extern_method(e, mem, arg_trees, ctx, t)
            if isinstance(e, _SubControl):
                if mem != "apply":
                    raise self.err(t, f"control instance '{base.name}' has no method '{mem}'")
                return self.inline_control(e, arg_trees, ctx, t)
            tref = None
            if isinstance(e, _SpecBlock):
                e, tref = e.decl, e.tref
            if isinstance(e, _Decl) and e.kind in ("control", "parser") and not e.builtin and mem == "apply":
                if e.kind == "parser" and not ctx.in_parser:
                    raise self.err(t, f"parser '{base.name}' applied in a control (a parser can only be "
                                      "applied from a parser state)")
                if e.kind == "control" and ctx.in_parser:
                    raise self.err(t, f"control '{base.name}' applied in a parser (a control can only be "
                                      "applied from a control)")
                if e.kind == "parser":  # a sub-parser call inside an expression or a nested block
                    raise self.unsupported(t, f"direct application of parser type '{base.name}' other than "
                                              "as a statement of its own in a parser state")
                return self.direct_apply(e, arg_trees, ctx, t, tref)
            raise self.err(t, f"'{base.name}' has no method '{mem}'")
        if mem in _SIZE_METHODS and (isinstance(bt, (ir.HeaderT, ir.StructT, ir.StackT)) or mem in _MIN_MAX_SIZE):
            if arg_trees:
                raise self.err(t, f"{mem}() takes no arguments")
            if _has_varbit(bt) and mem.startswith("size"):
                raise self.unsupported(t, f"{mem}() of a type with a varbit field (minSizeIn*/maxSizeIn* are known)")
            if isinstance(bt, ir.StructT) and bt.union and mem.startswith("size"):
                raise self.unsupported(t, f"{mem}() of a header_union (minSizeIn*/maxSizeIn* are known)")
            try:
                bits = _size_bits(bt, mem.startswith("max"))
            except TypeError:  # an error, a plain enum, an extern...: p4c's widthBits refuses it too
                raise self.err(t, f"{mem}(): {show(bt)} has no well-defined width") from None
            return ir.Const(INFINT, loc, bits if mem.endswith("Bits") else (bits + 7) // 8)
        if isinstance(bt, ir.StructT) and bt.union and mem == "isValid":
            if arg_trees:
                raise self.err(t, "isValid() takes no arguments")
            return self.validity(base, loc)
        if isinstance(bt, ir.HeaderT) and mem in ("isValid", "setValid", "setInvalid"):
            if arg_trees:
                raise self.err(t, f"{mem}() takes no arguments")
            if mem == "isValid":
                return ir.IsValid(BOOL, loc, base)
            self.check_lvalue(base, loc)
            sibs = ir.union_siblings(base)
            if mem == "setValid" and sibs:  # the other members of its header_union become invalid
                return _Inlined(ir.VoidT(), loc, [ir.ExprStmt(loc, ir.SetInvalid(ir.VoidT(), loc, s, sibling=True))
                                                  for s in sibs]
                                + [ir.ExprStmt(loc, ir.SetValid(ir.VoidT(), loc, base))])
            return (ir.SetValid if mem == "setValid" else ir.SetInvalid)(ir.VoidT(), loc, base)
        if isinstance(bt, ir.StackT) and mem in ("push_front", "pop_front"):
            if len(arg_trees) != 1:
                raise self.err(t, f"{mem} takes 1 argument")
            c = self.expr(arg_trees[0], ctx, None)
            if not isinstance(c, ir.Const) or int(c.value) < 0:
                raise self.err(t, f"{mem} count must be a non-negative constant")
            self.check_lvalue(base, loc)
            return (ir.PushFront if mem == "push_front" else ir.PopFront)(ir.VoidT(), loc, base, int(c.value))
        if isinstance(bt, ir.ExternT) and bt.name == "packet_in":
            if not ctx.in_parser:
                raise self.err(t, "packet_in can only be used in a parser")
            if mem == "extract":
                if len(arg_trees) not in (1, 2):
                    raise self.err(t, "extract takes 1 or 2 arguments")
                h = self.expr(arg_trees[0], ctx, targs[0] if len(targs) == 1 else None)
                if not isinstance(h.type, ir.HeaderT):
                    raise self.err(t, f"extract needs a header, got {show(h.type)}")
                if len(arg_trees) == 2 or h.type.varbit is not None:
                    if h.type.varbit is None or len(arg_trees) != 2:
                        raise self.err(t, "the two-argument extract is for a header with a varbit "
                                          "field, and such a header needs it")
                    if ir.union_siblings(h):
                        raise self.unsupported(t, "varbit header in a header_union")
                    self.check_lvalue(h, loc)
                    nbits = self.expr(arg_trees[1], ctx, BIT32)
                    return _StmtMarker(ir.VoidT(), loc, ir.Extract(loc, h, nbits))
                self.check_lvalue(h, loc)
                sibs = ir.union_siblings(h)
                if isinstance(h, ir.Member) and isinstance(h.expr, ir.StackNext):
                    sibs = []  # the extract itself invalidates them (before the stack moves on)
                if sibs:  # extracting a header_union member invalidates the others (once it worked)
                    return _StmtMarker(ir.VoidT(), loc, ir.Block(loc, [ir.Extract(loc, h)] + [
                        ir.ExprStmt(loc, ir.SetInvalid(ir.VoidT(), loc, s, sibling=True)) for s in sibs]))
                return _StmtMarker(ir.VoidT(), loc, ir.Extract(loc, h))
            if mem == "advance":
                b = self.expr(arg_trees[0], ctx, BIT32) if len(arg_trees) == 1 else None
                if b is None:
                    raise self.err(t, "advance takes 1 argument")
                return _StmtMarker(ir.VoidT(), loc, ir.Advance(loc, b))
            if mem == "lookahead":
                if len(targs) != 1 or arg_trees:
                    raise self.err(t, "lookahead needs one type argument and no arguments")
                lt = targs[0]
                if _has_varbit(lt):
                    raise self.unsupported(t, "lookahead of a type with a varbit field")
                try:
                    ir.type_width(lt)
                except TypeError:
                    raise self.err(t, f"cannot lookahead a {show(lt)}") from None
                if not isinstance(lt, (ir.BitT, ir.IntT, ir.BoolT, ir.HeaderT)) and not _bits_struct(lt):
                    raise self.unsupported(t, f"lookahead of a {show(lt)} (look ahead a header, bit<W>, or a "
                                              "struct of bit/int/bool/serializable-enum fields)")
                return ir.Lookahead(lt, loc)
            raise self.unsupported(t, f"packet_in.{mem}")
        if isinstance(bt, ir.ExternT) and bt.name == "packet_out":
            if mem != "emit" or len(arg_trees) != 1:
                raise self.err(t, f"packet_out has no method '{mem}' with {len(arg_trees)} arguments")
            h = self.expr(arg_trees[0], ctx, None)
            return _StmtMarker(ir.VoidT(), loc, ir.Block(loc, self.emits(h, t)))
        raise self.err(t, f"{show(bt)} has no method '{mem}'")

    def emits(self, h: ir.Expr, t: Tree) -> list[ir.Stmt]:
        ht = h.type
        if isinstance(ht, ir.HeaderT):
            return [ir.Emit(h.loc, h)]
        if isinstance(ht, ir.StackT):
            out_: list[ir.Stmt] = []
            for i in range(ht.size):  # (a stack of header_unions: each element's valid member)
                out_ += self.emits(ir.StackIndex(ht.elem, h.loc, h, ir.Const(BIT32, h.loc, i)), t)
            return out_
        if isinstance(ht, ir.StructT):
            out: list[ir.Stmt] = []
            for f in ht.fields:
                out += self.emits(ir.Member(f.type, h.loc, h, f.name), t)
            return out
        raise self.err(t, f"cannot emit a {show(ht)}")

    def extern_method(self, e: ir.ExternInstance, mem: str, arg_trees: list[Tree], ctx: _Ctx,
                      t: Tree) -> ir.Expr:
        loc = self.loc(t)
        k = e.kind
        sig: dict[tuple[str, str], list[Any]] = {
            ("counter", "count"): [BIT32],
            ("direct_counter", "count"): [],
            ("meter", "execute_meter"): [BIT32, "out"],
            ("direct_meter", "read"): ["out"],
            ("register", "read"): ["out", BIT32],
            ("register", "write"): [BIT32, e.type_args[0] if e.type_args else None],
        }
        key = (k, mem)
        if key not in sig:
            raise self.err(t, f"{k} '{e.local_name}' has no method '{mem}'")
        types = sig[key]
        if key == ("register", "read") and len(arg_trees) == 1:
            raise self.unsupported(t, f"'{e.local_name}.read(index)' returning the value (write "
                                      f"'{e.local_name}.read(result, index)')")
        if len(arg_trees) != len(types):
            raise self.err(t, f"{k}.{mem} takes {len(types)} arguments, {len(arg_trees)} given")
        args = []
        for a, ty in zip(arg_trees, types):
            if ty == "out":
                x = self.expr(a, ctx, None)
                self.check_lvalue(x, x.loc)
                if k == "register" and e.type_args and x.type != e.type_args[0]:
                    raise self.err(a, f"register element is {show(e.type_args[0])}, not {show(x.type)}")
                if k in ("meter", "direct_meter") and not (isinstance(x.type, (ir.BitT, ir.IntT)) or (
                        isinstance(x.type, ir.EnumT) and x.type.underlying is not None)):
                    # v1model: meter<T>/direct_meter<T> write a colour, a T of bit<W> (p4c unifies it)
                    raise self.err(a, f"a meter writes its colour into a bit<W>, not a {show(x.type)}")
                args.append(x)
            else:
                x = self.expr(a, ctx, None)
                if isinstance(x.type, InfIntT):
                    x = self.coerce(x, ty, a)
                elif ty is not None and isinstance(ty, ir.BitT) and ty.width == 32 and \
                        isinstance(x.type, ir.BitT) and k != "register":
                    pass  # index of any bit width (p4c infers the index type)
                elif ty is not None and x.type != ty and not (isinstance(x.type, ir.BitT) and ty == BIT32):
                    raise self.err(a, f"expected {show(ty)}, got {show(x.type)}")
                args.append(x)
        return ir.ExternCall(ir.VoidT(), loc, e.name, mem, args)

    def tuple_index(self, t: Tree, base: ir.Expr, ctx: _Ctx) -> ir.Expr:
        """``x[i]`` of a tuple (P4_16 spec, operations on tuples): the index is a compile-time
        constant, the type is the element's; an l-value when ``x`` is one."""
        tt = base.type
        idx = self.expr(_trees(t)[1], ctx, None)
        if not isinstance(idx, ir.Const) or not isinstance(idx.value, int) or isinstance(idx.value, bool):
            raise self.err(t, f"the index of a {show(tt)} must be a compile-time constant integer")
        i = int(idx.value)
        if not 0 <= i < len(tt.elems):  # type: ignore[union-attr]
            raise self.err(t, f"index {i} out of range for {show(tt)}")
        if isinstance(base, ir.ListExpr):
            return base.elems[i]
        return ir.TupleElem(tt.elems[i], self.loc(t), base, i)  # type: ignore[union-attr]

    def check_lvalue(self, e: ir.Expr, loc: ir.Loc) -> None:
        x = e
        while True:
            if isinstance(x, ir.Var):
                if (x.name in self.fn_results or "$tmp" in x.name) and x.name not in self.lvalue_temps:
                    # a call's value, or a lowered expression's: p4c ("must be a left-value")
                    raise self.err(loc, "expression is not assignable (a function call's value is not a "
                                        "left-value)" if x.name in self.fn_results else "expression is not assignable")
                if x.name in self.readonly_vars:
                    pn = x.name.rsplit(".", 1)[-1].split("$", 1)[0]  # an inlined control's copy: s.hh$1
                    raise self.err(loc, f"cannot write to '{pn}': it is an 'in' parameter, read-only "
                                        "(p4c: \"cannot be the target of an assignment\")")
                return
            if isinstance(x, ir.ActionParam):
                if id(x) in self.writable_params:
                    return
                raise self.err(loc, f"cannot assign to action parameter '{x.name}'")
            if isinstance(x, (ir.Member, ir.Slice, ir.TupleElem)):
                x = x.expr
            elif isinstance(x, (ir.StackIndex, ir.StackNext, ir.StackLast)):
                x = x.stack
            else:
                raise self.err(loc, "expression is not assignable")


def _bitless(ty: ir.Type) -> ir.Type | None:
    """A type in ``ty`` (a list, struct or header, nested) that has no bits on the wire: a string,
    an extern, void."""
    if isinstance(ty, (ir.StringT, ir.ExternT, ir.VoidT)):
        return ty
    if isinstance(ty, ir.TupleT):
        return next((b for b in map(_bitless, ty.elems) if b is not None), None)
    if isinstance(ty, ir.StructT):
        return next((b for b in (_bitless(f.type) for f in ty.fields) if b is not None), None)
    return None
