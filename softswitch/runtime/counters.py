"""Indexed counters and direct counters (packets, bytes or both; values kept for both)."""
from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .errors import out_of_range

UNIT_BYTES = p4info_pb2.CounterSpec.BYTES
UNIT_PACKETS = p4info_pb2.CounterSpec.PACKETS
UNIT_BOTH = p4info_pb2.CounterSpec.BOTH


def fill_counter_data(out: p4runtime_pb2.CounterData, unit: int, nbytes: int, npackets: int) -> None:
    """Report only what the counter's unit counts (P4Runtime leaves the other field 0)."""
    if unit in (UNIT_BYTES, UNIT_BOTH):
        out.byte_count = nbytes
    if unit in (UNIT_PACKETS, UNIT_BOTH):
        out.packet_count = npackets


class CounterState:
    """A ``counter(N, type)`` array. ``bytes``/``packets`` are plain lists the data plane may read."""

    def __init__(self, info: p4info_pb2.Counter) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.unit = info.spec.unit
        self.size = int(info.size)
        self.bytes = [0] * self.size
        self.packets = [0] * self.size

    def count(self, index: int, nbytes: int) -> None:
        """Data plane: count one packet of ``nbytes`` at ``index``; out of range is a no-op (v1model)."""
        if 0 <= index < self.size:
            self.bytes[index] += nbytes
            self.packets[index] += 1

    def check_index(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise out_of_range(f"counter '{self.name}': index {index} not in [0, {self.size})")

    def write(self, index: int | None, nbytes: int, npackets: int) -> None:
        """Control plane: set one cell, or every cell when ``index`` is None."""
        if index is None:
            self.bytes[:] = [nbytes] * self.size
            self.packets[:] = [npackets] * self.size
            return
        self.check_index(index)
        self.bytes[index] = nbytes
        self.packets[index] = npackets


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
            c = entry.counter
            c[0] += nbytes
            c[1] += 1
