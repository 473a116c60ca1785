"""Lookup structures of a table, built for the per-packet hot path.

* exact keys: one dict from the key tuple to the entry;
* everything else (lpm, ternary, range, optional, mixed): tuple-space search over the key packed
  into one int. Entries are grouped by mask; each group is a dict ``packed_key & mask -> entries``
  (highest rank first). Groups are walked by decreasing best rank and the walk stops as soon as no
  later group can beat the best hit. An LPM table has one group per prefix length, so the first
  hit is the answer. Range fields are checked on the candidates after the masked dict hit.

Writers (one at a time, under the server's write lock) only do atomic operations the readers can
tolerate: dict item set/delete, and replacing whole lists/tuples.
"""
from __future__ import annotations

import heapq
import operator

from .entry import Entry
from .match import EXACT, LPM, OPTIONAL, RANGE, TERNARY, FieldInfo


class ExactIndex:
    def __init__(self) -> None:
        self.d: dict[tuple, Entry] = {}
        self.d1: dict[int, Entry] = {}  # the same entries by their one field's value (``lookup1``)

    def add(self, e: Entry) -> None:
        self.d[e.spec] = e
        if len(e.spec) == 1:
            self.d1[e.spec[0]] = e

    def remove(self, e: Entry) -> None:
        del self.d[e.spec]
        if len(e.spec) == 1:
            del self.d1[e.spec[0]]

    def make_lookup1(self, table):
        """``lookup`` of a one-field table taking the field's value itself (no key tuple)."""
        get = self.d1.get

        def lookup1(value, sel_hash=0):
            e = get(value)
            if e is None:
                return table.default_hit
            h = e.hit
            if h is not None:
                return h
            return e.resolve(sel_hash)

        return lookup1

    def make_lookup(self, table):
        get = self.d.get

        def lookup(key, sel_hash=0):
            e = get(key)
            if e is None:
                return table.default_hit
            h = e.hit
            if h is not None:
                return h
            return e.resolve(sel_hash)

        return lookup


class _Group:
    __slots__ = ("best", "count", "d", "heap", "mask", "ranks")

    def __init__(self, mask: int) -> None:
        self.mask = mask
        self.d: dict[int, list[Entry]] = {}
        self.count = 0
        self.ranks: dict[int, int] = {}  # rank -> number of entries, to keep ``best`` on deletes
        # the ranks, negated, in a heap (stale ones popped lazily): ``best`` after a delete in
        # O(log n), ranks being one per entry where handles break priority ties
        self.heap: list[int] = []
        self.best = -1


class TupleSpaceIndex:
    def __init__(self, fields: tuple[FieldInfo, ...]) -> None:
        self.fields = fields
        self.shifts = []
        total = sum(f.bitwidth for f in fields)
        pos = total
        for f in fields:
            pos -= f.bitwidth
            self.shifts.append(pos)
        self._groups: dict[int, _Group] = {}
        self.walk: list[tuple[int, int, dict]] = []  # (mask, best rank, dict) by rank, read by lookups

    def prepare(self, e: Entry) -> None:
        """Compute the entry's packed mask/value and range checks from its spec."""
        mask = value = 0
        ranges = []
        for i, (f, s, sh) in enumerate(zip(self.fields, e.spec, self.shifts)):
            full = (1 << f.bitwidth) - 1
            if s is None:
                continue
            if f.kind in (EXACT, OPTIONAL):
                m, v = full, s
            elif f.kind == LPM:
                m = full ^ ((1 << (f.bitwidth - s[1])) - 1)
                v = s[0]
            elif f.kind == TERNARY:
                v, m = s
            else:
                ranges.append((i, s[0], s[1]))
                continue
            mask |= m << sh
            value |= v << sh
        e.mask, e.value = mask, value
        e.ranges = tuple(ranges) if ranges else None

    def add(self, e: Entry) -> None:
        self.prepare(e)
        g = self._groups.get(e.mask)
        new_group = g is None
        if new_group:
            g = _Group(e.mask)
        lst = list(g.d.get(e.value, ()))
        lst.append(e)
        lst.sort(key=lambda x: -x.rank)  # stable: equal ranks keep insertion order
        g.d[e.value] = lst
        g.count += 1
        if e.rank not in g.ranks:
            heapq.heappush(g.heap, -e.rank)
            if len(g.heap) > 2 * len(g.ranks) + 16:  # stale ranks of deleted entries: rebuild
                g.heap = [-r for r in g.ranks] + [-e.rank]
                heapq.heapify(g.heap)
        g.ranks[e.rank] = g.ranks.get(e.rank, 0) + 1
        g.best = max(g.best, e.rank)
        if new_group:
            self._groups[e.mask] = g
        self._rebuild()

    def remove(self, e: Entry) -> None:
        g = self._groups[e.mask]
        lst = [x for x in g.d[e.value] if x is not e]
        if lst:
            g.d[e.value] = lst
        else:
            del g.d[e.value]
        g.count -= 1
        left = g.ranks[e.rank] - 1
        if left:
            g.ranks[e.rank] = left
        else:
            del g.ranks[e.rank]
            if e.rank == g.best:
                heap = g.heap
                while heap and -heap[0] not in g.ranks:
                    heapq.heappop(heap)
                g.best = -heap[0] if heap else -1
        if g.count == 0:
            del self._groups[e.mask]
        self._rebuild()

    def _rebuild(self) -> None:
        walk = []
        for g in self._groups.values():
            walk.append((g.mask, g.best, g.d))
        walk.sort(key=lambda t: -t[1])
        self.walk = walk

    def make_lookup(self, table):
        index = self
        shifts = tuple(self.shifts)
        pack = _key_packer(shifts)

        def lookup(key, sel_hash=0):
            k = pack(key)
            best = None
            bestp = -1
            for mask, top, d in index.walk:
                if top <= bestp:
                    break
                lst = d.get(k & mask)
                if lst is not None:
                    for e in lst:
                        p = e.rank
                        if p <= bestp:
                            break
                        r = e.ranges
                        if r is not None:
                            ok = True
                            for i, lo, hi in r:
                                x = key[i]
                                if x < lo or x > hi:
                                    ok = False
                                    break
                            if not ok:
                                continue
                        best = e
                        bestp = p
                        break
            if best is None:
                return table.default_hit
            h = best.hit
            if h is not None:
                return h
            return best.resolve(sel_hash)

        return lookup


    def make_lookup1(self, table):
        """``lookup`` of a one-field table taking the field's value itself (no key tuple to pack).
        An LPM field ranks each entry by its prefix length and a group holds one prefix length,
        with one entry per value: the first group (longest prefix first) that holds the masked
        value has the answer."""
        if self.fields[0].kind != LPM:
            return None  # ternary, range, optional: ``lookup((value,))``
        index = self

        def lookup1(value, sel_hash=0):
            for mask, _top, d in index.walk:
                lst = d.get(value & mask)
                if lst is not None:
                    e = lst[0]
                    h = e.hit
                    if h is not None:
                        return h
                    return e.resolve(sel_hash)
            return table.default_hit

        return lookup1


def _key_packer(shifts: tuple[int, ...]):
    """A function packing a key tuple into one int, unrolled for the field count (the generic
    loop cost as much as the rest of a two-field ternary lookup; mrc_switch.p4 has keys of up to
    six fields)."""
    if len(shifts) == 1:
        return operator.itemgetter(0)
    body = " | ".join(f"(key[{i}] << {s})" if s else f"key[{i}]" for i, s in enumerate(shifts))
    return eval(f"lambda key: {body}")  # built above from integers only


def needs_priority(fields: tuple[FieldInfo, ...]) -> bool:
    return any(f.kind in (TERNARY, RANGE, OPTIONAL) for f in fields)
