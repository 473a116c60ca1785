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
