"""A receive buffer that checks the bytes written to it instead of keeping them.

The simulator's receivers used to hold one ``bytearray`` per flow (``count x size`` bytes: 1 MiB per
host in the scale case, 1 GiB at 1,024 hosts) only to compare it with the payload formula after the
run.  :class:`CheckedRegion` answers the same question -- does message ``m``'s part of the buffer hold
``payload(m)`` at the end? -- while keeping only which byte ranges were written with the expected
bytes.  The expected bytes of a message being sent are the sender's own payload object (``hold`` /
``release``, no copy); a write after the sender let go (a late duplicate) regenerates them.  The
first write that differs from them turns that message into a real buffer (the expected bytes where
already written, zeros elsewhere, then the write), so a wrong or stale write is judged exactly as a
plain buffer would judge it.  It has the interface the responder uses (``rkey``, ``remote_write``,
``contains``, ``write``) plus ``read`` and ``length``, as :class:`mrc.core.memory.MemoryRegion`.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from mrc.core.memory import PayloadSource


class CheckedRegion:
    """``count`` messages of ``size`` bytes at ``base_va``; ``expect(m)`` makes message ``m``'s bytes (or a
    :class:`~mrc.core.memory.PayloadSource` of them: only slices are read)."""

    __slots__ = ("_bufs", "_cache", "_ends", "_live", "_starts", "base_va", "count", "expect", "remote_write",
                 "rkey", "size")

    def __init__(self, rkey: int, base_va: int, size: int, count: int, expect: Callable[[int], bytes],
                 remote_write: bool = True) -> None:
        self.rkey, self.base_va, self.size, self.count = rkey, base_va, size, count
        self.expect, self.remote_write = expect, remote_write
        self._live: dict[int, list] = {}  # message -> [the sender's bytes, posts not yet completed]
        self._cache: tuple[int, bytes | PayloadSource] | None = None  # the last message regenerated
        self._bufs: dict[int, bytearray] = {}  # messages that received a byte differing from expect(m)
        # byte ranges [start, end) written with the expected bytes (offsets in the region), disjoint, sorted
        self._starts: list[int] = []
        self._ends: list[int] = []

    @property
    def length(self) -> int:
        return self.size * self.count

    def contains(self, va: int, length: int) -> bool:
        """True if [va, va+length) lies inside the region."""
        return self.base_va <= va and va + length <= self.base_va + self.length

    # ---- the sender's bytes -------------------------------------------------------------------
    def hold(self, m: int, data: bytes | PayloadSource) -> None:
        """Message ``m`` was posted with ``data`` (equal to ``expect(m)``): writes compare with it."""
        e = self._live.get(m)
        if e is None:
            self._live[m] = [data, 1]
        else:
            e[1] += 1

    def release(self, m: int) -> None:
        """A post of message ``m`` completed: forget its bytes when no other post of it is pending."""
        e = self._live.get(m)
        if e is not None:
            e[1] -= 1
            if e[1] <= 0:
                del self._live[m]

    def _exp(self, m: int, a: int, b: int) -> bytes:
        """Bytes [a, b) of message ``m``'s expected bytes."""
        e = self._expected(m)
        peek = getattr(e, "peek", None)
        return peek(a, b) if peek is not None else e[a:b]

    def _expected(self, m: int) -> bytes | PayloadSource:
        e = self._live.get(m)
        if e is not None:
            return e[0]
        c = self._cache
        if c is None or c[0] != m:
            c = self._cache = (m, self.expect(m))
        return c[1]

    # ---- writes -------------------------------------------------------------------------------
    def write(self, va: int, data: bytes | memoryview) -> None:
        """Place ``data`` at ``va`` (the caller has checked ``contains``)."""
        off0 = off = va - self.base_va
        end = off + len(data)
        size = self.size
        data = bytes(data)  # the frame's payload is a memoryview: comparing those goes byte by byte
        while off < end:
            m = off // size
            lo = m * size
            e = min(end, lo + size)
            chunk = data if (off == off0 and e == end) else data[off - off0:e - off0]
            buf = self._bufs.get(m)
            if buf is not None:
                buf[off - lo:e - lo] = chunk
            elif self._exp(m, off - lo, e - lo) == chunk:
                self._cover(off, e)
            else:
                buf = bytearray(size)
                for a, b in self._covered(lo, lo + size):
                    buf[a - lo:b - lo] = self._exp(m, a - lo, b - lo)
                buf[off - lo:e - lo] = chunk
                self._bufs[m] = buf
            off = e

    def _cover(self, a: int, b: int) -> None:
        starts, ends = self._starts, self._ends
        i = bisect_left(ends, a)  # the first range ending at or after a (overlapping or touching)
        j = bisect_right(starts, b)  # past the last range starting at or before b
        if i < j:
            a = min(a, starts[i])
            b = max(b, ends[j - 1])
        starts[i:j] = [a]
        ends[i:j] = [b]

    def _covered(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """The written ranges within [lo, hi), clipped."""
        out = []
        i = bisect_right(self._ends, lo)
        while i < len(self._starts) and self._starts[i] < hi:
            out.append((max(lo, self._starts[i]), min(hi, self._ends[i])))
            i += 1
        return out

    # ---- reading ------------------------------------------------------------------------------
    def message(self, m: int) -> bytes:
        """Message ``m``'s bytes as a plain buffer would hold them (zeros where nothing was written)."""
        buf = self._bufs.get(m)
        if buf is not None:
            return bytes(buf)
        lo, size = m * self.size, self.size
        out = bytearray(size)
        covered = self._covered(lo, lo + size)
        for a, b in covered:
            out[a - lo:b - lo] = self._exp(m, a - lo, b - lo)
        return bytes(out)

    def read(self, va: int, length: int) -> bytes:
        """Bytes at [va, va+length)."""
        off = va - self.base_va
        if length <= 0 or self.size <= 0:
            return b""
        first, last = off // self.size, (off + length - 1) // self.size
        whole = b"".join(self.message(m) for m in range(first, last + 1))
        return whole[off - first * self.size: off - first * self.size + length]

    def matches(self, m: int) -> bool:
        """Message ``m`` holds ``expect(m)`` (as ``message(m) == expect(m)``, without building it when
        every byte was written with the expected ones)."""
        buf = self._bufs.get(m)
        if buf is not None:
            return buf == self._exp(m, 0, self.size)
        lo, size = m * self.size, self.size
        pos = lo
        gaps = []
        for a, b in self._covered(lo, lo + size):
            if a > pos:
                gaps.append((pos, a))
            pos = b
        if pos < lo + size:
            gaps.append((pos, lo + size))
        if not gaps:
            return True
        # bytes never written read as zeros
        return all(self._exp(m, a - lo, b - lo).count(0) == b - a for a, b in gaps)
