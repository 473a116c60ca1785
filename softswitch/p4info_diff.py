"""``softswitch p4info-diff``: compare two P4Info files entity by entity.

    softswitch p4info-diff A B [--ignore WHAT]... [--lenient] [-D X] [-I DIR]
    python -m softswitch.p4info_diff A B ...

A and B are P4Info text protos (``p4.config.v1.P4Info``, as ``p4c --p4runtime-files X.txtpb`` and
``softswitch compile`` write them), the JSON (``.json``) or binary (``.bin``) form p4c writes for those
suffixes, or P4 programs (``.p4``: softswitch compiles them first).
Entities are matched by kind and fully qualified name, never by position or id, so one changed id
is one difference and not a cascade: references (action refs, const/initial default actions,
implementation ids, direct resources, direct tables, profile tables) are compared by the name
they resolve to on each side, and the ids themselves are compared once, on the entity.

Everything in the message is compared unless ``--ignore`` names it:

- ``order``: the order of the entities of one kind (P4Runtime does not depend on it, p4c's is
  deterministic);
- ``initial_default_action``: p4c added ``Table.initial_default_action`` in mid-2024 (P4Runtime
  1.4); older p4c output has none, and some builds of that time wrote ``initial_default_action_id``;
- ``doc``: ``preamble.doc`` (``@brief`` / ``@description`` text);
- ``source_location``: the source locations inside structured annotations (they name the file
  the compiler was given, so they vary with the path);
- ``corelib``: the ``@corelib`` annotation that some p4c releases put on ``NoAction`` (it comes
  from the ``core.p4`` the compiler shipped, not from the program);
- ``unknown_fields``: fields this P4Runtime version does not know (from older or newer p4c).

``--lenient`` ignores the four that vary between p4c releases: ``initial_default_action``,
``corelib``, ``unknown_fields`` and ``source_location``.

Exit status: 0 when equal, 1 when they differ (one line per difference), 2 on bad input.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

IGNORABLE = ("order", "initial_default_action", "doc", "source_location", "corelib", "unknown_fields")
LENIENT = frozenset({"initial_default_action", "corelib", "unknown_fields", "source_location"})

# the repeated entity fields of P4Info, each with a preamble
ENTITY_KINDS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
                "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests",
                "externs")
# repeated sub-message fields matched by a key instead of by position
_KEYED = {"match_fields": "name", "params": "name", "metadata": "name", "match": "id",
          "action_refs": "id", "arguments": "param_id"}
_UNKNOWN_RE = re.compile(r'has no field named "(\w+)"')


class P4InfoDiffError(Exception):
    """A file that cannot be read or parsed as P4Info (or compiled, for a ``.p4``)."""


@dataclass(frozen=True)
class Difference:
    """One difference: where (kind, entity name, field path) and the two sides (None: absent)."""

    kind: str
    name: str
    path: str
    left: Any
    right: Any

    def __str__(self) -> str:
        where = f"{self.kind} {self.name!r}" if self.name else self.kind
        if self.path:
            where += f" {self.path}"
        return f"{where}: {_show(self.left)} != {_show(self.right)}"


def _show(v: Any) -> str:
    if v is None:
        return "(absent)"
    if isinstance(v, str):
        return repr(v)
    return str(v)


@dataclass
class Loaded:
    """A parsed P4Info plus the names of fields the parser had to skip."""

    p4info: p4info_pb2.P4Info
    unknown_fields: list[str]


_QUOTE_MAX = 60  # characters of a source line or token an error message quotes


def _parse_error(where: str, text: str, e: text_format.ParseError) -> P4InfoDiffError:
    """One short line for a text that is not a P4Info: protobuf's message quotes the whole source
    line, and a JSON file (a softswitch device config, say) is one line of 200 KB, all of which was
    printed."""
    msg = str(e)
    line = e.GetLine()
    lines = text.splitlines()
    if line is not None and 0 < line <= len(lines) and len(lines[line - 1]) > _QUOTE_MAX:
        src = lines[line - 1]
        msg = msg.replace(f"'{src}'", f"'{src[:_QUOTE_MAX]}...' ({len(src)} characters)", 1)
    msg = re.sub(rf'"([^"]{{{_QUOTE_MAX}}})[^"]+"', r'"\1..."', msg)  # a long token: a field name
    return P4InfoDiffError(f"{where}: not a valid P4Info text file: {msg}")


def parse_text(text: str, where: str = "<text>") -> Loaded:
    """Parse a P4Info text proto; fields unknown to this P4Runtime are skipped and listed."""
    unknown: list[str] = []
    try:
        return Loaded(text_format.Parse(text, p4info_pb2.P4Info()), unknown)
    except text_format.ParseError as e:
        first = e
    m = _UNKNOWN_RE.search(str(first))
    if not m:
        raise _parse_error(where, text, first) from None
    try:
        p = text_format.Parse(text, p4info_pb2.P4Info(), allow_unknown_field=True)
    except text_format.ParseError as e:
        raise _parse_error(where, text, e) from None
    # the parser names only the first unknown field; list every field name the text has that the
    # message types do not
    known = _known_field_names()
    for name in dict.fromkeys(re.findall(r"^\s*(\w+)\s*[:{]", text, re.MULTILINE)):
        if name not in known:
            unknown.append(name)
    return Loaded(p, unknown or [m.group(1)])


def _known_field_names() -> set[str]:
    names: set[str] = set()
    seen: set[str] = set()

    def walk(desc: Any) -> None:
        if desc.full_name in seen:
            return
        seen.add(desc.full_name)
        for f in desc.fields:
            names.add(f.name)
            if f.message_type is not None:
                walk(f.message_type)

    walk(p4info_pb2.P4Info.DESCRIPTOR)
    return names | {"key", "value"}  # map entries


def load(path: str, defines: dict[str, str] | None = None, include_dirs: list[str] | None = None) -> Loaded:
    """A P4Info text file, or a ``.p4`` program compiled by softswitch."""
    if path.endswith(".p4"):
        from softswitch.frontend.errors import P4Error
        from softswitch.frontend.load import load_program
        from softswitch.p4info import build_p4info
        try:
            return Loaded(build_p4info(load_program(path, defines or {}, include_dirs or [])), [])
        except P4Error as e:
            raise P4InfoDiffError(str(e)) from None
    suffix = os.path.splitext(path)[1].lower()
    if suffix in (".json", ".bin"):  # as p4c --p4runtime-files writes them (`softswitch compile` too)
        return Loaded(_load_serialized(path), [])
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise P4InfoDiffError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError as e:  # was a traceback
        raise P4InfoDiffError(f"{path}: not a P4Info text file (byte {e.object[e.start]:#04x} at offset {e.start} "
                              "is not UTF-8)") from None
    loaded = parse_text(text, path)
    if loaded.p4info == p4info_pb2.P4Info() and not loaded.unknown_fields:
        # an empty file (a failed redirect, a truncated copy) is a valid empty message: two compared equal
        raise P4InfoDiffError(f"{path}: holds no P4Info (empty, or comments only)")
    return loaded


def _load_serialized(path: str) -> p4info_pb2.P4Info:
    """A P4Info in p4c's JSON (``.json``) or binary (``.bin``) form, read as the controller reads it."""
    from controller.session import SessionError, read_p4info

    try:
        return read_p4info(path)
    except SessionError as e:
        raise P4InfoDiffError(str(e)) from None


def _id_names(p: p4info_pb2.P4Info) -> dict[int, str]:
    out = {}
    for kind in ENTITY_KINDS:
        if kind == "externs":
            for ext in p.externs:
                for inst in ext.instances:
                    out[inst.preamble.id] = inst.preamble.name
            continue
        for e in getattr(p, kind):
            out[e.preamble.id] = e.preamble.name
    return out


def _ref(ids: dict[int, str], i: int) -> str:
    return ids.get(i, f"<unknown id {i}>")


def _to_dict(msg: Any) -> dict[str, Any]:
    """A message as plain data: ints stay ints, bytes show as hex, enums by name, maps as dicts."""
    out: dict[str, Any] = {}
    for f, v in msg.ListFields():
        out[f.name] = _value(f, v)
    return out


def _value(f: Any, v: Any) -> Any:
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        vf = f.message_type.fields_by_name["value"]
        return {k: _scalar(vf, x) for k, x in v.items()}
    if f.label == f.LABEL_REPEATED:
        return [_scalar(f, x) for x in v]
    return _scalar(f, v)


def _scalar(f: Any, v: Any) -> Any:
    if f.message_type is not None:
        return _to_dict(v)
    if f.enum_type is not None:
        return f.enum_type.values_by_number[v].name
    if isinstance(v, bytes):
        return "0x" + v.hex()
    return v


def _entity_dict(kind: str, msg: Any, ids: dict[int, str], ignore: frozenset[str]) -> dict[str, Any]:
    d = _to_dict(msg)
    # references by name, so an id difference shows once (on the entity) and not at every use
    if kind == "tables":
        for ar in d.get("action_refs", []):
            ar["id"] = _ref(ids, int(ar["id"]))
        for key in ("const_default_action_id", "implementation_id"):
            if key in d:
                d[key] = _ref(ids, int(d[key]))
        if "direct_resource_ids" in d:
            d["direct_resource_ids"] = [_ref(ids, int(i)) for i in d["direct_resource_ids"]]
        ida = d.get("initial_default_action")
        if ida is not None and "action_id" in ida:
            ida["action_id"] = _ref(ids, int(ida["action_id"]))
        if "initial_default_action" in ignore:
            d.pop("initial_default_action", None)
    elif kind in ("direct_counters", "direct_meters") and "direct_table_id" in d:
        d["direct_table_id"] = _ref(ids, int(d["direct_table_id"]))
    elif kind == "action_profiles" and "table_ids" in d:
        d["table_ids"] = [_ref(ids, int(i)) for i in d["table_ids"]]
    pre = d.get("preamble", {})
    if "doc" in ignore:
        pre.pop("doc", None)
    if "corelib" in ignore and "annotations" in pre:
        pre["annotations"] = [a for a in pre["annotations"] if a != "@corelib"]
        if not pre["annotations"]:
            del pre["annotations"]
    if "source_location" in ignore:
        _drop_key(d, "source_location")
    return d


def _drop_key(obj: Any, key: str) -> None:
    if isinstance(obj, dict):
        obj.pop(key, None)
        for v in obj.values():
            _drop_key(v, key)
    elif isinstance(obj, list):
        for v in obj:
            _drop_key(v, key)


def _compare(kind: str, name: str, path: str, a: Any, b: Any) -> Iterator[Difference]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            yield from _compare(kind, name, f"{path}.{k}" if path else k, a.get(k), b.get(k))
    elif isinstance(a, list) and isinstance(b, list):
        field = path.rsplit(".", 1)[-1]
        key = _KEYED.get(field)
        if key and all(isinstance(x, dict) and key in x for x in a + b):
            ka = {str(x[key]): x for x in a}
            kb = {str(x[key]): x for x in b}
            for k in list(ka) + [k for k in kb if k not in ka]:
                yield from _compare(kind, name, f"{path}[{k}]", ka.get(k), kb.get(k))
            order_a = [str(x[key]) for x in a if str(x[key]) in kb]
            order_b = [str(x[key]) for x in b if str(x[key]) in ka]
            if order_a != order_b:
                yield Difference(kind, name, f"{path} (order)", order_a, order_b)
        elif all(not isinstance(x, (dict, list)) for x in a + b) or len(a) != len(b):
            if a != b:
                yield Difference(kind, name, path, a, b)
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                yield from _compare(kind, name, f"{path}[{i}]", x, y)
    elif a != b:
        yield Difference(kind, name, path, a, b)


def diff(left: p4info_pb2.P4Info | Loaded, right: p4info_pb2.P4Info | Loaded,
         ignore: frozenset[str] | set[str] = frozenset()) -> list[Difference]:
    """The differences between two P4Infos (empty when equal, up to what ``ignore`` names)."""
    bad = set(ignore) - set(IGNORABLE)
    if bad:
        raise ValueError(f"cannot ignore {sorted(bad)}; choose from {IGNORABLE}")
    ignore = frozenset(ignore)
    la = left if isinstance(left, Loaded) else Loaded(left, [])
    lb = right if isinstance(right, Loaded) else Loaded(right, [])
    out: list[Difference] = []
    if "unknown_fields" not in ignore and (la.unknown_fields or lb.unknown_fields):
        out.append(Difference("unknown fields", "", "", la.unknown_fields or None, lb.unknown_fields or None))
    a, b = la.p4info, lb.p4info
    out.extend(_compare("pkg_info", "", "", _to_dict(a.pkg_info), _to_dict(b.pkg_info)))
    ids_a, ids_b = _id_names(a), _id_names(b)
    for kind in ENTITY_KINDS:
        if kind == "externs":
            ea = _externs(a, ids_a, ignore)
            eb = _externs(b, ids_b, ignore)
        else:
            ea = {e.preamble.name: _entity_dict(kind, e, ids_a, ignore) for e in getattr(a, kind)}
            eb = {e.preamble.name: _entity_dict(kind, e, ids_b, ignore) for e in getattr(b, kind)}
        for n in list(ea) + [n for n in eb if n not in ea]:
            if n not in eb:
                out.append(Difference(kind, n, "", "present", None))
            elif n not in ea:
                out.append(Difference(kind, n, "", None, "present"))
            else:
                out.extend(_compare(kind, n, "", ea[n], eb[n]))
        if "order" not in ignore:
            oa = [n for n in ea if n in eb]
            ob = [n for n in eb if n in ea]
            if oa != ob:
                out.append(Difference(kind, "", "(order)", oa, ob))
    if a.HasField("type_info") != b.HasField("type_info"):  # p4c writes none for some programs
        out.append(Difference("type_info", "", "(presence)", "present" if a.HasField("type_info") else None,
                              "present" if b.HasField("type_info") else None))
    ta = _to_dict(a.type_info)
    tb = _to_dict(b.type_info)
    if "source_location" in ignore:
        _drop_key(ta, "source_location")
        _drop_key(tb, "source_location")
    for section in list(ta) + [s for s in tb if s not in ta]:
        sa, sb = ta.get(section), tb.get(section)
        if isinstance(sa, dict) and isinstance(sb, dict):
            for n in list(sa) + [n for n in sb if n not in sa]:
                out.extend(_compare(f"type_info.{section}", n, "", sa.get(n), sb.get(n)))
        else:
            out.extend(_compare("type_info", "", section, sa, sb))
    return out


def _externs(p: p4info_pb2.P4Info, ids: dict[int, str], ignore: frozenset[str]) -> dict[str, Any]:
    out = {}
    for ext in p.externs:
        for inst in ext.instances:
            d = _entity_dict("externs", inst, ids, ignore)
            d["extern_type"] = f"{ext.extern_type_name} ({ext.extern_type_id})"
            out[inst.preamble.name] = d
    return out


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="softswitch p4info-diff",
        description="Compare two P4Infos entity by entity (by kind and fully qualified name). "
                    "A and B are P4Info text files, or .p4 programs that softswitch compiles first.",
        epilog="Exit status: 0 equal, 1 different, 2 bad input.")
    ap.add_argument("a", metavar="A", help="P4Info file (.txtpb/.txt text, .json, .bin) or P4 program (.p4)")
    ap.add_argument("b", metavar="B", help="P4Info file (.txtpb/.txt text, .json, .bin) or P4 program (.p4)")
    ap.add_argument("--ignore", action="append", default=[], choices=IGNORABLE, metavar="WHAT",
                    help=f"leave this out of the comparison (repeatable): {', '.join(IGNORABLE)}")
    ap.add_argument("--lenient", action="store_true",
                    help="ignore what differs between p4c releases: " + ", ".join(sorted(LENIENT)))
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the count of differences")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                    help="preprocessor define for .p4 inputs")
    ap.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                    help="include folder for .p4 inputs")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run ``p4info-diff``; returns the exit status."""
    args = _parser().parse_args(argv)
    from softswitch.compile_cmd import parse_defines
    defines = parse_defines(args.defines)
    ignore = set(args.ignore) | (LENIENT if args.lenient else set())
    try:
        a = load(args.a, defines, args.include_dirs)
        b = load(args.b, defines, args.include_dirs)
    except P4InfoDiffError as e:
        print(f"p4info-diff: {e}", file=sys.stderr)
        return 2
    diffs = diff(a, b, ignore)
    if not args.quiet:
        for d in diffs:
            print(d)
    print(f"{len(diffs)} difference(s) between {args.a} and {args.b}" if diffs
          else f"{args.a} and {args.b} are equal" + (f" (ignoring {', '.join(sorted(ignore))})" if ignore else ""))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
