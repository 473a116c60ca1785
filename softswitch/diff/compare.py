"""Packet-by-packet comparison of two runs (or of a run against a script's expectations)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Difference:
    """One input packet whose outputs differ."""

    index: int  # input packet number (0-based)
    left: list[tuple[int, bytes]]
    right: list[tuple[int, bytes]]

    def describe(self, left_name: str, right_name: str) -> str:
        def show(frames: list[tuple[int, bytes]]) -> str:
            if not frames:
                return "nothing"
            return "; ".join(f"port {p}: {d.hex()}" for p, d in frames)
        first = _first_byte_diff(self.left, self.right)
        return (f"packet #{self.index}: {left_name} sent {show(self.left)}\n"
                f"    {right_name} sent {show(self.right)}" + (f"\n    {first}" if first else ""))


def _first_byte_diff(a: list[tuple[int, bytes]], b: list[tuple[int, bytes]]) -> str:
    for k, ((pa, da), (pb, db)) in enumerate(zip(a, b)):
        if pa != pb:
            return f"frame {k}: port {pa} vs {pb}"
        if da != db:
            n = next((i for i, (x, y) in enumerate(zip(da, db)) if x != y), min(len(da), len(db)))
            return f"frame {k}: first difference at byte {n} (lengths {len(da)} and {len(db)})"
    return f"{len(a)} frames vs {len(b)}" if len(a) != len(b) else ""


def compare(left: list[list[tuple[int, bytes]]], right: list[list[tuple[int, bytes]]],
            ordered: bool = True) -> list[Difference]:
    """Differences between two per-input output lists.  ``ordered=False`` compares the frames
    of one input as a multiset (replicas of one packet may leave ports in any order)."""
    out = []
    for i, (a, b) in enumerate(zip(left, right, strict=True)):
        same = a == b if ordered else sorted(a) == sorted(b)
        if not same:
            out.append(Difference(i, a, b))
    return out

