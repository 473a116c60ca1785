"""ONOS's fabric.p4 (the best-known production v1model program for bmv2) through the compiled
pipeline: an IPv4 packet routed as fabric.p4 intends (filtering -> forwarding.routing_v4 ->
pre_next.next_vlan -> next.hashed (action selector) -> egress_next.egress_vlan), a bridged one
tagged on the way out, and a packet from an unconfigured port dropped.  Its sources are not
part of this repository (Apache-2.0, ONOS's own); the test runs when they are present at
``$ONOS_FABRIC_DIR`` (default /work/corpus/realworld/onos-fabric, see docs/p4_subset.md)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from exec_rig import INSERT, Rig
from p4.v1 import p4runtime_pb2

SRC = Path(os.environ.get("ONOS_FABRIC_DIR", "/work/corpus/realworld/onos-fabric"))
# bmv2-compile.sh's flags, and the Makefile's for each bmv2 profile
DEFINES = {"TARGET_BMV2": "1", "CPU_PORT": "255", "WITH_PORT_COUNTER": "1", "WITH_DEBUG": "1"}
PROFILES = {"fabric": (), "fabric-spgw": ("WITH_SPGW",), "fabric-int": ("WITH_INT_SOURCE", "WITH_INT_TRANSIT"),
            "fabric-spgw-int": ("WITH_SPGW", "WITH_INT_SOURCE", "WITH_INT_TRANSIT")}

ROUTER_MAC = 0x00AA00000001
HOST_MAC = 0x000000000A01
NEXT_HOP_MAC = 0x00BB00000002


@pytest.fixture(scope="module", params=list(PROFILES))
def rig(request):
    if not (SRC / "fabric.p4").exists():
        pytest.skip(f"ONOS fabric.p4 sources not found at {SRC} (set ONOS_FABRIC_DIR)")
    defines = DEFINES | {d: "1" for d in PROFILES[request.param]}
    r = Rig(SRC / "fabric.p4", defines=defines, include_dirs=[str(SRC / "include")])
    # port 1: untagged edge port, internal VLAN 100
    r.entry("ingress_port_vlan", {"ig_port": ("exact", 1), "vlan_is_valid": ("exact", 0)},
            r.action("permit_with_internal_vlan", vlan_id=100, port_type=1), priority=10)
    # IPv4 to the router MAC on port 1: routed
    r.entry("fwd_classifier", {"ig_port": ("exact", 1), "eth_dst": ("ternary", ROUTER_MAC, (1 << 48) - 1),
                               "ip_eth_type": ("exact", 0x0800)},
            r.action("set_forwarding_type", fwd_type=2), priority=10)
    r.entry("routing_v4", {"ipv4_dst": ("lpm", 0x0A000200, 24)}, r.action("set_next_id_routing_v4", next_id=7))
    r.entry("next_vlan", {"next_id": ("exact", 7)}, r.action("set_vlan", vlan_id=200))
    sel = r._id("action_profiles", "hashed_selector")
    r.write(INSERT, action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=sel, member_id=1,
        action=r.action("routing_hashed", port_num=2, smac=ROUTER_MAC, dmac=NEXT_HOP_MAC)))
    r.entry("hashed", {"next_id": ("exact", 7)}, member=1)
    r.entry("egress_vlan", {"vlan_id": ("exact", 200), "eg_port": ("exact", 2)}, r.action("pop_vlan"))
    # bridging in VLAN 100: HOST_MAC -> next 8 -> port 4, tagged there
    r.entry("bridging", {"vlan_id": ("exact", 100), "eth_dst": ("ternary", HOST_MAC, (1 << 48) - 1)},
            r.action("set_next_id_bridging", next_id=8), priority=10)
    r.write(INSERT, action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=sel, member_id=2, action=r.action("output_hashed", port_num=4)))
    r.entry("hashed", {"next_id": ("exact", 8)}, member=2)
    r.entry("egress_vlan", {"vlan_id": ("exact", 100), "eg_port": ("exact", 4)}, r.action("push_vlan"))
    return r


def csum(b: bytes) -> int:
    s = sum(int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(dst: int, ttl: int = 64, proto: int = 17, payload: bytes = b"") -> bytes:
    h = bytearray(bytes.fromhex("45000000abcd0000") + bytes([ttl, proto]) + b"\0\0"
                  + (0x0A000101).to_bytes(4, "big") + dst.to_bytes(4, "big"))
    h[2:4] = (20 + len(payload)).to_bytes(2, "big")
    h[10:12] = csum(bytes(h)).to_bytes(2, "big")
    return bytes(h) + payload


UDP = bytes.fromhex("30393039000c0000") + b"abcd"


def eth(dst: int, src: int, etype: int = 0x0800) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + etype.to_bytes(2, "big")


def outputs(rig, pkt: bytes, port: int) -> dict[int, bytes]:
    _res, egs = rig.run(pkt, port=port)
    return {f.port: f.data for e in egs if not e.dropped for f in e.frames}


def test_ipv4_is_routed_by_routing_v4_and_a_hashed_next(rig):
    out = outputs(rig, eth(ROUTER_MAC, HOST_MAC) + ipv4(0x0A000205, ttl=64, payload=UDP), 1)
    assert list(out) == [2]
    frame = out[2]
    assert frame[:12] == eth(NEXT_HOP_MAC, ROUTER_MAC)[:12]  # MACs rewritten by routing_hashed
    assert frame[12:14] == b"\x08\x00"  # no VLAN tag: egress_vlan popped the internal VLAN 200
    ip = frame[14:34]
    assert ip[8] == 63  # TTL decremented in egress_next
    assert csum(ip) == 0  # header checksum recomputed by FabricComputeChecksum
    assert ip[16:20] == bytes([10, 0, 2, 5]) and frame[34:] == UDP


def test_an_unrouted_destination_goes_nowhere(rig):
    # routing_v4 misses (nop): next_id 0 matches no next table; egress_vlan misses for port 0
    assert outputs(rig, eth(ROUTER_MAC, HOST_MAC) + ipv4(0x0A000305, payload=UDP), 1) == {}


def test_bridged_packet_keeps_its_ttl_and_is_tagged(rig):
    pkt = eth(HOST_MAC, 0x000000000B02) + ipv4(0x0A000101, ttl=9, payload=UDP)
    out = outputs(rig, pkt, 1)
    assert list(out) == [4]
    frame = out[4]
    assert frame[12:16] == bytes.fromhex("8100") + (100).to_bytes(2, "big")  # VLAN 100 pushed
    assert frame[16:18] == b"\x08\x00" and frame[18 + 8] == 9  # bridged: TTL untouched
    assert frame[:12] == pkt[:12]


def test_packet_from_an_unconfigured_port_is_denied(rig):
    # filtering.ingress_port_vlan's const default deny(): skip forwarding and next
    assert outputs(rig, eth(ROUTER_MAC, HOST_MAC) + ipv4(0x0A000205, payload=UDP), 3) == {}


def test_acl_clone_to_cpu_keeps_the_ingress_port_in_packet_in(rig):
    """acl.set_clone_session_id: clone3(I2E, id, {standard_metadata.ingress_port}); the clone to
    CPU_PORT 255 gets packet_in.ingress_port from the preserved field (0 without it)."""
    cs = p4runtime_pb2.CloneSessionEntry(session_id=77)
    cs.replicas.add(egress_port=255, instance=0)
    rig.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs))
    rig.entry("acl", {"eth_type": ("ternary", 0x0800, 0xFFFF), "ip_proto": ("ternary", 17, 0xFF)},
              rig.action("set_clone_session_id", clone_id=77), priority=10)
    pkt = eth(ROUTER_MAC, HOST_MAC) + ipv4(0x0A000205, payload=UDP)
    out = outputs(rig, pkt, 1)
    assert sorted(out) == [2, 255]  # routed as before, and the clone
    pin = int.from_bytes(out[255][:2], "big")
    assert pin >> 7 == 1  # packet_in.ingress_port (9 bits) then 7 bits of padding
    assert out[255][2:] == pkt  # an ingress clone: the original packet, unmodified
