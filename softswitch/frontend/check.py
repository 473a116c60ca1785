"""Name resolution, type checking, constant folding and lowering of the parse tree to ``ir``."""
from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree

from . import ir
from .errors import P4TypeError, P4Unsupported
from .preprocess import OriginMap
from .types import BIT32, BOOL, INFINT, InfIntT, fold_binary, is_numeric, show, wrap

_BUILTIN_FILES = ("core.p4", "v1model.p4")
_V1_TYPE_NAMES = {"Parser", "VerifyChecksum", "Ingress", "Egress", "ComputeChecksum", "Deparser",
                  "V1Switch"}
_EXTERN_KINDS = {"counter", "direct_counter", "meter", "direct_meter", "register", "action_profile",
                 "action_selector"}
_BUILTIN_FUNCS = {"mark_to_drop", "hash", "random", "digest", "clone", "clone_preserving_field_list",
                  "resubmit_preserving_field_list", "recirculate_preserving_field_list", "truncate",
                  "verify_checksum", "update_checksum", "verify_checksum_with_payload",
                  "update_checksum_with_payload", "assert", "assume", "log_msg", "verify"}
_DEPRECATED_FUNCS = {"clone3": "clone3 (use clone_preserving_field_list)",
                     "resubmit": "resubmit (use resubmit_preserving_field_list)",
                     "recirculate": "recirculate (use recirculate_preserving_field_list)"}
_BINOPS = {"bin_or": "||", "bin_and": "&&", "bin_bor": "|", "bin_bxor": "^", "bin_band": "&",
           "bin_eq": "==", "bin_ne": "!=", "bin_lt": "<", "bin_gt": ">", "bin_le": "<=", "bin_ge": ">=",
           "bin_shl": "<<", "bin_shr": ">>", "bin_add": "+", "bin_sub": "-", "bin_sadd": "|+|",
           "bin_ssub": "|-|", "bin_mul": "*", "bin_div": "/", "bin_mod": "%"}


def _trees(t: Tree, data: str | None = None) -> list[Tree]:
    return [c for c in t.children if isinstance(c, Tree) and (data is None or c.data == data)]


def _tree(t: Tree, data: str) -> Tree | None:
    for c in t.children:
        if isinstance(c, Tree) and c.data == data:
            return c
    return None


def _tok(t: Tree, type_: str) -> Token | None:
    for c in t.children:
        if isinstance(c, Token) and c.type == type_:
            return c
    return None


def _name(t: Tree) -> str:
    n = _tree(t, "name")
    assert n is not None
    return str(n.children[0])


# ---------------------------------------------------------------- scope entries


@dataclass
class _Decl:
    """A named parser/control/extern/package declaration (kept as a tree)."""

    kind: str
    tree: Tree
    builtin: bool


@dataclass
class _SubControl:
    """An instance of a user control inside a control, inlined at its apply()."""

    name: str
    decl: Tree
    prefix: str  # P4Info prefix of its locals
    order: tuple
    loc: ir.Loc
    applied_args: list[Any] | None = None  # per parameter: the bound lvalue / fresh Var / Const
    applies: int = 1  # how many ``.apply(`` calls name it in the enclosing body
    body: ir.Block | None = None


@dataclass
class _TableRef:
    table: ir.Table


@dataclass
class _ActionRef:
    name: str  # P4Info name


@dataclass
class _ExternFunc:
    name: str


@dataclass
class _Block:
    """The top-level block being lowered: its variables, externs, tables and actions."""

    name: str
    kind: str  # "parser" | "control"
    locals: dict[str, ir.Type] = field(default_factory=dict)
    externs: list[tuple[tuple, ir.ExternInstance]] = field(default_factory=list)
    tables: list[tuple[tuple, ir.Table]] = field(default_factory=list)
    actions: list[tuple[tuple, str]] = field(default_factory=list)
    used_names: set[str] = field(default_factory=set)

    def fresh(self, name: str, t: ir.Type) -> str:
        n, k = name, 0
        while n in self.used_names:
            k += 1
            n = f"{name}${k}"
        self.used_names.add(n)
        self.locals[n] = t
        return n


@dataclass
class _Ctx:
    """Where an expression/statement is being lowered."""

    block: _Block | None
    in_parser: bool = False
    in_action: bool = False
    prelude: list[ir.Stmt] | None = None


class Checker:
    """Lowers a whole parse tree; one instance per program."""

    def __init__(self, origins: OriginMap, source_file: str) -> None:
        self.origins = origins
        self.source_file = source_file
        self.globals: dict[str, Any] = {}
        self.errors: list[str] = []
        self.match_kinds: list[str] = []
        self.named_types: dict[str, ir.Type] = {}
        self.actions: dict[str, ir.Action] = {}
        self.action_order: list[str] = []
        self.controller_headers: list[ir.ControllerHeader] = []
        self.digests: dict[str, ir.Digest] = {}
        self.warnings: list[str] = []
        self.main: Tree | None = None
        self.selector_inputs: dict[str, tuple[list[str], ir.Loc]] = {}
        self.action_locals: dict[str, dict[str, ir.Type]] = {}
        self.writable_params: set[int] = set()
        self.global_externs: dict[str, ir.ExternInstance] = {}

    # ------------------------------------------------------------ helpers
    def loc(self, node: Any) -> ir.Loc:
        if isinstance(node, Token):
            return self.origins.loc(node.line or 1, node.column or 1)
        meta = getattr(node, "meta", None)
        if meta is not None and not getattr(meta, "empty", True):
            return self.origins.loc(meta.line, meta.column)
        if isinstance(node, Tree):
            for c in node.children:
                if isinstance(c, (Tree, Token)):
                    lc = self.loc(c)
                    if lc.line:
                        return lc
        return ir.NO_LOC

    def err(self, node: Any, msg: str) -> P4TypeError:
        return P4TypeError(self.loc(node) if not isinstance(node, ir.Loc) else node, msg)

    def unsupported(self, node: Any, what: str) -> P4Unsupported:
        return P4Unsupported(self.loc(node) if not isinstance(node, ir.Loc) else node, what)

    def is_builtin(self, node: Any) -> bool:
        return self.loc(node).file in _BUILTIN_FILES

    def annotations(self, t: Tree | None) -> tuple[ir.Annotation, ...]:
        if t is None:
            return ()
        out = []
        for a in _trees(t, "annotation"):
            name = _name(a)
            body_tok = _tok(a, "ANNOT_BODY")
            body = str(body_tok) if body_tok is not None else None
            args: list[str | int] = []
            if body:
                for part in _split_args(body):
                    part = part.strip()
                    if len(part) >= 2 and part[0] == '"' and part[-1] == '"':
                        args.append(part[1:-1])
                    else:
                        try:
                            args.append(_parse_int(part)[0])
                        except ValueError:
                            args.append(part)
            out.append(ir.Annotation(name, body, tuple(args), self.loc(a)))
        return tuple(out)

    # ------------------------------------------------------------ program
    def program(self, tree: Tree) -> ir.Program:
        for d in tree.children:
            if isinstance(d, Tree):
                self.declaration(d)
        if self.main is None:
            raise P4TypeError(ir.Loc(self.source_file, 1, 1), "no 'main' package instantiation")
        return self.lower_main(self.main)

    def declare(self, node: Any, name: str, entry: Any) -> None:
        if name in self.globals and not self.is_builtin(node):
            old = self.globals[name]
            if not (isinstance(old, _Decl) and old.kind in ("extern_function",)):
                raise self.err(node, f"'{name}' is already declared")
        self.globals[name] = entry

    def declaration(self, d: Tree) -> None:
        k = d.data
        if k == "empty_decl":
            return
        if k == "const_decl":
            name = _name(d)
            t = self.type_ref(_type_child(d))
            e = self.expr(d.children[-1], _Ctx(None), t)
            if not isinstance(e, ir.Const):
                raise self.err(d, f"constant '{name}' is not a compile-time constant")
            self.declare(d, name, e)
        elif k == "typedef_decl":
            name = _name(d)
            t = self.type_ref(_type_child(d))
            self.named_types.setdefault(name, t) if isinstance(t, (ir.HeaderT, ir.StructT, ir.EnumT)) else None
            self.declare(d, name, ("type", t))
        elif k in ("header_decl", "struct_decl"):
            name = _name(d)
            if _tree(d, "type_params") is not None:
                raise self.unsupported(d, f"generic {k[:-5]} '{name}'")
            fields = []
            seen = set()
            for f in _trees(d, "field"):
                fname = _name(f)
                if fname in seen:
                    raise self.err(f, f"duplicate field '{fname}' in '{name}'")
                seen.add(fname)
                ft = self.type_ref(_type_child(f))
                if k == "header_decl" and not isinstance(ft, (ir.BitT, ir.IntT, ir.BoolT)) \
                        and not (isinstance(ft, ir.EnumT) and ft.underlying is not None):
                    raise self.err(f, f"header field '{fname}' must be bit<W>, int<W>, bool or a "
                                      f"serializable enum, not {show(ft)}")
                fields.append(ir.Field(fname, ft, self.annotations(_tree(f, "annotations"))))
            anns = self.annotations(_tree(d, "annotations"))
            t = (ir.HeaderT if k == "header_decl" else ir.StructT)(name, tuple(fields), anns)
            self.named_types[name] = t
            self.declare(d, name, ("type", t))
            ch = ir.find_annotation(anns, "controller_header")
            if ch is not None and isinstance(t, ir.HeaderT):
                cname = str(ch.args[0]) if ch.args else name
                self.controller_headers.append(ir.ControllerHeader(cname, t, anns, self.loc(d),
                                                                   _id_ann(anns)))
        elif k == "header_union_decl":
            raise self.unsupported(d, "header_union")
        elif k == "enum_decl":
            name = _name(d)
            members = tuple(str(n.children[0]) for n in _trees(_tree(d, "ident_list"), "name"))
            t = ir.EnumT(name, members)
            self.named_types[name] = t
            self.declare(d, name, ("type", t))
        elif k == "ser_enum_decl":
            name = _name(d)
            ut = self.type_ref(_type_child(d))
            if not isinstance(ut, (ir.BitT, ir.IntT)):
                raise self.err(d, f"enum '{name}' underlying type must be bit<W> or int<W>")
            members, values = [], []
            for m in _trees(d, "enum_member"):
                c = self.expr(m.children[-1], _Ctx(None), ut)
                if not isinstance(c, ir.Const):
                    raise self.err(m, "enum member value must be a constant")
                members.append(_name(m))
                values.append(int(c.value))
            t = ir.EnumT(name, tuple(members), ut, tuple(values))
            self.named_types[name] = t
            self.declare(d, name, ("type", t))
        elif k == "error_decl":
            for n in _trees(_tree(d, "ident_list"), "name"):
                if str(n.children[0]) not in self.errors:
                    self.errors.append(str(n.children[0]))
        elif k == "match_kind_decl":
            for n in _trees(_tree(d, "ident_list"), "name"):
                self.match_kinds.append(str(n.children[0]))
        elif k == "extern_object":
            name = _name(d)
            if not self.is_builtin(d):
                raise self.unsupported(d, f"user-defined extern '{name}'")
            self.declare(d, name, _Decl("extern", d, True))
        elif k == "extern_function":
            name = _name(_tree(d, "function_proto"))
            if not self.is_builtin(d):
                raise self.unsupported(d, f"user-defined extern function '{name}'")
            self.globals[name] = _ExternFunc(name)
        elif k in ("parser_decl", "control_decl"):
            name = _name(d)
            if name in _V1_TYPE_NAMES:
                raise self.err(d, f"'{name}' is a v1model type name; a {k[:-5]} cannot be named so")
            if _tree(d, "type_params") is not None:
                raise self.unsupported(d, f"generic {k[:-5]} '{name}'")
            if _tree(d, "ctor_params") is not None:
                raise self.unsupported(d, f"{k[:-5]} constructor parameters ('{name}')")
            for vs in _trees(d, "value_set_decl"):
                raise self.unsupported(vs, "parser value_set")
            self.declare(d, name, _Decl(k[:-5], d, self.is_builtin(d)))
        elif k in ("parser_type_decl", "control_type_decl", "package_decl"):
            name = _name(d)
            self.declare(d, name, _Decl(k, d, self.is_builtin(d)))
        elif k == "action_decl":
            self.top_action(d)
        elif k == "function_decl":
            raise self.unsupported(d, "function declaration")
        elif k == "instantiation":
            name = _name(d)
            if name == "main":
                self.main = d
            else:
                self.global_instance(d, name)
        else:
            raise self.unsupported(d, k.replace("_", " "))

    def global_instance(self, d: Tree, name: str) -> None:
        """A top-level extern instance: shared by every control that uses it, P4Info name bare."""
        tref = _type_child(d)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        if tname not in _EXTERN_KINDS:
            raise self.unsupported(d, f"top-level instance '{name}' of '{tname}' (only v1model extern "
                                      f"objects and 'main' may be instantiated at the top level)")
        ctx = _Ctx(None)
        ctx.scope = [{}]  # type: ignore[attr-defined]
        inst = self.build_extern(d, ctx, "")
        self.declare(d, name, inst)
        if inst.name in self.global_externs:
            raise self.err(d, f"two extern instances are named '{inst.name}'")
        self.global_externs[inst.name] = inst

    # ------------------------------------------------------------ types
    def type_ref(self, t: Tree) -> ir.Type:
        k = t.data
        if k == "bool_type":
            return BOOL
        if k == "error_type":
            return ir.ErrorT()
        if k == "string_type":
            return ir.StringT()
        if k == "void_type":
            return ir.VoidT()
        if k in ("bit_type", "int_type", "bit1_type"):
            if k == "bit1_type":
                return ir.BitT(1)
            w = self.width(_trees(t)[0])
            if w <= 0 or (k == "int_type" and w < 1):
                raise self.err(t, f"bad width {w}")
            return ir.BitT(w) if k == "bit_type" else ir.IntT(w)
        if k == "varbit_type":
            raise self.unsupported(t, "varbit")
        if k == "infint_type":
            return INFINT  # type: ignore[return-value]
        if k == "dontcare_type":
            raise self.unsupported(t, "don't-care type")
        if k in ("named_type", "dot_named_type"):
            name = str(t.children[0])
            e = self.globals.get(name)
            if isinstance(e, tuple) and e[0] == "type":
                return e[1]
            if isinstance(e, _Decl):
                return ir.ExternT(name)
            if name in ("packet_in", "packet_out"):
                return ir.ExternT(name)
            if name.startswith("_"):
                return ir.ExternT(name)  # type variable of a built-in declaration
            raise self.err(t, f"unknown type '{name}'")
        if k == "specialized_type":
            name = str(t.children[0])
            args = tuple(self.type_ref(a) for a in _trees(_tree(t, "type_args")))
            return ir.ExternT(name, args)
        if k == "stack_type":
            elem = self.type_ref(_trees(t)[0])
            size = self.expr(_trees(t)[1], _Ctx(None), None)
            if not isinstance(elem, ir.HeaderT):
                raise self.err(t, f"header stack element must be a header, not {show(elem)}")
            if not isinstance(size, ir.Const) or int(size.value) <= 0:
                raise self.err(t, "header stack size must be a positive constant")
            return ir.StackT(elem, int(size.value))
        if k == "tuple_type":
            return ir.TupleT(tuple(self.type_ref(a) for a in _trees(_tree(t, "type_args"))))
        raise self.unsupported(t, f"type {k}")

    def width(self, t: Tree) -> int:
        if t.data == "width_num":
            return _parse_int(str(t.children[0]))[0]
        c = self.expr(t, _Ctx(None), None)
        if not isinstance(c, ir.Const):
            raise self.err(t, "width must be a constant")
        return int(c.value)

    # ------------------------------------------------------------ expressions
    def expr(self, t: Any, ctx: _Ctx, expected: ir.Type | None) -> ir.Expr:
        e = self._expr(t, ctx, expected)
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
            v, ty = _parse_int(str(t.children[0]))
            return ir.Const(ty if ty is not None else INFINT, loc, v)  # type: ignore[arg-type]
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
            if isinstance(e, tuple) and e[0] == "type" and isinstance(e[1], ir.EnumT):
                et = e[1]
                if mem not in et.members:
                    raise self.err(t, f"enum {tname} has no member '{mem}'")
                return ir.Const(et, loc, et.value_of(mem))
            raise self.err(t, f"'{tname}.{mem}' is not an enum member")
        if k == "error_member":
            mem = str(_tree(t, "mname").children[0])
            if mem not in self.errors:
                raise self.err(t, f"unknown error '{mem}'")
            return ir.Const(ir.ErrorT(), loc, self.errors.index(mem))
        if k == "member":
            return self.member(t, ctx)
        if k == "index":
            base = self.expr(_trees(t)[0], ctx, None)
            if not isinstance(base.type, ir.StackT):
                if isinstance(base.type, (ir.BitT, ir.IntT)):
                    raise self.err(t, "bit index: use a slice x[i:i]")
                raise self.err(t, f"cannot index a value of type {show(base.type)}")
            idx = self.expr(_trees(t)[1], ctx, None)
            if isinstance(idx.type, InfIntT):
                idx = ir.Const(BIT32, idx.loc, int(idx.value))
            if isinstance(idx, ir.Const):
                if not 0 <= int(idx.value) < base.type.size:
                    raise self.err(t, f"index {idx.value} out of range for {show(base.type)}")
            elif not isinstance(idx.type, ir.BitT):
                raise self.err(t, f"stack index must be bit<W>, not {show(idx.type)}")
            return ir.StackIndex(base.type.elem, loc, base, idx)
        if k == "slice":
            base = self.expr(_trees(t)[0], ctx, None)
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
            a = self.expr(_trees(t)[0], ctx, None)
            b = self.expr(_trees(t)[1], ctx, None)
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
            a = self.expr(_trees(t)[0], ctx, expected if op != "!" else BOOL)
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
            a = self.expr(_trees(t)[1], ctx, None)
            return self.cast(a, tt, t)
        if k == "mux":
            c = self.expr(_trees(t)[0], ctx, BOOL)
            a = self.expr(_trees(t)[1], ctx, expected)
            b = self.expr(_trees(t)[2], ctx, expected)
            a, b = self.unify(a, b, t)
            if isinstance(c, ir.Const):
                return a if c.value else b
            if isinstance(a.type, InfIntT):
                raise self.err(t, "cannot infer the width of '?:' operands")
            return ir.Mux(a.type, loc, c, a, b)
        if k == "list_expr":
            el = _tree(t, "expr_list")
            elems = [self.expr(x, ctx, None) for x in _trees(el)] if el is not None else []
            if isinstance(expected, (ir.HeaderT, ir.StructT)):
                return self.list_to_struct(ir.ListExpr(ir.TupleT(()), loc, elems), expected, t)
            for x in elems:
                if isinstance(x.type, InfIntT):
                    raise self.err(x.loc, "cannot infer the width of an integer in a list; give it a width")
            return ir.ListExpr(ir.TupleT(tuple(x.type for x in elems)), loc, elems)
        if k == "struct_expr":
            pairs = [(_name(p), p) for p in _trees(t, "kv_pair")]
            if isinstance(expected, (ir.HeaderT, ir.StructT)):
                names = [n for n, _ in pairs]
                elems = []
                for n, p in pairs:
                    try:
                        ft = expected.field_type(n)
                    except KeyError:
                        raise self.err(p, f"{expected.name} has no field '{n}'") from None
                    elems.append(self.expr(p.children[-1], ctx, ft))
                return self.list_to_struct(ir.ListExpr(ir.TupleT(()), loc, elems), expected, t, names)
            vals = [(n, self.expr(p.children[-1], ctx, None)) for n, p in pairs]
            return ir.StructInit(ir.StructT("", tuple(ir.Field(n, v.type) for n, v in vals)), loc, vals)
        if k in ("call_expr", "generic_call"):
            return self.call(t, ctx)
        if k == "this_":
            raise self.unsupported(t, "'this'")
        if k == "ctor_call":
            raise self.err(t, "constructor call in an expression")
        raise self.unsupported(t, k.replace("_", " "))

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
            b = self.expr(rt, ctx, BOOL)
            if isinstance(a, ir.Const):
                if op == "&&":
                    return b if a.value else ir.Const(BOOL, loc, False)
                return ir.Const(BOOL, loc, True) if a.value else b
            return ir.Binary(BOOL, loc, op, a, b)
        if op in ("<<", ">>"):
            a = self.expr(lt, ctx, expected)
            b = self.expr(rt, ctx, None)
            if not is_numeric(a.type) or not is_numeric(b.type):
                raise self.err(t, f"'{op}' needs numeric operands")
            if isinstance(b.type, ir.IntT):
                raise self.err(t, "shift amount must be unsigned")
            if isinstance(b.type, InfIntT):
                if int(b.value) < 0:  # type: ignore[union-attr]
                    raise self.err(t, "negative shift amount")
                b = ir.Const(BIT32, b.loc, int(b.value))  # type: ignore[union-attr]
            if isinstance(a, ir.Const) and isinstance(b, ir.Const):
                return ir.Const(a.type, loc, fold_binary(op, int(a.value), int(b.value), a.type))
            if isinstance(a.type, InfIntT):
                raise self.err(t, "cannot infer the width of the shifted integer; give it a width")
            return ir.Binary(a.type, loc, op, a, b)
        num_expected = expected if op not in ("==", "!=", "<", "<=", ">", ">=") else None
        a = self.expr(lt, ctx, None)
        b = self.expr(rt, ctx, None)
        a, b = self.unify(a, b, t)
        if isinstance(a.type, InfIntT) and isinstance(b.type, InfIntT) and num_expected is not None \
                and isinstance(num_expected, (ir.BitT, ir.IntT)):
            a = self.coerce(a, num_expected, t)
            b = self.coerce(b, num_expected, t)
        if a.type != b.type:
            raise self.err(t, f"cannot apply '{op}' to {show(a.type)} and {show(b.type)}")
        ty = a.type
        if op in ("==", "!="):
            if isinstance(ty, (ir.ExternT, ir.StringT, ir.VoidT, ir.StackT)):
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
                (st == tt.underlying or isinstance(st, InfIntT)) or isinstance(st, ir.EnumT) and st.underlying is not None and isinstance(tt, (ir.BitT, ir.IntT)):
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
        if e is None:
            raise self.err(t, f"'{name}' is not declared")
        if isinstance(e, ir.Const):
            return ir.Const(e.type, self.loc(t), e.value)
        if isinstance(e, _ParamEntry):
            return e.param
        if isinstance(e, ir.Expr):
            return e
        return _Named(ir.VoidT(), self.loc(t), name, e)

    def member(self, t: Tree, ctx: _Ctx) -> ir.Expr:
        base = self.expr(_trees(t)[0], ctx, None)
        mem = str(_tree(t, "mname").children[0])
        loc = self.loc(t)
        bt = base.type
        if isinstance(base, _Named):
            return _Method(ir.VoidT(), loc, base, mem)
        if isinstance(base, ir.ApplyTable) and base.result == "none":
            if mem in ("hit", "miss"):
                return ir.ApplyTable(BOOL, loc, base.table, mem)
            raise self.err(t, f"table apply result has no member '{mem}' here")
        if isinstance(bt, (ir.HeaderT, ir.StructT)):
            if mem in ("isValid", "setValid", "setInvalid") and isinstance(bt, ir.HeaderT):
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
            if mem == "last":
                return ir.StackLast(bt.elem, loc, base)
            if mem == "lastIndex":
                return ir.StackLastIndex(BIT32, loc, base)
            if mem in ("push_front", "pop_front"):
                return _Method(ir.VoidT(), loc, base, mem)
            raise self.err(t, f"header stack has no member '{mem}'")
        if isinstance(bt, ir.ExternT):
            return _Method(ir.VoidT(), loc, base, mem)
        raise self.err(t, f"value of type {show(bt)} has no member '{mem}'")

    # ------------------------------------------------------------ calls
    def call(self, t: Tree, ctx: _Ctx) -> ir.Expr:
        callee_t = _trees(t)[0]
        targs: tuple[ir.Type, ...] = ()
        if t.data == "generic_call":
            targs = tuple(self.type_ref(x) for x in _trees(_tree(t, "type_args")))
        arg_trees = _trees(_tree(t, "args")) if _tree(t, "args") is not None else []
        callee = self.expr(callee_t, ctx, None)
        if isinstance(callee, _Method):
            return self.method_call(callee, arg_trees, targs, ctx, t)
        if isinstance(callee, _Named):
            e = callee.entry
            if isinstance(e, _ExternFunc):
                return self.builtin_call(e.name, arg_trees, targs, ctx, t)
            if isinstance(e, _ActionRef):
                return self.action_call(e.name, arg_trees, ctx, t)
            raise self.err(t, f"'{callee.name}' cannot be called")
        if isinstance(callee, _Named) is False and isinstance(callee, ir.Expr):
            raise self.err(t, "this expression cannot be called")
        raise self.err(t, "bad call")

    def action_call(self, aname: str, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        act = self.actions[aname]
        if len(arg_trees) != len(act.params):
            raise self.err(t, f"action '{act.local_name}' takes {len(act.params)} arguments,"
                              f" {len(arg_trees)} given")
        args = [self.expr(a, ctx, p.type) for a, p in zip(arg_trees, act.params)]
        for a, p in zip(args, act.params):
            if p.direction in ("out", "inout"):
                self.check_lvalue(a, a.loc)
        return ir.ActionCall(ir.VoidT(), self.loc(t), aname, args)

    def args(self, arg_trees: list[Tree], ctx: _Ctx, types: list[ir.Type | None], t: Tree,
             what: str) -> list[ir.Expr]:
        if len(arg_trees) != len(types):
            raise self.err(t, f"{what} takes {len(types)} arguments, {len(arg_trees)} given")
        return [self.expr(a, ctx, ty) for a, ty in zip(arg_trees, types)]

    def builtin_call(self, name: str, arg_trees: list[Tree], targs: tuple, ctx: _Ctx, t: Tree) -> ir.Expr:
        loc = self.loc(t)
        enum = self.enum_type
        if name in _DEPRECATED_FUNCS:
            raise self.unsupported(t, _DEPRECATED_FUNCS[name])
        if name not in _BUILTIN_FUNCS:
            raise self.unsupported(t, f"extern function '{name}'")
        n = len(arg_trees)
        if name == "mark_to_drop":
            if n != 1:
                raise self.unsupported(t, "mark_to_drop() without standard_metadata")
            args = self.args(arg_trees, ctx, [self.std_meta_type()], t, name)
        elif name == "hash":
            res = self.expr(arg_trees[0], ctx, None) if n == 5 else None
            if res is None:
                raise self.err(t, "hash takes 5 arguments")
            self.check_lvalue(res, res.loc)
            algo = self.expr(arg_trees[1], ctx, enum("HashAlgorithm"))
            base = self.expr(arg_trees[2], ctx, None)
            data = self.expr(arg_trees[3], ctx, None)
            mx = self.expr(arg_trees[4], ctx, None)
            if isinstance(base.type, InfIntT):
                base = self.coerce(base, mx.type if not isinstance(mx.type, InfIntT) else res.type, t)
            if isinstance(mx.type, InfIntT):
                mx = self.coerce(mx, base.type, t)
            data = self.as_list(data, t)
            args = [res, algo, base, data, mx]
        elif name == "random":
            res = self.expr(arg_trees[0], ctx, None)
            self.check_lvalue(res, res.loc)
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
            if not isinstance(dt, ir.StructT) or not dt.name:
                raise self.err(t, "digest data must be a named struct type (use digest<T>(...))")
            if dt.name not in self.digests:
                self.digests[dt.name] = ir.Digest(dt.name, dt, loc)
            args = [recv, data]
            targs = (dt,)
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
            data = self.as_list(self.expr(arg_trees[1], ctx, None), t)
            ck = self.expr(arg_trees[2], ctx, None)
            if name.startswith("update"):
                self.check_lvalue(ck, ck.loc)
            if not isinstance(ck.type, ir.BitT):
                raise self.err(t, f"checksum field must be bit<W>, not {show(ck.type)}")
            algo = self.expr(arg_trees[3], ctx, enum("HashAlgorithm"))
            args = [cond, data, ck, algo]
        return ir.BuiltinCall(ir.VoidT(), loc, name, args, targs)

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
                return ir.ApplyTable(ir.VoidT(), loc, e.table.name)
            if isinstance(e, ir.ExternInstance):
                if ctx.in_parser:
                    raise self.unsupported(t, f"extern method call in a parser ('{base.name}.{mem}')")
                return self.extern_method(e, mem, arg_trees, ctx, t)
            if isinstance(e, _SubControl):
                if mem != "apply":
                    raise self.err(t, f"control instance '{base.name}' has no method '{mem}'")
                return self.inline_control(e, arg_trees, ctx, t)
            raise self.err(t, f"'{base.name}' has no method '{mem}'")
        if isinstance(bt, ir.HeaderT) and mem in ("isValid", "setValid", "setInvalid"):
            if arg_trees:
                raise self.err(t, f"{mem}() takes no arguments")
            if mem == "isValid":
                return ir.IsValid(BOOL, loc, base)
            self.check_lvalue(base, loc)
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
                if len(arg_trees) != 1:
                    raise self.unsupported(t, "two-argument extract (varbit)")
                h = self.expr(arg_trees[0], ctx, None)
                if not isinstance(h.type, ir.HeaderT):
                    raise self.err(t, f"extract needs a header, got {show(h.type)}")
                self.check_lvalue(h, loc)
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
                try:
                    ir.type_width(lt)
                except TypeError:
                    raise self.err(t, f"cannot lookahead a {show(lt)}") from None
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
            return [ir.Emit(h.loc, ir.StackIndex(ht.elem, h.loc, h, ir.Const(BIT32, h.loc, i)))
                    for i in range(ht.size)]
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
        if len(arg_trees) != len(types):
            raise self.err(t, f"{k}.{mem} takes {len(types)} arguments, {len(arg_trees)} given")
        args = []
        for a, ty in zip(arg_trees, types):
            if ty == "out":
                x = self.expr(a, ctx, None)
                self.check_lvalue(x, x.loc)
                if k == "register" and e.type_args and x.type != e.type_args[0]:
                    raise self.err(a, f"register element is {show(e.type_args[0])}, not {show(x.type)}")
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

    def check_lvalue(self, e: ir.Expr, loc: ir.Loc) -> None:
        x = e
        while True:
            if isinstance(x, ir.Var):
                return
            if isinstance(x, ir.ActionParam):
                if id(x) in self.writable_params:
                    return
                raise self.err(loc, f"cannot assign to action parameter '{x.name}'")
            if isinstance(x, (ir.Member, ir.Slice)):
                x = x.expr
            elif isinstance(x, (ir.StackIndex, ir.StackNext, ir.StackLast)):
                x = x.stack
            else:
                raise self.err(loc, "expression is not assignable")

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
        k = s.data
        loc = self.loc(s)
        if k == "empty_stmt":
            return []
        if k == "block_stmt":
            return [self.block(_tree(s, "block"), ctx)]
        if k == "assign_stmt":
            lhs = self.expr(_trees(s)[0], ctx, None)
            self.check_lvalue(lhs, loc)
            rhs = self.expr(_trees(s)[1], ctx, lhs.type)
            return [ir.Assign(loc, lhs, rhs)]
        if k == "call_stmt":
            e = self.expr(_trees(s)[0], ctx, None)
            return self.call_as_stmt(e, loc)
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
            ctx.scope[-1][name] = e  # type: ignore[attr-defined]
            return []
        if k == "if_stmt":
            kids = _trees(s)
            c = self.expr(kids[0], ctx, BOOL)
            then = self.as_block(kids[1], ctx)
            els = self.as_block(kids[2], ctx) if len(kids) > 2 else None
            return [ir.If(loc, c, then, els)]
        if k == "switch_stmt":
            return [self.switch(s, ctx)]
        if k == "exit_stmt":
            return [ir.Exit(loc)]
        if k == "return_stmt":
            if _trees(s):
                raise self.err(s, "return with a value outside a function")
            return [ir.Return(loc)]
        raise self.unsupported(s, k.replace("_", " "))

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
        store = ctx.block if ctx.block is not None else ctx.action_block
        prefix = getattr(ctx, "var_prefix", "")
        uname = store.fresh(prefix + name, t)
        v = ir.Var(t, loc, uname)
        ctx.scope[-1][name] = v  # type: ignore[attr-defined]
        return ir.VarDecl(loc, v, init)

    def call_as_stmt(self, e: ir.Expr, loc: ir.Loc) -> list[ir.Stmt]:
        if isinstance(e, _StmtMarker):
            st = e.stmt
            return list(st.stmts) if isinstance(st, ir.Block) else [st]
        if isinstance(e, _VerifyMarker):
            return [ir.Verify(loc, e.args[0], e.args[1])]
        if isinstance(e, _Inlined):
            return e.stmts
        if isinstance(e, (ir.ApplyTable, ir.ActionCall, ir.ExternCall, ir.BuiltinCall, ir.SetValid,
                          ir.SetInvalid, ir.PushFront, ir.PopFront)):
            return [ir.ExprStmt(loc, e)]
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
        seen_default = False
        sel = None if table is not None else self.expr(sel_t, ctx, None)
        if sel is not None and not isinstance(sel.type, (ir.BitT, ir.IntT, ir.EnumT, ir.ErrorT)):
            raise self.err(s, f"cannot switch on a value of type {show(sel.type)}")
        for c in _trees(s, "switch_case"):
            lab = _trees(c)[0]
            body_t = _tree(c, "block")
            is_default = lab.data == "default_label"
            if is_default:
                seen_default = True
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
                pending.append(ent.name)
            else:
                v = self.expr(lab, ctx, sel.type)  # type: ignore[union-attr]
                if not isinstance(v, ir.Const):
                    raise self.err(lab, "switch label must be a constant")
                pending.append(v)
            if body_t is not None or is_default:
                body = self.block(body_t, ctx) if body_t is not None else ir.Block(self.loc(c), [])
                cases.append(ir.SwitchCase(pending, is_default, body, self.loc(c)))
                pending = []
        if pending:
            cases.append(ir.SwitchCase(pending, False, ir.Block(loc, []), loc))
        del seen_default
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

    # ------------------------------------------------------------ actions
    def top_action(self, d: Tree) -> None:
        local = _name(d)
        anns = self.annotations(_tree(d, "annotations"))
        pname = _p4info_name(anns, "", local)
        blk = _Block(pname, "action")
        self.lower_action(d, pname, local, anns, _Ctx(None), blk, owner=None)
        act_locals = blk.locals
        if act_locals:
            self.action_locals[pname] = act_locals
        self.declare(d, local, _ActionRef(pname))

    def lower_action(self, d: Tree, pname: str, local: str, anns: tuple, outer: _Ctx, store: _Block,
                     owner: str | None) -> ir.Action:
        params = []
        scope: dict[str, Any] = {}
        for i, p in enumerate(_trees(_tree(d, "params"), "param")):
            pt = self.type_ref(_type_child(p))
            direc = _direction(p)
            pn = _name(p)
            if direc == "" and not isinstance(pt, (ir.BitT, ir.IntT, ir.BoolT, ir.EnumT)):
                raise self.err(p, f"action data parameter '{pn}' must be bit<W>/int<W>/bool/enum")
            params.append(ir.Param(pn, pt, direc, self.annotations(_tree(p, "annotations")), self.loc(p)))
            ap = ir.ActionParam(pt, self.loc(p), pn, i)
            if direc in ("out", "inout"):
                self.writable_params.add(id(ap))
            scope[pn] = _ParamEntry(ap, direc)
        ctx = _Ctx(outer.block, in_parser=False, in_action=True)
        ctx.scope = list(getattr(outer, "scope", [])) + [scope]  # type: ignore[attr-defined]
        ctx.action_block = store  # type: ignore[attr-defined]
        ctx.var_prefix = getattr(outer, "var_prefix", "")  # type: ignore[attr-defined]
        if pname in self.actions:
            raise self.err(d, f"two actions are named '{pname}'")
        act = ir.Action(pname, local, params, ir.Block(self.loc(d), []), anns, self.loc(d), owner, _id_ann(anns))
        self.actions[pname] = act
        act.body = self.block(_tree(d, "block"), ctx)
        return act

    # ------------------------------------------------------------ main and blocks
    def lower_main(self, m: Tree) -> ir.Program:
        tref = _type_child(m)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        if tname != "V1Switch":
            raise self.unsupported(m, f"package '{tname}' (only V1Switch)")
        args = _trees(_tree(m, "args"))
        if len(args) != 6:
            raise self.err(m, f"V1Switch takes 6 arguments, {len(args)} given")
        kinds = ["parser", "control", "control", "control", "control", "control"]
        blocks: list[Any] = []
        for a, kind in zip(args, kinds):
            if a.data != "ctor_call":
                raise self.err(a, "V1Switch arguments must be parser/control instantiations")
            n = str(a.children[0])
            d = self.globals.get(n)
            if not isinstance(d, _Decl) or d.kind != kind:
                raise self.err(a, f"'{n}' is not a {kind}")
            blocks.append(self.lower_parser(d.tree) if kind == "parser" else self.lower_control(d.tree))
        prog = ir.Program(self.source_file, self.errors, self.match_kinds, dict(self.named_types), blocks[0],
                          blocks[1], blocks[2], blocks[3], blocks[4], blocks[5], {},
                          self.controller_headers, list(self.digests.values()), self.loc(m), self.warnings)
        used: list[str] = []
        for c in prog.controls:
            for an in c.actions:
                if an not in used:
                    used.append(an)
        for an, a in self.actions.items():
            if an not in used and a.owner is None:
                used.append(an)
        prog.actions = {an: self.actions[an] for an in used}
        prog.externs = dict(self.global_externs)
        for an, loc in self.action_locals.items():
            if an in prog.actions:
                prog.actions[an].locals = loc  # type: ignore[attr-defined]
        return prog

    def block_params(self, d: Tree, blk: _Block) -> tuple[list[ir.Param], dict[str, Any]]:
        params, scope = [], {}
        for p in _trees(_tree(d, "params"), "param"):
            pt = self.type_ref(_type_child(p))
            pn = _name(p)
            params.append(ir.Param(pn, pt, _direction(p), self.annotations(_tree(p, "annotations")),
                                   self.loc(p)))
            blk.used_names.add(pn)
            scope[pn] = ir.Var(pt, self.loc(p), pn)
        return params, scope

    def lower_parser(self, d: Tree) -> ir.Parser:
        name = _name(d)
        blk = _Block(name, "parser")
        params, scope = self.block_params(d, blk)
        ctx = _Ctx(blk, in_parser=True)
        ctx.scope = [scope]  # type: ignore[attr-defined]
        init: list[ir.Stmt] = []
        for loc_t in _trees(d):
            if loc_t.data == "var_decl":
                init += self.stmt(loc_t, ctx)
            elif loc_t.data == "const_decl":
                self.stmt(loc_t, ctx)
            elif loc_t.data == "value_set_decl":
                raise self.unsupported(loc_t, "parser value_set")
            elif loc_t.data == "instantiation":
                raise self.unsupported(loc_t, "instances in a parser (sub-parsers, Checksum16)")
        states: dict[str, ir.ParserState] = {}
        state_trees = _trees(d, "parser_state")
        names = [_name(s) for s in state_trees]
        for s in state_trees:
            sn = _name(s)
            if sn in states:
                raise self.err(s, f"duplicate state '{sn}'")
            ctx.scope.append({})  # type: ignore[attr-defined]
            stmts: list[ir.Stmt] = []
            for st in _trees(s):
                if st.data in ("annotations", "name"):
                    continue
                if st.data in ("direct_transition", "select_transition"):
                    tr = self.transition(st, ctx, names)
                else:
                    stmts += self.stmt(st, ctx)
            ctx.scope.pop()  # type: ignore[attr-defined]
            if sn == "start" and init:
                stmts = init + stmts
            states[sn] = ir.ParserState(sn, stmts, tr, self.annotations(_tree(s, "annotations")), self.loc(s))
        if "start" not in states:
            raise self.err(d, f"parser '{name}' has no 'start' state")
        states = {"start": states["start"], **{k: v for k, v in states.items() if k != "start"}}
        return ir.Parser(name, params, blk.locals, states, self.annotations(_tree(d, "annotations")), self.loc(d))

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
        cases = []
        for c in _trees(sel, "select_case"):
            ks_t = _trees(c)[0]
            comps = _trees(ks_t) if ks_t.data == "tuple_keyset" else [ks_t]
            if len(comps) != len(keys):
                if len(comps) == 1 and comps[0].data == "default_keyset":
                    comps = comps * len(keys)
                else:
                    raise self.err(c, f"select has {len(keys)} keys, case has {len(comps)}")
            kss = [self.keyset(x, k.type, ctx) for x, k in zip(comps, keys)]
            cases.append(ir.SelectCase(kss, target(_tree(c, "name")), self.loc(c)))
        return ir.Transition(loc, keys=keys, cases=cases)

    def keyset(self, t: Tree, ty: ir.Type, ctx: _Ctx, lpm: bool = False) -> ir.KeySet:
        loc = self.loc(t)
        mask_all = (1 << ir.type_width(ty)) - 1 if not isinstance(ty, ir.ErrorT) else 0

        def const(x: Tree) -> int:
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

    def lower_control(self, d: Tree, prefix: str | None = None, blk: _Block | None = None,
                      bindings: dict[str, Any] | None = None, order: tuple = (),
                      var_prefix: str = "") -> ir.Control:
        name = _name(d)
        top = blk is None
        if blk is None:
            blk = _Block(name, "control")
        pfx = name if prefix is None else prefix
        if top:
            params, scope = self.block_params(d, blk)
        else:
            params, scope = [], dict(bindings or {})
        ctx = _Ctx(blk)
        ctx.scope = [scope]  # type: ignore[attr-defined]
        ctx.var_prefix = var_prefix  # type: ignore[attr-defined]
        init: list[ir.Stmt] = []
        for i, lt in enumerate(_trees(d)):
            key = order + (i,)
            k = lt.data
            if k in ("annotations", "name", "params", "block"):
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
                self.lower_action(lt, pname, local, anns, ctx, blk, owner=blk.name)
                blk.actions.append((key, pname))
                scope[local] = _ActionRef(pname)
            elif k == "table_decl":
                tb = self.table(lt, ctx, pfx)
                blk.tables.append((key, tb))
                scope[_name(lt)] = _TableRef(tb)
            else:
                raise self.unsupported(lt, k.replace("_", " "))
        body_t = _tree(d, "block")
        counts = _apply_counts(body_t)
        for ent in scope.values():
            if isinstance(ent, _SubControl):
                ent.applies = counts.get(ent.name, 0)
        body = self.block(body_t, ctx)
        body.stmts = init + body.stmts
        if not top:
            return ir.Control(name, params, {}, {}, {}, [], body, (), self.loc(d))
        externs = dict(self.global_externs)
        for _, e in sorted(blk.externs, key=lambda x: x[0]):
            if e.name in externs:
                raise self.err(e.loc, f"two extern instances are named '{e.name}'")
            externs[e.name] = e
        tables = {t.name: t for _, t in sorted(blk.tables, key=lambda x: x[0])}
        actions = []
        # top-level actions used by this control's tables come first, as p4c localizes them
        for _, t in sorted(blk.tables, key=lambda x: x[0]):
            for ar in t.actions:
                if self.actions[ar.action].owner is None and ar.action not in actions:
                    actions.append(ar.action)
        glob_order = list(self.actions)
        actions.sort(key=glob_order.index)
        actions += [a for _, a in sorted(blk.actions, key=lambda x: x[0])]
        self.check_selectors(tables)
        return ir.Control(name, params, blk.locals, externs, tables, actions, body,
                          self.annotations(_tree(d, "annotations")), self.loc(d))

    def instantiate(self, lt: Tree, ctx: _Ctx, blk: _Block, pfx: str, key: tuple, var_prefix: str) -> None:
        local = _name(lt)
        tref = _type_child(lt)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        decl = self.globals.get(tname)
        if isinstance(decl, _Decl) and decl.kind == "control" and not decl.builtin:
            if _trees(_tree(lt, "args")):
                raise self.unsupported(lt, "control constructor arguments")
            pname = _p4info_name(self.annotations(_tree(lt, "annotations")), pfx, local)
            sub = _SubControl(local, decl.tree, pname, key, self.loc(lt))
            ctx.scope[-1][local] = sub  # type: ignore[attr-defined]
            return
        if tname not in _EXTERN_KINDS:
            if tname in ("Checksum16",):
                raise self.unsupported(lt, "Checksum16 (deprecated)")
            raise self.unsupported(lt, f"instance of '{tname}'")
        inst = self.build_extern(lt, ctx, pfx)
        blk.externs.append((key, inst))
        ctx.scope[-1][local] = inst  # type: ignore[attr-defined]

    def build_extern(self, lt: Tree, ctx: _Ctx, pfx: str) -> ir.ExternInstance:
        """The v1model extern object declared by instantiation ``lt`` (P4Info prefix ``pfx``)."""
        local = _name(lt)
        anns = self.annotations(_tree(lt, "annotations"))
        tref = _type_child(lt)
        tname = str(tref.children[0])
        targs = tuple(self.type_ref(x) for x in _trees(_tree(tref, "type_args"))) \
            if tref.data == "specialized_type" else ()
        args = [self.expr(a, ctx, None) for a in _trees(_tree(lt, "args"))]
        pname = _p4info_name(anns, pfx, local)
        loc = self.loc(lt)
        inst = ir.ExternInstance(tname, pname, local, anns, loc, type_args=targs, id=_id_ann(anns))  # type: ignore

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
        elif tname == "action_profile":
            inst.size = cint(0, "size")
        elif tname == "action_selector":
            a0 = args[0]
            if not isinstance(a0, ir.Const) or not isinstance(a0.type, ir.EnumT):
                raise self.err(lt, "action_selector needs a HashAlgorithm")
            inst.algorithm = a0.type.members[int(a0.value)]
            inst.size = cint(1, "size")
            inst.width = cint(2, "output width")
        return inst

    def inline_control(self, sub: _SubControl, arg_trees: list[Tree], ctx: _Ctx, t: Tree) -> ir.Expr:
        d = sub.decl
        params = _trees(_tree(d, "params"), "param")
        if len(params) != len(arg_trees):
            raise self.err(t, f"'{sub.name}.apply' takes {len(params)} arguments, {len(arg_trees)} given")
        pre: list[ir.Stmt] = []
        bindings: dict[str, Any] = {}
        bound: list[Any] = []
        again = sub.body is not None
        for i, (p, a) in enumerate(zip(params, arg_trees)):
            pt = self.type_ref(_type_child(p))
            direc = _direction(p)
            e = self.expr(a, ctx, pt)
            pn = _name(p)
            if direc in ("inout", "out"):
                self.check_lvalue(e, e.loc)
                b: Any = e
                if again and (_print_expr(e) != _print_expr(sub.applied_args[i])  # type: ignore[index]
                              or "<expr>" in _print_expr(e)):
                    raise self.unsupported(a, f"applying control instance '{sub.name}' again with a "
                                              f"different {direc} argument for '{pn}'")
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
        if again:
            # the same instance: its tables, actions and externs are shared, the body runs again
            return _Inlined(ir.VoidT(), self.loc(t), pre + [copy.deepcopy(sub.body)])
        var_prefix = sub.prefix.split(".", 1)[-1] + "."
        ctl = self.lower_control(d, prefix=sub.prefix, blk=ctx.block, bindings=bindings, order=sub.order,
                                 var_prefix=var_prefix)
        sub.body = ctl.body
        sub.applied_args = bound
        return _Inlined(ir.VoidT(), self.loc(t), pre + [ctl.body])

    # ------------------------------------------------------------ tables
    def table(self, t: Tree, ctx: _Ctx, pfx: str) -> ir.Table:
        local = _name(t)
        anns = self.annotations(_tree(t, "annotations"))
        pname = _p4info_name(anns, pfx, local)
        loc = self.loc(t)
        keys: list[ir.TableKey] = []
        actions: list[ir.TableActionRef] = []
        default: ir.DefaultAction | None = None
        entries_t: Tree | None = None
        entries_const = False
        size, size_given = 1024, False
        impl = counters = meters = None
        support_timeout = False
        seen: set[str] = set()
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
                    e = self.expr(_trees(ke)[0], ctx, None)
                    mk = str(_tree(ke, "name").children[0])
                    if mk not in self.match_kinds:
                        raise self.err(ke, f"unknown match kind '{mk}'")
                    if isinstance(e.type, InfIntT) or not isinstance(e.type, (ir.BitT, ir.IntT, ir.BoolT,
                                                                                ir.EnumT, ir.ErrorT)):
                        raise self.err(ke, f"table key must be bit<W>/int<W>/bool/enum, not {show(e.type)}")
                    kanns = self.annotations(_tree(ke, "annotations"))
                    nm = ir.find_annotation(kanns, "name")
                    kname = str(nm.args[0]) if nm is not None and nm.args else _source_text(self, _trees(ke)[0])
                    keys.append(ir.TableKey(e, mk, kname, kanns, self.loc(ke)))  # type: ignore[arg-type]
            elif p.data == "actions_prop":
                for ai in _trees(p, "action_item"):
                    aanns = self.annotations(_tree(ai, "annotations"))
                    ar = _tree(ai, "action_ref") or _tree(ai, "dot_action_ref")
                    an = _name(ar)
                    ent = self.lookup(an, ctx) if ar.data == "action_ref" else self.globals.get(an)
                    if not isinstance(ent, _ActionRef):
                        raise self.err(ai, f"'{an}' is not an action")
                    if _tree(ar, "args") is not None and _trees(_tree(ar, "args")):
                        raise self.unsupported(ai, "action arguments in a table's actions list")
                    scope = "TABLE_AND_DEFAULT"
                    if ir.find_annotation(aanns, "defaultonly"):
                        scope = "DEFAULT_ONLY"
                    elif ir.find_annotation(aanns, "tableonly"):
                        scope = "TABLE_ONLY"
                    if any(a.action == ent.name for a in actions):
                        raise self.err(ai, f"action '{an}' listed twice")
                    actions.append(ir.TableActionRef(ent.name, scope, aanns, self.loc(ai)))  # type: ignore
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
                    if not isinstance(c, ir.Const) or int(c.value) <= 0:
                        raise self.err(p, "table size must be a positive constant")
                    size, size_given = int(c.value), True
                elif pk == "implementation":
                    impl = self.table_extern(val_t, ctx, ("action_profile", "action_selector"), pname)
                elif pk == "counters":
                    counters = self.table_extern(val_t, ctx, ("direct_counter",), pname)
                elif pk == "meters":
                    meters = self.table_extern(val_t, ctx, ("direct_meter",), pname)
                elif pk == "support_timeout":
                    c = self.expr(val_t, ctx, BOOL)
                    support_timeout = bool(getattr(c, "value", False))
                elif pk in ("psa_direct_counter", "psa_direct_meter", "psa_implementation"):
                    raise self.unsupported(p, f"table property '{pk}'")
                else:
                    self.warnings.append(f"{self.loc(p)}: warning: unknown table property '{pk}' ignored")
        if not actions:
            raise self.err(t, f"table '{local}' has no actions")
        sel_keys = [k for k in keys if k.match_kind == "selector"]
        if sel_keys and (impl is None or self.extern_kind(impl, ctx) != "action_selector"):
            raise self.err(t, f"table '{local}' has selector keys but no action_selector implementation")
        if default is None:
            if "NoAction" not in [self.actions[a.action].local_name for a in actions]:
                actions.append(ir.TableActionRef("NoAction", "DEFAULT_ONLY",
                                                 (ir.Annotation("defaultonly"),), loc, implicit=True))
            na = next(a.action for a in actions if self.actions[a.action].local_name == "NoAction")
            default = ir.DefaultAction(na, [], False, loc)
        elif impl is not None:
            self.warnings.append(f"{default.loc}: warning: table '{local}' is implemented with an action"
                                 f" profile/selector; default_action is not supported on this target "
                                 f"and is ignored by bmv2")
        tbl = ir.Table(pname, local, keys, actions, default, None, entries_const, size, size_given, impl,
                       counters, meters, support_timeout, anns, loc, _id_ann(anns))
        if entries_t is not None:
            tbl.const_entries = self.entries(entries_t, tbl, ctx)
        for ref in (impl, counters, meters):
            if ref is not None:
                self.extern_by_name(ref, ctx).tables.append(pname)
        if sel_keys and impl is not None:
            inputs = [ _source_text(self, None, k) for k in sel_keys]
            prev = self.selector_inputs.get(impl)
            if prev is not None and prev[0] != inputs:
                raise self.err(t, f"action selector '{impl}' is shared by tables with different selector "
                                  f"inputs (first used at {prev[1]})")
            self.selector_inputs.setdefault(impl, (inputs, loc))
        return tbl

    def check_selectors(self, tables: dict[str, ir.Table]) -> None:
        return None

    def extern_kind(self, name: str, ctx: _Ctx) -> str:
        return self.extern_by_name(name, ctx).kind

    def extern_by_name(self, name: str, ctx: _Ctx) -> ir.ExternInstance:
        for _, e in ctx.block.externs:  # type: ignore[union-attr]
            if e.name == name:
                return e
        return self.global_externs[name]

    def table_extern(self, val_t: Tree, ctx: _Ctx, kinds: tuple[str, ...], table: str) -> str:
        if val_t.data == "ctor_call":
            raise self.unsupported(val_t, "anonymous extern instance in a table property (declare it and"
                                          " refer to it by name)")
        e = self.expr(val_t, ctx, None)
        if not isinstance(e, _Named) or not isinstance(e.entry, ir.ExternInstance) or e.entry.kind not in kinds:
            raise self.err(val_t, f"expected a {' or '.join(kinds)} instance")
        return e.entry.name

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
        if len(arg_trees) != len(dps):
            raise self.err(val_t, f"action '{an}' takes {len(dps)} arguments, {len(arg_trees)} given")
        args = []
        for a, p in zip(arg_trees, dps):
            c = self.expr(a, ctx, p.type)
            if not isinstance(c, ir.Const):
                raise self.err(a, "default action arguments must be constants")
            args.append(c)
        return ir.DefaultAction(ent.name, args, is_const, self.loc(val_t))

    def entries(self, p: Tree, tbl: ir.Table, ctx: _Ctx) -> list[ir.TableEntry]:
        mkeys = tbl.match_keys
        out = []
        n = len(_trees(p, "entry"))
        needs_prio = any(k.match_kind in ("ternary", "range", "optional") for k in mkeys)
        for i, en in enumerate(_trees(p, "entry")):
            kids = [c for c in _trees(en) if c.data not in ("annotations",)]
            prio_t = _tree(en, "entry_priority")
            kids = [c for c in kids if c.data != "entry_priority"]
            ks_t, ar = kids[0], kids[1]
            comps = _trees(ks_t) if ks_t.data == "tuple_keyset" else [ks_t]
            if len(comps) != len(mkeys):
                if len(comps) == 1 and comps[0].data == "default_keyset":
                    comps = comps * len(mkeys)
                else:
                    raise self.err(en, f"entry has {len(comps)} keys, table has {len(mkeys)}")
            kss = []
            for c, k in zip(comps, mkeys):
                ks = self.keyset(c, k.expr.type, ctx)
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
            if len(arg_trees) != len(act.data_params):
                raise self.err(ar, f"action '{an}' takes {len(act.data_params)} arguments")
            args = []
            for a, prm in zip(arg_trees, act.data_params):
                c = self.expr(a, ctx, prm.type)
                if not isinstance(c, ir.Const):
                    raise self.err(a, "entry action arguments must be constants")
                args.append(c)
            eanns = self.annotations(_tree(en, "annotations"))
            pa = ir.find_annotation(eanns, "priority")
            if prio_t is not None:
                pc = self.expr(_trees(prio_t)[0], ctx, None)
                if not isinstance(pc, ir.Const):
                    raise self.err(prio_t, "priority must be a constant")
                prio = int(pc.value)
            elif pa is not None and pa.args:
                prio = int(pa.args[0])
            else:
                # p4c gives earlier const entries higher priority
                prio = (n - i) if needs_prio else 0
            out.append(ir.TableEntry(kss, ent.name, args, prio, self.loc(en)))
        return out


# ---------------------------------------------------------------- internal expression markers


class _Named(ir.Expr):
    """A reference to a non-value (table, extern instance, action, sub-control)."""

    __slots__ = ("entry", "name")

    def __init__(self, type_: ir.Type, loc: ir.Loc, name: str, entry: Any) -> None:
        ir.Expr.__init__(self, type_, loc)
        self.name = name
        self.entry = entry


class _Method(ir.Expr):
    __slots__ = ("base", "method")

    def __init__(self, type_: ir.Type, loc: ir.Loc, base: ir.Expr, method: str) -> None:
        ir.Expr.__init__(self, type_, loc)
        self.base = base
        self.method = method


class _StmtMarker(ir.Expr):
    __slots__ = ("stmt",)

    def __init__(self, type_: ir.Type, loc: ir.Loc, stmt: ir.Stmt) -> None:
        ir.Expr.__init__(self, type_, loc)
        self.stmt = stmt


class _VerifyMarker(ir.Expr):
    __slots__ = ("args",)

    def __init__(self, type_: ir.Type, loc: ir.Loc, args: list[ir.Expr]) -> None:
        ir.Expr.__init__(self, type_, loc)
        self.args = args


class _Inlined(ir.Expr):
    __slots__ = ("stmts",)

    def __init__(self, type_: ir.Type, loc: ir.Loc, stmts: list[ir.Stmt]) -> None:
        ir.Expr.__init__(self, type_, loc)
        self.stmts = stmts


@dataclass
class _ParamEntry:
    param: ir.ActionParam
    direction: str


# ---------------------------------------------------------------- small helpers


def _apply_counts(body: Tree) -> dict[str, int]:
    """How many times each plain name is applied (``x.apply(...)``) in a body."""
    counts: dict[str, int] = {}
    for st in body.iter_subtrees():
        if st.data == "member" and str(_tree(st, "mname").children[0]) == "apply":
            base = _trees(st)[0]
            if base.data == "ident":
                n = str(_tree(base, "name").children[0])
                counts[n] = counts.get(n, 0) + 1
    return counts


def _type_child(t: Tree) -> Tree:
    for c in t.children:
        if isinstance(c, Tree) and c.data not in ("annotations", "name", "direction", "params", "args",
                                                  "ident_list", "enum_member", "type_params"):
            return c
    raise AssertionError(t.data)


def _direction(p: Tree) -> str:
    d = _tree(p, "direction")
    return str(d.children[0]) if d is not None else ""


def _id_ann(anns: tuple[ir.Annotation, ...]) -> int | None:
    a = ir.find_annotation(anns, "id")
    if a is not None and a.args and isinstance(a.args[0], int):
        return a.args[0]
    return None


def _p4info_name(anns: tuple[ir.Annotation, ...], prefix: str, local: str) -> str:
    a = ir.find_annotation(anns, "name")
    n = str(a.args[0]) if a is not None and a.args else local
    if n.startswith("."):
        return n[1:]
    return f"{prefix}.{n}" if prefix else n


_INT_RE = re.compile(r"^(?:(\d+)([ws]))?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|\d[0-9_]*)$")


def _parse_int(s: str) -> tuple[int, ir.Type | None]:
    """Parse a P4 integer literal: value and type (None if untyped)."""
    m = _INT_RE.match(s.strip())
    if not m:
        raise ValueError(s)
    body = m.group(3).replace("_", "")
    low = body.lower()
    if low.startswith("0x"):
        v = int(body, 16)
    elif low.startswith("0b"):
        v = int(body, 2)
    elif low.startswith("0o"):
        v = int(body, 8)
    elif low.startswith("0d"):
        v = int(body[2:], 10)
    else:
        v = int(body, 10)
    if m.group(1):
        w = int(m.group(1))
        t: ir.Type = ir.BitT(w) if m.group(2) == "w" else ir.IntT(w)
        return wrap(v, t), t
    return v, None


def _split_args(body: str) -> list[str]:
    out, cur, depth, instr = [], "", 0, False
    for ch in body:
        if ch == '"':
            instr = not instr
        if not instr:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "," and depth == 0:
                out.append(cur)
                cur = ""
                continue
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _source_text(chk: Checker, t: Tree | None, key: ir.TableKey | None = None) -> str:
    """The P4Info name p4c gives a key expression: the expression printed back."""
    if key is not None:
        return _print_expr(key.expr)
    e_loc = None
    del e_loc
    return _print_tree(t)


def _print_tree(t: Any) -> str:
    if isinstance(t, Token):
        return str(t)
    k = t.data
    kids = _trees(t)
    if k in ("ident", "dot_ident"):
        return ("." if k == "dot_ident" else "") + str(_tree(t, "name").children[0])
    if k == "member":
        return _print_tree(kids[0]) + "." + str(_tree(t, "mname").children[0])
    if k == "index":
        return f"{_print_tree(kids[0])}[{_print_tree(kids[1])}]"
    if k == "slice":
        return f"{_print_tree(kids[0])}[{_print_tree(kids[1])}:{_print_tree(kids[2])}]"
    if k == "number":
        return str(_parse_int(str(t.children[0]))[0])
    if k in ("call_expr",):
        args = _tree(t, "args")
        return f"{_print_tree(kids[0])}({', '.join(_print_tree(a) for a in _trees(args)) if args else ''})"
    if k in _BINOPS:
        return f"{_print_tree(kids[0])} {_BINOPS[k]} {_print_tree(kids[-1])}"
    if k == "type_member":
        return f"{t.children[0]}.{_tree(t, 'mname').children[0]}"
    return " ".join(_print_tree(c) for c in t.children)


def _print_expr(e: ir.Expr) -> str:
    if isinstance(e, ir.Var):
        return e.name
    if isinstance(e, ir.ActionParam):
        return e.name
    if isinstance(e, ir.Member):
        return f"{_print_expr(e.expr)}.{e.field}"
    if isinstance(e, ir.StackIndex):
        return f"{_print_expr(e.stack)}[{_print_expr(e.index)}]"
    if isinstance(e, ir.Slice):
        return f"{_print_expr(e.expr)}[{e.hi}:{e.lo}]"
    if isinstance(e, ir.Const):
        return str(int(e.value))
    if isinstance(e, ir.IsValid):
        return f"{_print_expr(e.header)}.isValid()"
    return "<expr>"


_unused: Callable[..., Any] | None = None
