"""Enum and error values in a hash or checksum data list are the bits bmv2 holds for them (read
from p4c's mid end and bmv2's ``BufBuilder``): a serializable enum over ``int<W>`` its two's
complement (a negative member made the packet an internal error until 2026-12-05), a plain enum its
member index in 32 bits (p4c's ``EnumOn32Bits``), an error its number in 32 bits (both refused
with a Python TypeError at load until 2026-12-05)."""
from __future__ import annotations

from exec_rig import Rig

HEAD = """
#include <core.p4>
#include <v1model.p4>
enum int<8> S { A = -2, B = 3 }
enum Col { R, G, B }
header a_t { bit<8> x; }
header o_t { bit<16> h1; bit<16> h2; bit<16> c; }
struct hs_t { a_t a; o_t o; }
struct m_t { S s; Col col; error e; bit<8> pad; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.a); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2; h.o.setValid();
        m.s = S.A; m.col = Col.B; m.e = error.PacketTooShort; m.pad = 1;
        BODY
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.a); p.emit(h.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def crc16(data: bytes) -> int:
    """CRC-16/ARC (bmv2's crc16: polynomial 0x8005, reflected, init 0), written out bit by bit."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _out(tmp_path, body: str) -> bytes:
    prog = tmp_path / "h.p4"
    prog.write_text(HEAD.replace("BODY", body))
    return Rig(prog).output(b"\x07", port=1)


def test_negative_serializable_enum_is_hashed_as_its_bits(tmp_path):
    out = _out(tmp_path, "hash(h.o.h1, HashAlgorithm.crc16, 16w0, {m.s, h.a.x}, 32w65536);"
                         "update_checksum(true, {m.s, m.pad}, h.o.c, HashAlgorithm.csum16);")
    assert int.from_bytes(out[1:3], "big") == crc16(b"\xfe\x07")
    assert int.from_bytes(out[5:7], "big") == csum16(b"\xfe\x01")


def test_plain_enum_and_error_are_hashed_as_32_bits(tmp_path):
    out = _out(tmp_path, "hash(h.o.h1, HashAlgorithm.crc16, 16w0, {m.col}, 32w65536);"
                         "hash(h.o.h2, HashAlgorithm.crc16, 16w0, {m.e, h.a.x}, 32w65536);")
    assert int.from_bytes(out[1:3], "big") == crc16((2).to_bytes(4, "big"))  # Col.B: member 2
    assert int.from_bytes(out[3:5], "big") == crc16((1).to_bytes(4, "big") + b"\x07")  # PacketTooShort: 1
