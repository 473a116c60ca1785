"""The deparser emits a header only ``extract`` writes as the bytes it was extracted from, and
extract stores none of its fields that nothing reads (``usage.unread_fields``); these are the cases
where those bytes are not the header's: a header extracted twice, one made valid by ``setValid`` in
a packet after one that extracted it (recycled objects on the loop's path), a stack, and a clone;
and a field read only through a copy of the whole headers struct.  Every packet on both paths (the
API's and the loop's), in a row."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, egress_item, ingress_items, v1_template

from softswitch.exec.usage import unread_fields

PAYLOAD = b"\xee" * 6


@pytest.fixture(scope="module")
def rig():
    r = Rig(DATA / "exec_raw_emit.p4")
    r.clone_session(7, 5, 1)
    return r


def expected(op: int, body: bytes) -> bytes:
    """The frame the program sends for ``bytes([op, 0]) + body``, written out by hand."""
    h1 = bytes([op, 1])
    if op == 1:  # h2 twice: the second copy is the header
        return bytes([op, 0x77 if body[4:6] == b"\x77\x77" else 1]) + body[4:8] + body[8:]
    if op in (3, 4) and body[:2] == b"\x77\x77":
        h1 = bytes([op, 0x77])
    if op == 2:  # no h2 on the wire; setValid makes it valid with every field 0
        return h1 + bytes(4) + body
    return h1 + body  # h2 (and the stack) as extracted


PACKETS = [
    (1, bytes.fromhex("11112233") + bytes.fromhex("44445566") + PAYLOAD),
    (2, PAYLOAD),
    (3, bytes.fromhex("77778899") + bytes.fromhex("aabbcc") + bytes.fromhex("ddeeff") + PAYLOAD),
    (2, PAYLOAD),
    (1, bytes.fromhex("01020304") + bytes.fromhex("05060708") + PAYLOAD),
    (2, PAYLOAD),
    (1, bytes.fromhex("77770000") + bytes.fromhex("01020304") + PAYLOAD),  # h2.a read: first copy's
    (1, bytes.fromhex("01020304") + bytes.fromhex("77770000") + PAYLOAD),  # ... second copy's
    (3, bytes.fromhex("77778899") + bytes.fromhex("aabbcc") + bytes.fromhex("ddeeff") + PAYLOAD),
    (5, bytes.fromhex("01020304") + bytes.fromhex("112233") + PAYLOAD),  # es[0] as extracted now
]


def test_the_fields_nothing_reads():
    assert {k: sorted(v) for k, v in unread_fields(Rig(DATA / "exec_raw_emit.p4").program).items()} == \
        {"h2": ["b", "c"], "es": ["v"]}
    assert unread_fields(Rig(DATA / "exec_raw_emit_whole.p4").program) == {}


def test_the_headers_struct_used_whole_reads_every_field(tmp_path):
    src = v1_template("bit<8> a; bit<8> b;") % ("", "apply { hs_t same = h; if (same == h) { s.egress_spec = 1; } }")
    (tmp_path / "whole.p4").write_text(src)
    assert unread_fields(Rig(tmp_path / "whole.p4").program) == {}
    (tmp_path / "none.p4").write_text(v1_template("bit<8> a; bit<8> b;") % ("", "apply { s.egress_spec = 1; }"))
    assert unread_fields(Rig(tmp_path / "none.p4").program) == {"h": frozenset({"a", "b"})}


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_extracted_bytes_are_emitted_only_while_they_are_the_header(rig, fast):
    for _round in range(2):
        for op, body in PACKETS:
            (item,) = ingress_items(rig.pipeline, bytes([op, 0]) + body, fast)
            frames, clones, _ = egress_item(rig.pipeline, item, fast)
            assert frames == [(2, expected(op, body))], (op, body.hex())
            assert clones == []


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_a_clone_emits_the_extracted_header_too(rig, fast):
    body = bytes.fromhex("0a0b0c0d") + PAYLOAD
    for op, other in PACKETS[:3]:  # leave extracted bytes in the recycled objects first
        (item,) = ingress_items(rig.pipeline, bytes([op, 0]) + other, fast)
        egress_item(rig.pipeline, item, fast)
    items = ingress_items(rig.pipeline, bytes([4, 0]) + body, fast)
    outs = sorted(f for it in items for f in egress_item(rig.pipeline, it, fast)[0])
    # an ingress-to-egress clone is the packet as it came in, parsed again (bmv2): h1.n not incremented
    assert outs == [(2, bytes([4, 1]) + body), (5, bytes([4, 0]) + body)]


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_fields_read_through_the_whole_headers_struct_are_extracted(fast):
    r = Rig(DATA / "exec_raw_emit_whole.p4")
    for b, c in ((1, 2), (5, 6), (0, 0), (5, 7), (5, 6)):
        frame = bytes([9, 0, 0xab, 0xcd, b, c]) + PAYLOAD
        (item,) = ingress_items(r.pipeline, frame, fast)
        n = 0x55 if (b, c) == (5, 6) else 0
        assert egress_item(r.pipeline, item, fast)[0] == [(2, bytes([9, n]) + frame[2:])], (b, c)
