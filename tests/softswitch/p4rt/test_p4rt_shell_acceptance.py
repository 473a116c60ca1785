"""Acceptance: p4runtime-shell drives the server exactly like
``python -m p4runtime_sh --grpc-addr 127.0.0.1:PORT --device-id 1 --election-id 0,1
--config p4info.txtpb,devconfig`` and inserts, reads back, modifies and deletes entries."""
from __future__ import annotations

import queue

import pytest
from p4rt_helpers import FEATURES
from p4runtime_sh import shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException

from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState


@pytest.fixture()
def shell(tmp_path):
    outs: queue.Queue = queue.Queue()
    server = P4RuntimeServer(1, lambda p4info, cfg: SwitchState(p4info), outs.put, "127.0.0.1:0")
    port = server.start()
    devconfig = tmp_path / "devconfig.bin"
    devconfig.write_bytes(b"softswitch device config")
    try:
        # same as the command line: --device-id 1 --election-id 0,1 --config p4info,devconfig
        args = sh.get_arg_parser().parse_args(["--grpc-addr", f"127.0.0.1:{port}", "--device-id", "1",
                                               "--election-id", "0,1", "--config",
                                               f"{FEATURES},{devconfig}"])
        sh.setup(args.device_id, args.grpc_addr, args.election_id, args.role_name, args.config, verbose=False)
        try:
            yield server, outs
        finally:
            sh.teardown()
    finally:
        server.stop()


def test_shell_insert_read_modify_delete(shell):
    server, outs = shell
    state = server.state
    assert state is not None

    te = sh.TableEntry("MyIngress.l2")(action="MyIngress.set_port")
    te.match["dst_mac"] = "00:11:22:33:44:55"
    te.action["dmac"] = "aa:bb:cc:dd:ee:ff"
    te.action["port"] = "7"
    te.insert()
    assert state.table("MyIngress.l2").lookup((0x001122334455,))[1] == (0xAABBCCDDEEFF, 7)

    # read back through the shell
    got = list(sh.TableEntry("MyIngress.l2").read())
    assert len(got) == 1
    assert got[0].action["port"].value == b"\x07" and int.from_bytes(got[0].match["dst_mac"].exact.value, "big") == 0x001122334455

    # duplicate insert: the shell decodes our per-update error details
    with pytest.raises(P4RuntimeWriteException) as ei:
        te.insert()
    assert "ALREADY_EXISTS" in str(ei.value)

    te.action["port"] = "9"
    te.modify()
    assert state.table("MyIngress.l2").lookup((0x001122334455,))[1] == (0xAABBCCDDEEFF, 9)

    # ternary/range/optional with priority
    acl = sh.TableEntry("MyIngress.acl")(action="MyIngress.to_cpu")
    acl.match["h.ipv6.next_hdr"] = "17&&&0xff"
    acl.match["h.udp.dport"] = "4791..4792"
    acl.priority = 10
    acl.action["reason"] = "3"
    acl.insert()
    assert state.table("MyIngress.acl").lookup((17, 4791, 0, 0))[1] == (3,)

    # default entry
    d = sh.TableEntry("MyIngress.acl")(action="MyIngress.acl_deny", is_default=True)
    d.modify()
    deny_id = next(a.id for a in state.actions.values() if a.name == "MyIngress.acl_deny")
    assert state.table("MyIngress.acl").lookup((6, 1, 0, 0)) == (deny_id, (), None)

    # action profile member + group through the shell, used by an LPM selector table
    m = sh.ActionProfileMember("MyIngress.ecmp_selector")(member_id=1, action="MyIngress.ingress.nexthop")
    m.action["port"] = "4"
    m.insert()
    g = sh.ActionProfileGroup("MyIngress.ecmp_selector")(group_id=1)
    g.add(1)
    g.insert()
    rt = sh.TableEntry("MyIngress.route_v6")
    rt.match["h.ipv6.dst"] = "2001:db8::/32"
    rt.group_id = 1
    rt.insert()
    assert state.table("MyIngress.route_v6").lookup((0x20010DB8 << 96 | 1,), 12345)[1] == (4,)

    # the shell leaves a group's max_size 0: on a selector with @max_group_size(16) the group may
    # then hold up to 16 (p4runtime.proto); it was refused INVALID_ARGUMENT until 2026-12-05
    wm = sh.ActionProfileMember("MyIngress.wcmp_selector")(member_id=1, action="MyIngress.ingress.nexthop")
    wm.action["port"] = "5"
    wm.insert()
    wg = sh.ActionProfileGroup("MyIngress.wcmp_selector")(group_id=1)
    wg.add(1, weight=16)
    wg.insert()
    (back,) = list(sh.ActionProfileGroup("MyIngress.wcmp_selector").read())
    assert back.max_size == 0 and [(m.member_id, m.weight) for m in back.msg().members] == [(1, 16)]

    # counters and multicast through the shell
    state.counter("MyIngress.port_rx").count(2, 100)
    ce = sh.CounterEntry("MyIngress.port_rx")
    ce.index = 2
    (c,) = list(ce.read())
    assert c.data.byte_count == 100 and c.data.packet_count == 1
    mg = sh.MulticastGroupEntry(5).add(1, 0).add(2, 0)
    mg.insert()
    assert state.pre.multicast_group(5) == ((1, 0), (2, 0))

    # packet-out
    sh.PacketOut(b"hello", egress_port="3").send()
    assert outs.get(timeout=5) == (3 << 7).to_bytes(2, "big") + b"hello"

    te.delete()
    assert list(sh.TableEntry("MyIngress.l2").read()) == []
