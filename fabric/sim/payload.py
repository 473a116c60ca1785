"""Message bytes made on demand: ``payload(seed, flow, msg, size)``'s bytes without holding them.

A posted message's bytes were one ``bytes`` object of ``size`` for as long as the message was in
flight: 1 MiB per host in the scale case, 1 GiB at 1,024 hosts.  :class:`LazyPayload` gives the same
bytes, a slice at a time, to the requester (``mrc.core.memory.PayloadSource``) and to the receiver's
check (``region.CheckedRegion``), from the same ``random.Random`` stream: ``randbytes(n)`` is
``getrandbits(8n).to_bytes(n, "little")``, i.e. the generator's 32-bit outputs in order, little-endian,
the last partial word the top bits of one more output.  The stream is cut into blocks of ``BLOCK``
bytes; the generator's state at the start of each block reached so far is kept (2.5 KB each) and the
last few blocks made are cached, so a slice costs at most one block's generation, and in-order use
(the sender's first pass) one generation per block.
"""
from __future__ import annotations

import random
from array import array

from mrc.core.memory import PayloadSource

# the netns agent's formula, so both engines verify the same data
from ..scenarios.agent import payload, payload_key

__all__ = ["BLOCK", "LazyPayload", "payload", "payload_key"]

BLOCK = 32 * 1024  # a multiple of 4: blocks start on a generator word
CACHED = 4  # blocks kept made (the sender's and the receiver's current ones, and one behind each)
# the generator blocks are made with: its state is set from the block's saved start before each use, so
# one serves every payload (a new ``random.Random()`` at each block made seeded itself from the OS's
# random source first, 2% of the simulator's CPU in the scale-failure case)
_RNG = random.Random(0)


class LazyPayload(PayloadSource):
    """``payload(seed, flow, msg, size)`` as a :class:`~mrc.core.memory.PayloadSource`."""

    __slots__ = ("_cache", "_states", "key", "served", "size")

    def __init__(self, seed: int, flow: int, msg: int, size: int, served: list | None = None) -> None:
        """``served``: a list each slice read by ``[a:b]`` is appended to, as ``(self, a, b, bytes)`` (the
        simulator matches the frames the requester makes with them); ``peek`` reads without it."""
        self.key, self.size, self.served = payload_key(seed, flow, msg), size, served
        self._states: list[bytes] = []  # the generator's state at the start of block i (array('I') bytes)
        self._cache: dict[int, bytes] = {}  # block -> its bytes, oldest first

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, s: slice) -> bytes:
        if not isinstance(s, slice):
            raise TypeError("a LazyPayload is read by slices")
        a, b, step = s.indices(self.size)
        if step != 1:
            raise ValueError("a LazyPayload is read by contiguous slices")
        out = self.peek(a, b)
        if self.served is not None:
            self.served.append((self, a, b, out))
        return out

    def peek(self, a: int, b: int) -> bytes:
        """Bytes [a, b) (clipped to the message)."""
        a, b = max(0, a), min(b, self.size)
        if a >= b:
            return b""
        first, last = a // BLOCK, (b - 1) // BLOCK
        if first == last:
            lo = first * BLOCK
            return self._block(first)[a - lo:b - lo]
        out = b"".join(self._block(k) for k in range(first, last + 1))
        return out[a - first * BLOCK:b - first * BLOCK]

    def __bytes__(self) -> bytes:
        return self.peek(0, self.size)

    def _block(self, k: int) -> bytes:
        blk = self._cache.get(k)
        if blk is not None:
            return blk
        states = self._states
        rng = _RNG
        if not states:
            rng.seed(self.key)
            states.append(_state(rng))
        j = min(k, len(states) - 1)
        rng.setstate((3, tuple(array("I", states[j])), None))
        while True:
            blk = self._make(rng, j)
            if j + 1 == len(states) and (j + 1) * BLOCK < self.size:
                states.append(_state(rng))
            if j == k:
                break
            j += 1
        cache = self._cache
        if len(cache) >= CACHED:
            del cache[next(iter(cache))]
        cache[k] = blk
        return blk

    def _make(self, rng: random.Random, j: int) -> bytes:
        """Block ``j``'s bytes from ``rng`` at its start (``rng`` is left at the next block's start)."""
        n = min(BLOCK, self.size - j * BLOCK)
        words, rem = divmod(n, 4)
        out = rng.getrandbits(32 * words).to_bytes(4 * words, "little") if words else b""
        if rem:  # the message's last, partial word: the top bits of one output, as getrandbits takes them
            out += rng.getrandbits(8 * rem).to_bytes(rem, "little")
        return out


def _state(rng: random.Random) -> bytes:
    version, internal, _gauss = rng.getstate()
    assert version == 3
    return array("I", internal).tobytes()
