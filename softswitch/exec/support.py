"""Small run-time helpers the generated pipeline code calls (kept out of the generated text)."""
from __future__ import annotations

import random as _random


class ParserError(Exception):
    """Raised inside generated parser code; ``code`` is the P4 error's numeric value."""

    __slots__ = ("code",)

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class ExitControl(Exception):
    """``exit`` statement: unwinds the whole control (and the action that ran it)."""


class AssertionFailed(Exception):
    """v1model ``assert``/``assume`` failed: bmv2 logs and aborts; we drop the packet."""


def to_signed(value: int, width: int) -> int:
    """Interpret the low ``width`` bits of value as two's complement."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def sat_add_u(a: int, b: int, width: int) -> int:
    """Unsigned saturating add ``|+|``."""
    r = a + b
    m = (1 << width) - 1
    return min(r, m)


def sat_sub_u(a: int, b: int) -> int:
    """Unsigned saturating subtract ``|-|``."""
    return a - b if a > b else 0


def sat_add_s(a: int, b: int, width: int) -> int:
    """Signed saturating add on int<width> values given as Python ints (signed)."""
    r = a + b
    hi = (1 << (width - 1)) - 1
    lo = -(1 << (width - 1))
    return hi if r > hi else max(r, lo)


def sat_sub_s(a: int, b: int, width: int) -> int:
    """Signed saturating subtract."""
    return sat_add_s(a, -b, width)


def shl(value: int, amount: int, width: int) -> int:
    """Left shift wrapping at ``width`` (shift by >= width gives 0)."""
    if amount >= width:
        return 0
    return (value << amount) & ((1 << width) - 1)


def format_log(fmt: str, args: tuple) -> str:
    """``log_msg`` formatting: each ``{}`` is replaced by the next argument in decimal."""
    parts = fmt.split("{}")
    out = [parts[0]]
    for i, rest in enumerate(parts[1:]):
        out.append(str(args[i]) if i < len(args) else "{}")
        out.append(rest)
    return "".join(out)


def shl_s(value: int, amount: int, width: int) -> int:
    """Left shift of an int<width>, wrapping to the signed range."""
    if amount >= width:
        return 0
    h = 1 << (width - 1)
    return (((value << amount) + h) & ((1 << width) - 1)) - h


def div(a: int, b: int) -> int:
    """Unsigned ``/``; division by zero gives 0 (undefined in P4, a crash in bmv2)."""
    return a // b if b else 0


def mod(a: int, b: int) -> int:
    """Unsigned ``%``; modulo by zero gives 0."""
    return a % b if b else 0


def stack_get(stack, index: int):
    """``stack[i]`` with a run-time index; out of range reads a fresh invalid header and
    writes to it are lost (P4 leaves both undefined)."""
    arr = stack.arr
    if 0 <= index < len(arr):
        return arr[index]
    return stack.ELEM()


def stack_next(stack):
    """``stack.next``: the element at nextIndex, or StackOutOfBounds."""
    if stack.nxt >= len(stack.arr):
        raise ParserError(3)
    return stack.arr[stack.nxt]


def stack_last(stack):
    """``stack.last``: the element at nextIndex - 1, or StackOutOfBounds."""
    if stack.nxt == 0:
        raise ParserError(3)
    return stack.arr[stack.nxt - 1]


def lookahead_bits(data: bytes, off: int, width: int) -> int:
    """``lookahead<bit<W>>()`` at byte offset ``off``; PacketTooShort if not enough bytes."""
    nb = (width + 7) >> 3
    if off + nb > len(data):
        raise ParserError(1)
    return int.from_bytes(data[off:off + nb], "big") >> (nb * 8 - width)


def lookahead_header(data: bytes, off: int, cls, width: int):
    """``lookahead<H>()``: a valid header object decoded without consuming bytes."""
    v = lookahead_bits(data, off, width)
    h = cls()
    h.set_int(v)  # every field, int<W> signed and bool as such, struct-typed fields' leaves too
    return h


def pack_optional(items: tuple) -> bytes:
    """Pack (include, value, width) triples MSB-first, skipping excluded ones (fields of
    invalid headers, as bmv2 does), zero-padding the end to a byte."""
    acc = 0
    nbits = 0
    for cond, v, w in items:
        if cond:
            acc = (acc << w) | v
            nbits += w
    nb = (nbits + 7) >> 3
    return (acc << (nb * 8 - nbits)).to_bytes(nb, "big")


def randint(lo: int, hi: int) -> int:
    """v1model ``random(out, lo, hi)``: uniform in [lo, hi] (lo when hi < lo)."""
    if hi <= lo:
        return lo
    return _random.randint(lo, hi)


def entry_text(entry) -> str:
    """Readable match spec (and priority) of a runtime table entry, for the packet trace."""
    spec = getattr(entry, "spec", None)
    if spec is None:
        return repr(entry)
    parts = []
    for s in spec:
        if s is None:
            parts.append("*")
        elif isinstance(s, tuple):
            parts.append("(" + ", ".join(hex(x) for x in s) + ")")
        else:
            parts.append(hex(s))
    prio = getattr(entry, "priority", 0)
    return "[" + ", ".join(parts) + "]" + (f" priority {prio}" if prio else "")


def key_text(values: tuple) -> str:
    """A lookup key or action arguments in hex, for the packet trace."""
    return "(" + ", ".join(hex(v) if isinstance(v, int) else repr(v) for v in values) + ")"
