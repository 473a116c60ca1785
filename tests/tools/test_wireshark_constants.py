"""tools/wireshark/mrc.lua cannot import Python: its copies of the wire constants must equal
mrc/wire/formats.py's (which the contract test holds equal to define.p4's).  Runs without tshark."""
from __future__ import annotations

import re
from pathlib import Path

from mrc.wire import formats as F

LUA = Path(__file__).resolve().parents[2] / "tools" / "wireshark" / "mrc.lua"


def _locals() -> dict[str, int]:
    """``local A, B = 1, 0x2`` lines of the dissector, as name -> value."""
    out: dict[str, int] = {}
    for names, values in re.findall(r"^local ([A-Z_][A-Z0-9_, ]*) = ([0-9xA-Fa-f, ]+)$", LUA.read_text(), re.MULTILINE):
        ns, vs = [n.strip() for n in names.split(",")], [v.strip() for v in values.split(",")]
        assert len(ns) == len(vs), names
        out.update((n, int(v, 0)) for n, v in zip(ns, vs, strict=True))
    return out


def test_dissector_constants_are_the_wire_formats():
    lua = _locals()
    want = {"DSCP_TRIMMED": F.DSCP_TRIMMED, "DSCP_RESEND": F.DSCP_RESEND, "ROCE_PORT": F.ROCE_UDP_PORT, "NH_HBH": F.NH_HOP_BY_HOP,
            "NH_ROUTING": F.NH_ROUTING, "NH_IPV6": F.NH_IPV6, "NH_UDP": F.NH_UDP,
            "OPT_TELEMETRY": F.HBH_OPT_TELEMETRY, "OPT_TELEMETRY_LEN": F.TELEMETRY_OPT_DATA_LEN,
            "RECORD_LEN": F.TELEMETRY_RECORD_LEN, "OP_ACK": F.OP_ACK, "OP_PROBE_REQ": F.OP_PROBE_REQ,
            "OP_PROBE_RESP": F.OP_PROBE_RESP, "OP_PORT_STATUS": F.OP_PORT_STATUS}
    assert set(want) <= set(lua), set(want) - set(lua)
    assert {k: lua[k] for k in want} == want
    text = LUA.read_text()
    data = {int(v, 0) for v in re.findall(r"\[(0x[0-9A-Fa-f]+)\] = true", text.split("local IMM")[0].split("local DATA")[1])}
    assert data == set(F.DATA_OPCODES)
