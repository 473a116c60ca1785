"""Compile the checked IR of a v1model program into Python source, once, at load time.

One Python function is generated per parser state, action, table apply and top-level block;
they take the packet's objects ``(H, M, S, L, C)`` -- headers, user metadata, standard
metadata, the block's locals and the per-packet context -- so no tree is walked per packet.
``CompiledBlocks`` holds the resulting functions.  With ``trace=True`` trace calls are compiled
in; without it the generated code contains none.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from softswitch.exec import hashes, layout, support
from softswitch.exec.exprgen import (
    MAX_PARSER_STATES,
    PE_NO_MATCH,
    PE_PARSER_TIMEOUT,
    CompileError,
    Out,
    Resources,
    bitmask,
    bits_code,
    compile_error,
    contains,
)
from softswitch.exec.layout import signed_width
from softswitch.exec.stmtgen import StmtGen, colour_to
from softswitch.exec.usage import body_only_locals, declared_before_use, header_root, local_root, meter_locals
from softswitch.frontend import ir

__all__ = ["CompileError", "CompiledBlocks", "Compiler", "Resources"]


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
    # headers-struct members the generated code marks ``dirty`` (``usage.field_written_headers``)
    dirty_tracked: frozenset = frozenset()
    # the checksum controls' guards (``Compiler._checksum_guard``), by block function name
    guards: dict = field(default_factory=dict)


def _parser_graph(prs: ir.Parser) -> tuple[dict[str, set[str]], dict[str, int], set[str]]:
    """(successors, predecessor counts, states on a loop) of a parser's state graph."""
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

    return succ, preds, {n for n in prs.states if on_loop(n)}


def _code_of(text: str, name: str):
    """The code object of function ``name`` defined in ``text`` (compiled, not run)."""
    return next(c for c in compile(text, "<parser>", "exec").co_consts if getattr(c, "co_name", None) == name)


def _dispatch_states(prs: ir.Parser, shared: bool = False) -> list[str]:
    """The parser states that get a branch of their own in the generated ``parse``: ``start``
    and the states on a loop.  Every other state is on no loop, so its code is copied into each
    state that transitions to it (no dispatch, no call per state).  When the copies would make
    the code too long (many states reached from many others), or when ``shared``, states with
    more than one predecessor get a branch too."""
    succ, preds, looping = _parser_graph(prs)
    dispatch = {"start"} | looping
    size: dict[str, int] = {}

    def expanded(n: str) -> int:  # statements of n with its copied successors (a DAG: no cycle)
        if n not in size:
            size[n] = 1 + len(prs.states[n].stmts) + sum(expanded(t) for t in succ[n] if t not in dispatch)
        return size[n]

    if shared or sum(expanded(n) for n in dispatch) > MAX_COPIED_STATEMENTS:
        dispatch |= {n for n in prs.states if preds[n] > 1}
    depth: dict[str, int] = {}

    def nested(n: str) -> int:  # how deep n's copied successors nest (one level per select case)
        if n not in depth:
            depth[n] = 1 + max((nested(t) for t in succ[n] if t not in dispatch), default=0)
        return depth[n]

    if max(nested(n) for n in dispatch) > MAX_COPY_DEPTH:
        # a long chain of states: copied into each other it would nest past what Python compiles
        # ("too many levels of indentation" at 100), so every state gets a branch of its own
        dispatch = set(prs.states)
    return ["start"] + [n for n in prs.states if n in dispatch and n != "start"]  # branch 0: start


MAX_COPIED_STATEMENTS = 4000  # parser statements after copying shared states into their callers
MAX_COPY_DEPTH = 40  # states copied into one another, at most (below Python's 100 indentation levels)
# Local variables of the generated ``parse``, at most, before shared states get a branch of their
# own instead of a copy in each caller.  CPython sets up and clears every local slot of a frame on
# each call, so a ``parse`` with thousands of temporaries costs per packet what no copy saves:
# mrc_switch.p4 with its options-header states copied into every caller had 1,964 locals (190 kB of
# bytecode) and ran the whole pipeline at 0.4 the speed of the same program with a branch per
# shared state (bench/softswitch_pipeline.py --program mrc, 2026-12-06).
MAX_PARSER_LOCALS = 1000

# key expressions whose evaluation can do nothing but compute a value: no call, no stack access
# (an index can be out of range), no division; a table whose keys are all such can skip them
_PURE_KEY_NODES = (ir.Const, ir.Var, ir.ActionParam, ir.Member, ir.TupleElem, ir.Slice, ir.Unary,
                   ir.Binary, ir.Concat, ir.Cast, ir.Mux, ir.IsValid)


def _pure_key(k) -> bool:
    return all(type(n) in _PURE_KEY_NODES and not (type(n) is ir.Binary and n.op in ("/", "%"))
               for n in ir.iter_nodes(k.expr))


class Compiler(StmtGen):
    """Generates and compiles the Python source of one program."""

    # ------------------------------------------------------------------ blocks

    def _bind_block(self, blk, param_objs: list[str | None], fast: frozenset[str] = frozenset()) -> str:
        """Set up variable names for a block; returns the locals class name (or '').  ``fast``:
        locals that become Python locals of the block's function (``usage.body_only_locals``:
        nothing but the apply body names them) instead of attributes of its locals object."""
        self.cur_block = blk
        self.var_map = {}
        self.fast_zero: dict[str, str] = {}
        self.fast_names: dict[str, str] = {}
        for p, o in zip(blk.params, param_objs):
            if o is not None:
                self.var_map[p.name] = o
        if not blk.locals:
            return ""
        attrs = []
        for i, (name, t) in enumerate(blk.locals.items()):
            if name in fast:
                self.var_map[name] = self.fast_names[name] = f"_cl{i}"
                self.fast_zero[f"_cl{i}"] = layout.zero_code(t, self.names)
                continue
            attr = f"l{i}"
            attrs.append((attr, t))
            self.var_map[name] = f"L.{attr}"
        if not attrs:
            return ""
        lname = f"Loc{self.ctl_index}"
        src = [f"class {lname}:", f"    __slots__ = {tuple(a for a, _ in attrs)!r}", "    def __init__(self):"]
        src += [f"        self.{a} = {layout.zero_code(t, self.names)}" for a, t in attrs]
        self.funcs.append("\n".join(src) + "\n")
        self.loc_zero[lname] = {a: layout.zero_code(t, self.names) for a, t in attrs}
        return lname

    def _new_locals(self, lname: str, out: Out, late: frozenset[str] = frozenset()) -> None:
        """``L = Loc()`` written out: the object made without a call to its ``__init__`` (a
        Python call per block and packet) and its attributes zeroed here, as ``__init__`` does
        (a fresh object for every header or struct local, as before); the block's Python locals
        (``_bind_block``'s ``fast``) zeroed likewise.  ``late``: the locals (Var names) whose
        own declaration always sets them before anything touches them
        (``usage.declared_before_use``): zeroing them here too would be overwritten unseen --
        for a header local, a header object made for every packet and never used."""
        if not lname:
            out.add(1, "L = None")
        else:
            out.add(1, f"L = _onew({lname})")
            zero = self.loc_zero[lname]
            skip = {self.var_map[name][2:] for name in late if self.var_map.get(name, "").startswith("L.")}
            for line in layout._zero_lines([a for a in zero if a not in skip], zero, "    "):
                out.add(1, line.strip().replace("self.", "L."))
        skip = {self.fast_names[name] for name in late if name in self.fast_names}
        fz = self.fast_zero
        for line in layout._zero_lines([v for v in fz if v not in skip], fz, "    "):
            out.add(1, line.strip().replace("self.", ""))

    def gen_actions(self, ctl: ir.Control | ir.Parser, only_functions: bool = False) -> None:
        for name, act in self.p.actions.items():
            if act.owner is not None and act.owner != ctl.name:
                continue
            if only_functions and not act.function:
                continue
            fn = f"act{self.ctl_index}_{len(self.action_fn)}"
            self.action_fn[(self.ctl_index, name)] = fn
        for name, act in self.p.actions.items():
            key = (self.ctl_index, name)
            if key not in self.action_fn:
                continue
            self.action = act
            saved_vars = self._bind_action_locals(act)
            out = Out()
            params = "".join(f", a{i}" for i in range(len(act.params)))
            out.add(0, f"def {self.action_fn[key]}(H, M, S, L, C{params}):")
            if self.trace:
                shown = " + ', ' + ".join(f"str(a{i})" for i, p in enumerate(act.params) if p.direction == "")
                out.add(1, f"TR('action {name}(' + {shown or repr('')} + ')')")
            self._param_prologue(act, out, 1)
            if any(p.direction in ("out", "inout") for p in act.params):
                # exit in the action (or in an action it calls) still copies out its out/inout
                # arguments (P4 spec since p4-spec PR #823; p4c since its PR #2443): the values
                # ride on the exception to the caller, which assigns them before unwinding further
                out.add(1, "try:")
                self.block(act.body, out, 2)
                out.add(1, "except _Exit as _x:")
                out.add(2, f"_x.outs = {self._action_outs()}")
                out.add(2, "raise")
                out.add(1, f"return {self._action_outs()}")
            else:
                self.block(act.body, out, 1)
            self.funcs.append("\n".join(out.lines) + "\n")
            self.action = None
            self.var_map = saved_vars

    def _bind_action_locals(self, act: ir.Action) -> dict:
        """Map a top-level action's (or function's) own locals to Python locals of the code
        it runs in; returns the previous variable map to restore."""
        saved = self.var_map
        if act.locals:
            self.var_map = dict(saved)
            for i, name in enumerate(act.locals):
                self.var_map[name] = f"_al{i}"
        return saved

    def gen_tables(self, ctl: ir.Control) -> None:
        for tname in ctl.tables:
            self.table_fn[tname] = f"tbl{self.ctl_index}_{len(self.table_fn)}"
        # direct meter result targets: the lvalues of direct_meter.read() in the table's actions
        for tname, tbl in ctl.tables.items():
            self.gen_table(ctl, tbl)

    def _meter_targets(self, tbl: ir.Table) -> list[ir.Expr]:
        """The lvalues of ``direct_meter.read()`` calls in the table's actions that are not the
        action's own local variables (those are ``meter_locals``)."""
        return [n.args[0] for ref in tbl.actions for n in ir.iter_nodes(self.p.actions[ref.action].body)
                if isinstance(n, ir.ExternCall) and n.instance == tbl.meters and n.method == "read"
                and local_root(n.args[0], self.p.actions[ref.action]) is None]

    def gen_table(self, ctl: ir.Control, tbl: ir.Table) -> None:
        fn = self.table_fn[tbl.name]
        out = Out()
        out.add(0, f"def {fn}(H, M, S, L, C):")
        aid, entry = self.table_code(ctl, tbl, out, 1)
        out.add(1, f"return {aid}, {entry} is not None")
        self.funcs.append("\n".join(out.lines) + "\n")

    def _key_value(self, e: ir.Expr) -> str:
        """A key's value as bmv2's match-key builder reads it: a field of a header that is invalid
        gives 0 (match_units.cpp zeroes it: fields are not reset between packets), also through a
        constant mask p4c leaves on the field.  Headers only ``extract`` writes are all-zero while
        invalid here already (``usage.extract_only_headers``): no test for them."""
        code = self.ex(e)
        f = e.left if isinstance(e, ir.Binary) and e.op == "&" and isinstance(e.right, ir.Const) else e
        if isinstance(f, ir.Slice):  # p4c's back end makes a slice key the field with a mask
            f = f.expr
        if not (isinstance(f, ir.Member) and isinstance(f.expr.type, ir.HeaderT)):
            return code
        root = header_root(f.expr, self.hdr_t)
        if root is not None and root != "*" and root in self.extract_only:
            return code
        return f"({code} if {self.ex(f.expr)}.valid else 0)"

    def table_code(self, ctl: ir.Control, tbl: ir.Table, out: Out, ind: int) -> tuple[str, str]:
        """Lookup, direct resources and action dispatch of one apply; returns the names of the
        action-id and entry variables it leaves behind."""
        ts = self.res.table(tbl.name)
        g = self.g(ts, "TS")
        if tbl.key_stmts:  # keys that call functions: all computed into temporaries first
            self.block(ir.Block(tbl.loc, tbl.key_stmts), out, ind)
        keys = [bits_code(self._key_value(k.expr), k.expr.type) for k in tbl.match_keys]  # bmv2 matches the bits
        key = "(" + "".join(k + ", " for k in keys) + ")"
        sel = ""
        if tbl.selector_keys:
            impl = ctl.externs.get(tbl.implementation) if tbl.implementation else None
            if impl is None or impl.algorithm is None:
                raise compile_error(tbl.loc, f"table {tbl.name} has selector keys but no action_selector")
            alg = hashes.ALGORITHMS.get(impl.algorithm)
            if alg is None:
                raise compile_error(impl.loc, f"unsupported: selector algorithm {impl.algorithm}")
            lst = ir.ListExpr(ir.TupleT(tuple(k.expr.type for k in tbl.selector_keys)), tbl.loc,
                              [k.expr for k in tbl.selector_keys])
            sel = f", {self.g(alg, 'H_sel_')}({self.pack_code(lst)})"
        aid, args, entry = self.t(), self.t(), self.t()
        inline = ts.inline_index() if len(keys) == 1 else None
        if inline is not None:
            self._inline_lookup(ts, inline, keys[0], sel[2:] or "0", (aid, args, entry), g, out, ind)
        else:
            occupied = None if (sel or self.trace or not all(map(_pure_key, tbl.match_keys))) \
                else ts.occupancy()
            if occupied is not None:
                # no entries: the default action without building the key (a key that only
                # reads fields has nothing else to do); an entry makes the test true at once
                test = self.g(occupied[0], "TO") + occupied[1]
                out.add(ind, f"if {test}:")
                out.add(ind + 1, f"{aid}, {args}, {entry} = {g}.lookup({key})")
                out.add(ind, "else:")
                out.add(ind + 1, f"{aid}, {args}, {entry} = {g}.default_hit")
            else:
                out.add(ind, f"{aid}, {args}, {entry} = {g}.lookup({key}{sel})")
        if self.trace:
            out.add(ind, f"TR('table {tbl.name}: ' + ('hit entry ' + _entry_text({entry}) if {entry} is not None else 'miss')"
                         f" + ' key=' + _key_text({key}) + ' -> ' + ANAMES.get({aid}, str({aid})) + _key_text({args}))")
        hit_lines = []
        if ts.idle_timeout:  # idle-timeout tables: the entry's last hit (time_since_last_hit, notifications)
            hit_lines.append(f"{entry}.since_ns = {self.g(time.monotonic_ns, 'MONO')}()")
        if tbl.counters:
            self.res.extern(tbl.counters)  # must exist; its cells are on the entries
            # DirectCounterState.count, inline (the entry is not None here): one packed cell
            hit_lines.append(f"{entry}.cnt += C.ncount")
        if tbl.meters:
            dm = self.g(self.res.extern(tbl.meters), "X")
            targets = self._meter_targets(tbl)
            # an action-local target: p4c's bmv2 back end makes it a field the table writes at the
            # hit, before the action runs, so the action's declaration of it (without an
            # initialiser) finds the colour there (st_VarDecl reads C.mcol)
            local = any(m == tbl.meters for ref in tbl.actions for m, _ in meter_locals(self.p.actions[ref.action]))
            if local:
                out.add(ind, "C.mcol = 0")
            if (targets and not any(isinstance(t, ir.ActionParam) for t in targets)) or local:
                col = self.t()
                hit_lines.append(f"{col} = {dm}.execute({entry}, C.nbytes, C.now)")
                if local:
                    hit_lines.append(f"C.mcol = {col}")
                tmp = Out()
                for tgt in targets:
                    if not isinstance(tgt, ir.ActionParam):
                        self.assign(tgt, colour_to(col, tgt.type), tmp, 0)
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
            if ref.args:
                self._bound_call(act, ref, args, out, ind + 1)
            elif self._inlinable(act):
                self.inline_action(act, args, out, ind + 1)
            else:
                out.add(ind + 1, f"{self.action_fn[(self.ctl_index, ref.action)]}(H, M, S, L, C, *{args})")
        return aid, entry

    def _inline_lookup(self, ts, index, key: str, sel: str, res: tuple[str, str, str], g: str,
                       out: Out, ind: int) -> None:
        """A one-field exact or LPM lookup written out in the apply (``TableState.lookup1``'s
        answer without the call): the exact table's dict keyed by the value; the LPM table's
        groups, longest prefix first, up to the first that holds the masked value."""
        target = ", ".join(res)
        # the key's value and the lookup's intermediates are read only by these lines: named
        # alike in every apply (fewer frame slots, as st_Extract's temporaries)
        v, e = "_kv", "_ke"
        if index.kind == "exact":
            get = self.g(index.get, "TD")
            out.add(ind, f"{e} = {get}({key})")  # the key read once, as the argument
            out.add(ind, f"if {e} is None:")
            out.add(ind + 1, f"{target} = {g}.default_hit")
            out.add(ind, "else:")
            out.add(ind + 1, f"{target} = {e}.hit or {e}.resolve({sel})")
            return
        out.add(ind, f"{v} = {key}")
        idx = self.g(index.index, "TI")
        m, d, lst = "_km", "_kd", "_kl"
        out.add(ind, f"for {m}, _, {d} in {idx}.walk:")
        out.add(ind + 1, f"{lst} = {d}.get({v} & {m})")
        out.add(ind + 1, f"if {lst} is not None:")
        out.add(ind + 2, f"{e} = {lst}[0]")
        out.add(ind + 2, f"{target} = {e}.hit or {e}.resolve({sel})")
        out.add(ind + 2, "break")
        out.add(ind, "else:")
        out.add(ind + 1, f"{target} = {g}.default_hit")

    def _bound_call(self, act: ir.Action, ref: ir.TableActionRef, args: str, out: Out, ind: int) -> None:
        """Run a table's action whose directional parameters are bound in the actions list:
        bound arguments first, the entry's data after; out/inout ones copied back (also on exit)."""
        codes = [self.arg_code(p, a) for p, a in zip(act.params, ref.args)]
        fn = self.action_fn[(self.ctl_index, ref.action)]
        call = f"{fn}(H, M, S, L, C, {''.join(c + ', ' for c in codes)}*{args})"
        outs = [a for p, a in zip(act.params, ref.args) if p.direction in ("out", "inout")]
        if not outs:
            out.add(ind, call)
            return
        r = self.t()
        out.add(ind, "try:")
        out.add(ind + 1, f"{r} = {call}")
        out.add(ind, "except _Exit as _x:")
        for k, a in enumerate(outs):
            self.assign(a, f"_x.outs[{k}]", out, ind + 1)
        out.add(ind + 1, "raise")
        for k, a in enumerate(outs):
            self.assign(a, f"{r}[{k}]", out, ind)

    def _inlinable(self, act: ir.Action) -> bool:
        """Actions without return or directional parameters are inlined into table applies."""
        if any(p.direction for p in act.params):
            return False
        return not contains(act.body, (ir.Return,))

    def inline_action(self, act: ir.Action, args: str, out: Out, ind: int) -> None:
        n = len(act.params)
        if n:
            out.add(ind, f"{''.join(f'a{i}, ' for i in range(n))}= {args}")
        self._param_prologue(act, out, ind)
        if self.trace:
            shown = " + ', ' + ".join(f"str(a{i})" for i in range(n))
            out.add(ind, f"TR('action {act.name}(' + {shown or repr('')} + ')')")
        saved, self.action = self.action, act
        saved_vars = self._bind_action_locals(act)
        self.block(act.body, out, ind)
        self.action = saved
        self.var_map = saved_vars

    def _param_prologue(self, act: ir.Action, out: Out, ind: int) -> None:
        for i, prm in enumerate(act.params):
            w = signed_width(prm.type) if prm.direction == "" else None
            if w:
                h = 1 << (w - 1)
                out.add(ind, f"a{i} = ((a{i} + {h:#x}) & {bitmask(w):#x}) - {h:#x}")
            elif prm.direction == "" and isinstance(prm.type, ir.BoolT):
                out.add(ind, f"a{i} = a{i} != 0")

    _CHECKSUM_CALLS = frozenset(("verify_checksum", "verify_checksum_with_payload", "update_checksum",
                                 "update_checksum_with_payload"))

    def _checksum_guard(self, ctl: ir.Control) -> str | None:
        """For a verify/compute checksum control made only of checksum calls, each on the
        condition ``hdr.h.isValid()`` of a member of the headers struct: a test (the conditions
        or'ed) that is false only when the control does nothing at all, so the packet loop's
        entry points call it only when it is true (an IPv6 packet through a program that
        checksums IPv4 skips two calls).  None otherwise."""
        conds = []
        for s in ctl.body.stmts:
            e = s.expr if isinstance(s, ir.ExprStmt) else None
            if not (isinstance(e, ir.BuiltinCall) and e.name in self._CHECKSUM_CALLS and e.args):
                return None
            c = e.args[0]
            if not (isinstance(c, ir.IsValid) and isinstance(c.header, ir.Member)
                    and isinstance(c.header.expr, ir.Var) and c.header.expr.type == self.hdr_t):
                return None
            code = self.ex(c)
            if code not in conds:
                conds.append(code)
        return " or ".join(conds) or None

    def gen_control(self, ctl: ir.Control, objs: list[str | None], fname: str) -> None:
        self.ctl_index += 1
        lname = self._bind_block(ctl, objs, body_only_locals(ctl, list(self.p.actions.values())))
        if fname in ("blk_verify", "blk_compute"):
            guard = self._checksum_guard(ctl)
            if guard is not None:
                self.guards[fname] = guard
        self.gen_actions(ctl)
        self.gen_tables(ctl)
        out = Out()
        out.add(0, f"def {fname}(H, M, S, C):")
        late = declared_before_use(ctl, [a for name, a in self.p.actions.items()
                                         if a.owner == ctl.name or name in ctl.actions])
        self._new_locals(lname, out, late)
        if ctl is self.p.deparser:
            out.add(1, "OUT = []")
            self.emit_arrays = {}
            self._deparser_body(ctl.body.stmts, out)
            self.emit_arrays = None
            out.add(1, "return OUT")
        else:
            out.add(1, "try:")
            self.block(ctl.body, out, 2)
            out.add(1, "except _Exit:")
            out.add(2, "pass")
        self.funcs.append("\n".join(out.lines) + "\n")

    def _next_only_emit(self, s: ir.Stmt) -> str | None:
        """The stack ``s`` emits an element of, when ``s`` is an emit of a constant-index element of
        a stack whose valid elements are those below its nextIndex (``usage.next_only_stacks``)."""
        if isinstance(s, ir.Emit) and isinstance(s.header, ir.StackIndex) and isinstance(s.header.index, ir.Const):
            st = s.header.stack
            if isinstance(st, ir.Member) and isinstance(st.expr, ir.Var) and st.expr.type == self.hdr_t \
                    and st.field in self.next_only:
                return st.field
        return None

    def _deparser_body(self, stmts: list[ir.Stmt], out: Out) -> None:
        """The deparser's statements; a run of emits of one such stack's elements (``emit`` of the
        stack, expanded) is skipped whole on one test while its nextIndex is 0 (most packets
        carry none of a stack of options or TLVs), not one test per element."""
        if not stmts:
            out.add(1, "pass")
        i = 0
        while i < len(stmts):
            field = self._next_only_emit(stmts[i])
            if field is None:
                self.stmt(stmts[i], out, 1)
                i += 1
                continue
            j = i
            while j < len(stmts) and self._next_only_emit(stmts[j]) == field:
                j += 1
            out.add(1, f"if {self.ex(stmts[i].header.stack)}.nxt:")
            saved, self.emit_arrays, self.emit_top = self.emit_arrays, {}, 2  # bound inside the test
            try:
                for s in stmts[i:j]:
                    self.stmt(s, out, 2)
            finally:
                self.emit_arrays, self.emit_top = saved, 1
            i = j

    def gen_parser(self, prs: ir.Parser) -> None:
        """One function ``parse`` for the whole parser: the packet's offset stays a local, states
        on no loop are copied into the states that lead to them, and only loops go round a
        ``for`` over the numbered states that start one (counted for ParserTimeout)."""
        self.ctl_index += 1
        lname = self._bind_block(prs, [None, "H", "M", "S"])
        self.gen_actions(prs, only_functions=True)  # user functions called in parser states
        text = self._parser_source(prs, lname, _dispatch_states(prs))
        if _code_of(text, "parse").co_nlocals > MAX_PARSER_LOCALS:
            text = self._parser_source(prs, lname, _dispatch_states(prs, shared=True))
        self.funcs.append(text)

    def _parser_source(self, prs: ir.Parser, lname: str, dispatch: list[str]) -> str:
        """The source of ``parse`` with a branch for each state of ``dispatch`` (the others copied
        into their callers)."""
        number = {n: i for i, n in enumerate(dispatch)}
        looped = len(dispatch) > 1 or "start" in _parser_graph(prs)[2]  # start alone on a loop too

        def emit_state(sname: str, out: Out, ind: int) -> None:
            state = prs.states[sname]
            if self.trace:
                out.add(ind, f"TR('parser state {sname}')")
            for s in state.stmts:
                self.stmt(s, out, ind)
            self._transition(state.transition, goto, out, ind)

        def goto(target: str, out: Out, ind: int) -> None:
            if target in ("accept", "reject"):
                out.add(ind, "C.off = off")
                out.add(ind, "return 0")
            elif target in number:  # another round of the loop, if one of the rounds is left
                out.add(ind, f"st = {number[target]}")
                out.add(ind, "left -= 1")
                out.add(ind, "if left:")
                out.add(ind + 1, "continue")
                out.add(ind, "break")
            else:
                emit_state(target, out, ind)  # on no loop: its code copied here

        out = Out()
        out.add(0, "def parse(H, M, S, C):")
        self._new_locals(lname, out)
        out.add(1, "data = C.data")
        out.add(1, "dlen = len(data)  # the packet's length: every extract's bound (no call each)")
        out.add(1, "off = C.off")
        out.add(1, "try:")
        if looped:
            out.add(2, "st = 0")
            # bmv2 has no bound: a loop that consumes packet bytes ends with the packet, so the
            # bound grows with it (each pass through the loop heads may take one byte); only a
            # loop that goes on without consuming anything is cut, as ParserTimeout.  The rounds
            # left are counted down where a state goes round again (``goto``), not by a ``for``
            # over a range: no range object and iterator for every packet (most packets never
            # go round, their states are copied into the start state's branch), and every
            # branch ends in a return, a raise or a goto, so the loop never runs on uncounted
            out.add(2, f"left = {MAX_PARSER_STATES} + {len(dispatch)} * dlen  # rounds, this one included")
            out.add(2, "while True:")
            base = top = self.tmp
            for i, sname in enumerate(dispatch):
                out.add(3, f"{'if' if i == 0 else 'elif'} st == {i}:")
                self.tmp = base  # one branch runs per round and keeps no temporary for the next
                emit_state(sname, out, 4)
                top = max(top, self.tmp)
            self.tmp = top
            out.add(2, "C.off = off")
            out.add(2, f"return {PE_PARSER_TIMEOUT}")
        else:
            emit_state("start", out, 2)
        out.add(1, "except _PE as e:")
        out.add(2, "C.off = off")
        if self.trace:
            out.add(2, "TR('parser error ' + ERRNAMES.get(e.code, str(e.code)))")
        out.add(2, "return e.code")
        return "\n".join(out.lines) + "\n"

    def _transition(self, tr: ir.Transition, goto, out: Out, ind: int) -> None:
        if tr.next_state is not None:
            goto(tr.next_state, out, ind)
            return
        ks = []
        for k in tr.keys:
            v = self.t()
            out.add(ind, f"{v} = {bits_code(self.ex(k), k.type)}")
            ks.append(v)
        # A case's code (a state copied here) never falls through: it ends in a return, a
        # ``continue`` or a raise.  So the cases' code can share temporaries, numbered from here:
        # ``parse`` keeps as many locals as its longest path needs, not one per copy (CPython
        # sets up and clears every local of a frame per call, MAX_PARSER_LOCALS).
        base = self.tmp
        for case in tr.cases:
            self.tmp = base
            if case.keysets and case.keysets[0].kind == "vset":
                if self.res.value_set is None:
                    raise compile_error(case.loc, "value sets need runtime state (no value_set resource)")
                vs = self.g(self.res.value_set(case.keysets[0].vset), "VS")
                out.add(ind, f"if {vs}.match(({', '.join(ks)},)):")
                goto(case.next_state, out, ind + 1)
                continue
            conds = []
            for v, kset, key in zip(ks, case.keysets, tr.keys):
                if kset.kind == "default":
                    continue
                if kset.kind == "value":
                    conds.append(f"{v} == {kset.value}")
                elif kset.kind == "mask":
                    conds.append(f"{v} & {kset.mask:#x} == {kset.value & kset.mask:#x}")
                elif kset.kind == "range":
                    w = signed_width(key.type)
                    if w:  # a signed key's range is between signed bounds (-5 .. 5 crosses zero);
                        # the keyset holds the bounds' bits, the key's bits are compared signed
                        h = 1 << (w - 1)
                        lo, hi = (kset.value ^ h) - h, (kset.hi ^ h) - h
                        conds.append(f"{lo} <= ({v} ^ {h:#x}) - {h:#x} <= {hi}" if lo <= hi else "False")
                    else:  # low > high: an empty range (p4c warns and matches nothing)
                        conds.append(f"{kset.value} <= {v} <= {kset.hi}")
                else:
                    raise compile_error(kset.loc, f"unsupported: {kset.kind} keyset in select")
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
            **layout.STRUCT_NS, "_PE": support.ParserError, "_Exit": support.ExitControl,
            "_AssertFail": support.AssertionFailed,
            "_sat_add_u": support.sat_add_u, "_sat_sub_u": support.sat_sub_u,
            "_sat_add_s": support.sat_add_s, "_sat_sub_s": support.sat_sub_s,
            "_shl": support.shl, "_shl_s": support.shl_s,
            "_divmod_d": support.div, "_divmod_m": support.mod,
            "_stk_get": support.stack_get, "_stk_next": support.stack_next,
            "_stk_last": support.stack_last, "_la_bits": support.lookahead_bits,
            "_la_hdr": support.lookahead_header, "_pack_opt": support.pack_optional,
            "_hash_offset": hashes.hash_offset, "_randint": support.randint,
            "_entry_text": support.entry_text, "_onew": object.__new__,
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
            header_cls=ns[hc], meta_cls=ns[mc], std_cls=ns[sc], source=source, namespace=ns,
            dirty_tracked=self.dirty_tracked, guards=dict(self.guards))
