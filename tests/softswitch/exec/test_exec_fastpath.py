"""The packet loop's generated entry points (``softswitch/exec/fastpath.py``): where they are built,
and that every way out of their plain-unicast path (drop, multicast, I2E/E2E clone, digest,
truncation, assertion, parser error, clone-session truncation) gives what the general path gives,
with recycled objects in between."""
from __future__ import annotations

import random

from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2

from softswitch.contract import IngressResult
from softswitch.exec import fastpath
from softswitch.exec.pipeline import PacketState

PROG = DATA / "exec_fastpath.p4"
ETH = bytes.fromhex("000000000001" "000000000002")


def pkt(kind: int | None, arg: int = 0, payload: bytes = b"p" * 30) -> bytes:
    if kind is None:
        return ETH + b"\x08\x00" + payload
    return ETH + b"\x90\x00" + bytes([kind, arg]) + bytes(8) + payload


def rig() -> Rig:
    r = Rig(PROG)
    grp = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=3)
    grp.replicas.add(egress_port=2, instance=1)
    grp.replicas.add(egress_port=4, instance=2)
    r.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=grp))
    for sid, port, trunc in ((5, 6, 0), (9, 7, 16)):
        cs = p4runtime_pb2.CloneSessionEntry(session_id=sid, packet_length_bytes=trunc)
        cs.replicas.add(egress_port=port, instance=3)
        r.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
            clone_session_entry=cs))
    r.write(INSERT, digest_entry=p4runtime_pb2.DigestEntry(
        digest_id=r._id("digests", "learn_t"), config=p4runtime_pb2.DigestEntry.Config(max_list_size=1)))
    return r


def test_built_for_this_program_not_for_one_that_resubmits():
    pl = rig().pipeline
    assert fastpath.features(pl.blocks.source) == {"clone", "digest", "truncate"}
    assert pl.ingress_item.__code__.co_filename.startswith("<fastpath:")
    assert pl.egress_frame.__code__.co_filename.startswith("<fastpath:")
    # the generated source is kept (bench/softswitch_bytecodes.py --lines prints its lines)
    assert pl.fast_source.splitlines()[pl.egress_frame.__code__.co_firstlineno - 1].startswith("def egress_frame(")
    other = Rig(DATA / "exec_features.p4").pipeline  # resubmits and recirculates
    assert "resubmit" in fastpath.features(other.blocks.source)
    assert other.ingress_item.__func__ is type(other).ingress_item and other.fast_source is None
    traced = Rig(PROG, trace=lambda _s: None).pipeline  # a tracer: the general path, which traces
    assert traced.egress_frame.__func__ is type(traced).egress_frame


def _api(pl, data: bytes, now: int):
    res = pl.ingress(data, 3, now)
    out = []
    todo = list(res.to_tm)
    while todo:
        item = todo.pop(0)
        e = pl.egress(item, now + 1)
        out += [(f.port, f.data) for f in e.frames]
        out += [("drop", e.drop_reason)] if e.dropped else []
        todo += e.to_tm
    return res.dropped, res.drop_reason, out


def _loop(pl, data: bytes, now: int):
    res = pl.ingress_item(data, 3, now)
    if isinstance(res, PacketState):
        todo, dropped, why = [res], False, ""
    else:
        assert isinstance(res, IngressResult)
        todo, dropped, why = list(res.to_tm), res.dropped, res.drop_reason
    out = []
    while todo:
        item = todo.pop(0)
        port = item.egress_port
        e = pl.egress_frame(item, now + 1)
        if e.__class__ is bytes:
            out.append((port, e))
            continue
        out += [(f.port, f.data) for f in e.frames]
        out += [("drop", e.drop_reason)] if e.dropped else []
        todo += e.to_tm
    return dropped, why, out


def test_every_way_out_of_the_fast_path_matches_the_general_path():
    """500 packets of every kind in random order through both paths of two identical switches: the
    loop's (generated functions, objects recycled) and the API's (fresh objects) agree packet by
    packet, and the digests emitted are the same."""
    api, loop = rig(), rig()
    got_api: list = []
    got_loop: list = []
    api.state.digests.set_sink(got_api.append)
    loop.state.digests.set_sink(got_loop.append)
    kinds = [pkt(None), pkt(0), pkt(1), pkt(2, 3), pkt(2, 8), pkt(3, 5), pkt(3, 9), pkt(3, 4), pkt(4),
             pkt(5), pkt(6), pkt(7, 12), pkt(8, 5), pkt(8, 9), pkt(9), pkt(10), pkt(11), pkt(0xEE),
             pkt(0)[:20], pkt(None)[:10]]
    rnd = random.Random(16)
    seen = set()
    for i in range(500):
        data = rnd.choice(kinds)
        a, b = _api(api.pipeline, data, 100 * i), _loop(loop.pipeline, data, 100 * i)
        assert b == a, (i, data.hex())
        seen.add((a[0], a[1].split(":")[0], tuple(p for p, _ in a[2])))
    assert len(seen) >= 11, seen  # the kinds really took different ways
    assert [(d.digest_id, d.values) for d in got_loop] == [(d.digest_id, d.values) for d in got_api]
    assert got_api
    assert loop.pipeline._pool, "forwarded packets' objects were kept for reuse"


LOOPING_PARSER = """
#include <core.p4>
#include <v1model.p4>
header b_t { bit<8> v; }
struct headers_t { b_t[3] s; b_t last; }
struct meta_t { }
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state spin { transition spin; }
    state item { pk.extract(h.s.next); transition select(h.s.last.v) { 0: done; default: item; } }
    state done { pk.extract(h.last); transition accept; }
    state start { transition select(pk.lookahead<bit<8>>()) { 0xFF: spin; default: item; } }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.last.setValid();
        if (sm.parser_error == error.NoError) { h.last.v = 0; }
        else if (sm.parser_error == error.StackOutOfBounds) { h.last.v = 1; }
        else if (sm.parser_error == error.PacketTooShort) { h.last.v = 2; }
        else if (sm.parser_error == error.ParserTimeout) { h.last.v = 3; }
        else { h.last.v = 4; }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) { apply { pk.emit(h.s); pk.emit(h.last); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_one_function_parser_loops_errors_and_timeout(tmp_path):
    """The parser is one function: a state on a loop is a branch of it, counted towards
    ParserTimeout; a state on no loop (``done``) is copied into its callers; an error keeps the
    bytes parsed so far as payload.  ``start`` is declared last: parsing still begins there."""
    src = tmp_path / "loops.p4"
    src.write_text(LOOPING_PARSER)
    r = Rig(src)
    assert "def ps_" not in r.pipeline.blocks.source  # no function per state any more

    def run(data: bytes) -> bytes:
        (item,) = r.pipeline.ingress(data, 0, 0).to_tm
        return r.pipeline.egress(item, 0).frames[0].data

    assert run(b"\x01\x02\x00\x07tail") == b"\x01\x02\x00\x00tail"  # 3 items, then done
    assert run(b"\x01\x02\x03\x04") == b"\x01\x02\x03\x01\x04"  # a 4th item: StackOutOfBounds
    assert run(b"\x01") == b"\x01\x02"  # PacketTooShort after one item
    assert run(b"\xff\x01") == b"\x03\xff\x01"  # ParserTimeout, nothing extracted
