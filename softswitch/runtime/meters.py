"""Two-rate three-colour meters (RFC 2698, colour-blind) as bmv2 runs them, per index or per entry.

Colours: 0 GREEN, 1 YELLOW, 2 RED. A meter with no configuration marks every packet GREEN.
Rates from P4Runtime are units per second (bytes or packets), bursts are units; both buckets
start full, like bmv2 after ``set_rates``.
"""
from __future__ import annotations

from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .errors import invalid, out_of_range

GREEN, YELLOW, RED = 0, 1, 2
UNIT_BYTES = p4info_pb2.MeterSpec.BYTES
UNIT_PACKETS = p4info_pb2.MeterSpec.PACKETS


@dataclass(slots=True)
class TrTcm:
    """One configured meter cell with its two token buckets."""

    cir: int
    cburst: int
    pir: int
    pburst: int
    tc: float = 0.0
    tp: float = 0.0
    last_us: int | None = None

    def __post_init__(self) -> None:
        self.tc = float(self.cburst)
        self.tp = float(self.pburst)

    def execute(self, amount: int, now_us: int) -> int:
        last = self.last_us
        if last is not None and now_us > last:
            dt = now_us - last
            self.tc = min(float(self.cburst), self.tc + dt * self.cir / 1e6)
            self.tp = min(float(self.pburst), self.tp + dt * self.pir / 1e6)
        if last is None or now_us > last:
            self.last_us = now_us
        if self.tp < amount:
            return RED
        if self.tc < amount:
            self.tp -= amount
            return YELLOW
        self.tp -= amount
        self.tc -= amount
        return GREEN

    def to_proto(self, out: p4runtime_pb2.MeterConfig) -> None:
        out.cir, out.cburst, out.pir, out.pburst = self.cir, self.cburst, self.pir, self.pburst


def parse_config(cfg: p4runtime_pb2.MeterConfig, what: str) -> TrTcm:
    """Validate a trTCM ``MeterConfig`` (PIR >= CIR, non-negative) -> a fresh meter cell."""
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
        raise invalid(f"{what}: meter rates and bursts must be >= 0")
    if cfg.pir < cfg.cir:
        raise invalid(f"{what}: PIR {cfg.pir} is lower than CIR {cfg.cir}")
    return TrTcm(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)


class MeterState:
    """A ``meter(N, type)`` array; ``None`` cells are unconfigured (always GREEN)."""

    def __init__(self, info: p4info_pb2.Meter) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.unit = info.spec.unit
        self.size = int(info.size)
        self.cells: list[TrTcm | None] = [None] * self.size

    def execute(self, index: int, nbytes: int, now_us: int) -> int:
        """Data plane: colour of one packet at ``index`` (GREEN when unconfigured or out of range)."""
        if 0 <= index < self.size:
            cell = self.cells[index]
            if cell is not None:
                return cell.execute(nbytes if self.unit == UNIT_BYTES else 1, now_us)
        return GREEN

    def check_index(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise out_of_range(f"meter '{self.name}': index {index} not in [0, {self.size})")

    def write(self, index: int | None, cfg: p4runtime_pb2.MeterConfig | None) -> None:
        """Control plane: configure one cell (all when ``index`` is None); None resets to default."""
        indices = range(self.size) if index is None else [index]
        if index is not None:
            self.check_index(index)
        for i in indices:
            self.cells[i] = None if cfg is None else parse_config(cfg, f"meter '{self.name}'")


class DirectMeterState:
    """A ``direct_meter`` attached to one table; its cells live on the table entries."""

    def __init__(self, info: p4info_pb2.DirectMeter) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.unit = info.spec.unit
        self.table_id = info.direct_table_id

    def execute(self, entry, nbytes: int, now_us: int) -> int:
        """Data plane: colour for a hit on ``entry``; a miss (None) or no config is GREEN."""
        if entry is None:
            return GREEN
        cell = entry.meter
        if cell is None:
            return GREEN
        return cell.execute(nbytes if self.unit == UNIT_BYTES else 1, now_us)
