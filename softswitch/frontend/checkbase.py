"""Shared pieces of the checker: scope entries, the lowering context, tree and literal helpers."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree

from . import ir
from .errors import P4TypeError, P4Unsupported
from .preprocess import OriginMap
from .types import show, wrap

_BUILTIN_FILES = ("core.p4", "v1model.p4")
_V1_TYPE_NAMES = {"Parser", "VerifyChecksum", "Ingress", "Egress", "ComputeChecksum", "Deparser",
                  "V1Switch"}
_EXTERN_KINDS = {"counter", "direct_counter", "meter", "direct_meter", "register", "action_profile",
                 "action_selector"}
_BUILTIN_FUNCS = {"mark_to_drop", "hash", "random", "digest", "clone", "clone_preserving_field_list",
                  "resubmit_preserving_field_list", "recirculate_preserving_field_list", "truncate",
                  "verify_checksum", "update_checksum", "verify_checksum_with_payload",
                  "update_checksum_with_payload", "assert", "assume", "log_msg", "verify",
                  "static_assert"}
# The free functions p4c's bmv2 back end turns into parser operations (ParserConverter in
# backends/bmv2/common/parser.cpp: verify, log_msg, assert/assume); any other extern call in a parser
# state -- hash, random, digest, clone, mark_to_drop, checksums, and every method of a counter,
# meter or register -- it rejects with "not supported in parser on this target".
# static_assert is folded before any back end sees it.
_PARSER_FUNCS = {"verify", "log_msg", "assert", "assume", "static_assert"}
_PARSER_REASON = ("p4c's bmv2 back end takes no extern call in a parser but verify, log_msg, assert "
                  "and assume")
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
    ctor: dict = field(default_factory=dict)  # constructor parameter -> the _SubControl passed
    # out/inout parameter index -> the variable it is bound to (copy-in/copy-out at each apply),
    # when the instance is applied more than once or its arguments overlap; None: bound in place
    copy_vars: dict[int, Any] | None = None
    may_exit: bool = False  # its inlined body may execute ``exit``
    passed: bool = False  # given as a constructor argument to another control instance
    # every apply passes the same out/inout lvalues, so they may be bound in place (as p4c's
    # inliner does when all call sites are equivalent and nothing aliases)
    same_args: bool = True
    tenv: tuple = ({}, {})  # a generic control's type parameters bound (types, their text)


@dataclass
class _TableRef:
    table: ir.Table


@dataclass
class _ActionRef:
    name: str  # P4Info name


@dataclass
class _FuncRef:
    """A user function (lowered to an action with ``function=True``)."""

    name: str


@dataclass
class _GenericFuncRef:
    """A generic user function ``T f<T>(...)``: lowered once per distinct type-argument tuple
    (as p4c's SpecializeGenericFunctions does), each specialisation a ``_FuncRef``'s action."""

    name: str
    tree: Any


@dataclass
class _SpecBlock:
    """``Name<A, ...>`` of a generic parser or control type in an expression: only its direct
    application ``Name<A>.apply(...)`` is valid."""

    decl: _Decl
    tref: Tree  # the specialized_type: the type arguments, evaluated where it is applied


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
    meta_param: str = ""  # a v1model ingress/egress control: its user-metadata parameter
    std_param: str = ""  # ... and its standard_metadata parameter

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
    loop_depth: int = 0  # enclosing for loops (break/continue are valid inside one)


class CheckerBase:
    """State and location/error helpers shared by the checker's parts; one per program."""

    def __init__(self, origins: OriginMap, source_file: str) -> None:
        self.origins = origins
        self.source_file = source_file
        self.globals: dict[str, Any] = {}
        self.errors: list[str] = []
        # > 0 while checking code a constant condition never runs (p4c folds it away before its
        # strength reduction refuses a constant zero divisor)
        self.dead_code = 0
        self.match_kinds: list[str] = []
        self.named_types: dict[str, ir.Type] = {}
        self.type_locs: dict[str, ir.Loc] = {}  # header/struct declarations, for later errors
        self.actions: dict[str, ir.Action] = {}
        self.action_order: list[str] = []
        self.controller_headers: list[ir.ControllerHeader] = []
        self.digests: dict[str, ir.Digest] = {}
        self.data_field_lists: dict[int, list[tuple[str, ...]]] = {}
        self.warnings: list[str] = []
        # top-level constants of the user's files and the ones referenced (p4c-like unused warning)
        self.const_decls: dict[str, ir.Loc] = {}
        self.used_consts: set[str] = set()
        self.main: Tree | None = None
        self.action_locals: dict[str, dict[str, ir.Type]] = {}
        self.fn_results: set[str] = set()  # fresh variables holding a function call's value
        self.extern_func_params: dict[str, list[list[str]]] = {}  # v1model/core extern function -> overloads' parameter names
        self.extern_func_dirs: dict[str, list[list[str]]] = {}  # ... and their parameters' directions
        # an extern function whose name a user's control or parser type took (see declare)
        self.shadowed_funcs: dict[str, _ExternFunc] = {}
        # id(an 'arg_snap_inout' tree) -> the copy-back assignments of its temporary (check_expr.call)
        self.snap_copy_back: dict[int, list[ir.Stmt]] = {}
        self.lvalue_temps: set[str] = set()  # temporaries that stand for an inout argument (assignable)
        self.block_instances: dict[str, tuple[str, Any]] = {}  # top-level parser/control instances
        self.block_instance_tenv: dict[str, tuple] = {}  # ... and their type arguments (generic ones)
        self.writable_params: set[int] = set()
        # the 'in' parameters of the top-level control being lowered (the deparser's headers): p4c
        # refuses a write to them ("cannot be the target of an assignment")
        self.readonly_vars: frozenset[str] = frozenset()
        self.table_names: dict[str, ir.Table] = {}  # P4Info name -> table, over the whole program
        self.dup_table_names: dict[str, str] = {}  # internal name of a table -> its control-plane name
        self.global_externs: dict[str, ir.ExternInstance] = {}
        # generics: the type variables bound while a specialisation is lowered; the generic
        # struct/header declarations and their specialisations (keyed by base name and type
        # arguments); the specialised functions (same keys -> action name)
        self.type_env: dict[str, ir.Type] = {}
        self.type_env_text: dict[str, str] = {}  # and each one's argument as written (for type names)
        self.generic_types: dict[str, Any] = {}
        self.spec_types: dict[tuple, ir.Type] = {}
        self.fn_specs: dict[tuple, str] = {}
        self.spec_origin: dict[str, tuple[str, tuple[ir.Type, ...]]] = {}  # specialised name -> base, args
        # while a table key is checked: the IR of each of its subtrees (by id of the parse tree),
        # so the key's P4Info name reads member base types without checking the key again
        self.key_subexprs: dict[int, ir.Expr] | None = None

    # ------------------------------------------------------------ helpers
    @contextmanager
    def type_scope(self, tenv: tuple) -> Iterator[None]:
        """Lower with a generic block's type parameters bound (``tenv``: types, and each one's
        argument as written); the enclosing bindings are back afterwards."""
        saved = self.type_env, self.type_env_text
        self.type_env, self.type_env_text = tenv
        try:
            yield
        finally:
            self.type_env, self.type_env_text = saved

    @contextmanager
    def specialised(self, kind: str, name: str, tenv: tuple, where: Any) -> Iterator[None]:
        """Lower a generic parser's or control's body at the type arguments ``tenv``: a type error
        in it also names the specialisation and where it was instantiated (softswitch checks the
        body per specialisation, not once for every type as p4c does)."""
        with self.type_scope(tenv):
            if not tenv[0]:
                yield
                return
            try:
                yield
            except P4TypeError as e:
                args = ", ".join(f"{k} = {show(v)}" for k, v in tenv[0].items())
                raise P4TypeError(e.loc, f"{e.message} (in {kind} '{name}' at {args}, instantiated at "
                                         f"{self.loc(where) if not isinstance(where, ir.Loc) else where})") from None

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

    def dead_if(self, dead: bool, check: Callable[..., Any], *args: Any) -> Any:
        """``check(*args)``, counted as code that never runs when ``dead`` (a branch a constant
        condition leaves out)."""
        self.dead_code += dead
        try:
            return check(*args)
        finally:
            self.dead_code -= dead

    def check_param_names(self, params: Tree | None, owner: str) -> None:
        """A parameter list naming one parameter twice is an error (p4c: "Duplicates declaration");
        the second silently shadowed the first."""
        seen: set[str] = set()
        for p in _trees(params, "param") if params is not None else []:
            n = _name(p)
            if n in seen:
                raise self.err(p, f"parameter '{n}' of {owner} is declared twice")
            seen.add(n)

    def unsupported(self, node: Any, what: str) -> P4Unsupported:
        return P4Unsupported(self.loc(node) if not isinstance(node, ir.Loc) else node, what)

    def is_builtin(self, node: Any) -> bool:
        return self.loc(node).file in _BUILTIN_FILES

    def fn_writes(self, ent: Any) -> bool:
        """Does user function ``ent`` (plain or generic) have out/inout parameters?"""
        if isinstance(ent, _FuncRef):
            return any(p.direction in ("out", "inout") and p.name != "$ret" for p in self.actions[ent.name].params)
        if isinstance(ent, _GenericFuncRef):
            return any(_direction(p) in ("out", "inout")
                       for p in _trees(_tree(_tree(ent.tree, "function_proto"), "params"), "param"))
        return False

    def annotations(self, t: Tree | None) -> tuple[ir.Annotation, ...]:
        if t is None:
            return ()
        out = []
        for a in _trees(t, "annotation"):
            name = _name(a)
            sbody = _tok(a, "ANNOT_SBODY")
            if sbody is not None:
                out.append(ir.Annotation(name, None, (), self.loc(a),
                                         self._structured(a, name, str(sbody))))
                continue
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
        for a in out:  # spec 18.2: a structured annotation's name is used once per element
            if a.structured is not None and sum(1 for b in out if b.name == a.name) > 1:
                raise self.err(a.loc, f"annotation @{a.name} is structured and appears more than once "
                                      f"on the same element")
        return tuple(out)

    def _structured(self, node: Tree, name: str,
                    body: str) -> tuple[tuple[str | None, str | int | bool], ...]:
        """The elements of ``@name[body]``: an expression list or a key-value list (not both),
        each value a string, integer or boolean literal, keys unique."""
        toks = []
        for m in _SANN_TOKEN.finditer(body):
            kind = m.lastgroup
            if kind == "bad":
                raise self.unsupported(node, f"structured annotation @{name}: the value "
                                             f"'{body[m.start():].split(',')[0].strip()}' (only string, "
                                             f"integer and boolean literals)")
            if kind != "ws":
                toks.append((kind, m.group()))
        items: list[list[tuple[str, str]]] = [[]]
        for t in toks:
            if t[0] == "comma":
                items.append([])
            else:
                items[-1].append(t)
        if items == [[]]:
            return ()
        out: list[tuple[str | None, str | int | bool]] = []
        for it in items:
            key = None
            if len(it) >= 2 and it[0][0] == "ident" and it[1][0] == "eq":
                key, it = it[0][1], it[2:]
            if not it:
                raise self.err(node, f"structured annotation @{name}: an element without a value")
            text = "".join(v for _, v in it)
            if it[0][0] == "string" and len(it) == 1:
                value: str | int | bool = text[1:-1]
            elif text in ("true", "false"):
                value = text == "true"
            else:
                try:
                    value = _parse_int(text[1:])[0] if text.startswith("-") else _parse_int(text)[0]
                except ValueError:
                    raise self.unsupported(node, f"structured annotation @{name}: the value '{text}' "
                                                 f"(only string, integer and boolean literals)") from None
                if text.startswith("-"):
                    value = -value
            out.append((key, value))
        keyed = {k is not None for k, _ in out}
        if len(keyed) > 1:
            raise self.err(node, f"structured annotation @{name} mixes key=value pairs and plain "
                                 f"expressions")
        seen: set[str] = set()
        for k, _ in out:
            if k is not None:
                if k in seen:
                    raise self.err(node, f"structured annotation @{name}: duplicate key '{k}'")
                seen.add(k)
        return tuple(out)




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


def _apply_arg_lists(body: Tree) -> dict[str, list[list[Tree]]]:
    """The argument trees of each ``x.apply(...)`` call of a plain name in a body, per name."""
    out: dict[str, list[list[Tree]]] = {}
    for st in body.iter_subtrees():
        if st.data != "call_expr" or not isinstance(st.children[0], Tree):
            continue
        f = st.children[0]
        if f.data == "member" and str(_tree(f, "mname").children[0]) == "apply":
            base = _trees(f)[0]
            if base.data == "ident":
                out.setdefault(str(_tree(base, "name").children[0]), []).append(_trees(_tree(st, "args")))
    return out


def _declared_in(body: Tree) -> set[str]:
    """Names a body declares (local variables and constants, loop variables)."""
    return {str(_tree(st, "name").children[0]) for st in body.iter_subtrees()
            if st.data in ("var_decl", "const_decl", "for_var", "for_in_stmt", "for_in_range_stmt")}


def _same_text_same_storage(trees: list[Tree], declared: set[str]) -> bool:
    """Do equal argument trees name the same storage at every call?  Not when a name in them may
    be one declared inside the body (a local of one block or another), when they call anything
    (a hoisted call's value is a variable per call) or name ``.last``/``.next``."""
    for a in trees:
        for st in a.iter_subtrees():
            if st.data == "call_expr":
                return False
            if st.data == "ident" and str(_tree(st, "name").children[0]) in declared:
                return False
            if st.data == "member" and str(_tree(st, "mname").children[0]) in ("last", "next"):
                return False
    return True


def _type_child(t: Tree) -> Tree:
    for c in t.children:
        if isinstance(c, Tree) and c.data not in ("annotations", "name", "direction", "params", "args",
                                                  "ident_list", "enum_member", "type_params"):
            return c
    raise AssertionError(t.data)


def _type_params(t: Tree) -> list[str]:
    """The type parameter names of a generic declaration (``<T, U>``), in order."""
    return [str(n.children[0]) for n in _trees(_tree(_tree(t, "type_params"), "ident_list"), "name")]


def _direction(p: Tree) -> str:
    d = _tree(p, "direction")
    return str(d.children[0]) if d is not None else ""


def _type_name_text(t: ir.Type) -> str:
    """Type ``t`` as p4c writes it inside a specialised type's name (``bit<16>`` is ``bit16``,
    ``tuple<bit<8>, bit<16>>`` is ``tuplebit8_bit16``)."""
    return show(t).replace("<", "").replace(">", "").replace(" ", "").replace(",", "_").replace(".", "_")


def _param_names(t: Tree) -> list[str]:
    """The parameter names of ``t``'s parameter list (its ``params`` child), in order."""
    return [_name(p) for p in _trees(_tree(t, "params"), "param")]


def _param_default(p: Tree) -> Tree | None:
    """The default value expression of parameter ``p`` (``T p = value``), or None."""
    rest = [c for c in _trees(p) if c.data not in ("annotations", "direction", "name")]
    return rest[1] if len(rest) > 1 else None


def _p4info_name(anns: tuple[ir.Annotation, ...], prefix: str, local: str) -> str:
    a = ir.find_annotation(anns, "name")
    n = str(a.args[0]) if a is not None and a.args else local
    if n.startswith("."):
        return n[1:]
    return f"{prefix}.{n}" if prefix else n


# p4c's DefaultP4CConfiguration: the widest bit<W>/int<W>/varbit<W> and the largest header stack
MAX_WIDTH = 2048
MAX_STACK_SIZE = 256


class WidthTooLarge(ValueError):
    """A width-prefixed literal (``4096w1``) wider than p4c takes."""


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
        if w > MAX_WIDTH:
            raise WidthTooLarge(f"width {w} of the literal '{s.strip()}' is larger than {MAX_WIDTH}, the widest "
                                "p4c supports")
        t: ir.Type = ir.BitT(w) if m.group(2) == "w" else ir.IntT(w)
        return wrap(v, t), t
    return v, None


# the lexical pieces of a structured annotation body (literal values only)
_SANN_TOKEN = re.compile(r'(?P<ws>\s+)|(?P<string>"(?:\\.|[^"\\])*")|(?P<eq>=)|(?P<comma>,)'
                         r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>-?[0-9][0-9A-Za-z_]*)|(?P<bad>.)")


def _literal_text(s: str) -> str:
    """An integer literal as p4c prints it in a key's P4Info name: width prefix and base kept
    (``48w0x10101010101``), leading zeros and ``_`` dropped, ``0d`` as plain decimal."""
    m = _INT_RE.match(s.strip())
    if not m:
        return s
    body = m.group(3).replace("_", "")
    prefix = f"{m.group(1)}{m.group(2)}" if m.group(1) else ""
    low = body.lower()
    for p, base, fmt in (("0x", 16, "x"), ("0b", 2, "b"), ("0o", 8, "o")):
        if low.startswith(p):
            return f"{prefix}{p}{format(int(body[2:], base), fmt)}"
    return f"{prefix}{int(body[2:] if low.startswith('0d') else body, 10)}"


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
        return _literal_text(str(t.children[0]))
    if k in ("call_expr",):
        args = _tree(t, "args")
        return f"{_print_tree(kids[0])}({', '.join(_print_tree(a) for a in _trees(args)) if args else ''})"
    if k in _BINOPS:
        return f"{_print_tree(kids[0])} {_BINOPS[k]} {_print_tree(kids[-1])}"
    if k == "type_member":
        return f"{t.children[0]}.{_tree(t, 'mname').children[0]}"
    return " ".join(_print_tree(c) for c in t.children)


def _key_name(t: Any, field_name: Callable[[Tree, str], str]) -> str | None:
    """The P4Info name p4c gives an unannotated table key (its TableKeyNames pass), or None
    where p4c demands a @name: paths, members (a field's own @name replaces its name, one
    starting with '.' the whole name), indexes, slices, constants (base kept, width dropped),
    '&' of two nameable parts, and h.isValid() as 'h.$valid$'; anything else is complex."""
    k = t.data if isinstance(t, Tree) else None
    kids = _trees(t) if isinstance(t, Tree) else []
    if k in ("ident", "dot_ident"):
        return ("." if k == "dot_ident" else "") + str(_tree(t, "name").children[0])
    if k == "member":
        fname = field_name(kids[0], str(_tree(t, "mname").children[0]))
        if fname.startswith("."):
            return fname[1:]
        lhs = _key_name(kids[0], field_name)
        return None if lhs is None else f"{lhs}.{fname}"
    if k == "call_expr":
        callee, args = kids[0], _tree(t, "args")
        if (isinstance(callee, Tree) and callee.data == "member" and not (args and _trees(args))
                and str(_tree(callee, "mname").children[0]) == "isValid"):
            obj = _key_name(_trees(callee)[0], field_name)
            return None if obj is None else f"{obj}.$valid$"
        return None
    parts = [_key_name(x, field_name) for x in kids]
    if k in ("index", "slice", "bin_band") and None in parts:
        return None
    if k == "index":
        return f"{parts[0]}[{parts[1]}]"
    if k == "slice":
        return f"{parts[0]}[{parts[1]}:{parts[2]}]"
    if k == "bin_band":
        return f"{parts[0]} & {parts[-1]}"
    if k == "number":
        text = _literal_text(str(t.children[0]))
        return re.sub(r"^\d+[ws]", "", text)
    return None


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
