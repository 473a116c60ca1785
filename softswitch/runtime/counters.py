"""Indexed counters and direct counters (packets, bytes or both; values kept for both)."""
from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .errors import check_index

UNIT_BYTES = p4info_pb2.CounterSpec.BYTES
UNIT_PACKETS = p4info_pb2.CounterSpec.PACKETS
UNIT_BOTH = p4info_pb2.CounterSpec.BOTH

# A counter cell holds both counts in one int, ``packets * 2**64 + bytes`` (bytes as a signed
# 64-bit value, as P4Runtime's int64 carries it): the data plane counts a packet of n bytes with
# one addition, ``cell += n + ONE_PACKET``.
ONE_PACKET = 1 << 64
_M64 = ONE_PACKET - 1
_H63 = 1 << 63


def pack_cell(nbytes: int, npackets: int) -> int:
    return (npackets << 64) + nbytes


def unpack_cell(cell: int) -> tuple[int, int]:
    """(bytes, packets) of a packed counter cell."""
    b = ((cell + _H63) & _M64) - _H63
    return b, (cell - b) >> 64


def fill_counter_data(out: p4runtime_pb2.CounterData, unit: int, nbytes: int, npackets: int) -> None:
    """Report only what the counter's unit counts (P4Runtime leaves the other field 0)."""
    if unit in (UNIT_BYTES, UNIT_BOTH):
        out.byte_count = nbytes
    if unit in (UNIT_PACKETS, UNIT_BOTH):
        out.packet_count = npackets


class CounterState:
    """A ``counter(N, type)`` array. ``cells`` is the plain list of packed cells (``pack_cell``)
    the generated code adds to in place; ``bytes``/``packets`` are copies for readers."""

    def __init__(self, info: p4info_pb2.Counter) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.unit = info.spec.unit
        self.size = int(info.size)
        self.cells = [0] * self.size

    @property
    def bytes(self) -> list[int]:
        return [unpack_cell(c)[0] for c in self.cells]

    @property
    def packets(self) -> list[int]:
        return [unpack_cell(c)[1] for c in self.cells]

    def get(self, index: int) -> tuple[int, int]:
        """(bytes, packets) of one cell."""
        return unpack_cell(self.cells[index])

    def count(self, index: int, nbytes: int) -> None:
        """Data plane: count one packet of ``nbytes`` at ``index``; out of range is a no-op (v1model)."""
        if 0 <= index < self.size:
            self.cells[index] += nbytes + ONE_PACKET

    def check_index(self, index: int) -> None:
        check_index(f"counter '{self.name}'", index, self.size)

    def write(self, index: int | None, nbytes: int, npackets: int) -> None:
        """Control plane: set one cell, or every cell when ``index`` is None."""
        if index is None:
            self.cells[:] = [pack_cell(nbytes, npackets)] * self.size
            return
        self.check_index(index)
        self.cells[index] = pack_cell(nbytes, npackets)


class DirectCounterState:
    """A ``direct_counter`` attached to one table; its cells live on the table entries."""

    def __init__(self, info: p4info_pb2.DirectCounter) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.unit = info.spec.unit
        self.table_id = info.direct_table_id

    @staticmethod
    def count(entry, nbytes: int) -> None:
        """Data plane: count a hit on ``entry`` (as returned by ``TableState.lookup``); None is a miss."""
        if entry is not None:
            entry.cnt += nbytes + ONE_PACKET
