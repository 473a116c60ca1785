"""controller.usid: the uSID carrier arithmetic, sized by define.p4's USID_BLOCK_BITS / USID_BITS."""
from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest

from controller import usid as U

DEFINE_P4 = Path(__file__).resolve().parents[2] / "p4src" / "include" / "define.p4"


def _define(name: str) -> int:
    m = re.search(rf"^#define\s+{name}\s+(\d+)\b", DEFINE_P4.read_text(), re.MULTILINE)
    assert m, f"{name} not in define.p4"
    return int(m.group(1))


def test_widths_are_define_p4s():
    assert (U.BLOCK_BITS, U.USID_BITS) == (_define("USID_BLOCK_BITS"), _define("USID_BITS"))
    assert U.TOP_BITS == U.BLOCK_BITS + U.USID_BITS
    assert U.USIDS_PER_CARRIER == (128 - U.BLOCK_BITS) // U.USID_BITS


def test_compose_and_take_apart():
    c = U.compose(0xFC000000, 0x1101, 0x2202, 0x8031)
    assert ipaddress.IPv6Address(c) == ipaddress.IPv6Address("fc00:0:1101:2202:8031::")
    assert U.block_of(c) == 0xFC000000
    assert U.top(c) == U.top_of(0xFC000000, 0x1101) == 0xFC000000_1101
    assert U.next_usid(c) == 0x2202


def test_shift_is_un():
    """uN: the block stays, the next uSID becomes the active one, zeros fill in from the right."""
    c = U.compose(0xFC000000, 0x1101, 0x2202, 0x8031)
    s = U.shift(c)
    assert s == U.compose(0xFC000000, 0x2202, 0x8031)
    assert U.shift(U.shift(s)) == U.compose(0xFC000000)
    full = U.compose(0xFC000000, *range(1, U.USIDS_PER_CARRIER + 1))
    assert U.shift(full) == U.compose(0xFC000000, *range(2, U.USIDS_PER_CARRIER + 1))


def test_argument_is_everything_after_the_active_usid():
    """RFC 9800 4.1.1: the carrier ends where the whole Argument is zero, not only the next uSID."""
    c = U.compose(0xFC000000, 0x1101, 0x2202)
    assert U.argument(c) == 0x2202 << 64
    assert U.argument(U.compose(0xFC000000, 0x1101)) == 0
    gap = U.compose(0xFC000000, 0x1101) | 0x2202 << 48  # block|1101|0000|2202|0..
    assert U.next_usid(gap) == 0 and U.argument(gap) != 0
    assert U.shift(gap) == U.compose(0xFC000000) | 0x2202 << 64


@pytest.mark.parametrize("usids", [(0,), (U.USID_MAX + 1,), tuple(range(1, U.USIDS_PER_CARRIER + 2))])
def test_compose_rejects(usids):
    with pytest.raises(ValueError):
        U.compose(0xFC000000, *usids)


def test_compose_rejects_a_wide_block():
    with pytest.raises(ValueError, match="locator block"):
        U.compose(1 << U.BLOCK_BITS, 1)
