"""EV validation and expansion, exactly as ``mrc_ctl.h`` specifies them.

A compact EV (what the controller writes into an explicit array, or what a generated array holds) is
read MSB-first from byte 0 with a bit cursor.  Each EV profile field starts from ``init_val``; the
next ``popcount(mask)`` bits of the EV overwrite the mask's set bits, most significant first; the
result is appended right-aligned in the corresponding EV *format* field's width.  Bits of the EV past
the cursor must be zero.  Format fields past the profile's last field stay zero.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from .constants import EV_MAX_BYTES, FMT_MODE_MAX_WIDTH, EvFmtMode
from .errors import MrcCtlError, einval
from .types import EvField, EvFmtField

EV_BITS = 8 * EV_MAX_BYTES
FIELD_MAX_WIDTH = 32  # EV profile field values are uint32_t
FMT_FIELD_MAX_WIDTH = 255  # EV format field width is uint8_t


def validate_fmt_fields(mode: EvFmtMode, fmt_fields: Sequence[EvFmtField]) -> None:
    """Check an EV format profile's fields: EINVAL for a bad width, E2BIG past the mode's total."""
    if mode not in FMT_MODE_MAX_WIDTH:
        raise einval(f"EV format mode {mode!r} is not one of STEV, SRV6, UDP")
    if not fmt_fields:
        raise einval("an EV format profile needs at least one format field")
    for i, f in enumerate(fmt_fields):
        if not 1 <= f.width <= FMT_FIELD_MAX_WIDTH:
            raise einval(f"format field {i}: width {f.width} must be in 1..{FMT_FIELD_MAX_WIDTH}")
    total = sum(f.width for f in fmt_fields)
    limit = FMT_MODE_MAX_WIDTH[mode]
    if total > limit:
        raise MrcCtlError(errno.E2BIG, f"format fields total {total} bits; {mode.name} carries at most {limit}")


def validate_ev_fields(fmt_fields: Sequence[EvFmtField], fields: Sequence[EvField],
                       max_width: int = EV_BITS) -> None:
    """Check EV profile fields against their format (the five public rules plus value sanity).

    E2BIG: more fields than format fields, total width past the format's total, a field wider than
    its format field (the format "defines limits on the width of each field"), or more compact EV
    bits than ``ev_max_width``.  EINVAL: a bad width, ``init_val`` or ``mask`` wider than the field,
    ``max_val`` (or ``min_val``) not below ``2**popcount(mask)``, or ``min_val > max_val``.
    """
    if not fields:
        raise einval("an EV profile needs at least one field")
    if len(fields) > len(fmt_fields):
        raise MrcCtlError(errno.E2BIG, f"{len(fields)} EV fields but the format has only {len(fmt_fields)}")
    total = sum(f.width for f in fields)
    fmt_total = sum(f.width for f in fmt_fields)
    if total > fmt_total:
        raise MrcCtlError(errno.E2BIG, f"EV fields total {total} bits; the format has {fmt_total}")
    compact_bits = 0
    for i, f in enumerate(fields):
        for name in ("width", "init_val", "min_val", "max_val", "mask"):
            v = getattr(f, name)
            if not isinstance(v, int) or v < 0 or v >> 32:
                raise einval(f"field {i}: {name}={v!r} is not a uint32")
        if not 1 <= f.width <= FIELD_MAX_WIDTH:
            raise einval(f"field {i}: width {f.width} must be in 1..{FIELD_MAX_WIDTH}")
        if f.width > fmt_fields[i].width:
            raise MrcCtlError(errno.E2BIG, f"field {i}: width {f.width} exceeds format field width {fmt_fields[i].width}")
        if f.init_val >> f.width:
            raise einval(f"field {i}: init_val {f.init_val:#x} is wider than {f.width} bits")
        if f.mask >> f.width:
            raise einval(f"field {i}: mask {f.mask:#x} has bits outside the {f.width}-bit field")
        n = f.mask.bit_count()
        if f.max_val >> n:
            raise einval(f"field {i}: max_val {f.max_val:#x} is wider than the {n} mask bits")
        if f.min_val >> n:
            raise einval(f"field {i}: min_val {f.min_val:#x} is wider than the {n} mask bits")
        if f.max_val and f.min_val > f.max_val:
            raise einval(f"field {i}: min_val {f.min_val:#x} > max_val {f.max_val:#x}")
        compact_bits += n
    if compact_bits > max_width:
        raise MrcCtlError(errno.E2BIG, f"fields take {compact_bits} EV bits; the device supports {max_width}")


def scatter_bits(init_val: int, mask: int, bits: int) -> int:
    """Write ``popcount(mask)`` bits into the mask's set bits of ``init_val``, MSB to MSB."""
    out = init_val & ~mask
    low = mask & -mask
    if (mask + low) & mask == 0:  # one run of set bits (or none): a shift, not a bit loop
        return out | (bits * low & mask)
    pos = 0
    m = mask
    while m:
        low = m & -m
        if bits >> pos & 1:
            out |= low
        pos += 1
        m ^= low
    return out


def gather_bits(value: int, mask: int) -> int:
    """Inverse of :func:`scatter_bits`: the bits of ``value`` under the mask, packed."""
    out = 0
    pos = 0
    m = mask
    while m:
        low = m & -m
        if value & low:
            out |= 1 << pos
        pos += 1
        m ^= low
    return out


@dataclass(frozen=True)
class Expander:
    """A validated (format, fields) pair, precomputed so expanding one EV is a short loop."""

    fmt_widths: tuple[int, ...]
    fields: tuple[EvField, ...]

    @classmethod
    def build(cls, mode: EvFmtMode, fmt_fields: Sequence[EvFmtField], fields: Sequence[EvField],
              max_width: int = EV_BITS) -> Expander:
        """Validate both profiles and return the expander (raises MrcCtlError on a bad config)."""
        validate_fmt_fields(mode, fmt_fields)
        validate_ev_fields(fmt_fields, fields, max_width)
        return cls(tuple(f.width for f in fmt_fields), tuple(fields))

    @cached_property
    def compact_bits(self) -> int:
        """How many bits of the compact EV the fields consume."""
        return sum(f.mask.bit_count() for f in self.fields)

    @cached_property
    def _plan(self) -> tuple[tuple[int, int, int, int], ...]:
        """Per field: (init_val, mask, where its bits start in the 256-bit compact EV, their mask)."""
        out, cursor = [], 0
        for f in self.fields:
            n = f.mask.bit_count()
            out.append((f.init_val, f.mask, EV_BITS - cursor - n, (1 << n) - 1))
            cursor += n
        return tuple(out)

    @property
    def expanded_bits(self) -> int:
        """Width of the expanded EV (the sum of the format field widths)."""
        return sum(self.fmt_widths)

    def field_values(self, ev_val: bytes) -> list[int]:
        """Expanded value of every EV profile field, checking that no bit past the cursor is set."""
        b = bytes(ev_val)
        raw = int.from_bytes(b if len(b) == EV_MAX_BYTES else b.ljust(EV_MAX_BYTES, b"\0")[:EV_MAX_BYTES], "big")
        values = [scatter_bits(init, mask, (raw >> shift) & ones) for init, mask, shift, ones in self._plan]
        cursor = self.compact_bits
        rest = raw & ((1 << (EV_BITS - cursor)) - 1)
        if rest:
            shown = bytes(ev_val).rstrip(b"\0").hex()
            raise einval(f"EV {shown} has bits set past bit {cursor}, "
                         f"the {cursor} bits its profile's masks consume")
        return values

    def compact_values(self, ev_val: bytes) -> list[int]:
        """The compact per-field bits of an EV (what a generator drew), same checks as expansion."""
        return [gather_bits(v, f.mask) for v, f in zip(self.field_values(ev_val), self.fields)]

    def expand(self, ev_val: bytes) -> bytes:
        """The expanded EV: 32 bytes, format fields concatenated MSB-first from byte 0."""
        values = self.field_values(ev_val)
        out = 0
        for i, width in enumerate(self.fmt_widths):
            out = (out << width) | (values[i] if i < len(values) else 0)
        return (out << (EV_BITS - self.expanded_bits)).to_bytes(EV_MAX_BYTES, "big")

    def compact(self, draws: Sequence[int]) -> bytes:
        """Pack one drawn value per field (``popcount(mask)`` bits each) into a compact EV."""
        if len(draws) != len(self.fields):
            raise einval(f"{len(draws)} values for {len(self.fields)} fields")
        out = 0
        cursor = 0
        for i, (v, f) in enumerate(zip(draws, self.fields)):
            n = f.mask.bit_count()
            if v < 0 or v >> n:
                raise einval(f"field {i}: value {v:#x} does not fit its {n} mask bits")
            out = (out << n) | v
            cursor += n
        return (out << (EV_BITS - cursor)).to_bytes(EV_MAX_BYTES, "big")


def expand_ev(mode: EvFmtMode, fmt_fields: Sequence[EvFmtField], fields: Sequence[EvField],
              ev_val: bytes) -> bytes:
    """One-shot expansion (validates the profiles first); see :class:`Expander` for repeated use."""
    return Expander.build(mode, fmt_fields, fields).expand(ev_val)


@dataclass(frozen=True)
class WireEv:
    """Where an expanded EV goes in a packet (docs/protocol.md, "Packet stacks")."""

    mode: EvFmtMode
    udp_sport: int | None = None  # STEV high 16 bits / UDP mode
    flow_label_low16: int | None = None  # STEV low 16 bits
    srv6_dst: bytes | None = None  # SRv6: outer IPv6 destination (uSID carrier)
    srh_segment: bytes | None = None  # SRv6: the single SRH segment, when the format is wider than 128


def wire_ev(mode: EvFmtMode, expanded: bytes, expanded_bits: int) -> WireEv:
    """Map an expanded EV (MSB-first from byte 0) to the header fields that carry it."""
    if mode == EvFmtMode.STEV:
        v = int.from_bytes(expanded[:4], "big")
        return WireEv(mode, udp_sport=v >> 16, flow_label_low16=v & 0xFFFF)
    if mode == EvFmtMode.UDP:
        return WireEv(mode, udp_sport=int.from_bytes(expanded[:2], "big"))
    if mode == EvFmtMode.SRV6:
        seg = bytes(expanded[16:32]) if expanded_bits > 128 else None
        return WireEv(mode, srv6_dst=bytes(expanded[:16]), srh_segment=seg)
    raise einval(f"unknown EV format mode {mode!r}")
