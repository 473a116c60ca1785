"""netbuild.set_states: both ends of a link change together, from any thread, and bad names are errors.

Needs root.  Namespace ``nbst-<pid>`` with one veth pair; deleted at teardown, also on failure.
"""
from __future__ import annotations

import os
import threading

import pytest

from mrc_fabric import netbuild

pytestmark = pytest.mark.root


@pytest.fixture
def veth_ns():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth)")
    from pyroute2 import NetNS

    name = f"nbst-{os.getpid()}"
    netbuild.create_netns(name)
    try:
        with NetNS(name) as n:
            n.link("add", ifname="nbsta", kind="veth", peer="nbstb")
            for ifn in ("nbsta", "nbstb"):
                n.link("set", index=n.link_lookup(ifname=ifn)[0], state="up")
        yield name
    finally:
        netbuild.delete_netns(name)


def test_set_states_from_a_thread_leaves_the_thread_where_it_was(veth_ns):
    mine = os.readlink("/proc/thread-self/ns/net")
    seen: list = []

    def flip(up: bool) -> None:
        here = os.readlink("/proc/thread-self/ns/net")
        netbuild.set_states([("nbsta", up, veth_ns), ("nbstb", up, veth_ns)])
        seen.append((up, here == os.readlink("/proc/thread-self/ns/net"),
                     netbuild.link_info("nbsta", veth_ns)["up"], netbuild.link_info("nbstb", veth_ns)["up"]))

    for up in (False, True, False):
        t = threading.Thread(target=flip, args=(up,))
        t.start()
        t.join()
    assert seen == [(False, True, False, False), (True, True, True, True), (False, True, False, False)]
    assert os.readlink("/proc/thread-self/ns/net") == mine
    netbuild.set_state("nbsta", True, veth_ns)
    info = netbuild.link_info("nbsta", veth_ns)
    assert info["up"] and not info["carrier"]  # its peer is still down: no carrier


def test_set_states_names_what_is_missing(veth_ns):
    with pytest.raises(netbuild.NetBuildError, match=f"interface {veth_ns}/nbstx does not exist"):
        netbuild.set_states([("nbstx", False, veth_ns)])
    with pytest.raises(netbuild.NetBuildError, match="network namespace nbst-none does not exist"):
        netbuild.set_states([("nbsta", False, "nbst-none")])
    assert netbuild.link_info("nbsta", veth_ns)["up"]  # nothing was changed by the refused calls


def test_disable_offloads_turns_segmentation_and_receive_offload_off(veth_ns):
    """bmv2's capture ring (libpcap) holds 32 frames on a port with segmentation offload on, ~1,300 with
    it off (netbuild.disable_offloads): a new veth has it on, the call turns all three off on that end."""
    assert any(netbuild.offloads("nbsta", veth_ns).values()), "a new veth has offloads on: nothing to show"
    netbuild.disable_offloads("nbsta", veth_ns)
    assert netbuild.offloads("nbsta", veth_ns) == {"tso": False, "gso": False, "gro": False}
    assert any(netbuild.offloads("nbstb", veth_ns).values()), "the peer keeps its own settings"
    with pytest.raises(netbuild.NetBuildError, match=f"interface {veth_ns}/nbstx does not exist"):
        netbuild.disable_offloads("nbstx", veth_ns)


def test_switch_ports_have_offloads_off():
    """Both ends of a switch-to-switch link, as the fabric builds it, come up with offloads off."""
    if os.geteuid() != 0:
        pytest.skip("needs root (veth)")
    a, b = f"nbo{os.getpid() % 100000}a", f"nbo{os.getpid() % 100000}b"
    try:
        netbuild.add_switch_link(a, "02:00:00:00:0a:01", b, "02:00:00:00:0a:02", mtu=1500)
        for ifname in (a, b):
            assert netbuild.offloads(ifname) == {"tso": False, "gso": False, "gro": False}, ifname
    finally:
        netbuild.delete_interface(a)
