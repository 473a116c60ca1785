"""Two-rate three-colour meters (RFC 2698, colour-blind) as bmv2 runs them, per index or per entry.

Colours: 0 GREEN, 1 YELLOW, 2 RED. A meter with no configuration marks every packet GREEN.
Rates from P4Runtime are units per second (bytes or packets), bursts are units; both buckets
start full, like bmv2 after ``set_rates``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .errors import check_index, invalid

GREEN, YELLOW, RED = 0, 1, 2
UNIT_BYTES = p4info_pb2.MeterSpec.BYTES
UNIT_PACKETS = p4info_pb2.MeterSpec.PACKETS


@dataclass(slots=True)
class TrTcm:
    """One configured meter cell with its two token buckets, counted as bmv2 counts them
    (``src/bm_sim/meters.cpp``): whole tokens, credited on a fixed grid of 1/rate from the clock's
    origin (the switch's start), not from the bucket's last use -- a bucket that was full keeps its
    place on the grid, so after it empties the next token may come sooner than 1/rate.  The peak
    bucket is checked first: short of it RED and nothing taken; else its tokens are taken and the
    committed bucket decides YELLOW (short) or GREEN (both taken)."""

    cir: int
    cburst: int
    pir: int
    pburst: int
    tc: int = 0
    tp: int = 0
    c_seen: int = 0  # tokens of the grid credited so far (bmv2's tokens_last; 0 after a config)
    p_seen: int = 0
    c_per_us: float = field(default=0.0, init=False, repr=False, compare=False)  # the rates per µs (PI's
    p_per_us: float = field(default=0.0, init=False, repr=False, compare=False)  # conversion), set below

    def __post_init__(self) -> None:
        self.tc, self.tp = self.cburst, self.pburst
        self.c_per_us, self.p_per_us = self.cir / 1e6, self.pir / 1e6  # PI's conversion to per µs

    def execute(self, amount: int, now_us: int) -> int:
        grid = int(now_us * self.p_per_us)
        if grid > self.p_seen:
            self.tp = min(self.tp + grid - self.p_seen, self.pburst)
            self.p_seen = grid
        if self.tp < amount:
            return RED
        self.tp -= amount
        grid = int(now_us * self.c_per_us)
        if grid > self.c_seen:
            self.tc = min(self.tc + grid - self.c_seen, self.cburst)
            self.c_seen = grid
        if self.tc < amount:
            return YELLOW
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
    if cfg.eburst:  # spec, MeterEntry & DirectMeterEntry: eburst must be unset for a two-rate meter
        raise invalid(f"{what}: eburst is for single-rate meters; v1model meters are two-rate (trTCM)")
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
        check_index(f"meter '{self.name}'", index, self.size)

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
