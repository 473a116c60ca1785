"""Reset functions for the generated header/metadata objects, so the packet loop can reuse them.

Creating a program's headers struct runs one ``__init__`` per header, struct and stack in it
(1.1 µs for bench4.p4's nine objects, 3.5 µs for mrc_switch.p4's), once per packet.  Putting a
used tree back to its initial values with attribute stores costs a quarter of that (0.3 / 1.0 µs,
measured with ``timeit``; building the tree with ``__new__`` instead of ``__init__`` was slower on
CPython 3.11).  ``make_reset`` derives the reset from an instance the class constructor made, so
it needs no knowledge of how the classes were generated; when the tree holds anything it cannot
put back exactly (shared objects, objects without ``__slots__``, lists other than a stack's
elements), it returns None and the caller allocates as before.
"""
from __future__ import annotations

from collections.abc import Callable

_IMMUTABLE = (int, bool, float, str, bytes, type(None))


class _Unsupported(Exception):
    pass


class Mismatch(Exception):
    """A recycled tree no longer has the shape of a fresh one (the caller allocates instead)."""


def _slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for k in reversed(cls.__mro__):
        s = k.__dict__.get("__slots__", ())
        names.extend([s] if isinstance(s, str) else s)
    return names


def same_tree(a: object, b: object) -> bool:
    """True when ``a`` and ``b`` are equal object trees of the same classes."""
    if isinstance(a, _IMMUTABLE) or isinstance(b, _IMMUTABLE):
        return type(a) is type(b) and a == b
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    for attr in _slot_names(type(a)):
        if hasattr(a, attr) != hasattr(b, attr):
            return False
        if hasattr(a, attr) and not same_tree(getattr(a, attr), getattr(b, attr)):
            return False
    return True


def dirty(obj: object) -> None:
    """Overwrite every scalar in the tree (bools become True, numbers 1): what a packet leaves."""
    if type(obj) is list:
        for x in obj:
            dirty(x)
        return
    for attr in _slot_names(type(obj)):
        val = getattr(obj, attr, None)
        if isinstance(val, bool):
            setattr(obj, attr, True)
        elif isinstance(val, int):
            setattr(obj, attr, 1)
        elif not isinstance(val, _IMMUTABLE):
            dirty(val)


def _reset_lines(obj: object, path: str, lines: list[str], ns: dict, seen: set[int], counter: list[int],
                 lazy: frozenset[str] = frozenset(), when_valid: bool = False,
                 lazy_elements: bool = False, skip: frozenset[str] = frozenset(),
                 tracked: frozenset[str] = frozenset(), when_dirty: bool = False,
                 dirty_elements: bool = False, next_only: frozenset[str] = frozenset(),
                 guard_next: bool = False) -> None:
    """Statements that put ``path`` (an expression for ``obj``'s place in the tree) back to the
    values ``obj`` has, by stores into the existing objects.  ``lazy``: names of ``obj``'s
    attributes (headers, or stacks of headers) to reset only while valid; ``when_valid``: ``obj``
    is such a header (its stores are guarded by its ``valid``); ``lazy_elements``: ``obj`` is such
    a stack (its elements are guarded, its own counters are not); ``skip``: scalar attributes of
    ``obj`` to leave as they are; ``tracked``: names of ``obj``'s attributes (headers) to reset
    only while valid or dirty (headers, or stacks of headers); ``when_dirty``: ``obj`` is such a
    header; ``dirty_elements``: ``obj`` is such a stack; ``next_only``: names of ``obj``'s lazy
    stacks whose valid elements are those below ``nxt`` (``usage.next_only_stacks``);
    ``guard_next``: ``obj`` is such a stack (its elements are looked at only when ``nxt`` is not
    0)."""
    if id(obj) in seen:
        raise _Unsupported("shared object")
    seen.add(id(obj))
    cls = type(obj)
    if type(obj) is list:
        raise _Unsupported("list outside a stack")
    if hasattr(obj, "__dict__") or "__slots__" not in cls.__dict__:
        raise _Unsupported(f"{cls.__name__} has no __slots__")
    slots = _slot_names(cls)
    # an object of scalars alone (most headers) is named only by its own lines, which come
    # together: every such object shares one name (the reset is written into the entry point,
    # whose frame sets up and clears a slot per name on every call)
    leaf = all(isinstance(getattr(obj, a, None), (int, bool, type(None), *_IMMUTABLE)) for a in slots)
    var = "rl" if leaf else f"r{counter[0]}"
    counter[0] += 1
    ind = "    "
    if when_valid or when_dirty:
        if "valid" not in slots or (when_dirty and "dirty" not in slots):
            raise _Unsupported(f"{cls.__name__} is not a header")
        # a valid header is always dirty (extract, setValid, copy_from and make set both); the
        # object is named only when it needs resetting (most headers of a packet are invalid),
        # unless it holds more than scalars (their lines are written at the outer level)
        flag = "dirty" if when_dirty else "valid"
        if all(isinstance(getattr(obj, a, None), (int, bool, type(None))) for a in slots):
            lines.append(f"    if {path}.{flag}:")
            lines.append(f"        {var} = {path}")
        else:
            lines.append(f"    {var} = {path}")
            lines.append(f"    if {var}.{flag}:")
        ind = "        "
        if not when_dirty and "dirty" in slots:
            skip = skip | {"dirty"}  # an extract-only header is never marked: its flag stays False
    else:
        lines.append(f"    {var} = {path}")
    zeros: dict[str, list[str]] = {}
    for attr in _slot_names(cls):
        if not hasattr(obj, attr):
            raise _Unsupported("unset slot")
        val = getattr(obj, attr)
        if attr == "raw" and "valid" in slots:
            # a header's extracted bytes: read only while it is valid, and whatever makes it valid
            # sets or clears them (layout._header_source), so a stale value is never read
            continue
        if attr in skip:
            if not isinstance(val, (int, bool, type(None))):
                raise _Unsupported(f"only scalars can be skipped, not {attr}")
            continue
        if isinstance(val, (int, bool, type(None))):
            zeros.setdefault(repr(val), []).append(attr)
        elif isinstance(val, _IMMUTABLE):
            lines.append(f"    {var}.{attr} = {val!r}")
        elif type(val) is list:
            # a header stack's elements: push/pop may have replaced them, so reset each one in
            # place by position (same class, as the class always fills the list the same way)
            lst = f"{var}_{attr}"
            sub: list[str] = []
            for i, elem in enumerate(val):
                _reset_lines(elem, f"{lst}[{i}]", sub, ns, seen, counter, when_valid=lazy_elements,
                             when_dirty=dirty_elements)
            n = len(val)
            check = [f"    if len({var}.{attr}) != {n}:", "        raise _Mismatch"]
            if guard_next and "nxt" in slots:  # no element valid while nxt is 0 (read before its reset)
                # the list's length is checked where its elements are looked at: a packet that
                # left nxt at 0 (most packets) costs one test, not a len() call too
                lines.append(f"    if {var}.nxt:")
                lines.append(f"        {lst} = {var}.{attr}")
                lines.extend("    " + line for line in sub)
                lines.extend("    " + line for line in check)
                if obj.nxt == 0 and "nxt" not in skip:  # and nxt is put back only if moved
                    lines.append(f"        {var}.nxt = 0")
                    skip = skip | {"nxt"}
            else:
                lines.append(f"    {lst} = {var}.{attr}")
                lines.extend(sub)
                lines.extend(check)
        elif attr in lazy and "valid" not in _slot_names(type(val)):
            # a stack of headers: its elements are reset while valid, its own counters always
            _reset_lines(val, f"{var}.{attr}", lines, ns, seen, counter, lazy_elements=True,
                         guard_next=attr in next_only)
        elif attr in tracked and "valid" not in _slot_names(type(val)):
            # likewise while valid or dirty
            _reset_lines(val, f"{var}.{attr}", lines, ns, seen, counter, dirty_elements=True)
        else:
            _reset_lines(val, f"{var}.{attr}", lines, ns, seen, counter, when_valid=attr in lazy,
                         when_dirty=attr in tracked)
    for expr, attrs in zeros.items():
        lines.append(ind + " = ".join(f"{var}.{a}" for a in attrs) + f" = {expr}")


def make_reset(*classes: type, lazy: frozenset[str] = frozenset(),
               skip: frozenset[str] = frozenset(),
               tracked: frozenset[str] = frozenset(),
               next_only: frozenset[str] = frozenset()) -> Callable[..., None] | None:
    """``reset(o1, o2, ...)`` putting objects of ``classes`` (e.g. headers, user metadata,
    standard metadata) back to what ``cls()`` gives; None when that cannot be done by stores.
    The reset raises ``Mismatch`` if a stack's element list changed length (never, for the
    generated stacks); the objects must then be discarded.

    ``lazy``: attributes of the first class's objects (headers, or stacks of headers) that are
    reset only while valid: the caller knows their fields are all zero whenever they are invalid
    (``usage.extract_only_headers``), so an invalid one already is what ``cls()`` gives.

    ``skip``: scalar attributes of the last class's object that are not reset at all: the caller
    knows nothing reads them before it writes them (the packet loop's standard metadata, see
    ``fastpath``).

    ``tracked``: attributes of the first class's objects (headers) that are reset only while
    valid or ``dirty``: the generated code sets ``dirty`` whenever it stores to one of their
    fields or sets one invalid (``usage.field_written_headers``), so a clean invalid one is
    all-zero.

    ``next_only``: stacks of ``lazy`` whose valid elements are exactly those below their ``nxt``
    (``usage.next_only_stacks``): their elements are not looked at while ``nxt`` is 0."""
    try:
        lines: list[str] = []
        ns: dict = {"_Mismatch": Mismatch}
        seen: set[int] = set()
        counter = [0]
        protos = [cls() for cls in classes]
        last = len(protos) - 1
        for i, proto in enumerate(protos):
            _reset_lines(proto, f"a{i}", lines, ns, seen, counter, lazy if i == 0 else frozenset(),
                         skip=skip if i == last else frozenset(),
                         tracked=tracked if i == 0 else frozenset(),
                         next_only=next_only if i == 0 else frozenset())
        args = ", ".join(f"a{i}" for i in range(len(classes)))
        src = f"def reset({args}):\n" + "\n".join(lines) + "\n"
        exec(compile(src, "<reset>", "exec"), ns)  # noqa: S102 - generated above from instances
        fn = ns["reset"]
        # check: a tree a packet has written all over must come back equal to a fresh one
        probe = [cls() for cls in classes]
        for o in probe:
            dirty(o)
        fn(*probe)
        for attr in skip:  # left as they were on purpose
            setattr(probe[-1], attr, getattr(protos[-1], attr))
        for name in lazy:  # never marked dirty (no store reaches them), so their flag is not reset
            o = getattr(probe[0], name)
            for x in (o.arr if type(getattr(o, "arr", None)) is list else [o]):
                if hasattr(x, "dirty"):
                    x.dirty = False
        if not all(same_tree(a, b) for a, b in zip(probe, protos)):
            return None
        fn.body = lines  # for callers that write the stores into their own generated code
        return fn
    except _Unsupported:
        return None
