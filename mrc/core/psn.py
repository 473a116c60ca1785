"""Packet sequence numbers: 24 bits on the wire, unwrapped 64-bit sequence numbers inside the core.

The wire carries ``seq & 0xFFFFFF``; a received PSN is unwrapped against the nearest reference, so
24-bit wrap-around costs nothing.
"""

from __future__ import annotations

from mrc.wire import formats as F

INFINITE_EXP_RETRIES = 25  # mrc.h: exp_retry_cnt 25 retries for ever
INFINITE_RNR_RETRY = 7  # verbs: rnr_retry 7 retries for ever
_HALF = 1 << 23


def unwrap(psn: int, ref: int) -> int:
    """The unwrapped sequence number nearest to ``ref`` whose low 24 bits are ``psn``."""
    d = (psn - ref) & F.PSN_MASK
    if d >= _HALF:
        d -= F.PSN_MOD
    return ref + d
