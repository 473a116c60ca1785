"""Register element types as p4c-bm2-ss takes them: a serializable enum is its underlying bit<W>
(p4c's register-serenum-bmv2; P4Info names the enum, as p4c's expected file does), a struct is
refused by name (p4c's bmv2 back end: "Only registers with bit or int types are currently
supported", its issue907-bmv2).  Until 2026-12-03 both compiled and the switch refused them when
it loaded the P4Info."""
from __future__ import annotations

import pytest
from exec_rig import DATA, MODIFY, Rig
from p4.v1 import p4runtime_pb2

from softswitch.frontend import P4Error, load_source

PROG = DATA / "exec_register_serenum.p4"


def _frame(ether_type: int) -> bytes:
    return bytes(12) + ether_type.to_bytes(2, "big")


def test_p4info_types_the_register_by_the_enum():
    rig = Rig(PROG)
    (reg,) = rig.p4info.registers
    assert reg.type_spec.serializable_enum.name == "EthTypes"
    se = rig.p4info.type_info.serializable_enums["EthTypes"]
    assert se.underlying_type.bitwidth == 16
    assert [(m.name, m.value) for m in se.members] == [("IPv4", b"\x08\x00"), ("ARP", b"\x08\x06"),
                                                       ("IPv6", b"\x86\xdd")]


def test_serenum_register_holds_the_value_between_packets():
    rig = Rig(PROG)
    outs = []
    for et in (0x0806, 0x86DD, 0x1234):  # 0x1234 is no member: still stored, as bmv2's bit<16>
        _res, egs = rig.run(_frame(et), port=2)
        outs.append(egs[0].frames[0].data[14:])
    assert outs == [b"\x00\x00\x00", b"\x08\x06\x01", b"\x86\xdd\x00"]
    read = rig.state.read(p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry(
        register_id=rig.p4info.registers[0].preamble.id)))
    assert [e.register_entry.data.bitstring for e in read] == [b"\x00", b"\x00", b"\x12\x34", b"\x00"]


def test_controller_writes_a_serenum_register():
    rig = Rig(PROG)
    e = p4runtime_pb2.RegisterEntry(register_id=rig.p4info.registers[0].preamble.id)
    e.index.index = 3
    e.data.bitstring = b"\x08\x06"
    rig.write(MODIFY, register_entry=e)
    _res, egs = rig.run(_frame(0x0800), port=3)
    assert egs[0].frames[0].data[14:] == b"\x08\x06\x01"


def test_struct_register_is_refused_by_name():
    src = PROG.read_text().replace("struct Meta { }", "struct Meta { }\nstruct S { bit<32> f; }").replace(
        "register<EthTypes>(4) last_type;", "register<S>(4) last_type;")
    with pytest.raises(P4Error, match=r"x\.p4:17:\d+: .*unsupported.*register<S>.*p4c-bm2-ss rejects it too"):
        load_source(src, "x.p4")
