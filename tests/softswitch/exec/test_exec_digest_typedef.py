"""A digest whose type argument names a typedef of its struct (``digest<learn_t>(...)`` with
``typedef mac_learn_t learn_t``) is named in P4Info after the typedef, as p4c's v1model P4Info
names it (``getDigestCall``: the declaration the type argument refers to), and its packets reach
the digest of that name; the type spec still names the struct.  A call of the same struct under
its own name is a second digest (p4c's P4Info keys digests by that name).  It was named after
the struct until 2026-12-05."""
from __future__ import annotations

from exec_rig import INSERT, Rig
from p4.v1 import p4runtime_pb2

SRC = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct mac_learn_t { bit<48> mac; bit<9> port; }
typedef mac_learn_t learn_t;
struct hs_t { eth_t eth; }
struct m_t { mac_learn_t d; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.eth); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        m.d.mac = h.eth.src;
        m.d.port = s.ingress_port;
        if (h.eth.type == 1) { digest<learn_t>(1, m.d); } else { digest<mac_learn_t>(1, m.d); }
        s.egress_spec = 2;
    } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_typedef_names_the_digest_and_its_packets_reach_it(tmp_path):
    prog = tmp_path / "dg.p4"
    prog.write_text(SRC)
    rig = Rig(prog)
    ds = {d.preamble.name: d for d in rig.p4info.digests}
    assert sorted(ds) == ["learn_t", "mac_learn_t"]
    assert {d.type_spec.struct.name for d in ds.values()} == {"mac_learn_t"}
    got = []
    rig.state.digests.set_sink(got.append)
    for name in ds:
        rig.write(INSERT, digest_entry=p4runtime_pb2.DigestEntry(
            digest_id=rig._id("digests", name), config=p4runtime_pb2.DigestEntry.Config(max_list_size=1)))
    eth = bytes.fromhex("ffffffffffff" "020000000001")
    rig.run(eth + b"\x00\x01", port=5)
    rig.run(bytes.fromhex("ffffffffffff" "020000000002") + b"\x00\x02", port=6)
    by_id = {g.digest_id: g.values for g in got}
    assert by_id == {rig._id("digests", "learn_t"): [(0x020000000001, 5)],
                     rig._id("digests", "mac_learn_t"): [(0x020000000002, 6)]}
