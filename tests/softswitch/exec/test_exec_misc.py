"""Stacks, lookahead/advance, switch statements, direct meters, action parameters, log/assert."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig
from p4.v1 import p4runtime_pb2

PROG = DATA / "exec_misc.p4"
ETH = bytes.fromhex("000000000001" "000000000002")


@pytest.fixture
def rig():
    return Rig(PROG)


def op(code, a=0, b=0, r=0):
    return ETH + b"\x90\x00" + bytes([code, a, b, r])


def result(rig, data) -> bytes:
    res = rig.pipeline.ingress(data, 0, 0)
    assert not res.dropped, res.drop_reason
    return rig.pipeline.egress(res.to_tm[0], 0).frames[0].data


def lbl(label, bos, ttl=64):
    return ((label << 12) | (bos << 8) | ttl).to_bytes(4, "big")


def test_stack_last_index_push_and_pop(rig):
    body = lbl(16, 0) + lbl(17, 1)
    out = result(rig, ETH + b"\x88\x47" + body + bytes([0, 0, 0, 0]))
    assert out[-1] == 1  # lastIndex of two extracted labels
    out = result(rig, ETH + b"\x88\x47" + body + bytes([1, 0, 0, 0]))
    assert out[14:26] == lbl(99, 0, 7) + body  # push_front made room at the front
    out = result(rig, ETH + b"\x88\x47" + body + bytes([2, 0, 0, 0]))
    assert out[14:18] == lbl(17, 1)  # pop_front dropped the first label
    assert len(out) == 14 + 4 + 4


def test_lookahead_then_advance(rig):
    out = result(rig, ETH + b"\x88\xb5" + b"\x05\x06" + bytes([16, 0, 0, 0]))
    # the two skipped bytes are not re-emitted (advance consumed them), r = lookahead's 2nd byte
    assert out == ETH + b"\x88\xb5" + bytes([16, 0, 0, 6])


@pytest.mark.parametrize("code,a,b,expect", [
    (10, 200, 100, 255),  # saturating add
    (11, 0xF0, 0, 0xFC),  # signed shift right of int<8> -16 >> 2 = -4
    (12, 3, 4, 7),  # inout action parameter, copy-in/copy-out twice
    (13, 9, 1, 9),  # local struct copied by value
    (19, 0, 0, 1),  # header equality
    (99, 0, 0, 0xEE),  # default case
])
def test_value_switch_and_operations(rig, code, a, b, expect):
    assert result(rig, op(code, a, b))[-1] == expect


def test_switch_on_action_run(rig):
    t = next(x for x in rig.p4info.tables if x.preamble.name == "I.t_switch")
    assert result(rig, op(15, b=5))[-1] == 3  # default NoAction
    rig.entry("I.t_switch", {t.match_fields[0].name: ("exact", 5)}, rig.action("I.other"))
    assert result(rig, op(15, b=5))[-1] == 2
    # apply().hit inside a larger condition (short-circuit: the table is not applied when a != 1)
    assert result(rig, op(20, a=1, b=5))[-1] == 20
    assert result(rig, op(20, a=1, b=6))[-1] == 21
    res = rig.pipeline.ingress(op(20, a=0, b=5), 0, 0)
    assert res.to_tm[0].egress_port == 1  # other() (port 3) did not run


def test_direct_meter_colour_written_on_hit(rig):
    t = next(x for x in rig.p4info.tables if x.preamble.name == "I.t_meter")
    te = rig.entry("I.t_meter", {t.match_fields[0].name: ("exact", 1)}, rig.action("I.set_color"))
    dme = p4runtime_pb2.DirectMeterEntry(table_entry=te, config=p4runtime_pb2.MeterConfig(
        cir=1, cburst=1, pir=1, pburst=1))
    rig.write(p4runtime_pb2.Update.MODIFY, direct_meter_entry=dme)
    colours = [result(rig, op(14, a=1))[-1] for _ in range(4)]
    assert colours[0] == 0 and colours[-1] == 2
    # a miss runs other(): port 3, the colour field stays 0
    res = rig.pipeline.ingress(op(14, a=2), 0, 0)
    assert res.to_tm[0].egress_port == 3


def test_log_msg_formats_values():
    lines: list[str] = []
    r = Rig(PROG, trace=lines.append)
    assert result(r, op(17, 4, 5))[-1] == 17
    assert "value 4 and 5" in lines


def test_log_msg_goes_to_the_logger_only_when_enabled(rig, caplog):
    # no tracer: log_msg reaches the "softswitch.p4" logger at INFO, formatted...
    with caplog.at_level("INFO", logger="softswitch.p4"):
        assert result(rig, op(17, 4, 5))[-1] == 17
    assert "value 4 and 5" in [r.getMessage() for r in caplog.records]
    # ...and nothing is recorded when INFO is off (the packet is still processed)
    caplog.clear()
    with caplog.at_level("WARNING", logger="softswitch.p4"):
        assert result(rig, op(17, 6, 7))[-1] == 17
    assert not [r for r in caplog.records if "value" in r.getMessage()]


def test_assert_failure_drops_without_raising(rig):
    assert result(rig, op(18, 0))[-1] == 18
    res = rig.pipeline.ingress(op(18, 1), 0, 0)
    assert res.dropped and "assert" in res.drop_reason
