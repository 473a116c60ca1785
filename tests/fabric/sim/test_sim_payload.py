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


def test_blocks_are_made_without_a_new_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block is made from its saved generator state: no new ``random.Random`` (each one seeds itself
    from the OS first) per block made, and the bytes are payload()'s all the same."""
    import mrc_fabric.sim.payload as pl

    made: list[int] = []

    class Counted(random.Random):
        def __init__(self, *a: object) -> None:
            made.append(1)
            super().__init__(*a)

    size = 8 * BLOCK + 5
    want = payload(4, 5, 6, size)
    monkeypatch.setattr(pl.random, "Random", Counted)
    lazy = LazyPayload(4, 5, 6, size)
    for k in (0, 7, 3, 8, 1, 6, 2, 5, 4, 0):  # more blocks than the cache keeps: each read makes one
        assert lazy[k * BLOCK:k * BLOCK + 100] == want[k * BLOCK:k * BLOCK + 100]
    assert made == []


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


def test_data_frames_in_flight_are_headers_and_a_payload_slice() -> None:
    """The simulator keeps a data frame in flight as its headers, a slice of the posted payload and the
    ICRC; made again at delivery it is the frame the requester sent (a CE mark lands in the header)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    import fabric_sim as B

    from mrc.wire.codec import decode_frame, mark_ce
    from mrc_fabric.sim.engine import SimRun, _Frame

    sim = SimRun(B.scenario(1, 4, 2, 4, 64 << 10), "mrc")
    seen = []

    def look() -> None:
        seen.extend(e[5][0] for e in sim.heap if e[2] == 0 and type(e[5][0]) is _Frame)

    sim.at(8_000, look)
    raw = sim.run()
    assert raw["completed"] and len(seen) > 20
    for f in seen:
        data = bytes(f)
        assert len(data) == len(f) and len(f.head) < 200
        fr = decode_frame(data)
        assert bytes(fr.payload) == f.src.peek(f.a, f.b)
        assert bytes(_Frame(mark_ce(f.head), f.src, f.a, f.b, f.tail)) == mark_ce(data)
