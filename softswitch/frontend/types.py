"""Type helpers for the checker: printing, compatibility and constant arithmetic."""
from __future__ import annotations

from dataclasses import dataclass

from . import ir


@dataclass(frozen=True, slots=True)
class InfIntT:
    """Type of an integer literal with no width yet (never left in the IR)."""


INFINT = InfIntT()
BOOL = ir.BoolT()
BIT32 = ir.BitT(32)


def show(t: object) -> str:
    """A type as P4 writes it."""
    if isinstance(t, ir.BitT):
        return f"bit<{t.width}>"
    if isinstance(t, ir.IntT):
        return f"int<{t.width}>"
    if isinstance(t, ir.BoolT):
        return "bool"
    if isinstance(t, ir.ErrorT):
        return "error"
    if isinstance(t, InfIntT):
        return "int"
    if isinstance(t, ir.StringT):
        return "string"
    if isinstance(t, ir.VoidT):
        return "void"
    if isinstance(t, (ir.EnumT, ir.HeaderT, ir.StructT)):
        return t.name
    if isinstance(t, ir.VarbitT):
        return f"varbit<{t.max_width}>"
    if isinstance(t, ir.StackT):
        return f"{t.elem.name}[{t.size}]"
    if isinstance(t, ir.TupleT):
        return "tuple<" + ", ".join(show(e) for e in t.elems) + ">"
    if isinstance(t, ir.ExternT):
        return t.name
    return str(t)


def is_numeric(t: object) -> bool:
    return isinstance(t, (ir.BitT, ir.IntT, InfIntT))


def wrap(value: int, t: object) -> int:
    """Reduce an integer to the value range of bit<W>/int<W> (infinite ints unchanged)."""
    if isinstance(t, ir.BitT):
        return value & ((1 << t.width) - 1)
    if isinstance(t, ir.IntT):
        w = t.width
        value &= (1 << w) - 1
        return value - (1 << w) if value >> (w - 1) else value
    return value


def fold_binary(op: str, a: int, b: int, t: object) -> int | bool | None:
    """Evaluate ``a op b`` at type ``t`` (the operand type); None if not foldable."""
    if op in ("==", "!="):
        return (a == b) == (op == "==")
    if op in ("<", "<=", ">", ">="):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op == "&&":
        return bool(a) and bool(b)
    if op == "||":
        return bool(a) or bool(b)
    if op == "+":
        return wrap(a + b, t)
    if op == "-":
        return wrap(a - b, t)
    if op == "*":
        return wrap(a * b, t)
    if op in ("/", "%"):
        if b == 0:
            return None
        return wrap(a // b if op == "/" else a % b, t)
    if op == "&":
        return wrap(a & b, t)
    if op == "|":
        return wrap(a | b, t)
    if op == "^":
        return wrap(a ^ b, t)
    if op == "<<":
        if isinstance(t, (ir.BitT, ir.IntT)) and b >= t.width:
            return 0
        return wrap(a << b, t)
    if op == ">>":
        return wrap(a >> b, t)
    if op in ("|+|", "|-|"):
        r = a + b if op == "|+|" else a - b
        if isinstance(t, ir.BitT):
            return max(0, min(r, (1 << t.width) - 1))
        if isinstance(t, ir.IntT):
            return max(-(1 << (t.width - 1)), min(r, (1 << (t.width - 1)) - 1))
        return r
    return None
