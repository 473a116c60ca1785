"""Reading STF ("simple test framework") files, the packet/table scripts of p4c's test corpus.

One command per line, ``#`` starts a comment.  The commands, with the meaning p4c's bmv2 STF
runner gives them (its ``bmv2stf.py``; the grammar is written down in p4c's ``stf_parser.py``):

``add TABLE [PRIORITY] FIELD:VALUE ... ACTION(PARAM:VALUE, ...)``
    insert a table entry.  ``VALUE`` is decimal, ``0x``/``0b``/``0o``; ternary fields take
    ``*`` for a don't-care digit (``0x****0101``: the mask covers the digits written) or
    ``V&&&M``; lpm fields ``V/LEN`` or trailing ``*`` digits; range fields ``LO->HI``.  A key
    field not given is a don't-care (exact fields: 0).  ``= HANDLE`` after the action is ignored.
    A larger ``PRIORITY`` wins (p4c's runner hands bmv2 ``10000 - PRIORITY``, lower wins there).
``setdefault TABLE ACTION(PARAM:VALUE, ...)``
    set the table's default action.
``packet PORT HEX...``
    send a frame into ``PORT``.
``expect PORT [HEX...][$]``
    the next frame out of ``PORT`` must match: ``*`` is a don't-care nibble, the frame may be
    longer than the pattern unless it ends in ``$``.  Without data, any number of frames on that
    port is fine.
``mirroring_add SESSION PORT``, ``mirroring_add_mc SESSION GROUP``, ``mirroring_delete SESSION``,
``mc_mgrp_create GROUP``, ``mc_node_create RID PORT...``, ``mc_node_update NODE PORT...``,
``mc_node_associate GROUP NODE``
    clone sessions and multicast groups, as bmv2's CLI takes them (node handles count from 0); a
    session made by ``mirroring_add_mc`` clones to the group's replicas as they are when a packet
    is cloned (bmv2 resolves the group then).
``register_write REGISTER INDEX VALUE``, ``register_reset REGISTER``
    set register cells.
``meter_set_rates METER INDEX CRATE:CBURST PRATE:PBURST``, ``meter_array_set_rates METER CRATE:CBURST PRATE:PBURST``
    configure one meter cell, or every cell, as bmv2's CLI takes them: rates in units (packets or
    bytes, the meter's type) per microsecond, bursts in units; committed first, then peak (v1model
    meters are two-rate three-colour).
``check_counter``, ``counter_read``, ``counter_write``, ``wait``, ``remove``, ``no_packet``,
``register_read``, ``mirroring_get``, ``meter_get_rates``
    read but not acted on (p4c's bmv2 runner ignores them too); they are listed in the result.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


class StfError(ValueError):
    """A malformed STF line (the message says ``file:line``)."""


@dataclass
class Command:
    """One STF command: ``kind`` is the command word, ``line`` its 1-based line number."""

    kind: str
    line: int
    args: dict = field(default_factory=dict)


IGNORED = frozenset({"check_counter", "counter_read", "counter_write", "wait", "remove",
                     "no_packet", "register_read", "mirroring_get", "meter_get_rates"})
_NUMBER = re.compile(r"[0-9]")


def parse_number(text: str) -> int:
    """An STF number: decimal, ``0x``, ``0b`` or ``0o`` (no wildcards)."""
    t = text.strip().lower().replace("_", "")
    base = {"0x": 16, "0b": 2, "0o": 8}.get(t[:2])
    try:
        return int(t[2:], base) if base else int(t, 10)
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None


def parse_wildcard(text: str) -> tuple[int, int, int]:
    """A number with ``*`` don't-care digits -> (value, mask over the written digits, bits)."""
    t = text.strip().lower()
    bits = {"0x": 4, "0b": 1, "0o": 3}.get(t[:2])
    if bits is None:
        v = parse_number(t)
        return v, -1, 0  # decimal: every bit cares (mask -1: all ones at any width)
    value = mask = 0
    digits = t[2:].replace("_", "")
    if not digits:
        raise ValueError(f"not a number: {text!r}")
    full = (1 << bits) - 1
    for d in digits:
        value <<= bits
        mask <<= bits
        if d == "*":
            continue
        n = int(d, 1 << bits)
        value |= n
        mask |= full
    return value, mask, bits * len(digits)


def _split_action(text: str, where: str) -> tuple[str, str, list[tuple[str, str]]]:
    """``head ACTION(k:v, ...) [= id]`` -> (head, action name, [(k, v)])."""
    if "(" not in text:
        raise StfError(f"{where}: no action call 'NAME(...)'")
    head, rest = text.split("(", 1)
    head = head.strip()
    if ")" not in rest:
        raise StfError(f"{where}: missing ')'")
    inner = rest[:rest.rindex(")")]
    parts = head.rsplit(None, 1)
    name = parts[-1] if parts else ""
    head = parts[0] if len(parts) == 2 else ""
    if not name:
        raise StfError(f"{where}: action name missing before '('")
    args = []
    for word in inner.split(","):
        word = word.strip()
        if not word:
            continue
        if ":" not in word:
            raise StfError(f"{where}: action argument '{word}' is not NAME:VALUE")
        k, v = word.split(":", 1)
        args.append((k.strip(), v.strip()))
    return head, name, args


def _split_key(word: str) -> tuple[str, str]:
    """``FIELD:VALUE`` split at the first ``:`` outside brackets, so that a key named after a
    slice (``hdr.eth.dst[7:0]:0x03``) keeps its name; VALUE is empty when there is none."""
    depth = 0
    for i, c in enumerate(word):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == ":" and depth == 0:
            return word[:i], word[i + 1:]
    return word, ""


def _hex(words: list[str], where: str, allow_pattern: bool) -> str:
    data = "".join(words).upper()
    ok = "0123456789ABCDEF" + ("*$" if allow_pattern else "")
    bad = [c for c in data if c not in ok]
    if bad or ("$" in data and not data.endswith("$")) or data.count("$") > 1:
        raise StfError(f"{where}: bad packet data {data!r}")
    return data


def parse_stf(text: str, name: str = "stf") -> list[Command]:
    """Parse STF text into commands; raise ``StfError`` naming the line for malformed ones."""
    cmds: list[Command] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{name}:{no}"
        first, _, rest = line.partition(" ")
        kind = first.lower()
        rest = rest.strip()
        words = rest.split()
        try:
            if kind == "add":
                head, action, args = _split_action(rest, where)
                hw = head.split()
                if not hw:
                    raise StfError(f"{where}: 'add' needs a table name")
                table, hw = hw[0], hw[1:]
                prio = None
                if hw and _NUMBER.match(hw[0]):
                    prio = int(hw[0])
                    hw = hw[1:]
                keys = []
                for w in hw:
                    k, v = _split_key(w)
                    if not v:
                        raise StfError(f"{where}: key '{w}' is not FIELD:VALUE")
                    keys.append((k, v))
                cmds.append(Command("add", no, {"table": table, "priority": prio, "keys": keys,
                                                "action": action, "params": args}))
            elif kind == "setdefault":
                head, action, args = _split_action(rest, where)
                if len(head.split()) != 1:
                    raise StfError(f"{where}: 'setdefault TABLE ACTION(...)' expected")
                cmds.append(Command("setdefault", no, {"table": head, "action": action, "params": args}))
            elif kind == "packet":
                if not words:  # no data is an empty frame (p4c's runner writes one)
                    raise StfError(f"{where}: 'packet PORT DATA' expected")
                data = _hex(words[1:], where, False)
                if len(data) % 2:  # p4c's runner turns a last lone digit into a byte of its own
                    data = data[:-1] + "0" + data[-1]
                cmds.append(Command("packet", no, {"port": parse_number(words[0]),
                                                   "data": bytes.fromhex(data)}))
            elif kind == "expect":
                if not words:
                    raise StfError(f"{where}: 'expect PORT [DATA]' expected")
                pattern = _hex(words[1:], where, True) if len(words) > 1 else None
                cmds.append(Command("expect", no, {"port": parse_number(words[0]), "pattern": pattern}))
            elif kind == "mirroring_add":
                if len(words) != 2:
                    raise StfError(f"{where}: 'mirroring_add SESSION PORT' expected")
                cmds.append(Command(kind, no, {"session": parse_number(words[0]),
                                               "port": parse_number(words[1])}))
            elif kind == "mirroring_add_mc":
                if len(words) != 2:
                    raise StfError(f"{where}: 'mirroring_add_mc SESSION GROUP' expected")
                cmds.append(Command(kind, no, {"session": parse_number(words[0]),
                                               "group": parse_number(words[1])}))
            elif kind == "mirroring_delete":
                if len(words) != 1:
                    raise StfError(f"{where}: 'mirroring_delete SESSION' expected")
                cmds.append(Command(kind, no, {"session": parse_number(words[0])}))
            elif kind == "mc_node_update":
                if len(words) < 1:
                    raise StfError(f"{where}: 'mc_node_update NODE PORT...' expected")
                cmds.append(Command(kind, no, {"node": parse_number(words[0]),
                                               "ports": [parse_number(w) for w in words[1:]]}))
            elif kind == "mc_mgrp_create":
                if len(words) != 1:
                    raise StfError(f"{where}: 'mc_mgrp_create GROUP' expected")
                cmds.append(Command(kind, no, {"group": parse_number(words[0])}))
            elif kind == "mc_node_create":
                if len(words) < 1:
                    raise StfError(f"{where}: 'mc_node_create RID PORT...' expected")
                cmds.append(Command(kind, no, {"rid": parse_number(words[0]),
                                               "ports": [parse_number(w) for w in words[1:]]}))
            elif kind == "mc_node_associate":
                if len(words) != 2:
                    raise StfError(f"{where}: 'mc_node_associate GROUP NODE' expected")
                cmds.append(Command(kind, no, {"group": parse_number(words[0]),
                                               "node": parse_number(words[1])}))
            elif kind == "register_write":
                if len(words) != 3:
                    raise StfError(f"{where}: 'register_write REGISTER INDEX VALUE' expected")
                cmds.append(Command(kind, no, {"register": words[0], "index": parse_number(words[1]),
                                               "value": parse_number(words[2])}))
            elif kind == "register_reset":
                if len(words) != 1:
                    raise StfError(f"{where}: 'register_reset REGISTER' expected")
                cmds.append(Command(kind, no, {"register": words[0]}))
            elif kind in ("meter_set_rates", "meter_array_set_rates"):
                fixed = 2 if kind == "meter_set_rates" else 1
                usage = f"'{kind} METER{' INDEX' if fixed == 2 else ''} CRATE:CBURST PRATE:PBURST' expected"
                if len(words) != fixed + 2:
                    raise StfError(f"{where}: {usage} (a v1model meter has two rates)")
                rates = []
                for w in words[fixed:]:
                    rate, sep, burst = w.partition(":")
                    if not sep:
                        raise StfError(f"{where}: {usage}, not {w!r}")
                    rates.append((float(rate), parse_number(burst)))
                args = {"meter": words[0], "index": parse_number(words[1]) if fixed == 2 else None,
                        "rates": rates, "text": line.strip()}
                cmds.append(Command(kind, no, args))
            elif kind in IGNORED:
                cmds.append(Command("ignored", no, {"text": line}))
            else:
                raise StfError(f"{where}: unknown STF command '{first}'")
        except ValueError as e:
            if isinstance(e, StfError):
                raise
            raise StfError(f"{where}: {e}") from None
    return cmds


def load_stf(path: str | Path) -> list[Command]:
    """Read and parse an STF file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise StfError(f"{p}: {e.strerror or e}") from None  # was "[Errno 2] No such file ...: 'PATH'"
    except UnicodeDecodeError as e:
        raise StfError(f"{p}: not a text file ({e.reason} at byte {e.start})") from None
    return parse_stf(text, str(p))


def pattern_matches(pattern: str, data: bytes) -> bool:
    """Does frame ``data`` match an ``expect`` pattern (``*`` nibbles, ``$`` exact length)?"""
    got = data.hex().upper()
    strict = pattern.endswith("$")
    pat = pattern[:-1] if strict else pattern
    if len(got) < len(pat) or (strict and len(got) != len(pat)):
        return False
    return all(p == "*" or p == g for p, g in zip(pat, got))
