"""Two network namespaces joined port to port by N veth pairs (one per plane), no switches.

Names use the ``w2b`` prefix; everything is deleted at teardown, also on failure.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from endpoint_netns import mac

REPO = Path(__file__).resolve().parents[3]


@dataclass
class DirectLink:
    """Hosts ``a`` and ``b`` in namespaces ``ns[side]``, interface ``ifname(side, plane)``."""

    tag: str
    planes: int
    ns: dict[str, str]

    def ifname(self, side: str, plane: int) -> str:
        return f"w2b{self.tag}{side}{plane}"

    def ifaces(self, side: str) -> str:
        return ",".join(self.ifname(side, p) for p in range(1, self.planes + 1))

    def set_up(self, side: str, plane: int, up: bool) -> None:
        from pyroute2 import NetNS

        with NetNS(self.ns[side]) as n:
            n.link("set", index=n.link_lookup(ifname=self.ifname(side, plane))[0], state="up" if up else "down")

    def cmd(self, side: str, *args: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns[side], sys.executable, "-m", "mrc", *args]

    def popen(self, side: str, *args: str) -> subprocess.Popen:
        return subprocess.Popen(self.cmd(side, *args), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def _make(tag: str, planes: int, mtu: int) -> DirectLink:
    from pyroute2 import IPRoute, NetNS, netns

    link = DirectLink(tag, planes, {"a": f"w2b-{tag}-a", "b": f"w2b-{tag}-b"})
    for ns in link.ns.values():
        if ns in netns.listnetns():
            netns.remove(ns)
        netns.create(ns)
    with IPRoute() as ipr:
        for p in range(1, planes + 1):
            a, b = link.ifname("a", p), link.ifname("b", p)
            for name in (a, b):
                if ipr.link_lookup(ifname=name):
                    ipr.link("del", ifname=name)
            ipr.link("add", ifname=a, kind="veth", peer={"ifname": b})
            ipr.link("set", index=ipr.link_lookup(ifname=a)[0], net_ns_fd=link.ns["a"])
            ipr.link("set", index=ipr.link_lookup(ifname=b)[0], net_ns_fd=link.ns["b"])
    for side in "ab":
        with NetNS(link.ns[side]) as n:
            n.link("set", index=n.link_lookup(ifname="lo")[0], state="up")
            for p in range(1, planes + 1):
                idx = n.link_lookup(ifname=link.ifname(side, p))[0]
                n.link("set", index=idx, mtu=mtu, address=mac(side, p))
                n.link("set", index=idx, state="up")
    for side in "ab":  # carrier comes up asynchronously (linkwatch): wait, bounded
        wait_oper_up(link, side)
    return link


def wait_oper_up(link: DirectLink, side: str, timeout_s: float = 10.0) -> None:
    from pyroute2 import NetNS

    names = {link.ifname(side, p) for p in range(1, link.planes + 1)}
    deadline = time.monotonic() + timeout_s
    with NetNS(link.ns[side]) as n:
        while True:
            up = {ln.get_attr("IFLA_IFNAME") for ln in n.get_links() if ln.get_attr("IFLA_OPERSTATE") == "UP"}
            if names <= up:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{sorted(names - up)} not operationally up after {timeout_s} s")
            time.sleep(0.02)  # polling interval of a bounded wait


def _remove(link: DirectLink) -> None:
    from pyroute2 import netns

    for ns in link.ns.values():  # deleting a namespace deletes its veth ends (and so the pairs)
        try:
            netns.remove(ns)
        except OSError:
            pass


@pytest.fixture
def direct_link() -> Iterator:
    """``make(tag, planes=2, mtu=9000)`` -> DirectLink; all namespaces removed at teardown."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")
    made: list[DirectLink] = []

    def make(tag: str, planes: int = 2, mtu: int = 9000) -> DirectLink:
        link = _make(tag, planes, mtu)
        made.append(link)
        return link

    try:
        yield make
    finally:
        for link in made:
            _remove(link)


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen]]:
    """Processes a test starts; killed by PID at teardown if still running."""
    started: list[subprocess.Popen] = []
    try:
        yield started
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
            try:
                p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                pass

