"""Indexed counters and registers are updated by stores written into the generated code (issue
16), not a method call per packet: the counts and values must stay exact, in range or out of it,
through the loop's entry points and the API's, and across control-plane writes (which change the
same lists in place)."""
from __future__ import annotations

from exec_rig import DATA, MODIFY, Rig
from p4.v1 import p4runtime_pb2

PROG = DATA / "exec_inline_externs.p4"


def _pkt(idx: int, val: int, sval: int, pad: int = 0) -> bytes:
    return bytes([idx, val, sval & 0xFF, 0, 0, 0, 0]) + bytes(pad)


def _counter(rig: Rig, name: str) -> list[tuple[int, int]]:
    cid = rig._id("counters", name)
    got = rig.state.read(p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=cid)))
    return [(e.counter_entry.data.byte_count, e.counter_entry.data.packet_count) for e in got]


def _register(rig: Rig, name: str) -> list[bytes]:
    rid = rig._id("registers", name)
    got = rig.state.read(p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=rid)))
    return [e.register_entry.data.bitstring for e in got]


def test_generated_code_stores_into_the_lists():
    src = Rig(PROG).pipeline.blocks.source
    assert ".count(" not in src and ".read(" not in src and ".write(" not in src


def test_counts_and_values_exact_on_both_paths():
    rig = Rig(PROG)
    # (idx, val, sval, port, pad): idx 7 is out of range for every array (a no-op, as v1model's)
    pkts = [(0, 5, -3, 0, 0), (1, 200, 100, 1, 10), (7, 9, 9, 2, 3), (0, 17, -128, 1, 0), (3, 0xFF, -1, 5, 1)]
    outs = []
    for k, (idx, val, sval, port, pad) in enumerate(pkts):
        data = _pkt(idx, val, sval, pad)
        out = rig.loop_output(data, port) if k % 2 else rig.output(data, port)
        outs.append(out[3:7])
    # got / sgot / wide: what the previous packet at that index left (0 at first, 0 out of range)
    assert outs == [bytes([0, 0, 0, 0]), bytes([0, 0, 0, 0]), bytes([0, 0, 0, 0]),
                    bytes([5, 0xFD, 0, 5]), bytes([0, 0, 0, 0])]
    assert _counter(rig, "by_idx") == [(7 + 7, 2), (17, 1), (0, 0), (8, 1)]
    assert _counter(rig, "by_port") == [(0, 1), (0, 2)]  # packets only; ports 2 and 5 out of range
    assert _register(rig, "r8") == [bytes([17]), bytes([200]), b"\x00", bytes([0xFF])]
    assert _register(rig, "rs") == [b"\x80", bytes([100]), b"\x00", b"\xff"]
    assert _register(rig, "r4") == [bytes([(5 + 17) & 0xF]), bytes([200 & 0xF]), b"\x00", b"\x0f"]


def test_control_plane_writes_reach_the_data_plane():
    rig = Rig(PROG)
    cid = rig._id("counters", "by_idx")
    ce = p4runtime_pb2.CounterEntry(counter_id=cid)
    ce.data.byte_count, ce.data.packet_count = 1000, 10
    rig.write(MODIFY, counter_entry=ce)  # every cell
    ce = p4runtime_pb2.CounterEntry(counter_id=cid)
    ce.index.index = 2
    ce.data.byte_count, ce.data.packet_count = 5, 1
    rig.write(MODIFY, counter_entry=ce)
    re = p4runtime_pb2.RegisterEntry(register_id=rig._id("registers", "r8"))
    re.index.index = 2
    re.data.bitstring = b"\x2a"
    rig.write(MODIFY, register_entry=re)
    out = rig.loop_output(_pkt(2, 1, 0), 0)
    assert out[3] == 0x2A
    assert _counter(rig, "by_idx") == [(1000, 10), (1000, 10), (5 + 7, 2), (1000, 10)]
    re = p4runtime_pb2.RegisterEntry(register_id=rig._id("registers", "r8"))
    re.data.bitstring = b"\x07"
    rig.write(MODIFY, register_entry=re)  # every cell
    assert rig.output(_pkt(3, 1, 0), 0)[3] == 7


def test_block_locals_start_from_zero_on_every_packet(tmp_path):
    """A control's locals start from zero on every packet, a header local invalid (issue 16:
    they are made without a call to a class's ``__init__``, since the ninth round as Python
    locals of the block function when nothing but its apply body names them)."""
    from exec_rig import v1_template

    src = v1_template("bit<8> a; bit<8> b; bit<8> c;") % ("", """
        header one_t { bit<8> x; }
        apply {
            sm_egress();
            bit<8> v;
            bool seen;
            one_t hl;
            h.h.b = v;
            h.h.c = (bit<8>)(seen ? 8w1 : 8w0) + (hl.isValid() ? 8w2 : 8w0) + hl.x;
            v = h.h.a;
            seen = true;
            hl.setValid();
            hl.x = h.h.a;
        }""")
    src = src.replace("sm_egress();", "s.egress_spec = 1;").replace(
        "header one_t { bit<8> x; }\n        apply", "apply").replace(
        "header h_t {", "header one_t { bit<8> x; }\nheader h_t {")
    p = tmp_path / "locals.p4"
    p.write_text(src)
    rig = Rig(p)
    # nothing but the apply body names them: Python locals of the block function, zeroed at its
    # entry (``usage.body_only_locals``); test_exec_body_locals.py covers the locals object
    assert "_onew(Loc" not in rig.pipeline.blocks.source and "_cl" in rig.pipeline.blocks.source
    for a in (7, 9, 200):
        assert rig.loop_output(bytes([a, 0, 0]), 1) == bytes([a, 0, 0])
        assert rig.output(bytes([a, 0, 0]), 1) == bytes([a, 0, 0])
