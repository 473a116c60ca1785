"""Entry priorities in a table's ``entries`` (P4_16 spec, "Entry priorities"; p4c's EntryPriorities
pass): ``priority = N:``, ``largest_priority_wins`` and ``priority_delta``, and ``const`` on one
entry.  Before, both properties were ignored with a warning, so a table declaring
``largest_priority_wins = false`` let its largest priority win: a silent misrun."""
from __future__ import annotations

import pytest
from exec_rig import Rig
from p4.v1 import p4runtime_pb2

from softswitch.frontend import P4Error
from softswitch.runtime.errors import Code, P4RuntimeError

PROG = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; } }
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.h.b = v; }
    table t { key = { h.h.a: ternary; } actions = { set; NoAction; }
        PROPS
        entries = { ENTRIES } }
    apply { t.apply(); sm.egress_spec = 1; }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

# three overlapping entries: a = 0x01 matches all of them
OVERLAP = ["0x01 &&& 0x0f : set(1);", "0x01 &&& 0xff : set(2);", "_ : set(3);"]


def rig(tmp_path, props: str, entries: list[str]) -> Rig:
    p = tmp_path / "prio.p4"
    p.write_text(PROG.replace("PROPS", props).replace("ENTRIES", " ".join(entries)))
    return Rig(p)


def winner(r: Rig, a: int = 0x01) -> int:
    _res, eg = r.run(bytes([a, 0]), 0)
    return eg[0].frames[0].data[1]


def read_t(r: Rig) -> list[p4runtime_pb2.TableEntry]:
    """The table's entries as a P4Runtime wildcard read returns them, in textual order (keys differ)."""
    ts = r.state.tables.names["I.t"]
    return [e.table_entry for e in ts.read(p4runtime_pb2.TableEntry(table_id=ts.id))]


def priorities(r: Rig) -> list[int]:
    """In the order of OVERLAP's keys."""
    order = {"0x01&0x0f": 0, "0x01&0xff": 1, "*": 2}

    def key(te):
        if not len(te.match):
            return "*"
        t = te.match[0].ternary
        return f"0x{int.from_bytes(t.value, 'big'):02x}&0x{int.from_bytes(t.mask, 'big'):02x}"
    return [te.priority for te in sorted(read_t(r), key=lambda te: order[key(te)])]


@pytest.mark.parametrize("props,entries,want,prios", [
    # explicit priorities, largest wins (default): the entry with 30
    ("", ["priority=10: " + OVERLAP[0], "priority=30: " + OVERLAP[1], "priority=20: " + OVERLAP[2]], 2, None),
    # the same with largest_priority_wins = false: the entry with 10 (it was 30's before the fix)
    ("largest_priority_wins = false;",
     ["priority=10: " + OVERLAP[0], "priority=30: " + OVERLAP[1], "priority=20: " + OVERLAP[2]], 1, None),
    ("largest_priority_wins = false;",
     ["priority=30: " + OVERLAP[0], "priority=10: " + OVERLAP[1], "priority=20: " + OVERLAP[2]], 2, None),
    # unspecified priorities follow the previous one, minus priority_delta (largest wins) ...
    ("priority_delta = 10;", ["priority=25: " + OVERLAP[2], OVERLAP[1], "priority=20: " + OVERLAP[0]], 3, [20, 15, 25]),
    # ... plus it when the smallest wins: 5, 15, 10 -> the entry with 5
    ("largest_priority_wins = false; priority_delta = 10;",
     ["priority=5: " + OVERLAP[2], OVERLAP[1], "priority=10: " + OVERLAP[0]], 3, None),
    # no priority at all: the first entry wins whatever the properties say
    ("", OVERLAP, 1, [3, 2, 1]),
    ("largest_priority_wins = false; priority_delta = 7;", OVERLAP, 1, [15, 8, 1]),
    ("priority_delta = 7;", [OVERLAP[1], OVERLAP[2], OVERLAP[0]], 2, [1, 15, 8]),
])
def test_the_winning_entry_follows_the_spec(tmp_path, props, entries, want, prios):
    r = rig(tmp_path, props, entries)
    assert winner(r) == want
    if prios is not None:  # the P4Runtime priorities (higher wins) the entries are installed with
        assert priorities(r) == prios


def test_smallest_wins_mirrors_into_p4runtime_priorities(tmp_path):
    r = rig(tmp_path, "largest_priority_wins = false;",
            ["priority=10: " + OVERLAP[0], "priority=30: " + OVERLAP[1], "priority=20: " + OVERLAP[2]])
    # P4Runtime's larger-wins order with the same range: 10 -> 30, 30 -> 10, 20 -> 20
    assert priorities(r) == [30, 10, 20]


def test_a_const_entry_of_an_entries_list_cannot_be_deleted(tmp_path):
    r = rig(tmp_path, "", [OVERLAP[0], "const " + OVERLAP[1], OVERLAP[2]])
    by_prio = {e.priority: e for e in read_t(r)}
    assert by_prio[2].is_const and not by_prio[3].is_const and not by_prio[1].is_const
    for prio, ok in ((2, False), (3, True)):
        te = p4runtime_pb2.TableEntry()
        te.CopyFrom(by_prio[prio])
        te.is_const = False
        upd = p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=p4runtime_pb2.Entity(table_entry=te))
        if ok:
            r.state.write(upd)
        else:
            with pytest.raises(P4RuntimeError) as ei:
                r.state.write(upd)
            assert ei.value.code == Code.PERMISSION_DENIED


@pytest.mark.parametrize("props,entries,msg", [
    ("", ["0x01 &&& 0x0f : set(1);", "priority=3: _ : set(2);"], "the first entry must have a priority"),
    ("priority_delta = 10;", ["priority=12: " + OVERLAP[0], OVERLAP[1], OVERLAP[2]], "priority overflow"),
    ("priority_delta = 0;", OVERLAP, "priority_delta must be a positive constant"),
    ("largest_priority_wins = 3;", OVERLAP, ""),
    ("", ["priority=2: " + OVERLAP[0], "@priority(1) " + OVERLAP[1]], "@priority annotations together"),
])
def test_bad_priorities_are_errors(tmp_path, props, entries, msg):
    with pytest.raises(P4Error) as ei:
        rig(tmp_path, props, entries)
    assert msg in str(ei.value)
    assert "prio.p4:" in str(ei.value)


def test_const_entries_cannot_have_priorities(tmp_path):
    p = tmp_path / "prio.p4"
    p.write_text(PROG.replace("PROPS", "").replace("entries = {", "const entries = {")
                 .replace("ENTRIES", "priority=2: " + OVERLAP[0] + " priority=1: " + OVERLAP[1]))
    with pytest.raises(P4Error, match="const entries, which cannot have priorities"):
        Rig(p)


def test_exact_tables_take_no_priorities(tmp_path):
    p = tmp_path / "prio.p4"
    p.write_text(PROG.replace("h.h.a: ternary", "h.h.a: exact").replace("PROPS", "")
                 .replace("ENTRIES", "priority=2: 1 : set(1); priority=1: 2 : set(2);"))
    with pytest.raises(P4Error, match="do not use priorities"):
        Rig(p)
