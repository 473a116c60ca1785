"""Extern calls in parser states, as p4c's bmv2 back end (ParserConverter) takes them: verify,
log_msg, assert and assume run there; every other extern function and every counter, meter or
register method is rejected by name at its position (p4c: 'not supported in parser on this
target'), also when it hides in a function the state calls."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error, P4Unsupported

PROG = DATA / "exec_parser_externs.p4"


@pytest.fixture(scope="module")
def traced():
    lines: list[str] = []
    return Rig(PROG, trace=lines.append), lines


def out(rig: Rig, data: bytes) -> bytes:
    res, eg = rig.run(data, 1)
    assert not res.dropped, res.drop_reason
    return eg[0].frames[0].data


@pytest.mark.parametrize("data,frame,logged", [
    # e, then extra (setValid in the parser, x = 0x5E), then st[0] (setValid, x = t; push_front is not allowed in a parser);
    # e.v = 2 * v from the function twice() inlined into the start state
    (bytes([5, 3]), bytes([5, 6, 0x5E, 5]), ["parsed t=5 v=3", "twice 3"]),
    (bytes([1, 3]), bytes([1, 6, 1]), ["parsed t=1 v=3"]),                  # setInvalid in drop_extra
    (bytes([2, 3]), bytes([2, 6, 0x5E, 2]), ["verify passed"]),             # verify holds
    (bytes([2, 30]), bytes([2, 0xEE, 0x5E, 2]), ["parsed t=2 v=30"]),       # verify fails: NoMatch
])
def test_parser_runs_log_msg_verify_and_builtin_methods(traced, data, frame, logged):
    rig, lines = traced
    lines.clear()
    assert out(rig, data) == frame
    for s in logged:
        assert s in lines
    if data[1] == 30:
        assert "verify passed" not in lines  # the state ended at the failed verify


@pytest.mark.parametrize("data,what,line", [(bytes([0xAA, 1]), "assert", 20), (bytes([7, 0xBB]), "assume", 21)])
def test_assert_and_assume_failing_in_the_parser_drop_the_packet(traced, data, what, line):
    rig, _ = traced
    res, eg = rig.run(data, 1)
    assert res.dropped and not eg
    # a P4 assertion, not an internal error (the parser runs inside the same guard as ingress)
    assert res.drop_reason.startswith("assertion failed: "), res.drop_reason
    assert res.drop_reason.endswith(f"exec_parser_externs.p4:{line}:9: {what} failed")


def test_assert_holding_in_the_parser_lets_the_packet_through(traced):
    rig, _ = traced
    assert out(rig, bytes([0xAB, 0xBA]))[:2] == bytes([0xAB, 0x74])  # 0xBA + 0xBA mod 256


TOP = ("register<bit<8>>(4) r;\ncounter(4, CounterType.packets) c;\nmeter(4, MeterType.packets) mt;\n"
       "bit<8> hashed(in bit<8> a) { bit<8> o; hash(o, HashAlgorithm.crc16, 8w0, {a}, 8w255); return o; }\n"
       "void store(in bit<8> a) { r.write(0, a); }\n"
       "bit<8> outer(in bit<8> a) { return hashed(a); }\n")


@pytest.mark.parametrize("stmt,name", [
    ("hash(m.sum, HashAlgorithm.crc16, 8w0, {h.e.t}, 8w255);", "call of extern function 'hash'"),
    ("random(m.sum, 8w0, 8w5);", "call of extern function 'random'"),
    ("digest(1, m);", "call of extern function 'digest'"),
    ("mark_to_drop(s);", "call of extern function 'mark_to_drop'"),
    ("clone(CloneType.I2E, 5);", "call of extern function 'clone'"),
    ("clone3(CloneType.I2E, 5, {});", "call of extern function 'clone3'"),
    ("truncate(5);", "call of extern function 'truncate'"),
    ("update_checksum(true, {h.e.t}, m.sum, HashAlgorithm.csum16);", "call of extern function 'update_checksum'"),
    ("r.write(0, h.e.t);", "extern method call 'r.write' in a parser state"),
    ("r.read(m.sum, 0);", "extern method call 'r.read' in a parser state"),
    ("c.count(1);", "extern method call 'c.count' in a parser state"),
    ("mt.execute_meter(1, m.sum);", "extern method call 'mt.execute_meter' in a parser state"),
    ("m.sum = hashed(h.e.t);", "call of function 'hashed' in a parser state: it calls 'hash' at p.p4:{hashed}:"),
    ("m.sum = outer(h.e.t);", "call of function 'outer' in a parser state: it calls 'hash' at p.p4:{hashed}:"),
    ("store(h.e.t);", "call of function 'store' in a parser state: it calls extern method 'r.write' at p.p4:{store}:"),
])
def test_extern_calls_p4c_rejects_in_a_parser_are_rejected_by_name(stmt, name):
    src = PROG.read_text()
    src = src.replace("parser P(", TOP + "parser P(", 1)
    src = src.replace("        h.extra.setValid();\n", f"        {stmt}\n        h.extra.setValid();\n", 1)
    lines = src.splitlines()
    line = next(i for i, s in enumerate(lines, 1) if s.strip() == stmt)
    fn_line = {f: next(i for i, s in enumerate(lines, 1) if f"{f}(in bit<8> a)" in s) for f in ("hashed", "store")}
    name = name.format(**fn_line)
    with pytest.raises(P4Unsupported) as ei:
        load_source(src, "p.p4")
    msg = str(ei.value)
    assert msg.startswith(f"p.p4:{line}:"), msg
    assert name in msg and "p4c's bmv2 back end takes no extern call in a parser" in msg, msg


def test_the_same_calls_run_in_a_control():
    """The rejection is about the parser only: in ingress the same calls load and run."""
    src = PROG.read_text().replace("parser P(", TOP + "parser P(", 1)
    src = src.replace("        s.egress_spec = 1;\n",
                      "        s.egress_spec = 1;\n        store(h.e.t);\n        c.count(1);\n", 1)
    prog = load_source(src, "p.p4")
    assert prog.ingress is not None


def test_an_extern_instance_in_a_parser_stays_rejected():
    src = PROG.read_text().replace("    state start {\n", "    register<bit<8>>(4) pr;\n    state start {\n", 1)
    with pytest.raises(P4Unsupported) as ei:
        load_source(src, "p.p4")
    assert "p.p4:17:5: error: unsupported: instance of 'register' in a parser (only sub-parsers; p4c's bmv2 " \
           "back end runs no counter, meter or register method in a parser" in str(ei.value)


def test_the_packet_loop_entry_point_drops_on_a_parser_assertion_too():
    """``ingress_item`` (generated for this program by ``fastpath``) guards the parser as well."""
    rig = Rig(PROG)
    pl = rig.pipeline
    assert pl.ingress_item.__code__.co_filename.startswith("<fastpath:")
    res = pl.ingress_item(bytes([0xAA, 1]), 1, 0)
    assert res.dropped and res.drop_reason.startswith("assertion failed: "), res.drop_reason
    item = pl.ingress_item(bytes([5, 3]), 1, 0)  # and the next packet goes through
    assert pl.egress_frame(item, 1) == bytes([5, 6, 0x5E, 5])


def test_an_ingress_clone_whose_re_parse_fails_an_assertion_is_dropped_alone(tmp_path):
    """bmv2 re-parses the original packet for an ingress clone (instance_type 1): an assertion
    that fails only then drops the clone; the original packet still goes out."""
    from p4.v1 import p4runtime_pb2
    src = PROG.read_text().replace("        assume(h.e.v != 0xBB);\n",
                                   "        assume(h.e.v != 0xBB);\n        assert(s.instance_type == 0);\n", 1)
    src = src.replace("        s.egress_spec = 1;\n", "        s.egress_spec = 1;\n        clone(CloneType.I2E, 7);\n", 1)
    path = tmp_path / "parser_clone.p4"
    path.write_text(src)
    lines: list[str] = []
    rig = Rig(path, trace=lines.append)
    cs = p4runtime_pb2.CloneSessionEntry(session_id=7)
    cs.replicas.add(egress_port=4, instance=1)
    rig.write(p4runtime_pb2.Update.INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs))
    res, eg = rig.run(bytes([5, 3]), 1)
    assert not res.dropped
    assert [e.frames[0].data for e in eg] == [bytes([5, 6, 0x5E, 5])]
    assert [x.egress_port for x in res.to_tm] == [1]
    assert any(x.startswith("ingress clone dropped: assertion failed: ") for x in lines)


@pytest.mark.parametrize("stmt", ["bump(m.sum);", "cnt();"])
def test_an_action_called_in_a_parser_is_an_error(stmt):
    """p4c's type checker: action calls are not allowed within parsers (so an action cannot carry
    a counter's count into a parser either)."""
    top = "counter(4, CounterType.packets) c;\naction bump(inout bit<8> x) { x = x + 1; }\n" \
          "action cnt() { c.count(0); }\n"
    src = PROG.read_text().replace("parser P(", top + "parser P(", 1)
    src = src.replace("        h.extra.setValid();\n", f"        {stmt}\n        h.extra.setValid();\n", 1)
    line = next(i for i, s in enumerate(src.splitlines(), 1) if s.strip() == stmt)
    with pytest.raises(P4Error) as ei:
        load_source(src, "p.p4")
    assert str(ei.value).startswith(f"p.p4:{line}:9: error: action '{stmt[:stmt.index('(')]}' called in a "
                                    "parser: action calls are not allowed within parsers"), str(ei.value)


def test_a_disallowed_call_nested_in_a_block_of_a_state_is_rejected():
    stmt = "if (h.e.t == 3) { random(m.sum, 8w0, 8w5); }"
    src = PROG.read_text().replace("        h.extra.setValid();\n", f"        {stmt}\n        h.extra.setValid();\n", 1)
    with pytest.raises(P4Unsupported) as ei:
        load_source(src, "p.p4")
    assert "p.p4:23:27: error: unsupported: call of extern function 'random' in a parser state" in str(ei.value)
