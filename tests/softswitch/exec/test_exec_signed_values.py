"""Signed values where they meet unsigned machinery (each ran silently wrong until 2026-12-05):
a cast into an enum over int<8> compared unequal to its own member, a negative int<8> never matched
an exact, range or select key (bmv2 matches the field's bytes), hash() and random() into an int<8>
stored the unsigned bits, and a negative enum member crashed the P4Info."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig

PROG = DATA / "exec_signed_values.p4"


@pytest.fixture(scope="module")
def rig():
    return Rig(PROG)


def fields(rig: Rig, a: int) -> dict[str, int]:
    res = rig.pipeline.ingress(bytes([a]) + bytes(9), 1, 0)
    out = rig.pipeline.egress(res.to_tm[0], 0).frames[0].data
    return {"sel": out[1], "exact": out[2], "range": out[3], "enum": out[4], "hneg": out[5],
            "hwide": int.from_bytes(out[6:8], "big"), "rneg": out[8]}


def test_minus_one(rig):
    f = fields(rig, 0xFF)
    assert f == {"sel": 1, "exact": 0x11, "range": 3, "enum": 1, "hneg": 1, "hwide": 0xFFFF, "rneg": 0xFE}


def test_minus_four_is_in_the_range_and_not_in_the_masked_select(rig):
    f = fields(rig, 0xFC)  # -4: 0xfc & 0xfc != 0xf8
    assert (f["sel"], f["exact"], f["range"], f["enum"]) == (0, 0x33, 0xFE, 3)


def test_minus_eight_matches_the_masked_select(rig):
    assert fields(rig, 0xF8)["sel"] == 2


def test_positive(rig):
    f = fields(rig, 1)
    assert (f["sel"], f["exact"], f["range"], f["enum"], f["hneg"], f["hwide"]) == (0, 0x22, 3, 2, 0, 1)


def test_negative_enum_member_in_p4info(rig):
    (se,) = rig.p4info.type_info.serializable_enums.values()
    assert {m.name: m.value for m in se.members} == {"BACK": b"\xff", "STOP": b"\x00", "FWD": b"\x01"}
