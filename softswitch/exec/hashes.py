"""v1model hash algorithms computed exactly as bmv2 does, over bmv2's packed field-list bytes.

bmv2 packs a field list MSB-first with no per-field alignment and pads the *end* with zero bits
up to a whole byte; fields of invalid headers are skipped.  See ``pack_fields``.
"""
from __future__ import annotations

import random as _random
import zlib
from collections.abc import Callable, Sequence


def _reflect(value: int, nbits: int) -> int:
    out = 0
    for i in range(nbits):
        if value >> i & 1:
            out |= 1 << (nbits - 1 - i)
    return out


def _crc_table(poly: int, width: int) -> list[int]:
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    table = []
    for dividend in range(256):
        rem = dividend << (width - 8)
        for _ in range(8):
            rem = ((rem << 1) ^ poly) if rem & top else (rem << 1)
        table.append(rem & mask)
    return table


_REFLECT8 = [_reflect(b, 8) for b in range(256)]


def make_crc(poly: int, width: int, init: int, xor_out: int, refin: bool, refout: bool
             ) -> Callable[[bytes], int]:
    """Build a table-driven CRC like bmv2's ``crc_custom`` (non-reflected table, reflect per byte)."""
    table = _crc_table(poly, width)
    mask = (1 << width) - 1
    shift = width - 8
    r8 = _REFLECT8

    def crc(data: bytes) -> int:
        rem = init
        for b in data:
            idx = ((r8[b] if refin else b) ^ (rem >> shift)) & 0xFF
            rem = (table[idx] ^ (rem << 8)) & mask
        return (_reflect(rem, width) if refout else rem) ^ xor_out

    return crc


crc16 = make_crc(0x8005, 16, 0x0000, 0x0000, True, True)
"""CRC-16/ARC, bmv2's ``crc16`` (and ``crc16_custom`` with its default parameters)."""


def crc32(data: bytes) -> int:
    """bmv2's ``crc32`` (and ``crc32_custom`` default): the standard reflected CRC-32."""
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(data: bytes) -> int:
    """Internet checksum (ones' complement of the ones'-complement sum of 16-bit words)."""
    if len(data) & 1:
        data = data + b"\x00"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def csum16_fast(data: bytes) -> int:
    """Same as ``csum16``, using one big-integer sum trick for long inputs."""
    if len(data) & 1:
        data = data + b"\x00"
    n = int.from_bytes(data, "big")
    # fold: sum of 16-bit words == n mod 0xFFFF (ones' complement), careful with 0 vs 0xFFFF
    if n == 0:
        return 0xFFFF
    s = n % 0xFFFF
    if s == 0:
        s = 0xFFFF
    return ~s & 0xFFFF


def xor16(data: bytes) -> int:
    """XOR of big-endian 16-bit words, the last odd byte padded with zero at the end."""
    if len(data) & 1:
        data = data + b"\x00"
    out = 0
    for i in range(0, len(data), 2):
        out ^= (data[i] << 8) | data[i + 1]
    return out


def identity(data: bytes) -> int:
    """bmv2 ``identity``: the first (at most) 8 bytes as a big-endian integer."""
    return int.from_bytes(data[:8], "big")


def random_hash(data: bytes) -> int:
    """``HashAlgorithm.random``: a random 32-bit value (no bmv2 equivalent is registered)."""
    return _random.getrandbits(32)


ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc16": crc16,
    "crc16_custom": crc16,
    "crc32": crc32,
    "crc32_custom": crc32,
    "csum16": csum16_fast,
    "xor16": xor16,
    "identity": identity,
    "random": random_hash,
}


def pack_fields(values: Sequence[int], widths: Sequence[int]) -> bytes:
    """Pack (value, width) pairs MSB-first, zero-padding the end to a whole byte, like bmv2."""
    acc = 0
    nbits = 0
    for v, w in zip(values, widths):
        acc = (acc << w) | (v & ((1 << w) - 1))
        nbits += w
    nbytes = (nbits + 7) >> 3
    return (acc << (nbytes * 8 - nbits)).to_bytes(nbytes, "big")


_M64 = (1 << 64) - 1


def hash_offset(h: int, base: int, max_: int) -> int:
    """v1model ``hash()`` result with a run-time ``max``, before truncation to the output width:
    base + h % max, a max past 2^64 - 1 read as 2^64 - 1, as bmv2 reads it (the generated code
    clamps a wide base and cuts the sum to at most 64 bits: ``StmtGen.builtin_call``).

    bmv2 divides by ``max`` unconditionally; for max == 0 (undefined there) we return ``base``.
    """
    if max_ == 0:
        return base
    return base + h % min(max_, _M64)
