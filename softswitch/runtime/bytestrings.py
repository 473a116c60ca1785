"""P4Runtime binary strings (spec section "Bytestrings"): big-endian values.

Writes may use the canonical (shortest), the padded (ceil(bitwidth/8) bytes) or any longer
zero-extended form; an empty string or a value that does not fit the bitwidth is OUT_OF_RANGE (the
spec's Bytestrings section). Reads always answer in canonical form.  Values of a signed type
(``int<W>`` in a register or digest, whose P4Info type spec says so) are two's complement:
longer forms are sign-extended, and the canonical form is the shortest whose top bit is the
sign (-1 is ``ff``, +255 is ``00 ff``).
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


def decode_signed(data: bytes, bitwidth: int, what: str) -> int:
    """Parse a bytestring of an ``int<bitwidth>`` (two's complement, sign-extended); the value is
    returned as the unsigned ``bitwidth``-bit pattern the data plane holds; raise OUT_OF_RANGE."""
    if not data:
        raise out_of_range(f"{what}: empty bytestring")
    value = int.from_bytes(data, "big", signed=True)
    if not -(1 << (bitwidth - 1)) <= value < (1 << (bitwidth - 1)):
        raise out_of_range(f"{what}: value {value} does not fit in int<{bitwidth}>")
    return value & ((1 << bitwidth) - 1)


def encode_signed(value: int, bitwidth: int) -> bytes:
    """Canonical bytestring of the ``int<bitwidth>`` whose bit pattern is ``value``."""
    if value >> (bitwidth - 1) & 1:
        value -= 1 << bitwidth
    bits = (~value if value < 0 else value).bit_length() + 1  # with the sign bit
    return value.to_bytes((bits + 7) // 8, "big", signed=True)
