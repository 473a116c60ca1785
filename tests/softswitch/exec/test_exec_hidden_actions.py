"""A directly-called ``@hidden`` action runs but is not in P4Info, as p4c does (ONOS fabric.p4's
``FabricEgress.egress_next.set_mpls`` and ``pop_mpls_if_present`` are absent from p4c's P4Info for
the fabric profile); a directly-called plain action stays listed."""
from __future__ import annotations

from exec_rig import DATA, Rig


def test_hidden_direct_action_runs_and_is_not_in_p4info():
    rig = Rig(DATA / "exec_hidden_direct.p4")
    names = [a.preamble.name for a in rig.p4info.actions]
    assert "I.mark_listed" in names
    assert "I.mark_hidden" not in names
    _res, egs = rig.run(bytes(12) + b"\x90\x00" + b"\x01\x02")
    assert [f.data[14:] for e in egs for f in e.frames] == [b"\xaa\xbb"]


def test_an_action_and_a_table_of_one_name_load():
    """``@name(".output")`` on both an action and a table (P4Info names are per entity type; p4c
    writes P4_14's instruct5 so): the switch built its pipeline with a false "the P4Info is not the
    program's" (it compared the action's id with the table's)."""
    rig = Rig(DATA / "exec_action_table_same_name.p4")
    assert [a.preamble.name for a in rig.p4info.actions if a.preamble.name == "output"] == ["output"]
    assert [t.preamble.name for t in rig.p4info.tables] == ["output"]
    res, _egs = rig.run(b"\xab")
    assert [it.egress_port for it in res.to_tm] == [1]
    assert rig.output(b"\xab") == b"\xab"
