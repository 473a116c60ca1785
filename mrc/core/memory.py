"""Registered memory regions: the only memory a remote peer may write, checked on every packet."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(slots=True)
class MemoryRegion:
    """A registered buffer: remote writes land at ``buf[va - base_va]`` after bounds and rkey checks."""

    rkey: int
    base_va: int
    buf: bytearray
    remote_write: bool = True

    @property
    def length(self) -> int:
        return len(self.buf)

    def contains(self, va: int, length: int) -> bool:
        """True if [va, va+length) lies inside the region."""
        return self.base_va <= va and va + length <= self.base_va + len(self.buf)

    def write(self, va: int, data: bytes | memoryview) -> None:
        """Place ``data`` at ``va`` (the caller has checked ``contains``)."""
        off = va - self.base_va
        self.buf[off : off + len(data)] = data

    def read(self, va: int, length: int) -> bytes:
        """Bytes at [va, va+length)."""
        off = va - self.base_va
        return bytes(self.buf[off : off + length])


class PayloadSource(ABC):
    """A posted WRITE's bytes made on demand instead of held: ``len()`` and contiguous slices
    ``[a:b]`` (bytes).  The requester reads a packet's bytes when it sends (or resends) it, so a
    caller that can regenerate them (the simulator's deterministic payloads) need not keep a buffer
    per message in flight."""

    __slots__ = ()

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __getitem__(self, s: slice) -> bytes: ...
