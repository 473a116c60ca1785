"""What a program can do to its headers and standard metadata, read off the IR once at load time.

The packet loop's generated entry points (``fastpath``) and the header reset (``recycle``) use it
to leave out work whose result no statement can observe:

* ``std_fields_used``: the ``standard_metadata`` fields any statement names.  A field no
  statement names need not be filled in before egress, nor reset for a recycled packet; a
  program naming none of ``QUEUE_FIELDS`` cannot tell a packet that skipped an empty queue.
* ``extract_only_headers``: the headers of the program's headers struct that only ``extract``
  ever writes.  Such a header holds non-zero fields only while it is valid (extract writes every
  field and the valid bit together; ``setValid`` zeroes the fields of an invalid header first), so
  resetting it for the next packet is needed only when it is valid, and a header that was never
  extracted still reads 0 (docs/softswitch.md, "Differences from bmv2").

The generated block functions use ``declared_before_use``: a control's locals that their own
declaration in the apply body always sets before anything touches them need no zeroing when the
control is entered.

These answers are conservative: anything the walk cannot follow (the struct used whole, a header
passed to an action, function or extern, a header union, a varbit header) counts as used or
written.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from softswitch.frontend import ir

# the arguments a builtin or extern method writes, by position (ir.BuiltinCall / ir.ExternCall
# document the argument orders); a call not listed is taken to write all of its arguments
_BUILTIN_WRITES: dict[str, tuple[int, ...]] = {
    "hash": (0,), "random": (0,), "update_checksum": (2,), "update_checksum_with_payload": (2,),
    "digest": (), "log_msg": (), "assert": (), "assume": (), "verify_checksum": (),
    "verify_checksum_with_payload": (), "clone": (), "clone_preserving_field_list": (),
    "resubmit_preserving_field_list": (), "recirculate_preserving_field_list": (), "truncate": (),
    "mark_to_drop": (0,),
}
_EXTERN_WRITES: dict[tuple[str, str], tuple[int, ...]] = {
    ("counter", "count"): (), ("direct_counter", "count"): (), ("register", "write"): (),
    ("register", "read"): (0,), ("meter", "execute_meter"): (1,), ("direct_meter", "read"): (0,),
}


def _walk(program: ir.Program, visit: Callable[[object], bool]) -> None:
    """Call ``visit`` on every IR node reachable from the parser, the five controls (their tables
    included) and every action, parents before children; a node's children are skipped when
    ``visit`` returns False.  Nodes are not de-duplicated: a node shared by two parents is visited
    under each (the IR is a tree apart from its types, which are skipped)."""
    _walk_nodes([program.parser, *program.controls, *program.actions.values()], visit)


def _walk_nodes(roots: list, visit: Callable[[object], bool]) -> None:
    """``_walk`` from the given nodes (lists and dicts of them too) instead of a whole program."""
    stack: list = list(reversed(roots))
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)):
            stack.extend(reversed(o))
            continue
        if isinstance(o, dict):
            stack.extend(o.values())
            continue
        if not dataclasses.is_dataclass(o) or isinstance(o, type):
            continue
        if isinstance(o, (ir.HeaderT, ir.StructT, ir.StackT, ir.Loc)):
            continue  # types and locations hold no expressions
        if visit(o) is False:
            continue
        stack.extend(getattr(o, f.name) for f in dataclasses.fields(o))


# the standard-metadata fields the traffic manager fills in for each packet
QUEUE_FIELDS = frozenset(("enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth"))


def std_fields_used(program: ir.Program) -> frozenset[str] | None:
    """The ``standard_metadata`` fields any parser state, control, table key, action or function
    of ``program`` names (read or written), or None when the struct is used whole (assigned,
    passed to an action or function): then every field counts as used.  ``mark_to_drop`` names
    ``egress_spec`` and ``mcast_grp``, the two fields it writes."""
    std_t = program.ingress.params[2].type
    used: set[str] = set()
    whole = False

    def visit(o: object) -> bool:
        nonlocal whole
        if isinstance(o, ir.Member) and isinstance(o.expr, ir.Var) and o.expr.type == std_t:
            used.add(o.field)
            return False
        if isinstance(o, ir.BuiltinCall) and o.name == "mark_to_drop":
            used.update(("egress_spec", "mcast_grp"))
            return False
        if isinstance(o, (ir.Var, ir.ActionParam)) and o.type == std_t:
            whole = True  # the whole struct: an alias could read any field
        return True

    _walk(program, visit)
    return None if whole else frozenset(used)


def tracks_length(std_used: frozenset[str] | None) -> bool:
    """Whether the generated code keeps ``C.dlen`` (the bytes setValid/setInvalid add or remove, as
    bmv2's packet-length register): only a program that reads ``packet_length`` can see it."""
    return std_used is None or "packet_length" in std_used


def _header_root(e: ir.Expr, hdr_t: ir.Type) -> str | None:
    """The member of the headers struct that lvalue ``e`` lies in: its name, ``"*"`` for the
    whole struct (or anything not followed), None when ``e`` is not in the headers struct."""
    while True:
        if isinstance(e, ir.Slice):
            e = e.expr
        elif isinstance(e, ir.Member):
            if isinstance(e.expr, ir.Var) and e.expr.type == hdr_t:
                return e.field
            e = e.expr
        elif isinstance(e, (ir.StackIndex, ir.StackNext, ir.StackLast)):
            e = e.stack
        elif isinstance(e, ir.Var):
            return "*" if e.type == hdr_t else None
        elif isinstance(e, (ir.Const, ir.ActionParam)):
            return None
        else:
            return "*"  # an expression this walk does not follow as an lvalue: assume the worst


def header_root(e: ir.Expr, hdr_t: ir.Type) -> str | None:
    """The headers-struct member ``e`` lies in (``_header_root``: a name, "*" or None)."""
    return _header_root(e, hdr_t)


def tracked_header(e: ir.Expr, hdr_t: ir.Type) -> str | None:
    """The headers-struct member that header ``e`` is, when it is ``hdr.h`` (a header) or
    ``hdr.s[i]`` (an element of a stack, constant index), else None."""
    if isinstance(e, ir.StackIndex) and isinstance(e.index, ir.Const):
        e = e.stack
        if not isinstance(e.type, ir.StackT):
            return None
    elif not isinstance(e.type, ir.HeaderT):
        return None
    if isinstance(e, ir.Member) and isinstance(e.expr, ir.Var) and e.expr.type == hdr_t:
        return e.field
    return None


def _field_lvalue(e: ir.Expr, hdr_t: ir.Type) -> str | None:
    """The member of the headers struct that lvalue ``e`` stores into by ``ExprGen.assign`` with a
    ``dirty`` mark or by ``copy_from`` (which sets ``dirty``): a header or a stack element
    (constant index), whole, one field of it or a slice of a field; else None."""
    if isinstance(e, ir.Slice):
        e = e.expr
    h = tracked_header(e, hdr_t)
    if h is not None:
        return h
    if isinstance(e, ir.Member):
        return tracked_header(e.expr, hdr_t)
    return None


def _stores(program: ir.Program) -> list[tuple[str, ir.Expr]]:
    """Every lvalue a statement of ``program`` may store into, as ``(how, lvalue)``, in one walk
    shared by ``field_written_headers`` and ``extract_only_headers`` (which differ only in what
    they make of each store):

    * ``"store"``: an assignment's left side, an ``out``/``inout`` argument of an action or
      function (called, or bound in a table's ``actions`` list), the argument a known builtin or extern method writes (``_BUILTIN_WRITES``,
      ``_EXTERN_WRITES``);
    * ``"invalidate"``: the header of a ``setInvalid``;
    * ``"stack"``: the stack of a ``push_front``/``pop_front``;
    * ``"unknown"``: each argument of a call whose writes the walk does not know (an action not
      in the program or an argument past its parameters, an extern method or builtin not in the
      tables)."""
    out: list[tuple[str, ir.Expr]] = []
    externs = {e.name: e for e in program.all_externs()}

    def calls(args: list[ir.Expr], writes: tuple[int, ...] | None) -> None:
        for i, arg in enumerate(args):
            if writes is None:
                out.append(("unknown", arg))
            elif i in writes:
                out.append(("store", arg))

    def visit(o: object) -> bool:
        if isinstance(o, ir.Assign):
            out.append(("store", o.lhs))
        elif isinstance(o, ir.SetInvalid):
            out.append(("invalidate", o.header))
        elif isinstance(o, (ir.PushFront, ir.PopFront)):
            out.append(("stack", o.stack))
        elif isinstance(o, ir.ActionCall) or (isinstance(o, ir.TableActionRef) and o.args):
            # a call, or ``actions = { a(hdr.h.f); }`` in a table: the bound arguments are the
            # action's leading parameters, copied back after it when out/inout (``_bound_call``)
            params = program.actions[o.action].params if o.action in program.actions else None
            for i, arg in enumerate(o.args):
                if params is None or i >= len(params):
                    out.append(("unknown", arg))
                elif params[i].direction in ("out", "inout"):
                    out.append(("store", arg))
        elif isinstance(o, ir.ExternCall):
            ext = externs.get(o.instance)
            calls(o.args, _EXTERN_WRITES.get((ext.kind, o.method)) if ext is not None else None)
        elif isinstance(o, ir.BuiltinCall):
            calls(o.args, _BUILTIN_WRITES.get(o.name))
        return True

    _walk(program, visit)
    return out


def field_written_headers(program: ir.Program) -> frozenset[str]:
    """Names of the headers-struct members (headers and header stacks) not in
    ``extract_only_headers`` that, besides ``extract``, only these write: stores to the header
    or a stack element (constant index), whole or one field or a slice of a field (an
    assignment, the written argument of a builtin or extern, an action's ``out``/``inout``
    argument: all emitted by ``ExprGen.assign``), ``setInvalid`` of the header or element, and a
    stack's ``push_front``/``pop_front``.  The generated code marks the header object ``dirty`` at
    each field store and ``setInvalid`` (a whole-header store is ``copy_from``, which sets it), the
    only ways a header object can hold non-zero fields while invalid (extract and ``setValid``
    make it valid; push/pop swap elements and mark the freed ones dirty), so resetting it for the next packet
    is needed only when it is valid or dirty (``recycle.make_reset``'s ``tracked``).  Anything
    else written to it (``next``/``last`` or a computed index as an lvalue, the whole stack or
    headers struct, a call this walk does not know) leaves it out."""
    hdr_t = program.parser.params[1].type
    if not isinstance(hdr_t, ir.StructT):
        return frozenset()
    other: set[str] = set()
    fields: set[str] = set()

    def mark(e: ir.Expr) -> None:
        h = _field_lvalue(e, hdr_t)
        if h is not None:
            fields.add(h)
            return
        root = _header_root(e, hdr_t)
        if root == "*":
            other.update(f.name for f in hdr_t.fields)
        elif root is not None:
            other.add(root)

    for how, e in _stores(program):
        if how == "store":
            mark(e)
        elif how == "invalidate":
            h = tracked_header(e, hdr_t)
            if h is not None:
                fields.add(h)
            else:
                mark(e)
        elif how == "stack":
            if isinstance(e, ir.Member) and isinstance(e.expr, ir.Var) and e.expr.type == hdr_t:
                fields.add(e.field)
            else:
                mark(e)
        else:  # a call the walk does not know may write anything
            other.add("*")
    if "*" in other:
        return frozenset()
    return _plain_headers(hdr_t) - other - extract_only_headers(program)


def extract_only_headers(program: ir.Program) -> frozenset[str]:
    """Names of the headers-struct members (headers and header stacks) that no statement writes
    except ``extract``: no assignment to them or their fields, no ``setInvalid``, no
    ``push_front``/``pop_front``, not an ``out``/``inout`` argument of an action or function, not
    the argument an extern method or builtin writes (``hash``'s result, ``register.read``'s,
    ``update_checksum``'s checksum...; every argument of a call not known).  Header unions,
    stacks of them, headers with a varbit field and headers with a struct-typed field are never
    in the set."""
    hdr_t = program.parser.params[1].type
    if not isinstance(hdr_t, ir.StructT):
        return frozenset()
    written: set[str] = set()
    for _how, e in _stores(program):  # every kind of store, a call not known included, counts
        root = _header_root(e, hdr_t)
        if root == "*":
            written.update(f.name for f in hdr_t.fields)
        elif root is not None:
            written.add(root)
    return _plain_headers(hdr_t) - written


def next_only_stacks(program: ir.Program) -> frozenset[str]:
    """The header stacks of ``extract_only_headers`` whose elements become valid only through
    ``extract(stack.next)``: no ``setValid`` of an element, no ``extract`` into an element named
    by its index.  Each such extract makes element ``nextIndex`` valid and then advances
    ``nextIndex``, and nothing else makes an element valid or moves ``nextIndex``, so the valid
    elements are exactly those below ``nextIndex``: while it is 0, none is (the header reset and
    the deparser skip the whole stack on that one test)."""
    hdr_t = program.parser.params[1].type
    eo = extract_only_headers(program)
    if not isinstance(hdr_t, ir.StructT):
        return frozenset()
    elem_t = {f.name: f.type.elem for f in hdr_t.fields if f.name in eo and isinstance(f.type, ir.StackT)}
    stacks = set(elem_t)
    bad: set[str] = set()

    def made_valid(h: ir.Expr) -> None:
        root = _header_root(h, hdr_t)
        if root == "*" or root is None:  # a header the walk does not place (a parameter of a
            # sub-parser or action, a local): any stack of its type may be what it is
            bad.update(n for n, t in elem_t.items() if t == h.type)
            if root == "*":
                bad.update(stacks)
        else:
            bad.add(root)

    def visit(o: object) -> bool:
        if isinstance(o, ir.SetValid) or (isinstance(o, ir.Extract) and not isinstance(o.header, ir.StackNext)):
            made_valid(o.header)
        return True

    _walk(program, visit)
    return frozenset(stacks - bad)


def _plain_headers(hdr_t: ir.StructT) -> frozenset[str]:
    """The members of the headers struct that either analysis may answer: headers and stacks of
    headers with no varbit field and no struct-typed field (an object the lazy reset does not
    guard); header unions and stacks of them are not headers here."""
    out = set()
    for f in hdr_t.fields:
        t = f.type
        elem = t.elem if isinstance(t, ir.StackT) else t
        if not isinstance(elem, ir.HeaderT) or elem.varbit is not None:
            continue
        if any(isinstance(x.type, ir.StructT) for x in elem.fields):
            continue
        out.add(f.name)
    return frozenset(out)


def unread_fields(program: ir.Program) -> dict[str, frozenset[str]]:
    """For each header (or header stack) in ``extract_only_headers``, the names of its fields that
    no expression of ``program`` reads: ``extract`` need not store them, since nothing but the
    deparser looks at them again, and the deparser emits such a header from the bytes it was
    extracted from (``raw``).  A field counts as read wherever it is named (``hdr.h.f``,
    ``hdr.s[i].f``, ``hdr.s.last.f``, in any statement, key, select or argument); the header
    itself counts as reading every field anywhere but under a field access, ``isValid()``,
    ``setValid()``, ``extract`` and ``emit`` (passed to an action, function or extern, compared,
    assigned from, put in a list or struct, logged, hashed: all of it).  A member missing from the
    answer has no unread field."""
    hdr_t = program.parser.params[1].type
    if not isinstance(hdr_t, ir.StructT):
        return {}
    eo = extract_only_headers(program)
    read: dict[str, set[str]] = {n: set() for n in eo}
    whole: set[str] = set()

    def root(e: ir.Expr) -> str | None:
        """The extract-only member that header expression ``e`` is (an element of), else None."""
        while isinstance(e, (ir.StackIndex, ir.StackNext, ir.StackLast)):
            e = e.stack
        if isinstance(e, ir.Member) and isinstance(e.expr, ir.Var) and e.expr.type == hdr_t and e.field in eo:
            return e.field
        return None

    def indices(e: ir.Expr) -> list[ir.Expr]:
        """The run-time index expressions inside header expression ``e`` (read as usual)."""
        out = []
        while isinstance(e, (ir.StackIndex, ir.StackNext, ir.StackLast)):
            if isinstance(e, ir.StackIndex):
                out.append(e.index)
            e = e.stack
        return out

    def visit(o: object) -> bool:
        if isinstance(o, ir.Member):
            r = root(o.expr)
            if r is not None and isinstance(o.expr.type, ir.HeaderT):
                read[r].add(o.field)
                _walk_nodes(indices(o.expr), visit)
                return False
            if isinstance(o.expr, ir.Var) and o.expr.type == hdr_t:
                if o.field in eo:
                    whole.add(o.field)  # the member itself, somewhere not listed here
                return False  # another member of the headers struct: not ours to follow
        elif isinstance(o, ir.Var) and o.type == hdr_t:
            whole.update(eo)  # the headers struct itself (copied, passed, compared): any field
            return False
        elif isinstance(o, (ir.IsValid, ir.SetValid, ir.Extract, ir.Emit)):
            h = o.header
            if root(h) is not None:
                _walk_nodes(indices(h), visit)
                if isinstance(o, ir.Extract) and o.bits is not None:
                    _walk_nodes([o.bits], visit)
                return False
        return True

    _walk(program, visit)
    out: dict[str, frozenset[str]] = {}
    for name in eo - whole:
        t = next(f.type for f in hdr_t.fields if f.name == name)
        elem = t.elem if isinstance(t, ir.StackT) else t
        unread = frozenset(f.name for f in elem.fields) - read[name]
        if unread:
            out[name] = unread
    return out


def local_root(e: ir.Expr, act: ir.Action) -> str | None:
    """The name of the variable declared in ``act``'s body (its own local, wherever the front end
    keeps it) that lvalue ``e`` lies in, else None."""
    while isinstance(e, (ir.Member, ir.Slice, ir.StackIndex)):
        e = e.stack if isinstance(e, ir.StackIndex) else e.expr
    if not isinstance(e, ir.Var):
        return None
    declared = any(isinstance(n, ir.VarDecl) and n.var.name == e.name for n in ir.iter_nodes(act.body))
    return e.name if declared else None


def meter_locals(act: ir.Action) -> list[tuple[str, ir.Expr]]:
    """(instance, lvalue) of each one-argument ``read()`` call in ``act`` (a direct meter's, when
    the instance is one) whose lvalue lies in one of the action's own local variables."""
    return [(n.instance, n.args[0]) for n in ir.iter_nodes(act.body)
            if isinstance(n, ir.ExternCall) and n.method == "read" and len(n.args) == 1
            and local_root(n.args[0], act) is not None]


def body_only_locals(ctl: ir.Control, actions: list[ir.Action]) -> frozenset[str]:
    """The locals of control ``ctl`` that nothing but its apply body names: no action of
    ``actions`` (pass them all: an action function is generated per control and gets the
    control's locals object) and no table of the control (a table's key, its actions' bound
    arguments).  The generated block function holds such a local as a Python local: the apply
    body is that one function, so no other function needs to reach it through the locals object
    (its accesses are then a local load or store, not an attribute of an object made for every
    packet)."""
    names = set(ctl.locals)
    named = {n.name for root in [*actions, *ctl.tables.values()] for n in ir.iter_nodes(root)
             if isinstance(n, ir.Var) and n.name in names}
    return frozenset(names - named)


def declared_before_use(ctl: ir.Control, actions: list[ir.Action]) -> frozenset[str]:
    """The locals of control ``ctl`` that its apply body always (re)initialises with their own
    declaration (``VarDecl``) before any statement touches them, and that nothing else of the
    control names (its ``actions``, its tables): the zeroing of such a local when the control is
    entered can never be observed, since the declaration zeroes (or initialises) it again first.

    The walk follows the body's structure: after an ``if`` a local counts as declared when both
    branches declared it; a ``switch``, a loop's body and an exit-wrapped body add nothing to what
    follows them.  A local read, written or passed anywhere before its declaration on some path
    (a control-level declaration, which has no ``VarDecl`` in the body) keeps its entry zeroing."""
    names = set(ctl.locals)
    bad: set[str] = set()
    declared_somewhere: set[str] = set()
    for root in [*actions, *ctl.tables.values()]:
        bad.update(n.name for n in ir.iter_nodes(root) if isinstance(n, ir.Var) and n.name in names)

    def touch(node: object, done: frozenset[str]) -> None:
        bad.update(n.name for n in ir.iter_nodes(node)
                   if isinstance(n, ir.Var) and n.name in names and n.name not in done)

    def seq(stmts: list, done: frozenset[str]) -> frozenset[str]:
        for s in stmts:
            done = stmt(s, done)
        return done

    def stmt(s: object, done: frozenset[str]) -> frozenset[str]:
        t = type(s)
        if t is ir.VarDecl:
            touch(s.init, done)
            declared_somewhere.add(s.var.name)
            return done | {s.var.name}
        if t is ir.Block:
            return seq(s.stmts, done)
        if t is ir.If:
            touch(s.cond, done)
            after_then = seq(s.then.stmts, done)
            after_else = seq(s.else_.stmts, done) if s.else_ is not None else done
            return after_then & after_else
        if t in (ir.SwitchActionRun, ir.SwitchValue):
            if t is ir.SwitchValue:
                touch(s.expr, done)
            for case in s.cases:
                seq(case.body.stmts, done)
            return done
        if t is ir.For:
            done = seq(s.init, done)
            inner = seq(s.cond_pre, done)
            touch(s.cond, inner)
            seq(s.body.stmts, inner)
            seq(s.update, inner)  # (also after a ``continue`` part way through the body)
            return done
        if t is ir.CopyOutOnExit:
            seq(s.copy_out, done)  # runs on an exit from anywhere in the body
            seq(s.body.stmts, done)
            return done
        touch(s, done)  # any other statement: every local it names must be declared by now
        return done

    seq(ctl.body.stmts, frozenset())
    return frozenset(declared_somewhere - bad)
