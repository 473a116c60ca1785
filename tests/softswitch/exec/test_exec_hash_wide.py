"""``hash()`` past 64 bits, as bmv2 computes it (simple_switch's modify_field_with_hash_based_offset:
``uint64_t v = hash % max + base``, both read with ``Data::get<uint64_t>``, which saturates a value
past 2^64 - 1): a base or max that wide reads as 2^64 - 1 and the sum wraps at 2^64.  softswitch
used unbounded integers until 2026-12-05 (found by a differential check against a reference
written from bmv2's sources); only results wider than 64 bits, or a base or max past 2^64 - 1,
show the difference."""
from __future__ import annotations

import binascii

import pytest
from exec_rig import DATA, Rig
from test_exec_hash_enum_inputs import crc16 as crc16_arc

M64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_hash_wide.p4")


@pytest.mark.parametrize("path", ["api", "loop"])
@pytest.mark.parametrize("x, y, base", [(0x12, M64, (1 << 68) + 5), (0xA5, 7, 3), (0, M64 - 1, (1 << 72) - 1)])
def test_hash_in_64_bits(rig, path, x, y, base):
    data = bytes([x]) + y.to_bytes(8, "big") + base.to_bytes(9, "big")
    out = rig.output(data) if path == "api" else rig.loop_output(data)
    o = out[len(data):]
    wrap = int.from_bytes(o[0:16], "big")
    big_base = int.from_bytes(o[16:20], "big")
    big_max = int.from_bytes(o[20:28], "big")
    big_base_rt = int.from_bytes(o[28:44], "big")
    crc32 = binascii.crc32(bytes([x]))
    crc16 = crc16_arc(bytes([x]))
    assert wrap == (crc32 % 0xFFFFFFFF + M64) & M64  # crc32 - 1 (or 2^64 - 1 for a crc of 0)
    assert big_base == (crc16 + M64) & M64 & 0xFFFFFFFF  # the base (2^68 + 5) reads as 2^64 - 1
    assert big_max == y % M64  # max 2^64 reads as 2^64 - 1: y = 2^64 - 1 gives 0
    assert big_base_rt == (crc16 + min(base, M64)) & M64
