"""Struct-typed fields inside headers (issue 16, p4c's bvec-hdr/issue383/most-types samples)
through the compiled pipeline: extract and emit bit-packed in field order, leaf reads and writes
of each kind (bit, signed int, bool, serializable enum), struct-valued assignments both ways,
``==``, setValid zeroing, lookahead, a header_union member, a header stack, table keys on leaves;
the packet loop's generated path (recycled objects) gives what the API's path gives."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

PROG = DATA / "exec_hdr_struct.p4"
# h_t: a(8) | alt0.valid(1) alt0.port(7) | inr.delta(4) inr.flag(1) inr.color(3) | id(12) pad(4)
H = bytes([0x10, 0x85, 0x7A, 0x12, 0x3F])  # port 5, delta 7, flag, GREEN, id 0x123, pad 0xF

CASES = [
    (bytes([0]) + H, bytes([0]) + H),                                        # unchanged round trip
    (bytes([1]) + H, bytes.fromhex("01" "23" "86" "65" "123f")),             # port+1, delta-1 (6), !flag, BLUE, a = id
    (bytes([1, 0x10, 0x85, 0x0A, 0x12, 0x3F]), bytes.fromhex("01" "23" "86" "f5" "123f")),  # delta 0 - 1 = -1
    (bytes([2]) + H, bytes.fromhex("02" "10" "55" "7a" "abcf")),             # row via metadata, id 0xABC, alt0 = {0, 0x55}
    (bytes.fromhex("03" "10" "87" "f9" "003f"), bytes.fromhex("03" "01" "87" "f9" "003f")),  # alt0 == {1,7}; id != 0
    (bytes.fromhex("03" "10" "87" "f9" "000f"), bytes.fromhex("03" "03" "87" "f9" "000f")),  # and the header == its copy
    (bytes.fromhex("03" "10" "86" "fa" "000f"), bytes.fromhex("03" "06" "86" "fa" "000f")),  # alt0 differs, inr differs
    (bytes([4]) + H, bytes.fromhex("04" "ee" "00000000")),                  # setInvalid; setValid: all leaves 0
    (bytes([7]) + H, bytes.fromhex("07" "85" "857a123f" "00")),             # hash of alt0 alone: x is invalid
    (bytes([8]) + H, bytes([8]) + H + bytes([5])),                           # lookahead<h_t>().row.alt0.port
    (bytes.fromhex("09" "0102" "03"), bytes.fromhex("09" "0102" "91")),     # union member g: alt = {1, 0x11}
    (bytes([10]) + bytes(range(1, 11)), bytes([10]) + bytes(range(6, 11)) + bytes.fromhex("010203" "1235")),
    (bytes([11]) + H, bytes.fromhex("0b" "77" "82" "32" "456f")),           # whole header from a nested list
    (bytes([12]) + H, bytes([12]) + H),                                      # a header nothing but extract writes
]


@pytest.fixture(scope="module")
def rig():
    r = Rig(PROG)
    r.entry("by_id", {"hs.h.row.id": ("exact", 0x123), "hs.h.row.inr.color": ("exact", 2)},
            r.action("set_alt", port=0x2A))
    return r


def run(rig, data: bytes) -> bytes:
    return rig.output(data)


def run_loop(rig, data: bytes) -> bytes:
    return rig.loop_output(data)


@pytest.mark.parametrize("data,out", CASES)
def test_struct_fields_in_headers(rig, data, out):
    assert run(rig, data) == out


def test_table_keys_on_struct_leaves(rig):
    assert run(rig, bytes([5]) + H) == bytes.fromhex("05" "10" "aa" "7a" "123f")  # hit: alt0 = {1, 0x2A}
    other = bytes([5, 0x10, 0x85, 0x7D, 0x12, 0x3F])  # color BLUE: no entry
    assert run(rig, other) == other


def test_digest_of_a_struct_read_from_a_header(rig):
    got: list = []
    rig.state.digests.set_sink(got.append)
    did = rig._id("digests", "alt_t")
    rig.write(INSERT, digest_entry=p4runtime_pb2.DigestEntry(
        digest_id=did, config=p4runtime_pb2.DigestEntry.Config(max_list_size=1)))
    run(rig, bytes([6]) + H)
    assert [(d.digest_id, d.values) for d in got] == [(did, [(1, 5)])]


def test_loop_path_agrees_with_recycled_objects(rig):
    """Every case twice in a row through the loop's path: a packet's leftovers (nested struct
    objects included) never leak into the next one."""
    for data, out in CASES + CASES[::-1]:
        assert run_loop(rig, data) == out, data.hex()
    assert rig.pipeline._pool, "objects were recycled"


BAD = """
#include <core.p4>
#include <v1model.p4>
enum plain_t { A, B } header h0_t { bit<8> z; }
struct in_t { bit<8> x; FIELD }
struct s_t { bit<8> y; in_t i; }
header h_t { bit<8> a; s_t s; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("field,shown", [
    ("plain_t e;", "field 'i.e' is plain_t"),
    ("error e;", "field 'i.e' is error"),
    ("h0_t e;", "field 'i.e' is h0_t"),
    ("bool b; plain_t e;", "field 'i.e' is plain_t"),
])
def test_struct_content_a_header_cannot_hold_is_rejected_by_name(field, shown):
    with pytest.raises(P4Error) as ei:
        load_source(BAD.replace("FIELD", field), "bad.p4")
    msg = str(ei.value)
    assert "bad.p4:7:" in msg and "header field 's'" in msg and shown in msg, msg
