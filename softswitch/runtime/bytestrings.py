"""P4Runtime binary strings (spec section "Bytestrings"): big-endian unsigned values.

Writes may use the canonical (shortest) or the padded (ceil(bitwidth/8) bytes) form; any value
that does not fit the bitwidth is INVALID_ARGUMENT. Reads always answer in canonical form.
"""
from __future__ import annotations

from .errors import invalid


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """Parse a P4Runtime bytestring for a field of ``bitwidth`` bits; raise INVALID_ARGUMENT."""
    if not data:
        raise invalid(f"{what}: empty bytestring")
    if len(data) > (bitwidth + 7) // 8:
        # leading zero bytes beyond the padded width are still tolerated if the value fits
        stripped = data.lstrip(b"\x00")
        if len(stripped) > (bitwidth + 7) // 8:
            raise invalid(f"{what}: {len(data)} bytes do not fit in {bitwidth} bits")
    value = int.from_bytes(data, "big")
    if value >> bitwidth:
        raise invalid(f"{what}: value 0x{value:x} does not fit in {bitwidth} bits")
    return value


def encode(value: int) -> bytes:
    """Canonical P4Runtime bytestring of a non-negative int (shortest form, at least one byte)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_padded(value: int, bitwidth: int) -> bytes:
    """Bytestring padded to ceil(bitwidth/8) bytes (used for controller header bytes)."""
    return value.to_bytes((bitwidth + 7) // 8, "big")
