"""Misruns a differential fuzzer found between the packet loop's path (``ingress_item`` /
``egress_frame``, header and metadata objects recycled between packets) and the API path (fresh
objects), 2026-12-05; each case below gave a packet a value a packet before it had left:
- a header written only through an ``inout`` argument bound in a table's ``actions`` list
  (``set_a(hdr.h.a)``) was taken for one only ``extract`` writes, and its reset skipped: a miss
  after a hit read the hit's value and went out of the wrong port;
- a store into the packet's ``h`` guarded by ``copy.h.isValid()`` of a local of the headers type
  lost its reset mark (the guard was matched by member name alone);
- a header in user metadata preserved by ``@field_list`` was shared by reference with the clone
  (the clone's egress wrote the original's) and, recycled, with later packets."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, egress_item, ingress_items


def eth(src: int, etype: int = 0xFFFF) -> bytes:
    return bytes(6) + src.to_bytes(6, "big") + etype.to_bytes(2, "big")


def _frames(rig: Rig, items, fast: bool) -> list[tuple[int, bytes]]:
    return [f for it in items for f in egress_item(rig.pipeline, it, fast)[0]]


def _ingress(rig: Rig, data: bytes, fast: bool) -> list:
    return ingress_items(rig.pipeline, data, fast)


def run(rig: Rig, packets: list[bytes], fast: bool) -> list[list[tuple[int, bytes]]]:
    return [_frames(rig, _ingress(rig, p, fast), fast) for p in packets]


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_table_bound_inout_argument(fast):
    rig = Rig(DATA / "exec_reuse_bound_arg.p4")
    rig.entry("I.t", {"hdr.eth.src": ("exact", 1)}, rig.action("I.set_a", v=0x77))
    hit, miss = eth(1), eth(2)
    assert run(rig, [hit, miss, hit, miss], fast) == [
        [(2, bytes(5) + b"\x77" + hit[6:])], [(1, miss)], [(2, bytes(5) + b"\x77" + hit[6:])], [(1, miss)]]


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_store_guarded_by_a_local_headers_validity(fast):
    rig = Rig(DATA / "exec_reuse_local_guard.p4")
    one, two = eth(1), eth(2)
    assert run(rig, [one, two], fast) == [[(1, bytes(5) + b"\x55" + one[6:])], [(1, two)]]


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_field_list_header_is_preserved_by_value(fast):
    rig = Rig(DATA / "exec_field_list_header.p4")
    rig.clone_session(5, 3, 1)
    got = run(rig, [eth(1)], fast)[0]
    assert sorted(got) == [(1, bytes(5) + b"\x01" + eth(1)[6:]), (3, bytes(5) + b"\x09" + eth(1)[6:])]
    # two packets in flight at once (both through ingress before either egress), after a clone
    a, b = _ingress(rig, eth(2), fast), _ingress(rig, eth(3), fast)
    assert _frames(rig, a, fast) == [(1, bytes(5) + b"\x02" + eth(2)[6:])]
    assert _frames(rig, b, fast) == [(1, bytes(5) + b"\x03" + eth(3)[6:])]
