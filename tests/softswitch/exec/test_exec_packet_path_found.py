"""v1model packet-path behaviours checked against simple_switch's code (ingress_thread,
egress_thread, add_header) by a differential review on 2026-12-05; each differed before:
- an ingress clone asked for in a pass that also resubmits was lost (bmv2 queues the clone before
  it resubmits the packet);
- a packet was dropped after 16 resubmissions (bmv2 has no limit; softswitch's bound is now 1024
  passes, only to stop a program that resubmits for ever);
- a header made valid by an initializer (``h.e = { v = 7 }``) did not count into
  ``packet_length`` (p4c puts a setValid() before it, and add_header counts the bytes);
- a recirculation preserving ``packet_length`` gave the recirculated packet the old length
  (bmv2 copies the field list, then sets the length of the new packet);
- a recirculated packet kept an ``ingress_global_timestamp`` (bmv2 stamps received packets only:
  a recirculated copy's metadata is reset, 0)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, egress_item, ingress_items


def run(rig: Rig, data: bytes, fast: bool) -> list[tuple[int, bytes]]:
    """The packet loop's flow in-process: ingress, egress of every item, recirculations (at
    most 8 rounds); the frames out, in order."""
    pl = rig.pipeline
    frames: list[tuple[int, bytes]] = []
    recirc: list = []
    items = ingress_items(pl, data, fast, port=7, now=100)
    for _ in range(8):
        while items:
            out, queued, again = egress_item(pl, items.pop(0), fast, now=200)
            frames += out
            items += queued
            recirc += again
        if not recirc:
            break
        d, preserved = recirc.pop(0)
        items = list(pl.ingress_recirculated(d, preserved, 1000).to_tm)
    return frames


@pytest.fixture(scope="module")
def resub():
    r = Rig(DATA / "exec_resubmit_clone.p4")
    r.clone_session(5, 4, 1)
    return r


@pytest.fixture(scope="module")
def recirc():
    return Rig(DATA / "exec_recirc_length.p4")


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_ingress_clone_survives_a_resubmit(resub, fast):
    assert sorted(run(resub, bytes([1, 0, 0xEE]), fast)) == [(2, bytes([1, 0, 0])), (4, bytes([1, 0, 1]))]


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
@pytest.mark.parametrize("n", [16, 17, 40])
def test_many_resubmissions(resub, fast, n):
    assert run(resub, bytes([2, n, 0]), fast) == [(2, bytes([2, n, n]))]


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_initializer_counts_into_packet_length(recirc, fast):
    data = bytes([3, 0]) + bytes(10)
    ((port, out),) = run(recirc, data, fast)
    assert port == 2 and len(out) == 16
    assert int.from_bytes(out[2:6], "big") == 16  # 12 received + the 4 of e


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_recirculated_length_and_timestamp(recirc, fast):
    data = bytes([4, 0]) + bytes(10)
    ((port, out),) = run(recirc, data, fast)
    assert port == 2 and len(out) == 16 and out[1] == 2  # the recirculated pass
    assert int.from_bytes(out[2:6], "big") == 16  # its own length, not the preserved 12
    assert int.from_bytes(out[6:12], "big") == 0  # no ingress timestamp on a recirculated copy


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
def test_clone_of_a_resubmitted_pass_is_parsed_with_the_receiving_port(fast):
    rig = Rig(DATA / "exec_resubmit_clone_port.p4")
    rig.clone_session(5, 4, 1)
    frames = sorted(run(rig, bytes([0, 0, 0x99]), fast))  # received on port 7 (run's ingress port)
    # the resubmitted original (parsed with port 0: x is payload) and its clone (parsed with 7)
    assert frames == [(2, bytes([0, 0, 0x99])), (4, bytes([1, 1, 0x99]))]


CHECKSUM_ERROR_SRC = """
#include <core.p4>
#include <v1model.p4>
header o_t { bit<8> ce; bit<8> pe; }
header h_t { bit<8> x; }
struct hs { o_t o; h_t h; }
struct m_t { }
parser P(packet_in p, out hs h, inout m_t m, inout standard_metadata_t s) {
  state start { s.checksum_error = 1; s.parser_error = error.StackOutOfBounds; p.extract(h.h); transition accept; }
}
control V(inout hs h, inout m_t m) { apply { VBODY } }
control I(inout hs h, inout m_t m, inout standard_metadata_t s) {
  apply {
    h.o.setValid(); h.o.ce = (bit<8>)s.checksum_error; s.egress_spec = 1;
    h.o.pe = s.parser_error == error.NoError ? 8w0 : 8w1;
  }
}
control E(inout hs h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs h, inout m_t m) { apply { } }
control D(packet_out p, in hs h) { apply { p.emit(h.o); p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
@pytest.mark.parametrize(("verify", "flag"), [
    ("", 0),  # no checksum to verify: 0, whatever the parser stored (the control is empty)
    ("verify_checksum(true, { h.h.x }, h.h.x, HashAlgorithm.identity);", 0),  # x equals its own identity
    ("verify_checksum(true, { h.h.x }, 8w0, HashAlgorithm.identity);", 1),
], ids=["no-verify", "verify-ok", "verify-fails"])
def test_checksum_and_parser_error_are_written_after_the_parser(tmp_path, verify, flag, fast):
    """bmv2's ingress_thread sets checksum_error (from the verify result) and parser_error after
    every parse: a value the parser stored in either is lost (it was kept with an empty verify
    control, found by a differential fuzzer)."""
    (tmp_path / "p.p4").write_text(CHECKSUM_ERROR_SRC.replace("VBODY", verify))
    rig = Rig(tmp_path / "p.p4")
    for _ in range(3):
        (item,) = ingress_items(rig.pipeline, b"\x05", fast)
        assert egress_item(rig.pipeline, item, fast)[0] == [(1, bytes([flag, 0, 5]))]



CLONE_SRC = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> sid; bit<8> it; bit<8> prio; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { s.egress_spec = 1; s.priority = 5; CLONE; } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { h.h.it = (bit<8>)s.instance_type; h.h.prio = (bit<8>)s.priority; } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
@pytest.mark.parametrize(("clone", "prio"), [
    ("clone(CloneType.I2E, h.h.sid)", 0),
    ("clone3(CloneType.I2E, h.h.sid, { s.priority })", 5),  # the deprecated form preserves it
], ids=["clone", "clone3-priority"])
def test_clone_session_id_bits_and_queue_of_a_clone(tmp_path, fast, clone, prio):
    """bmv2 keeps a clone session id in 15 bits (clone(I2E, 32773) is session 5) and queues a clone
    by its own standard_metadata.priority: 0, or what its field list preserved (it went to queue 0
    whatever was preserved; both found by a differential fuzzer of the replication engine)."""
    (tmp_path / "c.p4").write_text(CLONE_SRC.replace("CLONE", clone))
    rig = Rig(tmp_path / "c.p4")
    rig.clone_session(5, 4, 9)
    for sid in (5, 32773, 0x18005, 6):
        items = ingress_items(rig.pipeline, sid.to_bytes(4, "big") + bytes(2), fast, port=3)
        clones = [it for it in items if it.egress_port == 4]
        assert len(clones) == (0 if sid == 6 else 1), hex(sid)
        for it in clones:
            assert it.priority == prio
            assert egress_item(rig.pipeline, it, fast)[0] == [(4, sid.to_bytes(4, "big") + bytes([1, prio]))]
