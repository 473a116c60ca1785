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
