"""varbit fields and the two-argument extract (issue 16: 14 of p4c's v1model STF programs)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

PROG = DATA / "exec_varbit.p4"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def run(rig, data: bytes) -> bytes:
    res = rig.pipeline.ingress(data, 1, 0)
    return rig.pipeline.egress(res.to_tm[0], 0).frames[0].data


@pytest.mark.parametrize("data,out", [
    (bytes([0x11, 0, 1, 2, 3, 4, 9, 0x55]), bytes([0x11, 0, 1, 2, 3, 4, 9, 0x55])),  # 32-bit options
    (bytes([0x10, 0, 9, 8]), bytes([0x10, 0, 9, 8])),                                # empty options
    (bytes([0x21, 0, 1, 2, 3, 4, 9]), bytes([0x21, 0, 1, 2, 3, 4, 1, 2, 3, 4, 9])),  # copied field
    # 480 bits > varbit<320> with the 60 bytes there: HeaderTooShort, options and tail not
    # extracted (payload); with fewer bytes there PacketTooShort comes first, as in bmv2's extract_VL
    (bytes([0x1F, 0]) + bytes(range(61)), bytes([0x1F, 4]) + bytes(range(61))),
    (bytes([0x1F, 0, 1, 2, 3, 4, 9]), bytes([0x1F, 1, 1, 2, 3, 4, 9])),
    # 64 bits announced, 32 there: PacketTooShort
    (bytes([0x12, 0, 1, 2, 3, 4]), bytes([0x12, 1, 1, 2, 3, 4])),
    # csum16 over ver, ihl, the 32 option bits and t: ~(0x3101 + 0x0203 + 0x0409) = 0xc8f2
    (bytes([0x31, 0, 1, 2, 3, 4, 9]), bytes([0x31, 0xF2, 1, 2, 3, 4, 9])),
])
def test_varbit_extract_emit_copy_and_checksum(rig, data, out):
    assert run(rig, data) == out


@pytest.mark.parametrize("change,words", [
    (("p.extract(h.o, (bit<32>)", "p.extract(h.o); //"), "two-argument extract"),
    (("struct m_t { bit<8> r; }", "struct m_t { bit<8> r; varbit<8> v; }"), "unsupported: varbit outside a header"),
    (("h.copy.options = h.o.options;", "h.b.csum = h.o.options;"), "type mismatch"),
    (("h.copy.options = h.o.options;", "h.copy.options = 5;"), "can only be assigned"),
])
def test_what_stays_rejected(change, words):
    src = PROG.read_text().replace(*change)
    with pytest.raises(P4Error) as ei:
        load_source(src, "v.p4")
    assert words in str(ei.value) and "v.p4:" in str(ei.value), str(ei.value)
