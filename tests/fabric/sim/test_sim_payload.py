"""The simulator's payloads made a block at a time are payload()'s bytes, read in any order."""
from __future__ import annotations

import random

import pytest

from mrc_fabric.sim.payload import BLOCK, LazyPayload, payload


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 4096, BLOCK - 1, BLOCK, BLOCK + 3, 3 * BLOCK + 2, (1 << 20) + 7])
def test_slices_in_any_order_are_the_payloads(size: int) -> None:
    want = payload(1, 37, 2, size)
    lazy = LazyPayload(1, 37, 2, size)
    assert len(lazy) == size and bytes(lazy) == want
    rng = random.Random(size)
    fresh = LazyPayload(1, 37, 2, size)  # first read far from the start, then backwards and across blocks
    for _ in range(40):
        a = rng.randrange(size + 1)
        b = min(size, a + rng.choice([1, 7, 4096, BLOCK, 2 * BLOCK + 5]))
        assert fresh[a:b] == want[a:b]
    assert fresh[size - 1:size + 10] == want[size - 1:]


def test_holds_states_and_a_few_blocks_not_the_message() -> None:
    lazy = LazyPayload(1, 1, 0, 1 << 20)
    for off in range(0, 1 << 20, 4096):  # a sender's first pass
        lazy[off:off + 4096]
    assert len(lazy._states) == (1 << 20) // BLOCK and len(lazy._cache) <= 4
    assert sum(len(s) for s in lazy._states) < 100_000


def test_the_requester_sends_a_payload_source() -> None:
    """mrc.core posts a PayloadSource as it posts bytes: the same frames, the receiver gets the bytes."""
    from mrc.core.qp import QpAttr
    from mrc.sim import PathSpec, make_pair, transfer

    size = 200_003
    frames = []
    for data in (payload(1, 2, 3, size), LazyPayload(1, 2, 3, size)):
        p = make_pair([PathSpec(delay_ns=1000) for _ in range(4)], attr=QpAttr(mode="mrc"))
        sent = []
        send = p.net._send
        p.net._send = lambda side, port, d, send=send, sent=sent: (sent.append(bytes(d)), send(side, port, d))
        transfer(p, [(1, data, p.mr.base_va, None)])
        assert p.done and p.done[0].status.name == "SUCCESS"
        assert bytes(p.mr.buf[:size]) == payload(1, 2, 3, size)
        frames.append(sent)
    assert frames[0] == frames[1]
