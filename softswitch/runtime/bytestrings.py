"""P4Runtime binary strings (spec section "Bytestrings"): big-endian unsigned values.

Writes may use the canonical (shortest), the padded (ceil(bitwidth/8) bytes) or any longer
zero-extended form; an empty string or a value that does not fit the bitwidth is OUT_OF_RANGE (the
spec's Bytestrings section). Reads always answer in canonical form.
"""
from __future__ import annotations

from .errors import out_of_range


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """Parse a P4Runtime bytestring for a field of ``bitwidth`` bits; raise OUT_OF_RANGE."""
    if not data:
        raise out_of_range(f"{what}: empty bytestring")
    value = int.from_bytes(data, "big")  # leading zero bytes, however many, are tolerated
    if value >> bitwidth:
        raise out_of_range(f"{what}: value 0x{value:x} does not fit in {bitwidth} bits")
    return value


def encode(value: int) -> bytes:
    """Canonical P4Runtime bytestring of a non-negative int (shortest form, at least one byte)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_padded(value: int, bitwidth: int) -> bytes:
    """Bytestring padded to ceil(bitwidth/8) bytes (used for controller header bytes)."""
    return value.to_bytes((bitwidth + 7) // 8, "big")
