"""The simulator's checked receive region judges every message as a plain buffer holding the writes would."""
from __future__ import annotations

import random

from mrc_fabric.sim.engine import payload
from mrc_fabric.sim.region import CheckedRegion

VA = 0x2_0000_0000


def _pair(size: int, count: int) -> tuple[CheckedRegion, bytearray]:
    return CheckedRegion(7, VA, size, count, lambda m: payload(1, 3, m, size)), bytearray(size * count)


def _check(reg: CheckedRegion, buf: bytearray) -> None:
    size = reg.size
    for m in range(reg.count):
        plain = bytes(buf[m * size:(m + 1) * size])
        assert reg.message(m) == plain
        assert reg.matches(m) == (plain == payload(1, 3, m, size))
    assert reg.read(VA + size // 2, size) == bytes(buf[size // 2:size // 2 + size])


def test_random_writes_match_a_plain_buffer() -> None:
    """Correct, duplicated, out-of-order, partial, corrupted and message-crossing writes, with the sender's
    bytes held or released: the verdict and the bytes are a bytearray's."""
    rng = random.Random(5)
    for _ in range(60):
        size, count = rng.choice([(1000, 3), (4096 * 3 + 17, 2), (64, 5)])
        reg, buf = _pair(size, count)
        held = set()
        for _ in range(rng.randrange(1, 40)):
            m = rng.randrange(count)
            if rng.random() < 0.5 and m not in held:
                reg.hold(m, payload(1, 3, m, size))
                held.add(m)
            elif m in held and rng.random() < 0.2:
                reg.release(m)
                held.discard(m)
            off = rng.randrange(size * count)
            n = rng.randrange(1, min(600, size * count - off) + 1)
            exp = b"".join(payload(1, 3, k, size) for k in range(count))[off:off + n]
            data = bytearray(exp)
            if rng.random() < 0.15:  # a wrong byte
                data[rng.randrange(n)] ^= 0x5A
            assert reg.contains(VA + off, n)
            reg.write(VA + off, memoryview(bytes(data)))
            buf[off:off + n] = data
        _check(reg, buf)


def test_whole_messages_in_mtu_packets_need_no_buffer() -> None:
    size = 10_000
    reg, _ = _pair(size, 2)
    data = payload(1, 3, 1, size)
    reg.hold(1, data)
    order = list(range(0, size, 4096))
    random.Random(1).shuffle(order)
    for off in order + order[:1]:  # out of order, one duplicate
        reg.write(VA + size + off, memoryview(data)[off:off + 4096])
    reg.release(1)
    assert reg.matches(1) and not reg.matches(0)
    assert not reg._bufs and reg._live == {}  # nothing materialised, the sender's bytes let go
    assert not reg.contains(VA + 2 * size - 10, 11)
