"""The checked, typed IR of a v1model P4_16 program: the only thing the back end reads.

Conventions (the front end guarantees all of them):

* **Locations.** Every node has ``loc: Loc`` (original file, 1-based line and column, after
  undoing the preprocessor).
* **Names.** Tables, actions, extern instances, controller headers and digests carry
  ``name``: their P4Info name exactly as p4c gives it (fully qualified with the top-level
  control instance name, ``@name`` honoured, a leading ``.`` making it global).
  ``Program.actions`` / ``Control.tables`` / ``Control.externs`` are keyed by that name, and every
  reference (``ApplyTable.table``, ``ActionCall.action``, ``ExternCall.instance``, table
  ``implementation``/``counters``/``meters``) uses it.  One exception: actions may share a
  P4Info name (copies of one top-level action in two controls; distinct used declarations of
  one name are refused, as p4c refuses them); the second and later such action are
  keyed ``NAME#1``, ``NAME#2``... (never a P4 name), references use the key, and ``Action.name``
  stays the P4Info name.
* **Top-level extern instances** (declared outside any control, shared by every control that
  uses them) have their bare name as P4Info name (``@name`` honoured).  They are listed in
  ``Program.externs`` and, as the very same objects, first in every ``Control.externs``, so
  resolving a reference through the enclosing control finds them; ``Program.all_externs()``
  lists each instance once.
* **Inlining.** Only the six top-level blocks of ``V1Switch`` exist.  Sub-control instances are
  inlined by the front end (their locals/tables/actions renamed with the instance path, their
  ``inout``/``out`` parameters substituted by the argument lvalues, ``in`` parameters copied into
  fresh block variables).  Constants (``const``, enum members, ``error`` members, stack
  ``size``) are folded to ``Const``.
* **Variables.** ``Var(name)`` is per-packet storage of the enclosing top-level block: its
  parameters (``h``, ``m``, ``sm``...) and every local variable declared anywhere in it (apply
  body, parser states, action bodies: all hoisted, renamed ``x$1``, ``x$2``... on shadowing, so a
  name is unique per block).  ``ActionParam(name, index)`` reads the parameter of the action that
  is running (action data or a directional parameter).  ``VarDecl`` marks where a local is
  (re)initialised; a local declared without an initialiser is zero / invalid, as bmv2 does.
* **Lvalues** are expressions of the classes ``Var``, ``ActionParam`` (directional only),
  ``Member``, ``StackIndex``, ``StackNext``/``StackLast`` (parser only) and ``Slice`` of an lvalue.
* **Values.** ``bit<W>`` is a Python int in ``[0, 2**W)``; ``int<W>`` a signed Python int in
  two's-complement range; ``bool`` a Python bool.  ``error`` members are ints in declaration order
  (``core.p4``'s ``NoError=0, PacketTooShort=1, NoMatch=2, StackOutOfBounds=3, HeaderTooShort=4,
  ParserTimeout=5, ParserInvalidArgument=6``, then user errors; ``Program.errors`` lists the
  names).  A non-serializable ``enum``'s members are their index in ``EnumT.members``; a
  serializable ``enum bit<W>``'s members are their declared values (``EnumT.values``).  The
  v1model enums (``HashAlgorithm``, ``CounterType``, ``MeterType``, ``CloneType``...) are plain
  enums: use ``EnumT.members[const.value]`` to get the member name.
* **Headers** are values with a hidden validity bit (``IsValid``/``SetValid``/``SetInvalid``);
  assigning a whole header copies fields and validity; assigning a ``StructInit`` to a header
  makes it valid.  A header stack ``StackT`` has a hidden ``nextIndex`` (``StackNext``,
  ``StackLast``, ``StackLastIndex`` and ``push_front``/``pop_front`` use it as bmv2 does).
  Structs, headers and stacks are copied by value on assignment.
* **Typing.** Every expression has ``type``.  Untyped integer literals are given the width their
  context requires; shift amounts and stack indices that are literals get ``bit<32>``.  Binary
  operands have equal types except for shifts.  Arithmetic wraps at the width; ``int<W>``
  comparisons and ``>>`` are signed; ``|+|``/``|-|`` saturate.
* **Calls.** Header/stack methods have their own nodes; v1model extern *object* methods are
  ``ExternCall(instance, method, args)``; v1model/core free functions are
  ``BuiltinCall(name, args, type_args)`` with arguments in the declared order (``out`` arguments
  are lvalues); ``verify`` in a parser is ``Verify``; ``pkt.extract``/``advance``/``lookahead``/
  ``emit`` have their own nodes.  ``ApplyTable`` is the apply expression; its ``result`` says
  whether it yields ``hit``/``miss`` (bool) or nothing.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

# ---------------------------------------------------------------- locations and annotations

# root of a data field-list path naming a standard_metadata field: (STD_META_ROOT, field)
STD_META_ROOT = "$standard_metadata"
FIELD_LIST_OF_DATA = 0x100  # first field-list index of a deprecated call's data (@field_list is bit<8>)


@dataclass(frozen=True, slots=True)
class Loc:
    """A position in an original source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_LOC = Loc("<builtin>", 0, 0)


@dataclass(frozen=True, slots=True)
class Annotation:
    """``@name(body)``: ``body`` is the text between the parentheses as p4c prints it
    (``None`` when there were no parentheses); ``args`` the parsed constant arguments when the
    body is a list of literals/identifiers (strings unquoted, integers as int).

    A structured annotation ``@name[...]`` (P4_16 spec 18.2) has ``body`` None and
    ``structured`` set: its elements as ``(key, value)`` pairs, ``key`` None throughout for an
    expression list; values are str, int or bool.  P4Info carries it in
    ``structured_annotations``, never in ``annotations``."""

    name: str
    body: str | None = None
    args: tuple[str | int, ...] = ()
    loc: Loc = NO_LOC
    structured: tuple[tuple[str | None, str | int | bool], ...] | None = None

    def p4info_text(self) -> str:
        """The annotation as P4Info prints it, e.g. ``@format(IPV6_ADDRESS)``: as p4c's ToP4 prints
        an annotation it keeps unparsed, its body's tokens separated by one space each
        (``@refers_to(t,f)`` is ``@refers_to(t , f)``, ``@sai(A/B)`` ``@sai(A / B)``), and
        without parentheses when the body is empty (``@e()`` is ``@e``)."""
        toks = annotation_tokens(self.body or "")
        return f"@{self.name}({' '.join(toks)})" if toks else f"@{self.name}"


# the P4 lexer's tokens, as far as an annotation body can hold them: string literals, numbers
# (with a width prefix), identifiers, the operators of more than one character P4 has as one
# token (">>" is two, as p4c lexes it; "::" is two ":"), and any other single character
_ANNOT_TOKEN = re.compile(r'''
    "(?:\\.|[^"\\])*"
  | (?:\d+[ws])?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|\d[0-9_]*)
  | [A-Za-z_][A-Za-z0-9_]*
  | &&&|\|\+\||\|-\||\.\.|\+\+|<<|==|!=|<=|>=|&&|\|\|
  | \S
''', re.VERBOSE)


def annotation_tokens(body: str) -> list[str]:
    """The tokens of an unparsed annotation body, as p4c's lexer splits it."""
    return _ANNOT_TOKEN.findall(body)


def actions_called(node: object) -> set[str]:
    """Names of the actions called (``ActionCall``) anywhere under ``node``.  On a control's
    body this is the actions its apply block calls directly: p4c keeps those in P4Info (its mid
    end wraps each call in a hidden table), while an action called only from other actions is
    inlined there and left out, so action bodies are not part of a control's body."""
    return set(actions_called_in_order(node))


def actions_called_in_order(node: object, live: bool = False) -> list[str]:
    """``actions_called`` as a list, each action once, in the order of its first call in the
    tree (statement order); with ``live``, not in a branch a constant condition leaves out
    (``live_nodes``)."""
    found: dict[str, None] = {}
    for n in (live_nodes if live else iter_nodes)(node):
        if isinstance(n, ActionCall):
            found.setdefault(n.action, None)
    return list(found)


def live_nodes(node: object) -> Iterator[object]:
    """``iter_nodes`` without the branch of an ``if`` whose condition is a constant that never
    runs: p4c's front end folds ``if (false) S`` away (``ConstantFolding``) before it removes
    what nothing refers to (``RemoveUnusedDeclarations``), so a table applied or an action called
    only there is not in its P4Info."""
    return iter_nodes(node, live=True)


def iter_nodes(node: object, live: bool = False) -> Iterator[object]:
    """Every IR node under ``node`` (a node or a list of them), itself first, then each
    child's subtree in slot order (pre-order); ``loc`` and ``type`` are not descended into.
    ``live``: not into the branch of an ``if`` on a constant that never runs (``live_nodes``)."""
    if live and isinstance(node, If) and isinstance(node.cond, Const):
        yield node
        taken = node.then if node.cond.value else node.else_
        if taken is not None:
            yield from iter_nodes(taken, live)
        return
    if isinstance(node, list):
        for x in node:
            yield from iter_nodes(x, live)
        return
    if not hasattr(node, "__slots__") or isinstance(node, (str, int)):
        return
    yield node
    for klass in type(node).__mro__:
        for a in getattr(klass, "__slots__", ()):
            if a not in ("loc", "type"):
                yield from iter_nodes(getattr(node, a, None), live)


def find_annotation(annotations: tuple[Annotation, ...], name: str) -> Annotation | None:
    """The first annotation called ``name``, or None."""
    for a in annotations:
        if a.name == name:
            return a
    return None


def id_annotation(annotations: tuple[Annotation, ...]) -> int | None:
    """The integer of an ``@id(N)`` among ``annotations``, or None."""
    a = find_annotation(annotations, "id")
    if a is not None and a.args and isinstance(a.args[0], int):
        return a.args[0]
    return None


# ---------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class BitT:
    width: int
    # the ``type`` (newtype) this bit<W> was declared as, for P4Info's type_name/new_types; not
    # part of the type's identity (p4c's casts between a newtype and its bit<W> are free here)
    newtype: NewType | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class NewType:
    """``type bit<W> Name;`` (possibly over another newtype; ``underlying`` is the bit<W>), with
    its ``@p4runtime_translation(uri, W | bit<W> | string)`` as (uri, sdn bitwidth or None for
    string) when it has one."""

    name: str
    underlying: BitT
    translation: tuple[str, int | None] | None
    loc: Loc


@dataclass(frozen=True, slots=True)
class IntT:
    width: int


@dataclass(frozen=True, slots=True)
class BoolT:
    pass


@dataclass(frozen=True, slots=True)
class ErrorT:
    pass


@dataclass(frozen=True, slots=True)
class StringT:
    """Only for ``log_msg`` format strings."""


@dataclass(frozen=True, slots=True)
class VoidT:
    pass


@dataclass(frozen=True, slots=True)
class MatchKindT:
    pass


@dataclass(frozen=True, slots=True)
class EnumT:
    """``enum`` (underlying None, values = indices) or ``enum bit<W>`` (values declared)."""

    name: str
    members: tuple[str, ...]
    underlying: BitT | IntT | None = None
    values: tuple[int, ...] = ()

    def value_of(self, member: str) -> int:
        i = self.members.index(member)
        return self.values[i] if self.underlying is not None else i


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: Type
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True, slots=True)
class HeaderT:
    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()

    @property
    def width(self) -> int:
        """Total width in bits of the fixed fields (a varbit field counts 0: its width is
        per packet)."""
        return sum(type_width(f.type) for f in self.fields)

    @property
    def varbit(self) -> Field | None:
        """The header's varbit field, if it has one (P4 allows one)."""
        return next((f for f in self.fields if isinstance(f.type, VarbitT)), None)

    def field_type(self, name: str) -> Type:
        for f in self.fields:
            if f.name == name:
                return f.type
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class VarbitT:
    """``varbit<max_width>``: a header field whose width is set by the two-argument extract."""

    max_width: int


@dataclass(frozen=True, slots=True)
class StructT:
    name: str
    fields: tuple[Field, ...]
    annotations: tuple[Annotation, ...] = ()
    union: bool = False  # a header_union: every field a header, at most one valid

    def field_type(self, name: str) -> Type:
        for f in self.fields:
            if f.name == name:
                return f.type
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class StackT:
    """``H[size]``."""

    elem: HeaderT
    size: int


@dataclass(frozen=True, slots=True)
class TupleT:
    """Type of a list/tuple expression ``{a, b}`` (hash inputs, field lists, digests)."""

    elems: tuple[Type, ...]


@dataclass(frozen=True, slots=True)
class ExternT:
    """An extern object type, e.g. ``register<bit<32>>`` or ``packet_in``."""

    name: str
    type_args: tuple[Type, ...] = ()


Type = (BitT | IntT | BoolT | ErrorT | StringT | VoidT | MatchKindT | EnumT | HeaderT | StructT | StackT
        | TupleT | ExternT | VarbitT)


def union_siblings(e: Expr) -> list[Expr]:
    """For ``u.a`` with ``u`` a header_union: the other members ``u.b``, ...; else []."""
    if isinstance(e, Member) and isinstance(e.expr.type, StructT) and e.expr.type.union:
        return [Member(f.type, e.loc, e.expr, f.name) for f in e.expr.type.fields if f.name != e.field]
    return []


# An ``error`` key is matched on the error's number (declaration order, see the module docstring)
# in a field of bmv2's width for errors: p4c's bmv2 back end makes every error-typed field 32 bits.
ERROR_KEY_WIDTH = 32


def type_width(t: Type) -> int:
    """Bit width of a serializable type (bit/int/bool/serializable enum/header/struct of those)."""
    if isinstance(t, (BitT, IntT)):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, VarbitT):
        return 0  # the fixed part of a header does not include it
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, (HeaderT, StructT)):
        return sum(type_width(f.type) for f in t.fields)
    if isinstance(t, StackT):
        return t.size * t.elem.width
    if isinstance(t, TupleT):
        return sum(type_width(e) for e in t.elems)
    raise TypeError(f"type {t} has no bit width")


# ---------------------------------------------------------------- expressions


@dataclass(slots=True, eq=False)
class Expr:
    type: Type
    loc: Loc


@dataclass(slots=True, eq=False)
class Const(Expr):
    """A folded constant (see the value conventions in the module docstring)."""

    value: int | bool | str  # str only for StringT


@dataclass(slots=True, eq=False)
class Var(Expr):
    """Per-packet storage of the enclosing top-level block (parameter or hoisted local)."""

    name: str


@dataclass(slots=True, eq=False)
class ActionParam(Expr):
    """Parameter ``index`` of the running action."""

    name: str
    index: int


@dataclass(slots=True, eq=False)
class Member(Expr):
    """``expr.field`` on a header or struct."""

    expr: Expr
    field: str


@dataclass(slots=True, eq=False)
class TupleElem(Expr):
    """Element ``index`` of a tuple value (made by the back end's flattening of a tuple local
    into the leaves of a data list, e.g. ``log_msg`` or ``hash`` data)."""

    expr: Expr
    index: int


@dataclass(slots=True, eq=False)
class StackIndex(Expr):
    """``stack[index]``; ``index`` is a ``Const`` for a constant index (out of range constant
    indices are rejected at load time), otherwise a run-time ``bit<W>`` expression."""

    stack: Expr
    index: Expr


@dataclass(slots=True, eq=False)
class StackNext(Expr):
    """``stack.next`` (parser only): element at nextIndex; StackOutOfBounds if full."""

    stack: Expr


@dataclass(slots=True, eq=False)
class StackLast(Expr):
    """``stack.last``: element nextIndex-1; StackOutOfBounds if empty."""

    stack: Expr


@dataclass(slots=True, eq=False)
class StackLastIndex(Expr):
    """``stack.lastIndex``: nextIndex-1 as bit<32>."""

    stack: Expr


@dataclass(slots=True, eq=False)
class Slice(Expr):
    """``expr[hi:lo]`` (hi, lo constant); type bit<hi-lo+1>."""

    expr: Expr
    hi: int
    lo: int


UnaryOp = Literal["~", "-", "!"]
BinaryOp = Literal["+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^", "<<", ">>",
                   "==", "!=", "<", "<=", ">", ">=", "&&", "||"]


@dataclass(slots=True, eq=False)
class Unary(Expr):
    """``~x`` (bitwise, at the width), ``-x`` (two's complement, wraps), ``!b``."""

    op: str
    operand: Expr


@dataclass(slots=True, eq=False)
class Binary(Expr):
    """Binary operator.  ``&&``/``||`` short-circuit.  Comparisons yield bool.  ``==``/``!=``
    also apply to headers/structs/bool/enums/error (structural equality; header validity
    included).  Shifts: a shift by >= width gives 0 (or all sign bits for ``int >>``)."""

    op: str
    left: Expr
    right: Expr


@dataclass(slots=True, eq=False)
class Concat(Expr):
    """``left ++ right``: type bit<wl+wr> (int if left is int)."""

    left: Expr
    right: Expr


@dataclass(slots=True, eq=False)
class Cast(Expr):
    """``(type) expr``: bit<->bit truncates/zero-extends, int->bit reinterprets two's
    complement, bit->int sign-reinterprets, bool<->bit<1>, enum<->underlying."""

    expr: Expr


@dataclass(slots=True, eq=False)
class Mux(Expr):
    """``cond ? then : else_`` (only the chosen branch is evaluated)."""

    cond: Expr
    then: Expr
    else_: Expr


@dataclass(slots=True, eq=False)
class StructInit(Expr):
    """``{f = e, ...}`` or ``{e, ...}`` with a header/struct target type; fields in the type's
    declaration order."""

    fields: list[tuple[str, Expr]]


@dataclass(slots=True, eq=False)
class InvalidHeader(Expr):
    """A fresh invalid value of ``type``: an invalid header, a header_union none of whose members
    is valid (both ``{#}``), or a header stack of invalid elements with ``nextIndex`` 0 (the
    default value ``...`` of a stack type).  The checker lowers ``x == {#}`` / ``x != {#}`` to
    validity tests; assigning one copies invalidity like any header value."""


@dataclass(slots=True, eq=False)
class ListExpr(Expr):
    """``{a, b, ...}`` with TupleT type (hash data, checksum data, digest/field data)."""

    elems: list[Expr]


@dataclass(slots=True, eq=False)
class IsValid(Expr):
    """``hdr.isValid()`` (bool)."""

    header: Expr


@dataclass(slots=True, eq=False)
class SetValid(Expr):
    """``hdr.setValid()`` (void)."""

    header: Expr


@dataclass(slots=True, eq=False)
class SetInvalid(Expr):
    """``hdr.setInvalid()`` (void).  ``sibling``: the invalidation of a header_union's other members
    that making one member valid implies (bmv2's union membership does it, not remove_header: the
    packet-length register is not changed)."""

    header: Expr
    sibling: bool = False


@dataclass(slots=True, eq=False)
class PushFront(Expr):
    """``stack.push_front(count)``: shift elements up; the new front ones become invalid."""

    stack: Expr
    count: int


@dataclass(slots=True, eq=False)
class PopFront(Expr):
    """``stack.pop_front(count)``: shift elements down; the freed back ones become invalid."""

    stack: Expr
    count: int


@dataclass(slots=True, eq=False)
class ExternCall(Expr):
    """Method of a v1model extern instance: ``instance`` is its P4Info name (a key of the
    enclosing ``Control.externs``, which includes the top-level instances).  Methods:
    counter.count(index), direct_counter.count(), meter.execute_meter(index, out result),
    direct_meter.read(out result), register.read(out result, index), register.write(index, value)."""

    instance: str
    method: str
    args: list[Expr]


@dataclass(slots=True, eq=False)
class BuiltinCall(Expr):
    """A core/v1model free function, arguments in declared order:
    mark_to_drop(sm); hash(out result, algo, base, data, max); random(out result, lo, hi);
    digest<T>(receiver, data) (T in ``type_args``, its P4Info digest is ``T.name``, or
    ``digest`` for a list: ``digest(receiver, {a, b})``);
    clone(type, session); clone_preserving_field_list(type, session, index);
    resubmit_preserving_field_list(index); recirculate_preserving_field_list(index);
    truncate(length); verify_checksum / update_checksum / verify_checksum_with_payload /
    update_checksum_with_payload(cond, data, checksum, algo); assert(cond); assume(cond);
    log_msg(fmt) / log_msg(fmt, data)."""

    name: str
    args: list[Expr]
    type_args: tuple[Type, ...] = ()
    digest: str = ""  # P4Info name of the digest of a list or of a typedef'd struct


@dataclass(slots=True, eq=False)
class ActionCall(Expr):
    """Direct call of an action (from an apply body or another action): ``args`` are given
    for every parameter (directional ones as lvalues / expressions)."""

    action: str
    args: list[Expr]


@dataclass(slots=True, eq=False)
class ApplyTable(Expr):
    """``table.apply()`` / ``table.apply().hit`` / ``.miss``; ``table`` is a P4Info name."""

    table: str
    result: Literal["none", "hit", "miss"] = "none"


@dataclass(slots=True, eq=False)
class Lookahead(Expr):
    """``pkt.lookahead<T>()`` in a parser (T = ``type``): PacketTooShort if not enough bits."""


# ---------------------------------------------------------------- statements


@dataclass(slots=True, eq=False)
class Stmt:
    loc: Loc


@dataclass(slots=True, eq=False)
class Block(Stmt):
    stmts: list[Stmt]


@dataclass(slots=True, eq=False)
class Assign(Stmt):
    """``lhs = rhs``; lhs is an lvalue (may be a Slice: write only those bits)."""

    lhs: Expr
    rhs: Expr


@dataclass(slots=True, eq=False)
class VarDecl(Stmt):
    """(Re)initialise block variable ``var`` (to ``init``, or zero/invalid when None)."""

    var: Var
    init: Expr | None


@dataclass(slots=True, eq=False)
class If(Stmt):
    cond: Expr
    then: Block
    else_: Block | None


@dataclass(slots=True, eq=False)
class SwitchCase:
    """``labels`` are action P4Info names (action_run switch) or Consts (value switch);
    ``default`` marks the default case.  Fall-through labels are merged into one case."""

    labels: list[str | Const]
    default: bool
    body: Block
    loc: Loc


@dataclass(slots=True, eq=False)
class SwitchActionRun(Stmt):
    """``switch (table.apply().action_run) { ... }``: applies the table, runs the case of the
    action that ran."""

    table: str
    cases: list[SwitchCase]


@dataclass(slots=True, eq=False)
class SwitchValue(Stmt):
    """``switch (expr) { ... }`` on a bit/int/enum/error value."""

    expr: Expr
    cases: list[SwitchCase]


@dataclass(slots=True, eq=False)
class ExprStmt(Stmt):
    """A call used as a statement (ApplyTable, ActionCall, ExternCall, BuiltinCall, SetValid...)."""

    expr: Expr


@dataclass(slots=True, eq=False)
class Exit(Stmt):
    """``exit``: ends the current top-level control (copy-out semantics are implicit)."""


@dataclass(slots=True, eq=False)
class Return(Stmt):
    """``return`` from the current action or control apply body."""


@dataclass(slots=True, eq=False)
class For(Stmt):
    """``for (init; cond; update) body``: ``init`` once, then while ``cond`` (after ``cond_pre``,
    the hoisted function calls it makes) run ``body`` and ``update``; ``cond`` None is true."""

    init: list[Stmt]
    cond_pre: list[Stmt]
    cond: Expr | None
    update: list[Stmt]
    body: Block


@dataclass(slots=True, eq=False)
class Break(Stmt):
    """``break``: leave the innermost ``for``."""


@dataclass(slots=True, eq=False)
class Continue(Stmt):
    """``continue``: the innermost ``for``'s update, then its condition."""


@dataclass(slots=True, eq=False)
class CopyOutOnExit(Stmt):
    """Run ``body``; should it execute ``exit``, run ``copy_out`` before the exit unwinds
    further.  The front end wraps an inlined control's apply body in it when the body may exit
    and out/inout arguments are bound to copies: the spec copies them out on exit too (p4-spec
    PR #823), and ``copy_out`` holds those assignments.  The normal-path copy-out follows the
    node as ordinary statements.  ``body`` holds no ``return`` (an inlined body's returns are
    flags)."""

    body: Block
    copy_out: list[Stmt]


# parser-only statements

@dataclass(slots=True, eq=False)
class Extract(Stmt):
    """``pkt.extract(hdr)``; ``header`` is a header lvalue or ``StackNext``.  ``bits``: the
    varbit field's width of the two-argument extract."""

    header: Expr
    bits: Expr | None = None


@dataclass(slots=True, eq=False)
class Advance(Stmt):
    """``pkt.advance(bits)``."""

    bits: Expr


@dataclass(slots=True, eq=False)
class Verify(Stmt):
    """``verify(cond, error)``: on false, parser_error = error and go to reject."""

    cond: Expr
    error: Expr


@dataclass(slots=True, eq=False)
class Emit(Stmt):
    """``pkt.emit(hdr)`` in the deparser: ``header`` is always header-typed (emit of a struct or
    stack is expanded into one Emit per header, in order); emitted only if valid."""

    header: Expr


# ---------------------------------------------------------------- parsers


@dataclass(slots=True, eq=False)
class KeySet:
    """One component of a select case / const entry key.

    kind: "value" (value), "mask" (value &&& mask), "range" (value .. hi, inclusive),
    "default" (``default`` / ``_`` / don't care), "lpm" (value with prefix_len, const entries),
    "vset" (a parser value set, ``vset`` its P4Info name: the case matches when the whole select
    key is a member; every keyset of such a case is this one).
    """

    kind: Literal["value", "mask", "range", "default", "lpm", "vset"]
    value: int = 0
    mask: int = 0
    hi: int = 0
    prefix_len: int = 0
    loc: Loc = NO_LOC
    vset: str = ""


@dataclass(slots=True, eq=False)
class ValueSetField:
    """One match field of a value set: ``name`` "" for a ``bit<W>`` set (p4c gives it none)."""

    name: str
    width: int
    match_kind: Literal["exact", "lpm", "ternary", "range", "optional"]


@dataclass(slots=True, eq=False)
class ValueSet:
    """``value_set<T>(size) name;`` in a parser: members written by the controller (P4Runtime
    ``ValueSetEntry``), matched by ``select`` cases that name the set."""

    name: str  # P4Info name, e.g. "MyParser.pvs"
    local_name: str
    type: Type
    size: int
    fields: list[ValueSetField]
    annotations: tuple[Annotation, ...]
    loc: Loc
    id: int | None = None


@dataclass(slots=True, eq=False)
class SelectCase:
    keysets: list[KeySet]  # one per select key
    next_state: str
    loc: Loc


@dataclass(slots=True, eq=False)
class Transition:
    """Either ``next_state`` (direct) or ``select`` keys + cases; no match -> NoMatch error.
    State names ``accept`` and ``reject`` are the final states."""

    loc: Loc
    next_state: str | None = None
    keys: list[Expr] = field(default_factory=list)
    cases: list[SelectCase] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ParserState:
    name: str
    stmts: list[Stmt]
    transition: Transition
    annotations: tuple[Annotation, ...]
    loc: Loc


@dataclass(slots=True, eq=False)
class Param:
    """A block or action parameter. direction "" = action data (controller-supplied) or a
    directionless block parameter such as ``packet_in``."""

    name: str
    type: Type
    direction: Literal["in", "out", "inout", ""]
    annotations: tuple[Annotation, ...]
    loc: Loc
    default: Expr | None = None  # an action's or function's ``T p = value``: used when a call omits p


@dataclass(slots=True, eq=False)
class Parser:
    name: str  # type name, e.g. "MyParser"
    params: list[Param]  # (packet_in, out headers, inout meta, inout standard_metadata)
    locals: dict[str, Type]  # hoisted local variables (Var names)
    states: dict[str, ParserState]  # "start" first; no accept/reject entries
    annotations: tuple[Annotation, ...]
    loc: Loc
    value_sets: list[ValueSet] = field(default_factory=list)  # declaration order


# ---------------------------------------------------------------- actions, externs, tables


@dataclass(slots=True, eq=False)
class Action:
    name: str  # P4Info name, e.g. "MyIngress.set_port" or "NoAction"
    local_name: str  # name in the source
    params: list[Param]
    body: Block
    annotations: tuple[Annotation, ...]
    loc: Loc
    owner: str | None  # the top-level block whose Vars the body uses (None for top-level actions)
    id: int | None = None  # @id if given
    # hoisted locals of a top-level action (owner None); Vars naming them are per-invocation
    locals: dict[str, Type] = field(default_factory=dict)
    # a P4 function lowered to an action: its return value (if any) is a last ``out`` parameter
    # named ``$ret``; never in P4Info or a table
    function: bool = False

    @property
    def data_params(self) -> list[Param]:
        """Parameters supplied by the control plane (directionless), in order."""
        return [p for p in self.params if p.direction == ""]


ExternKind = Literal["counter", "direct_counter", "meter", "direct_meter", "register",
                     "action_profile", "action_selector"]


@dataclass(slots=True, eq=False)
class ExternInstance:
    """A v1model extern object.  ``unit``: "PACKETS" | "BYTES" | "BOTH" (counters) or
    "PACKETS" | "BYTES" (meters); ``algorithm``: a HashAlgorithm member name (selectors);
    ``width``: selector output width; ``type_args``: e.g. register element type, direct_meter
    result type.  ``tables``: P4Info names of tables that use it (direct resources, profiles)."""

    kind: ExternKind
    name: str  # P4Info name
    local_name: str
    annotations: tuple[Annotation, ...]
    loc: Loc
    size: int | None = None
    unit: str | None = None
    algorithm: str | None = None
    width: int | None = None
    type_args: tuple[Type, ...] = ()
    tables: list[str] = field(default_factory=list)
    id: int | None = None


@dataclass(slots=True, eq=False)
class TableKey:
    expr: Expr
    match_kind: Literal["exact", "lpm", "ternary", "range", "optional", "selector"]
    name: str  # P4Info match field name (@name or the expression's source text)
    annotations: tuple[Annotation, ...]
    loc: Loc

    @property
    def width(self) -> int:
        if isinstance(self.expr.type, ErrorT):
            return ERROR_KEY_WIDTH
        return type_width(self.expr.type)


@dataclass(slots=True, eq=False)
class TableActionRef:
    action: str  # P4Info name
    scope: Literal["TABLE_AND_DEFAULT", "TABLE_ONLY", "DEFAULT_ONLY"]
    annotations: tuple[Annotation, ...]
    loc: Loc
    implicit: bool = False  # added by the compiler (NoAction as default, as p4c does)
    # arguments bound in the actions list (``a(hdr.f)``): the action's leading directional
    # parameters; the control plane supplies the rest
    args: list[Expr] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class DefaultAction:
    action: str
    args: list[Const]  # one per data parameter
    const: bool
    loc: Loc


@dataclass(slots=True, eq=False)
class TableEntry:
    """A const entry.  ``keys`` has one KeySet per non-selector key.  ``priority`` is the
    P4Runtime priority (higher wins): explicit ``@priority``/``priority =`` values, otherwise
    given as p4c does for const entries (earlier entries win)."""

    keys: list[KeySet]
    action: str
    args: list[Const]
    priority: int
    loc: Loc
    is_const: bool = False  # 'const' before one entry of an 'entries' list


@dataclass(slots=True, eq=False)
class Table:
    name: str  # P4Info name
    local_name: str
    keys: list[TableKey]  # including selector keys, in source order
    actions: list[TableActionRef]
    default_action: DefaultAction
    const_entries: list[TableEntry] | None  # None when there is no ``entries`` property
    entries_const: bool  # ``const entries`` (True) vs ``entries`` (False)
    size: int  # 1024 when not given (p4c/bmv2 default)
    size_given: bool
    implementation: str | None  # action_profile / action_selector P4Info name
    counters: str | None  # direct_counter P4Info name
    meters: str | None  # direct_meter P4Info name
    support_timeout: bool
    annotations: tuple[Annotation, ...]
    loc: Loc
    id: int | None = None
    # run before each lookup when a key calls a function: every key is then a temporary these
    # statements assign, in key order (p4c's KeySideEffect lifts all keys so); else empty
    key_stmts: list[Stmt] = field(default_factory=list)

    @property
    def match_keys(self) -> list[TableKey]:
        """Keys that are matched (not selector inputs)."""
        return [k for k in self.keys if k.match_kind != "selector"]

    @property
    def selector_keys(self) -> list[TableKey]:
        return [k for k in self.keys if k.match_kind == "selector"]


@dataclass(slots=True, eq=False)
class Control:
    name: str  # type name == instance-qualified prefix of its P4Info names, e.g. "MyIngress"
    params: list[Param]
    locals: dict[str, Type]  # hoisted local variables (Var names) incl. inlined sub-controls
    externs: dict[str, ExternInstance]  # by P4Info name: top-level instances, then its own
    tables: dict[str, Table]  # by P4Info name, declaration order
    actions: list[str]  # P4Info names of actions declared (or inlined) in this control, in order
    body: Block
    annotations: tuple[Annotation, ...]
    loc: Loc


# ---------------------------------------------------------------- program


@dataclass(slots=True, eq=False)
class ControllerHeader:
    """A header with ``@controller_header("packet_in"|"packet_out")``."""

    name: str  # P4Info name (the annotation's string)
    header: HeaderT
    annotations: tuple[Annotation, ...]
    loc: Loc
    id: int | None = None


@dataclass(slots=True, eq=False)
class Digest:
    """A ``digest<T>`` used somewhere; its P4Info name is the struct type's name, or the typedef's
    when the type argument names one (``digest<learn_t>``, as p4c names it).  A digest of a list
    (``digest(n, {a, b})``) has a tuple type and a generated name, ``digest_0`` ..."""

    name: str
    type: StructT | TupleT
    loc: Loc


@dataclass(slots=True, eq=False)
class Program:
    """A checked v1model program.

    ``parser``, ``verify_checksum``, ``ingress``, ``egress``, ``compute_checksum``,
    ``deparser`` are the six ``V1Switch`` arguments in order.  ``actions`` holds every action
    (by P4Info name; top-level actions called by several controls appear once with
    ``owner=None``).
    """

    source_file: str
    errors: list[str]
    match_kinds: list[str]
    types: dict[str, Type]  # named header/struct/enum types, declaration order
    parser: Parser
    verify_checksum: Control
    ingress: Control
    egress: Control
    compute_checksum: Control
    deparser: Control
    actions: dict[str, Action]
    controller_headers: list[ControllerHeader]
    digests: list[Digest]
    main_loc: Loc = NO_LOC
    warnings: list[str] = field(default_factory=list)  # "file:line:col: warning: ..." texts
    # top-level extern instances by P4Info name, declaration order (also in every Control.externs)
    externs: dict[str, ExternInstance] = field(default_factory=dict)
    # field lists of the deprecated clone3/resubmit/recirculate(data) calls: index (from
    # FIELD_LIST_OF_DATA on, above any @field_list index) -> user-metadata paths they preserve
    data_field_lists: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    main_annotations: tuple[Annotation, ...] = ()  # on ``V1Switch(...) main`` (@pkginfo, @brief, ...)

    @property
    def controls(self) -> list[Control]:
        return [self.verify_checksum, self.ingress, self.egress, self.compute_checksum, self.deparser]

    def all_tables(self) -> list[Table]:
        return [t for c in self.controls for t in c.tables.values()]

    def all_externs(self) -> list[ExternInstance]:
        """Every extern instance once: top-level ones first (as p4c lists them), then each
        control's own, in control order."""
        out = list(self.externs.values())
        seen = {id(e) for e in out}
        for c in self.controls:
            for e in c.externs.values():
                if id(e) not in seen:
                    seen.add(id(e))
                    out.append(e)
        return out

    def field_list(self, struct: StructT, index: int) -> list[tuple[str, ...]]:
        """Paths (field names from ``struct``) of the fields marked ``@field_list(index)``,
        recursively, in declaration order (what clone/resubmit/recirculate preserve); for an
        index of ``data_field_lists``, the fields a deprecated call's data list names."""
        if index in self.data_field_lists:
            return list(self.data_field_lists[index])
        out: list[tuple[str, ...]] = []

        # As p4c: its mid end flattens the metadata struct (FlattenInterfaceStructs), each leaf
        # field taking the annotations of the struct types and fields above it, innermost type
        # first, then the outer levels, then its own; the back end then reads one @field_list
        # per leaf, the first (createRecirculateFieldsList's getSingle), so a field's own
        # @field_list under an annotated struct field, or a second @field_list, counts for nothing.
        def walk(t: StructT, prefix: tuple[str, ...], above: tuple[Annotation, ...], own: bool = True) -> None:
            above = (t.annotations if own else ()) + above
            for f in t.fields:
                anns = above + f.annotations
                if isinstance(f.type, StructT):
                    walk(f.type, prefix + (f.name,), anns)
                    continue
                first = next((a for a in anns if a.name == "field_list"), None)
                if first is not None and index in first.args:
                    out.append(prefix + (f.name,))

        # a metadata struct without a struct field is not flattened: its own annotations stay
        # on the type (isNestedStruct in p4c's flattenInterfaceStructs.cpp)
        nested = any(isinstance(f.type, StructT) and not f.type.union for f in struct.fields)
        walk(struct, (), (), nested)
        return out


def live_actions(prog: Program, ctl: Control) -> set[str]:
    """The actions of ``ctl`` that p4c's front end keeps: those its tables list (or take as
    default) and those its apply block calls, and every action those call in turn (not from a
    branch a constant condition leaves out).  An action only a removed table listed, or that
    nothing names, is removed (``RemoveUnusedDeclarations``)."""
    todo: list[str] = list(actions_called_in_order(ctl.body, live=True))
    for t in ctl.tables.values():
        todo += [r.action for r in t.actions]
        if t.default_action is not None:
            todo.append(t.default_action.action)
    live: set[str] = set()
    while todo:
        an = todo.pop()
        if an in live or an not in prog.actions:
            continue
        live.add(an)
        todo += actions_called_in_order(prog.actions[an].body, live=True)
    return live


def live_digests(prog: Program) -> set[str]:
    """P4Info names of the digests that p4c lists: those called in an apply block or in an
    action it keeps (``live_actions``); one called only in an action p4c removes is not."""
    out: set[str] = set()
    for c in prog.controls:
        for root in [c.body] + [prog.actions[an].body for an in live_actions(prog, c)]:
            for n in live_nodes(root):
                if isinstance(n, BuiltinCall) and n.name == "digest":
                    out.add(n.digest or n.type_args[0].name)
    return out


def live_value_sets(parser: Parser) -> list[ValueSet]:
    """The value sets p4c keeps: its front end removes a ``value_set`` nothing refers to
    (``RemoveUnusedDeclarations``, silently) and parser states that ``start`` cannot reach
    (``SimplifyParsers``), so P4Info lists only those a ``select`` of a reachable state names."""
    kept = {"start"}
    todo = ["start"]
    while todo:
        st = parser.states.get(todo.pop())
        if st is None:
            continue
        for n in iter_nodes(st):
            nxt = n.next_state if isinstance(n, (Transition, SelectCase)) else None
            if nxt and nxt not in kept:
                kept.add(nxt)
                todo.append(nxt)
    named = {n.vset for sn in kept if sn in parser.states for n in iter_nodes(parser.states[sn])
             if isinstance(n, KeySet) and n.kind == "vset"}
    return [vs for vs in parser.value_sets if vs.name in named]
