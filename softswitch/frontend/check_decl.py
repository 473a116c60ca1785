"""Top-level declarations and types: headers, structs, enums, errors, externs, instances."""
from __future__ import annotations

import dataclasses
import re
from typing import Any

from lark import Token, Tree

from . import ir
from .checkbase import (
    _EXTERN_KINDS,
    _V1_TYPE_NAMES,
    MAX_STACK_SIZE,
    MAX_WIDTH,
    CheckerBase,
    _Ctx,
    _Decl,
    _direction,
    _ExternFunc,
    _name,
    _param_default,
    _param_names,
    _parse_int,
    _tree,
    _trees,
    _type_child,
    _type_name_text,
    _type_params,
)
from .types import BOOL, INFINT, InfIntT, show

# the types a parser/control constructor parameter may have besides a control type
_CTOR_VALUE_TYPES = (ir.BitT, ir.IntT, InfIntT, ir.BoolT, ir.EnumT, ir.ErrorT)


def _header_field_bad(t: Any) -> str | None:
    """None if ``t`` may be the type of a header field (the spec's rule, as p4c checks it:
    bit<W>, int<W>, bool, a serializable enum, or a struct whose fields are all of these or
    such structs, nested); else the offending type as P4 writes it (for a struct, with the path
    of the field that is not allowed inside a header, e.g. ``s_t (field 'x.e' is error)``)."""
    if isinstance(t, (ir.BitT, ir.IntT, ir.BoolT)) or (isinstance(t, ir.EnumT) and t.underlying is not None):
        return None
    if isinstance(t, ir.StructT) and not t.union:
        def leaf(st: ir.StructT, prefix: str) -> str | None:
            for f in st.fields:
                ft = f.type
                if isinstance(ft, ir.StructT) and not ft.union:
                    r = leaf(ft, f"{prefix}{f.name}.")
                    if r is not None:
                        return r
                elif _header_field_bad(ft) is not None:
                    return f"field '{prefix}{f.name}' is {show(ft)}"
            return None
        why = leaf(t, "")
        return None if why is None else f"{show(t)} ({why})"
    return show(t)


class DeclChecker(CheckerBase):
    """Declarations and type references."""

    def declare(self, node: Any, name: str, entry: Any) -> None:
        if name in self.globals and not self.is_builtin(node):
            old = self.globals[name]
            if isinstance(old, _ExternFunc) and isinstance(entry, _Decl) and entry.kind in ("control", "parser"):
                # p4c looks a type name up among type declarations and a called name among
                # functions, so a control named like a v1model extern function is accepted (p4c's
                # issue1653-complex-bmv2 sample: 'control verify_checksum(...)'); the name stays
                # callable as the function
                self.shadowed_funcs[name] = old
            elif not (isinstance(old, _Decl) and old.kind in ("extern_function",)):
                raise self.err(node, f"'{name}' is already declared")
        self.globals[name] = entry

    def field_annotations(self, f: Tree) -> tuple[ir.Annotation, ...]:
        """A struct/header field's annotations, with each ``@field_list`` argument that names a
        constant (``@field_list(FL_PACKET_IN)``, as the P4 tutorials write it) replaced by its
        value, as p4c evaluates it; any other non-integer argument is an error (before, a name
        was kept as text, matched no index and the clone preserved nothing: a silent misrun)."""
        return self.resolve_field_lists(self.annotations(_tree(f, "annotations")))

    def resolve_field_lists(self, anns: tuple[ir.Annotation, ...]) -> tuple[ir.Annotation, ...]:
        """``anns`` with each ``@field_list`` argument that names a constant replaced by its value
        (for a field, and for a struct type, whose ``@field_list`` p4c's flattening hands down to
        every field of the type)."""
        if not any(a.name == "field_list" for a in anns):
            return anns
        out = []
        for a in anns:
            if a.name == "field_list":
                args: list[str | int] = []
                for v in a.args:
                    if isinstance(v, str):
                        v = self._field_list_index(a, v)
                    args.append(v)
                a = dataclasses.replace(a, args=tuple(args))
            out.append(a)
        return tuple(out)

    def _field_list_index(self, a: ir.Annotation, v: str) -> int:
        """The value of a ``@field_list`` argument written as a constant's name or as a member
        of a serializable enum (``PreservedFieldList.MIRROR_AND_PACKET_IN_COPY``, as SAI P4)."""
        enum_name, _, member = v.partition(".")
        et = self.named_types.get(enum_name.strip()) if member else None
        if isinstance(et, ir.EnumT) and et.underlying is not None and member.strip() in et.members:
            return et.value_of(member.strip())
        c = self.globals.get(v)
        if not isinstance(c, ir.Const) or isinstance(c.value, bool) or not isinstance(c.value, int):
            raise self.err(a.loc, f"@field_list argument '{v}' is not an integer constant or a member "
                                  f"of a serializable enum")
        self.used_consts.add(v)
        return int(c.value)

    def newtype(self, d: Tree, name: str, t: ir.BitT) -> ir.BitT:
        """``type bit<W> name;``: a bit<W> tagged with the type's name (P4Info names it), and its
        ``@p4runtime_translation`` read as p4c reads it: a URI, then W, bit<W> or string."""
        anns = self.annotations(_tree(d, "annotations"))
        tr = ir.find_annotation(anns, "p4runtime_translation")
        translation = None
        if tr is not None:
            m = re.fullmatch(r'\s*"([^"]*)"\s*,\s*(?:(\d+)|bit\s*<\s*(\d+)\s*>|(string))\s*', tr.body or "")
            if m is None:
                raise self.err(d, f"@p4runtime_translation of type '{name}' must be (\"URI\", W), "
                                  f"(\"URI\", bit<W>) or (\"URI\", string)")
            width = m.group(2) or m.group(3)
            translation = (m.group(1), int(width) if width else None)
        return ir.BitT(t.width, newtype=ir.NewType(name, ir.BitT(t.width), translation, self.loc(d)))

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
            if not self.is_builtin(d):
                self.const_decls[name] = self.loc(d)
        elif k == "typedef_decl":
            name = _name(d)
            t = self.type_ref(_type_child(d))
            if isinstance(t, ir.BitT) and any(isinstance(c, Token) and c.type == "TYPE_KW" for c in d.children):
                t = self.newtype(d, name, t)
            self.named_types.setdefault(name, t) if isinstance(t, (ir.HeaderT, ir.StructT, ir.EnumT)) else None
            self.declare(d, name, ("type", t))
        elif k in ("header_decl", "struct_decl", "header_union_decl"):
            name = _name(d)
            if _tree(d, "type_params") is not None:
                # specialised per use's type arguments (``specialise_type``), as p4c does
                tps = _type_params(d)
                if len(set(tps)) != len(tps):
                    raise self.err(d, f"{k[:-5]} '{name}' declares a type parameter twice")
                self.declare(d, name, ("generic_type", d))
                self.generic_types[name] = d
                return
            t = self.struct_like(d, k, name)
            self.declare(d, name, ("type", t))
            ch = ir.find_annotation(t.annotations, "controller_header")
            if ch is not None and isinstance(t, ir.HeaderT):
                cname = str(ch.args[0]) if ch.args else name
                self.controller_headers.append(ir.ControllerHeader(cname, t, t.annotations, self.loc(d),
                                                                   ir.id_annotation(t.annotations)))
        elif k == "enum_decl":
            self.enum_decl(d)
        else:
            self.other_decl(d, k)

    def struct_like(self, d: Tree, k: str, name: str) -> ir.Type:
        """The header or struct type declared by ``d`` (under ``name``; a generic one's
        specialisation has its type parameters bound in ``self.type_env``)."""
        if k == "header_union_decl":
            ufields: list[ir.Field] = []
            for f in _trees(d, "field"):
                ft = self.type_ref(_type_child(f))
                if not isinstance(ft, ir.HeaderT):
                    raise self.err(f, f"header_union member '{_name(f)}' must be a header, not {show(ft)}")
                if any(x.name == _name(f) for x in ufields):
                    raise self.err(f, f"duplicate field '{_name(f)}' in '{name}'")
                ufields.append(ir.Field(_name(f), ft, self.annotations(_tree(f, "annotations"))))
            ut = ir.StructT(name, tuple(ufields), self.annotations(_tree(d, "annotations")), union=True)
            self.named_types[name] = ut
            return ut
        fields = []
        seen = set()
        for f in _trees(d, "field"):
            fname = _name(f)
            if fname in seen:
                raise self.err(f, f"duplicate field '{fname}' in '{name}'")
            seen.add(fname)
            ft = self.type_ref(_type_child(f))
            if isinstance(ft, ir.VarbitT):
                if k != "header_decl":
                    raise self.unsupported(f, "varbit outside a header")
                if any(isinstance(x.type, ir.VarbitT) for x in fields):
                    raise self.err(f, f"header '{name}' has more than one varbit field")
                fields.append(ir.Field(fname, ft, self.field_annotations(f)))
                continue
            if k == "header_decl":
                bad = _header_field_bad(ft)
                if bad is not None:
                    raise self.err(f, f"header field '{fname}' must be bit<W>, int<W>, bool, a "
                                      f"serializable enum or a struct of those, not {bad}")
            fields.append(ir.Field(fname, ft, self.field_annotations(f)))
        anns = self.annotations(_tree(d, "annotations"))
        if k != "header_decl":
            anns = self.resolve_field_lists(anns)
        t = (ir.HeaderT if k == "header_decl" else ir.StructT)(name, tuple(fields), anns)
        self.named_types[name] = t
        self.type_locs[name] = self.loc(d)
        return t

    def specialise_type(self, t: Tree) -> ir.Type:
        """``S<A, ...>`` of a generic struct or header ``S``: a struct/header declared once per
        distinct type-argument tuple, named as p4c's SpecializeGenericTypes names it: the base
        name and each argument as written, joined by ``_`` with ``<``, ``>`` and spaces dropped
        (``S<bit<16>>`` is ``S_bit16``), suffixed ``_0``, ``_1``... if that name is taken."""
        base = str(t.children[0])
        d = self.generic_types[base]
        arg_trees = _trees(_tree(t, "type_args"))
        args = tuple(self.type_ref(a) for a in arg_trees)
        tps = _type_params(d)
        if len(args) != len(tps):
            raise self.err(t, f"'{base}' takes {len(tps)} type arguments, {len(args)} given")
        key = (base, args)
        if key in self.spec_types:
            return self.spec_types[key]
        for a, at in zip(arg_trees, args):
            if isinstance(at, (InfIntT, ir.StringT, ir.VoidT, ir.ExternT)):
                raise self.err(a, f"{show(at)} cannot be a type argument of '{base}'")
        want = base + "".join("_" + self.type_arg_text(a, at) for a, at in zip(arg_trees, args))
        name, n = want, 0
        while name in self.globals or name in self.named_types:
            name, n = f"{want}_{n}", n + 1
        saved = self.type_env, self.type_env_text
        self.type_env = dict(zip(tps, args))
        self.type_env_text = {tp: self.type_arg_text(a, at) for tp, a, at in zip(tps, arg_trees, args)}
        try:
            st = self.struct_like(d, d.data, name)
        finally:
            self.type_env, self.type_env_text = saved
        self.spec_types[key] = st
        self.spec_origin[name] = key
        return st

    def type_arg_text(self, a: Tree, at: ir.Type) -> str:
        """A type argument as p4c prints it in a specialised type's name."""
        if a.data == "named_type" and str(a.children[0]) in self.type_env_text:
            return self.type_env_text[str(a.children[0])]  # a type parameter: its argument's text
        if a.data in ("named_type", "dot_named_type"):
            return str(a.children[0])
        if a.data == "specialized_type" and isinstance(at, (ir.HeaderT, ir.StructT)):
            return at.name
        return _type_name_text(at)

    def _unique_members(self, nodes: list[Tree], what: str, names: list[str] | None = None) -> None:
        """Two members of one name (in this declaration, or in ``names`` already declared) are an
        error, as p4c's "Duplicates declaration"; before, the first silently won."""
        seen = set(names or ())
        for n in nodes:
            m = _name(n) if n.data != "name" else str(n.children[0])
            if m in seen:
                raise self.err(n, f"{what} member '{m}' is declared twice")
            seen.add(m)

    def enum_decl(self, d: Tree) -> None:
        name = _name(d)
        self._unique_members(_trees(_tree(d, "ident_list"), "name"), f"enum '{name}'")
        members = tuple(str(n.children[0]) for n in _trees(_tree(d, "ident_list"), "name"))
        t = ir.EnumT(name, members)
        self.named_types[name] = t
        self.declare(d, name, ("type", t))

    def other_decl(self, d: Tree, k: str) -> None:
        if k == "ser_enum_decl":
            name = _name(d)
            ut = self.type_ref(_type_child(d))
            if not isinstance(ut, (ir.BitT, ir.IntT)):
                raise self.err(d, f"enum '{name}' underlying type must be bit<W> or int<W>")
            members, values = [], []
            self._unique_members(_trees(d, "enum_member"), f"enum '{name}'")
            for m in _trees(d, "enum_member"):
                c = self.expr(m.children[-1], _Ctx(None), ut)
                if not isinstance(c, ir.Const):
                    raise self.err(m, "enum member value must be a constant")
                members.append(_name(m))
                values.append(int(c.value))
            t = ir.EnumT(name, tuple(members), ut, tuple(values))
            self.named_types[name] = t
            self.declare(d, name, ("type", t))
        elif k == "error_decl":  # every error declaration adds to one set of members
            self._unique_members(_trees(_tree(d, "ident_list"), "name"), "error", self.errors)
            for n in _trees(_tree(d, "ident_list"), "name"):
                self.errors.append(str(n.children[0]))
        elif k == "match_kind_decl":
            self._unique_members(_trees(_tree(d, "ident_list"), "name"), "match_kind", self.match_kinds)
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
            # each overload's parameter names, for calls with named arguments
            self.extern_func_params.setdefault(name, []).append(
                _param_names(_tree(d, "function_proto")))
            self.extern_func_dirs.setdefault(name, []).append(
                [_direction(p) for p in _trees(_tree(_tree(d, "function_proto"), "params"), "param")])
        elif k in ("parser_decl", "control_decl"):
            name = _name(d)
            if name in _V1_TYPE_NAMES:
                raise self.err(d, f"'{name}' is a v1model type name; a {k[:-5]} cannot be named so")
            if _tree(d, "type_params") is not None:
                # specialised per instance's type arguments (BlockChecker.block_type_env), as
                # p4c's SpecializeAll does
                tps = _type_params(d)
                if len(set(tps)) != len(tps):
                    raise self.err(d, f"{k[:-5]} '{name}' declares a type parameter twice")
            if _tree(d, "ctor_params") is not None:
                self.check_ctor_params(d, k[:-5], name)
            self.declare(d, name, _Decl(k[:-5], d, self.is_builtin(d)))
        elif k in ("parser_type_decl", "control_type_decl", "package_decl"):
            name = _name(d)
            self.declare(d, name, _Decl(k, d, self.is_builtin(d)))
        elif k == "action_decl":
            self.top_action(d)
        elif k == "function_decl":
            self.top_function(d)
        elif k == "instantiation":
            name = _name(d)
            if name == "main":
                if self.main is not None:  # p4c: "Duplicates declaration"
                    raise self.err(d, f"'main' is declared twice (first at line {self.loc(self.main).line})")
                self.main = d
            else:
                self.global_instance(d, name)
        else:
            raise self.unsupported(d, k.replace("_", " "))

    def check_ctor_params(self, d: Tree, kind: str, name: str) -> None:
        """A parser's or control's constructor parameters: directionless, each a compile-time
        value (bit<W>, int<W>, int, bool, an enum or error), bound to the constant argument of
        each instantiation; a control's may also be of a user control type (it receives a
        control instance, applied inside like a local instance).  Others are rejected by name."""
        for p in _trees(_tree(_tree(d, "ctor_params"), "params"), "param"):
            pn = _name(p)
            if _direction(p):
                raise self.err(p, f"constructor parameter '{pn}' of {kind} '{name}' cannot have a "
                                  "direction")
            if _param_default(p) is not None:
                raise self.unsupported(p, f"a default value for constructor parameter '{pn}' of "
                                          f"{kind} '{name}'")
            if self.is_control_ctor_param(p):
                if kind == "parser":
                    raise self.unsupported(p, f"parser constructor parameter '{pn}' of a control type")
                continue
            if _tree(d, "type_params") is not None:
                continue  # its type may name a type parameter: checked per instance (ctor_args)
            self.check_ctor_value_type(p, kind, pn, self.type_ref(_type_child(p)))

    def check_ctor_value_type(self, p: Tree, kind: str, pn: str, pt: ir.Type) -> None:
        if not isinstance(pt, _CTOR_VALUE_TYPES):
            raise self.unsupported(p, f"{kind} constructor parameter '{pn}' of type {show(pt)} "
                                      "(only bit<W>, int<W>, int, bool, enums, error and, for a "
                                      "control, control types)")

    def is_control_ctor_param(self, p: Tree) -> bool:
        """Is constructor parameter ``p`` of a user control type?"""
        tref = _type_child(p)
        tname = str(tref.children[0]) if tref.data == "named_type" else ""
        decl = self.globals.get(tname)
        return isinstance(decl, _Decl) and decl.kind in ("control", "control_type_decl") and not decl.builtin

    def global_instance(self, d: Tree, name: str) -> None:
        """A top-level extern instance: shared by every control that uses it, P4Info name bare."""
        tref = _type_child(d)
        tname = str(tref.children[0]) if tref.data in ("named_type", "specialized_type") else ""
        decl = self.globals.get(tname)
        if isinstance(decl, _Decl) and decl.kind in ("parser", "control") and not decl.builtin:
            # ``MyIngress() ig;`` at the top level, then ``V1Switch(..., ig, ...) main``; its
            # constructor arguments are checked here and bound when main lowers it
            tenv = self.block_type_env(decl.tree, tref, d, _trees(_tree(d, "args")))  # type: ignore[attr-defined]
            self.ctor_args(decl.tree, _trees(_tree(d, "args")), _Ctx(None), d, tenv)  # type: ignore[attr-defined]
            self.block_instances[name] = (tname, d)
            self.block_instance_tenv[name] = tenv
            return
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
            self.check_width(t, w)
            return ir.BitT(w) if k == "bit_type" else ir.IntT(w)
        if k == "varbit_type":
            w = self.width(_trees(t)[0])
            if w <= 0:
                raise self.err(t, f"bad width {w}")
            self.check_width(t, w)
            return ir.VarbitT(w)
        if k == "infint_type":
            return INFINT  # type: ignore[return-value]
        if k == "dontcare_type":
            raise self.unsupported(t, "don't-care type")
        if k in ("named_type", "dot_named_type"):
            name = str(t.children[0])
            if k == "named_type" and name in self.type_env:
                return self.type_env[name]
            e = self.globals.get(name)
            if isinstance(e, tuple) and e[0] == "type":
                return e[1]
            if isinstance(e, tuple) and e[0] == "generic_type":
                raise self.err(t, f"'{name}' is generic: give its type arguments ({name}<...>)")
            if isinstance(e, _Decl):
                return ir.ExternT(name)
            if name in ("packet_in", "packet_out"):
                return ir.ExternT(name)
            if name.startswith("_"):
                return ir.ExternT(name)  # type variable of a built-in declaration
            raise self.err(t, f"unknown type '{name}'")
        if k == "specialized_type":
            name = str(t.children[0])
            if name in self.generic_types:
                return self.specialise_type(t)
            args = tuple(self.type_ref(a) for a in _trees(_tree(t, "type_args")))
            return ir.ExternT(name, args)
        if k == "stack_type":
            elem = self.type_ref(_trees(t)[0])
            size = self.expr(_trees(t)[1], _Ctx(None), None)
            if not isinstance(elem, (ir.HeaderT, ir.StructT)) or isinstance(elem, ir.StructT) and not elem.union:
                raise self.err(t, f"header stack element must be a header or header_union, not {show(elem)}")
            if not isinstance(size, ir.Const) or int(size.value) <= 0:
                raise self.err(t, "header stack size must be a positive constant")
            if int(size.value) > MAX_STACK_SIZE:
                raise self.unsupported(t, f"header stack of {int(size.value)} elements (p4c takes at most "
                                          f"{MAX_STACK_SIZE})")
            return ir.StackT(elem, int(size.value))
        if k == "tuple_type":
            elems = tuple(self.type_ref(a) for a in _trees(_tree(t, "type_args")))
            bad = next((x for x in elems if isinstance(x, (ir.ExternT, ir.VoidT, ir.StringT))), None)
            if bad is not None:  # p4c: a tuple holds values (no extern, void or string element)
                raise self.err(t, f"a tuple cannot hold a {show(bad)}")
            return ir.TupleT(elems)
        raise self.unsupported(t, f"type {k}")

    def check_width(self, t: Tree, w: int) -> None:
        if w > MAX_WIDTH:  # as p4c: wider types are refused (and 1 << w would not end here)
            raise self.unsupported(t, f"width {w} (p4c supports widths up to {MAX_WIDTH})")

    def width(self, t: Tree) -> int:
        if t.data == "width_num":
            return _parse_int(str(t.children[0]))[0]
        c = self.expr(t, _Ctx(None), None)
        if not isinstance(c, ir.Const):
            raise self.err(t, "width must be a constant")
        return int(c.value)
