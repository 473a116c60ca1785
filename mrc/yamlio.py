"""Strict YAML reading for the project's input files (topologies, scenarios, EV plans).

PyYAML's ``safe_load`` takes a repeated mapping key silently (the last one wins: ``planes: 2`` then
``planes: 1`` gives 1, and the error, if any, comes later about something else), and its syntax
errors span several lines and name ``<unicode string>`` instead of the file.  ``load_yaml`` refuses
duplicate keys and reports any YAML error as one line ``FILE:LINE:COL: ...``.  ``read_yaml_file`` reads
the file's bytes as YAML does (UTF-8, or UTF-16 with a byte-order mark): bytes that are not text are an
error naming the file and the place, not a ``UnicodeDecodeError`` traceback."""
from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

import yaml


class YamlFileError(ValueError):
    """A YAML file that cannot be read as data; the message is one line, ``FILE:LINE:COL: what``."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping key given twice (YAML 1.2 says keys are unique)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {first.start_mark.line + 1})",
                key_node.start_mark)
        seen[key] = key_node
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str, where: str) -> Any:
    """Parse ``text`` (read from ``where``) as YAML data, refusing duplicate keys; errors are
    ``YamlFileError("where:line:col: not valid YAML: problem")``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        pos = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark is not None else where
        what = " ".join(str(e.problem or e.context or "syntax error").split())
        if e.context and e.problem and e.context_mark is not None and e.problem_mark is not None:
            what += f" ({' '.join(e.context.split())} at line {e.context_mark.line + 1})"
        raise YamlFileError(f"{pos}: not valid YAML: {what}") from None
    except yaml.YAMLError as e:
        raise YamlFileError(f"{where}: not valid YAML: {' '.join(str(e).split())}") from None
    except RecursionError:  # collections nested thousands deep: PyYAML's composer recurses per level
        raise YamlFileError(f"{where}: not valid YAML: nested too deeply") from None


def decode_text(data: bytes, where: str) -> str:
    """``data`` as text the way YAML reads a stream: UTF-16 when it starts with a UTF-16 byte-order
    mark, else UTF-8 (a UTF-8 BOM dropped); YamlFileError ``where:LINE:COL: not UTF-8 text ...`` else."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        enc = "utf-16"
    else:
        enc = "utf-8-sig"
    try:
        return data.decode(enc)
    except UnicodeDecodeError as e:
        head = data[:e.start]
        line = head.count(b"\n") + 1
        col = e.start - (head.rfind(b"\n") + 1) + 1
        what = "UTF-8" if enc == "utf-8-sig" else "UTF-16"
        raise YamlFileError(f"{where}:{line}:{col}: not {what} text (byte {data[e.start]:#04x} at offset "
                            f"{e.start}); save the file as {what}") from None


def read_yaml_file(path: str | Path) -> Any:
    """Read and parse the YAML file ``path`` (see ``load_yaml``); OSError when it cannot be read,
    YamlFileError naming the file when it is not YAML text."""
    p = Path(path)
    return load_yaml(decode_text(p.read_bytes(), str(p)), str(p))


_KEY_PATH = re.compile(r"(?:[A-Za-z_][\w-]*)(?:\.[\w-]+|\[\d+\])*")
_STEP = re.compile(r"\.?([\w-]+)|\[(\d+)\]")
_UNKNOWN = re.compile(r"unknown key\(s\) ([^\s,]+)")


def unknown_keys(raw: dict, known: set[str]) -> list[str]:
    """The keys of ``raw`` not in ``known``, as text, sorted, for an "unknown key(s) ..." message (which
    ``place_error`` places at the first of them): a YAML key may be a number, a boolean or null (``1: x``,
    ``~: x``), which ``sorted`` and ``', '.join`` beside a text key refused with a TypeError traceback."""
    return sorted(str(k) for k in raw if k not in known)


def _entry(node: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    """The (key node, value node) of text key ``key`` in a composed mapping, or None."""
    return next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _find(root: yaml.Node, key_path: str, rest: str) -> yaml.Mark | None:
    """Where the value at ``key_path`` (``traffic.pattern``, ``faults[2].kind``) is written; for a
    message about unknown keys, where the first of them is.  None when not even its first step is in
    the document (a default value's error)."""
    node, mark = root, None
    steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(key_path)]
    j = 0
    while j < len(steps):
        name, index = steps[j]
        child, used = None, 1
        if name is not None and isinstance(node, yaml.MappingNode):
            # a key may hold dots itself (a peer "h1.rack2": peers.h1.rack2.gid): the shortest run of
            # steps that is a key of this mapping
            names = [n for n, _ in steps[j:]]
            for used in range(1, (names.index(None) if None in names else len(names)) + 1):
                kv = _entry(node, ".".join(names[:used]))
                if kv is not None:
                    child = kv[1]
                    break
        elif index is not None and isinstance(node, yaml.SequenceNode) and int(index) < len(node.value):
            child = node.value[int(index)]
        if child is None:
            break
        node, mark = child, child.start_mark
        j += used
    u = _UNKNOWN.match(rest)
    if u and isinstance(node, yaml.MappingNode):
        kv = _entry(node, u.group(1))
        if kv is not None:
            mark = kv[0].start_mark
    return mark


def place_error(path: str | Path, msg: str, root: str = "") -> str:
    """An error ``msg`` about the YAML file ``path`` as one line ``FILE:LINE:COL: key.path: what``.

    ``msg`` starts with the key path of what it is about (``traffic.pattern: ...``), after ``root.``
    when given (``scenario.traffic.pattern: ...``, as a document parsed from memory names it); the
    line and column are those of that value in the file (of the first unknown key, for an "unknown
    key(s)" message).  Without a key path, or one the file does not hold (a default's error), or a
    file that cannot be read again: ``FILE: what``.  With ``root``, a message that does not start
    with it is not about the file and comes back unchanged."""
    p = str(path)
    body = msg
    if root:
        if not (body == root or body.startswith((root + ".", root + ":", root + ","))):
            return msg
        body = body[len(root):].lstrip(".")
        if body.startswith((":", ",")):
            body = body[1:].lstrip()
    m = _KEY_PATH.match(body)
    key_path = m.group(0) if m and body[m.end():m.end() + 1] in (":", ",") else ""
    try:
        text = decode_text(Path(path).read_bytes(), p)
        if Path(path).suffix == ".json":
            # a JSON file is read again as YAML, which refuses a tab between tokens ("found character
            # '\t' that cannot start any token"): a tab-indented JSON plan lost its line.  Outside its
            # strings a tab is only a space to JSON, and a JSON string holds no raw tab, so one space
            # for each tab keeps every line and column
            text = text.replace("\t", " ")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        node = None
    rest = body[len(key_path):].lstrip(":, ") if key_path else body
    mark = _find(node, key_path, rest) if node is not None else None
    if mark is None and node is not None and _UNKNOWN.match(body):  # top-level unknown keys
        mark = _find(node, "", body)
    if mark is None:
        return f"{p}: {body}"
    return f"{p}:{mark.line + 1}:{mark.column + 1}: {body}"
