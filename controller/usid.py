"""The uSID carrier layout of ``mrc_switch.p4`` (RFC 9800 NEXT-C-SID, the F3216 format): an IPv6
destination that starts with a ``USID_BLOCK_BITS`` locator block followed by ``USID_BITS`` uSIDs,
zero-filled.  A switch matches the block and the active uSID (the top ``TOP_BITS``); while the
Argument (every bit after the active uSID) is not zero, it shifts everything after the block left by
one uSID.

The two widths are ``define.p4``'s (read into :mod:`controller.p4contract` by ``make contract``), so
the program and every piece of Python that builds, matches or shifts a carrier -- the SID plan, the
EV plan's path walk, the simulator's model of the switch, the PTF packet helpers -- agree by
construction.  The host endpoint (``mrc/``) never takes a carrier apart: it sends what the plan gives.
"""
from __future__ import annotations

from controller import p4contract as P4

ADDR_BITS = 128
BLOCK_BITS = P4.USID_BLOCK_BITS
USID_BITS = P4.USID_BITS
TOP_BITS = BLOCK_BITS + USID_BITS  # block + active uSID: the prefix length of usid_un and the uSID routes
USIDS_PER_CARRIER = (ADDR_BITS - BLOCK_BITS) // USID_BITS
USID_MAX = (1 << USID_BITS) - 1
_REST = ADDR_BITS - BLOCK_BITS  # the bits after the block
_REST_MASK = (1 << _REST) - 1


def compose(block: int, *usids: int) -> int:
    """The carrier ``block | usid1 | usid2 | ...`` zero-filled to 128 bits, as an integer."""
    if len(usids) > USIDS_PER_CARRIER:
        raise ValueError(f"at most {USIDS_PER_CARRIER} uSIDs fit a carrier, got {len(usids)}")
    if not 0 <= block < 1 << BLOCK_BITS:
        raise ValueError(f"locator block {block:#x} wider than {BLOCK_BITS} bits")
    v = block << _REST
    for i, u in enumerate(usids):
        if not 0 < u <= USID_MAX:
            raise ValueError(f"uSID {u!r} out of range 1..{USID_MAX:#x}")
        v |= u << (_REST - USID_BITS * (i + 1))
    return v


def block_of(addr: int) -> int:
    """The locator block of a carrier."""
    return addr >> _REST


def top(addr: int) -> int:
    """Block and active uSID (what a switch matches): the top ``TOP_BITS`` bits."""
    return addr >> (ADDR_BITS - TOP_BITS)


def top_of(block: int, usid: int) -> int:
    """``top()`` of a carrier whose active uSID is ``usid``."""
    return block << USID_BITS | usid


def next_usid(addr: int) -> int:
    """The uSID after the active one (0: the carrier ends at the active uSID)."""
    return (addr >> (ADDR_BITS - TOP_BITS - USID_BITS)) & USID_MAX


def argument(addr: int) -> int:
    """RFC 9800's Argument of a carrier: every bit after the active uSID.  The carrier ends at the
    active uSID when it is zero (RFC 9800 4.1.1), whatever ``next_usid`` alone says: a carrier
    ``block|ours|0|x`` is still shifted."""
    return addr & ((1 << (ADDR_BITS - TOP_BITS)) - 1)


def shift(addr: int) -> int:
    """uN's shift: the block stays, everything after it moves left by one uSID, zeros come in."""
    return (addr >> _REST << _REST) | ((addr << USID_BITS) & _REST_MASK)
