"""Top-level extern instances: IR sharing, P4Info names/ids as p4c gives them, and execution."""
from __future__ import annotations

import os

import pytest

from softswitch.exec import build_pipeline
from softswitch.frontend import load_program, load_source
from softswitch.frontend.errors import P4Error
from softswitch.p4info import build_p4info, jenkins_hash
from softswitch.runtime import SwitchState

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
PROG = os.path.join(DATA, "global_externs.p4")

_SKELETON = """
#include <core.p4>
#include <v1model.p4>
struct H {} struct M {}
%s
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) { %s }
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) { apply { %s } }
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out b, in H h) { apply {} }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def _prog(top: str, ingress: str = "", parser: str = "state start { transition accept; }"):
    return load_source(_SKELETON % (top, parser, ingress), "g.p4")


def test_top_level_instances_are_shared_objects() -> None:
    p = load_program(PROG)
    assert list(p.externs) == ["drop_reasons", "qdepth", "pinned"]
    for name, e in p.externs.items():
        assert p.ingress.externs[name] is e and p.egress.externs[name] is e
    assert [e.name for e in p.all_externs()] == ["drop_reasons", "qdepth", "pinned"]
    assert p.externs["qdepth"].local_name == "egress_qdepth" and p.externs["qdepth"].size == 4


def test_p4info_names_and_ids_follow_p4c() -> None:
    info = build_p4info(load_program(PROG))
    counters = {c.preamble.name: c for c in info.counters}
    assert set(counters) == {"drop_reasons", "pinned"}
    dr = counters["drop_reasons"]
    assert dr.preamble.id == (0x12 << 24) | (jenkins_hash("drop_reasons") & 0xFFFFFF)
    assert dr.preamble.alias == "drop_reasons" and dr.size == 8
    assert counters["pinned"].preamble.id == 0x12000077
    [reg] = info.registers
    assert reg.preamble.name == "qdepth" and reg.type_spec.bitstring.bit.bitwidth == 19
    # p4c-bm2-ss on its sample issue1097-bmv2.p4 (a top-level `register<bit<8>>(2) r;`) gives
    # the register the bare name "r" and id 369183714.
    ref = build_p4info(_prog("register<bit<8>>(2) r;", "bit<8> x; r.read(x, 0);"))
    assert [(r.preamble.name, r.preamble.id, r.size) for r in ref.registers] == [("r", 369183714, 2)]


def _run(pipeline, frame: bytes, port: int = 1):
    res = pipeline.ingress(frame, port, 0)
    return res, [pipeline.egress(it, 1) for it in res.to_tm]


def test_shared_counter_and_register_across_ingress_and_egress() -> None:
    program = load_program(PROG)
    info = build_p4info(program)
    state = SwitchState(info)
    pipe = build_pipeline(program, state, None)
    eth = bytes(6) + bytes(6)
    res, outs = _run(pipe, eth + b"\x08\x00" + bytes(20))
    assert not res.dropped and len(outs) == 1
    first = outs[0].frames[0].data
    assert int.from_bytes(first[6:12], "big") & 0x7FFFF == 0  # register still zero in ingress
    drops = state.counter("drop_reasons")
    assert drops.packets[2] == 1  # counted by egress
    res, outs = _run(pipe, eth + b"\x08\x00" + bytes(20))
    # egress wrote egress_port + 5 into the shared register; ingress read it on the next packet
    assert int.from_bytes(outs[0].frames[0].data[6:12], "big") & 0x7FFFF == 2 + 5
    res, outs = _run(pipe, eth + b"\x88\xcc" + bytes(20))
    assert res.dropped and not outs
    assert drops.packets[1] == 1 and drops.packets[2] == 2  # same counter from ingress and egress


def test_top_level_action_uses_a_top_level_counter() -> None:
    program = load_program(PROG)
    state = SwitchState(build_p4info(program))
    pipe = build_pipeline(program, state, None)
    from p4.v1 import p4runtime_pb2

    info = state.p4info
    t = next(x for x in info.tables if x.preamble.name == "Ig.fwd")
    a = next(x for x in info.actions if x.preamble.name == "count_pinned")
    te = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
    te.match.add(field_id=1).exact.value = b"\x07"
    te.action.action.action_id = a.preamble.id
    state.write(p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT,
                                     entity=p4runtime_pb2.Entity(table_entry=te)))
    _run(pipe, bytes(5) + b"\x07" + bytes(6) + b"\x08\x00" + bytes(20))
    assert state.counter("pinned").packets[1] == 1


@pytest.mark.parametrize("top,ingress,parser,msg", [
    # a top-level control instance is accepted (it may be a V1Switch argument); its constructor
    # arguments must match the control's constructor parameters
    ("control X(inout H h) { apply {} } X(1) x;", "", None,
     "g.p4:5:35: error: control 'X' takes 0 constructor arguments, 1 given"),
    ("counter(4, CounterType.packets) c; counter(4, CounterType.packets) c;", "", None,
     "'c' is already declared"),
    ("@name(\"c\") counter(4, CounterType.packets) a; @name(\"c\") counter(4, CounterType.packets) b;", "",
     None, "two extern instances are named 'c'"),
    ("register<bit<8>>(2) r;", "", "state start { bit<8> x; r.read(x, 0); transition accept; }",
     "unsupported: extern method call 'r.read' in a parser state"),
    ("counter(4, CounterType.packets) c;", "c.count(1, 2);", None, "counter.count takes 1 arguments"),
])
def test_top_level_instance_errors(top: str, ingress: str, parser: str | None, msg: str) -> None:
    with pytest.raises(P4Error) as ei:
        _prog(top, ingress, parser or "state start { transition accept; }")
    assert msg in str(ei.value) and "g.p4:" in str(ei.value)
