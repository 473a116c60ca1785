"""802.1Q / 802.1ad frames reach the pipeline as they were on the wire, through real veths.

The kernel moves the outer VLAN tag of a received frame into the skb's metadata before AF_PACKET
sees it (on a veth even when the peer sent the tag in the bytes); the port must put it back (bmv2
gets it back from libpcap), and the rx byte counter must include it.  Both receive paths are run:
the mmap'ed rx ring and recvmsg + PACKET_AUXDATA.
"""
from __future__ import annotations

import socket
import struct

import pytest
from polling import wait_for
from tiny_pipeline import TinyPipeline

from softswitch.engine.loop import PacketLoop
from softswitch.engine.ports import ETH_P_ALL, LinuxPort, with_vlan_tag
from softswitch.engine.tm import TrafficManager

SOL_PACKET, PACKET_AUXDATA = 263, 8
MARK = b"\x88\xb5VLANTEST"
# TinyPipeline forwards by byte 0 of the frame: dst MAC 02:... goes to port 2
DST, SRC = bytes.fromhex("020000000001"), bytes.fromhex("0a0000000002")


def frames() -> dict[str, bytes]:
    pad = bytes(40)
    return {
        "untagged": DST + SRC + MARK + pad,
        "dot1q vid 100": DST + SRC + b"\x81\x00\x00\x64" + MARK + pad,
        "dot1q pcp 5 vid 0": DST + SRC + b"\x81\x00\xa0\x00" + MARK + pad,
        "dot1q tci 0": DST + SRC + b"\x81\x00\x00\x00" + MARK + pad,
        "dot1ad over dot1q": DST + SRC + b"\x88\xa8\x00\xc8\x81\x00\x00\x64" + MARK + pad,
    }


def recv_wire(sock: socket.socket) -> bytes | None:
    """One frame from ``sock`` with its VLAN tag restored from PACKET_AUXDATA (independent of
    softswitch's code: the struct is decoded here)."""
    try:
        data, anc, _f, _a = sock.recvmsg(65536, socket.CMSG_SPACE(20))
    except TimeoutError:
        return None
    for level, typ, raw in anc:
        if level == SOL_PACKET and typ == PACKET_AUXDATA:
            status, _l, _s, _m, _n, tci, tpid = struct.unpack_from("=IIIHHHH", raw)
            if status & 0x10 or tci:
                tpid = tpid if status & 0x40 else 0x8100
                data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
    return data


def test_with_vlan_tag_rules():
    untagged = DST + SRC + MARK
    assert with_vlan_tag(untagged, 0x1, 0, 0) == untagged
    assert with_vlan_tag(untagged, 0x1 | 0x10, 0, 0) == DST + SRC + b"\x81\x00\x00\x00" + MARK
    assert with_vlan_tag(untagged, 0x1, 5, 0) == DST + SRC + b"\x81\x00\x00\x05" + MARK  # old kernels
    assert with_vlan_tag(untagged, 0x1 | 0x10 | 0x40, 7, 0x88A8) == DST + SRC + b"\x88\xa8\x00\x07" + MARK


@pytest.mark.root
@pytest.mark.parametrize("use_ring", [True, False], ids=["rx-ring", "recvmsg-auxdata"])
def test_tagged_frames_reach_the_pipeline_as_on_the_wire(veth_factory, use_ring):
    veth_factory("h16vs1", "h16vh1")
    veth_factory("h16vs2", "h16vh2")
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    tx.bind(("h16vh1", 0))
    rx.bind(("h16vh2", ETH_P_ALL))
    rx.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    rx.settimeout(2.0)
    pipe = TinyPipeline()
    p1 = LinuxPort(1, "h16vs1", use_ring=use_ring)
    lp = PacketLoop(TrafficManager(), [p1, LinuxPort(2, "h16vs2", use_ring=use_ring)])
    lp.set_pipeline(pipe)
    lp.start()
    try:
        assert (p1.ring is not None) == use_ring
        sent = frames()
        for data in sent.values():
            tx.send(data)
        wait_for(lambda: len([it for it in pipe.seen if MARK in it.meta]) == len(sent),
                 what="every test frame through egress")
        seen = [it.meta for it in pipe.seen if MARK in it.meta]
        assert seen == list(sent.values()), "the pipeline must see the tags as sent"
        wait_for(lambda: p1.counters.rx_bytes >= sum(map(len, sent.values())), what="rx bytes")
        assert p1.counters.rx_bytes == sum(map(len, sent.values())), "rx bytes include the tags"
        out = []
        for _ in range(50):  # bounded: the test frames plus any stray frame
            d = recv_wire(rx)
            if d is None:
                break
            if MARK in d:
                out.append(d)
                if len(out) == len(sent):
                    break
        assert out == list(sent.values()), "the tags leave the switch as they came in"
        # the loop thread counts a tx-ring batch after the kernel has sent it, so the frames can
        # be on the wire a moment before the counter moves
        wait_for(lambda: lp.ports[2].counters.tx_bytes >= sum(map(len, sent.values())),
                 what="tx bytes")
        assert lp.ports[2].counters.tx_bytes == sum(map(len, sent.values()))
    finally:
        lp.stop()
        tx.close()
        rx.close()


def test_mrc_switch_drops_a_tagged_frame_it_forwards_untagged():
    """What the restored tag changes for p4src/mrc_switch.p4 (leaf p1l1, the controller's tables):
    the untagged frame is routed, the same frame with an 802.1Q or 802.1ad tag is not IPv6 to the
    parser and is dropped, as on bmv2."""
    from pathlib import Path

    from p4.v1 import p4runtime_pb2

    from controller import build_plan, load_topology
    from controller.mapping import P4Names, desired_state
    from softswitch.exec import build_pipeline
    from softswitch.frontend import load_program
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState

    root = Path(__file__).resolve().parents[3]
    program = load_program(str(root / "p4src" / "mrc_switch.p4"), {}, [str(root / "p4src")])
    p4info = build_p4info(program)
    state = SwitchState(p4info)
    pipeline = build_pipeline(program, state, 255)
    d = desired_state(P4Names.from_p4info(p4info),
                      build_plan(load_topology(str(root / "examples" / "small.yaml"))).switches["p1l1"])
    for e in d.all():
        utype = p4runtime_pb2.Update.MODIFY if e in d.defaults else p4runtime_pb2.Update.INSERT
        state.write(p4runtime_pb2.Update(type=utype, entity=e))
    # host h1 (port 3) -> uSIDs p1l1, p1s1, ...: routed to spine port 1
    ip6 = (bytes([0x60, 0, 0, 0, 0, 10, 17, 64]) + bytes.fromhex("fc000000801100000000000000000000")
           + bytes.fromhex("fc000000210111012102801200000000"))
    udp = bytes.fromhex("c00004d2000a0000") + b"\0\0"
    macs = bytes.fromhex("020021010003020180110001")
    untagged = macs + b"\x86\xdd" + ip6 + udp
    res = pipeline.ingress(untagged, 3, 0)
    assert [it.egress_port for it in res.to_tm] == [1], res.drop_reason
    for tag in (b"\x81\x00\x00\x64", b"\x88\xa8\x00\xc8\x81\x00\x00\x64"):
        res = pipeline.ingress(macs + tag + b"\x86\xdd" + ip6 + udp, 3, 0)
        assert res.dropped and not res.to_tm, tag.hex()
