"""A key on a field of an invalid header matches as 0, as bmv2's MatchKeyBuilder builds it (it
zeroes such a field: bmv2 does not reset fields between packets, src/bm_sim/match_units.cpp);
softswitch matched the value the field held before ``setInvalid`` until 2026-12-05 -- a silent
misrun for any program that keys a table on a header it may have removed."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

PROG = DATA / "exec_invalid_key.p4"


@pytest.fixture(scope="module")
def rig():
    r = Rig(PROG)
    for table in ("t", "tm"):
        r.entry(table, {"h.h.k": ("exact", 5)} if table == "t" else {"h.h.k & 0xf": ("exact", 5)},
                r.action("set", v=0x55))
        r.entry(table, {"h.h.k": ("exact", 0)} if table == "t" else {"h.h.k & 0xf": ("exact", 0)},
                r.action("set", v=0x10))
    r.entry("tt", {"h.h.k": ("ternary", 5, 0xFF)}, r.action("set", v=0x55), priority=2)
    r.entry("tt", {"h.h.k": ("ternary", 0, 0xFF)}, r.action("set", v=0x10), priority=1)
    return r


@pytest.mark.parametrize("selector, table", [(0, "exact"), (1, "ternary"), (2, "masked exact")])
@pytest.mark.parametrize("path", ["api", "loop"])
def test_a_key_on_an_invalid_headers_field_is_zero(rig, selector, table, path):
    data = bytes([5, 0, selector])  # h.h = {k: 5, o: 0}, then h.g.r
    out = rig.output(data) if path == "api" else rig.loop_output(data)
    assert out == bytes([0x10]), f"{table}: {out.hex()} (0x55: matched the stale 5)"
