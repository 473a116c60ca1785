"""bmv2's handle numbers (its HandleMgr): each new object gets the lowest number not in use.

Table entries and action-profile members are numbered this way on bmv2, and the numbers decide
behaviour a program can see: which of two equal-priority entries wins, which member of a group a
hash picks.  softswitch keeps the same numbers for the same reason."""
from __future__ import annotations

import heapq


class Handles:
    """The lowest free number first; numbers given back are reused before new ones."""

    __slots__ = ("_free", "next")

    def __init__(self) -> None:
        self._free: list[int] = []  # given back, a heap
        self.next = 0  # the first number never handed out

    def take(self) -> int:
        if self._free:
            return heapq.heappop(self._free)
        h = self.next
        self.next += 1
        return h

    def give(self, *handles: int) -> None:
        for h in handles:
            heapq.heappush(self._free, h)
