"""``@hidden`` tables run but are not in P4Info, as p4c's P4RuntimeSerializer leaves them out
(``addTable`` returns for a hidden table, ``addAction`` for a hidden action, and a hidden table's
direct counter goes with it); they still take part in ids and aliases, as in p4c's symbol table.
The controller cannot address them."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2

from softswitch.frontend import load_program
from softswitch.frontend.errors import P4InfoError
from softswitch.p4info import build_p4info, jenkins_hash
from softswitch.runtime.errors import P4RuntimeError

PROG = DATA / "exec_hidden_table.p4"


def _frame(a: int, ether_type: int = 0x9000) -> bytes:
    return bytes(12) + ether_type.to_bytes(2, "big") + bytes([a, 0, 0])


def _out(rig: Rig, frame: bytes) -> list[bytes]:
    _res, egs = rig.run(frame)
    return [f.data[14:] for e in egs for f in e.frames]


def test_p4info_leaves_out_hidden_table_action_and_direct_counter():
    rig = Rig(PROG)
    p = rig.p4info
    assert [t.preamble.name for t in p.tables] == ["I.fwd_t", "E.t"]
    names = [a.preamble.name for a in p.actions]
    assert "I.set_b" not in names  # @hidden
    assert "I.set_c" in names  # used only by the hidden table, but not itself @hidden: p4c lists it
    assert not p.direct_counters  # I.hc belongs to the hidden table
    # the hidden I.t still counts for aliases: E.t is not "t"
    assert next(t for t in p.tables if t.preamble.name == "E.t").preamble.alias == "E.t"
    assert p.tables[0].preamble.id == (0x02 << 24) | (jenkins_hash("I.fwd_t") & 0xFFFFFF)


def test_private_p4info_keeps_them_with_the_same_ids():
    program = load_program(str(PROG), {}, [])
    pub, full = build_p4info(program), build_p4info(program, private=True)
    assert [t.preamble.name for t in full.tables] == ["I.t", "I.fwd_t", "E.t"]
    assert {a.preamble.name for a in full.actions} >= {"I.set_b", "I.set_c"}
    ids = {t.preamble.name: t.preamble.id for t in full.tables}
    assert all(ids[t.preamble.name] == t.preamble.id for t in pub.tables)
    assert [d.preamble.name for d in full.direct_counters] == ["I.hc"]


def test_hidden_table_runs_its_entries_and_default():
    rig = Rig(PROG)
    rig.entry("I.fwd_t", {"h.eth.ether_type": ("exact", 0x9000)}, rig.action("I.fwd", port=3))
    assert _out(rig, _frame(1)) == [bytes([1, 0x11, 0])]  # const entry: @hidden set_b
    assert _out(rig, _frame(2)) == [bytes([2, 0, 0x22])]  # const entry: set_c
    assert _out(rig, _frame(7)) == [bytes([7, 0xEE, 0])]  # const default action
    hidden = rig.state.table("I.t")
    assert hidden.direct_counter is not None  # the hidden table's direct counter runs too
    assert sorted(e.counter[1] for e in hidden.entries()) == [1, 1]
    # the ordinary table works: without its entry the packet is dropped
    assert _out(rig, _frame(1, 0x9001)) == []


def test_controller_cannot_address_hidden_table():
    rig = Rig(PROG)
    full = build_p4info(rig.program, private=True)
    tid = next(t.preamble.id for t in full.tables if t.preamble.name == "I.t")
    te = p4runtime_pb2.TableEntry(table_id=tid)
    te.match.add(field_id=1).exact.value = b"\x05"
    with pytest.raises(P4RuntimeError):
        rig.write(INSERT, table_entry=te)
    read = rig.state.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))
    assert tid not in {e.table_entry.table_id for e in read}
    assert rig.state.read(p4runtime_pb2.Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry())) == []


def test_hidden_action_in_a_visible_table_is_rejected(tmp_path):
    src = PROG.read_text().replace("actions = { fwd; drop; }", "actions = { fwd; drop; set_b; }")
    f = tmp_path / "h.p4"
    f.write_text(src)
    with pytest.raises(P4InfoError, match=r"uses the @hidden action 'I.set_b'") as ei:
        build_p4info(load_program(str(f), {}, []))
    assert "h.p4:" in str(ei.value)


def test_hidden_controller_header_field_is_rejected(tmp_path):
    f = tmp_path / "c.p4"
    f.write_text(PROG.read_text().replace(
        "struct headers_t { ethernet_t eth; op_t op; }",
        '@controller_header("packet_in") header pin_t { bit<9> port; @hidden bit<7> pad; }\n'
        "struct headers_t { pin_t pin; ethernet_t eth; op_t op; }"))
    with pytest.raises(P4InfoError, match=r"@hidden on controller header 'packet_in'") as ei:
        build_p4info(load_program(str(f), {}, []))
    assert "c.p4:" in str(ei.value)
