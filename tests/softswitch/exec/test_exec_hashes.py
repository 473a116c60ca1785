"""bmv2's hash algorithms and field-list packing, checked against published check values."""
from __future__ import annotations

import os
import zlib

from softswitch.exec import hashes


def test_crc16_is_crc16_arc():
    assert hashes.crc16(b"123456789") == 0xBB3D
    assert hashes.ALGORITHMS["crc16_custom"](b"123456789") == 0xBB3D


def test_crc32_is_standard_crc32():
    assert hashes.crc32(b"123456789") == 0xCBF43926
    data = os.urandom(100)
    assert hashes.ALGORITHMS["crc32_custom"](data) == zlib.crc32(data)


def test_csum16_internet_checksum():
    ipv4 = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert hashes.csum16(ipv4) == 0xB861
    assert hashes.ALGORITHMS["csum16"](ipv4) == 0xB861
    # odd length: the last byte is padded with a zero byte at the end
    assert hashes.csum16(b"\x01") == (~0x0100) & 0xFFFF
    for n in range(64):
        d = os.urandom(n)
        assert hashes.csum16_fast(d) == hashes.csum16(d)


def test_xor16_and_identity():
    assert hashes.xor16(b"\x12\x34\x56\x78") == 0x1234 ^ 0x5678
    assert hashes.xor16(b"\x12\x34\x56") == 0x1234 ^ 0x5600
    assert hashes.identity(b"\x01\x02") == 0x0102
    # bmv2's identity keeps only the first 8 bytes
    assert hashes.identity(bytes(range(1, 11))) == 0x0102030405060708


def test_pack_fields_msb_first_padded_at_the_end():
    assert hashes.pack_fields([1, 3], [1, 2]) == b"\xe0"
    assert hashes.pack_fields([0x1FF, 1], [9, 7]) == b"\xff\x81"
    assert hashes.pack_fields([0xABC], [12]) == b"\xab\xc0"


def test_hash_offset():
    assert hashes.hash_offset(1000, 5, 16) == 5 + 1000 % 16
    assert hashes.hash_offset(1000, 5, 0) == 5
