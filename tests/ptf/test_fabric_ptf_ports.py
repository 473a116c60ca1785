"""The fabric PTF run's port map (pure) and the netns_eth platform's sockets inside a namespace (root)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "ptf_tests"), str(ROOT / "ptf_tests" / "platforms")]

from base.fabric_ports import TAP_BASE, fabric_ports
from netns_eth import NetnsPort, in_netns, platform_config_update, split_iface

from controller import build_sid_plan, load_topology


def test_port_map_small() -> None:
    topo = load_topology(ROOT / "examples/small.yaml")
    ports = fabric_ports(topo, build_sid_plan(topo), "w3bq")
    hosts = [p for p in ports if not p.tap]
    taps = [p for p in ports if p.tap]
    assert [p.ptf_arg() for p in hosts[:2]] == ["1-1@w3bq-h1/nic1", "1-2@w3bq-h1/nic2"]
    assert len(hosts) == 4 * 2  # every host NIC port
    assert len(taps) == 8  # every leaf-spine link, once, at the leaf end
    assert {p.node for p in taps} == {s.name for s in topo.leaves()}
    assert taps[0].ptf_arg() == f"{TAP_BASE + topo.switches['p1l1'].device_id}-1@w3bqs3p1"
    assert len({p.key for p in ports}) == len(ports)


def test_platform_config() -> None:
    config = {"interfaces": [(1, 1, "ns-a/nic1"), (1003, 2, "w3bqs3p2")]}
    platform_config_update(config)
    assert config["port_map"] == {(1, 1): "ns-a/nic1", (1003, 2): "w3bqs3p2"}
    assert config["dataplane"]["portclass"] is NetnsPort
    assert split_iface("ns-a/nic1") == ("ns-a", "nic1")
    assert split_iface("eth0") == (None, "eth0")


def test_missing_namespace_is_a_clear_error() -> None:
    with pytest.raises(OSError, match="does not exist"), in_netns("w3bq-no-such-ns"):
        pass


@pytest.mark.root
def test_socket_opened_inside_a_namespace() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (namespaces, veth)")
    ns, outer, inner = "w3bq-t", "w3bqa", "w3bqb"

    def sh(*cmd: str) -> None:
        subprocess.run(cmd, check=True, capture_output=True)

    try:
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
        sh("ip", "link", "set", inner, "netns", ns)
        sh("ip", "link", "set", outer, "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up")
        before = os.readlink("/proc/thread-self/ns/net")
        port = NetnsPort(f"{ns}/{inner}", 1, 1, {})
        assert os.readlink("/proc/thread-self/ns/net") == before  # back in our own namespace
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as tx:
            tx.bind((outer, 0))
            frame = bytes.fromhex("020000000001020000000002") + b"\x88\xb5" + b"w3bq" * 16
            tx.send(frame)
        port.socket.settimeout(2.0)
        dev, p, data, _ = port.recv()
        assert (dev, p, data) == (1, 1, frame)
        port.socket.close()
        port.socket = None
    finally:
        subprocess.run(["ip", "link", "del", outer], check=False, capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
