"""A default_action on a table implemented with an action profile is not run on a miss (bmv2: p4c's
back end leaves it out of the JSON and warns); softswitch warns the same way and, until 2026-12-05,
ran it anyway -- a silent difference from bmv2."""
from __future__ import annotations

from exec_rig import DATA, Rig

PROG = DATA / "exec_profile_default.p4"


def test_a_miss_runs_no_action_and_the_warning_says_so():
    rig = Rig(PROG)
    res = rig.pipeline.ingress(bytes([7, 0, 0]), 1, 0)
    out = rig.pipeline.egress(res.to_tm[0], 0).frames[0].data
    assert out == bytes([7, 0, 0]), out.hex()  # not put(0x99), and not a hit
    assert any("default_action is not supported on this target and is ignored" in w for w in rig.program.warnings)
