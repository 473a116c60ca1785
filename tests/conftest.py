"""Shared pytest fixtures: network namespaces and veth pairs that are always cleaned up.

Every test passes its own name prefix (e.g. ``h4``) so parallel suites never collide.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

# Same reason as in fabric/__init__.py: tests load gRPC and pyroute2's forking netns helper together.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

# (imported after the fork-support setting: it loads grpc)
from mrc_fabric.targets import TARGETS, selected_target, target_available


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a misspelt TARGET instead of quietly skipping the target's tests."""
    target = selected_target()
    if target not in TARGETS:
        raise pytest.UsageError(f"TARGET={target!r} is not a target (choose {' or '.join(TARGETS)})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked with a target's name (``@pytest.mark.bmv2``) skip, saying why, when that target
    cannot run here (its plugin's ``missing()``)."""
    for name in TARGETS:
        why = target_available(name)
        if not why:
            continue
        skip = pytest.mark.skip(reason=why)
        for item in items:
            if name in item.keywords:
                item.add_marker(skip)


def _require_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback TCP port something is listening on (for "port in use" errors)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        yield s.getsockname()[1]
    finally:
        s.close()


@pytest.fixture
def netns_factory() -> Iterator:
    """``make(name)`` creates network namespace ``name``; all are deleted at teardown."""
    _require_root()
    from pyroute2 import netns

    made: list[str] = []

    def make(name: str) -> str:
        if name in netns.listnetns():
            netns.remove(name)
        netns.create(name)
        made.append(name)
        return name

    try:
        yield make
    finally:
        for name in made:
            try:
                netns.remove(name)
            except OSError:
                pass


@pytest.fixture
def veth_factory() -> Iterator:
    """``make(a, b, netns_b=None)`` creates an up veth pair (IPv6 off, so no stray ND/MLD frames).

    ``b`` may be moved into namespace ``netns_b``.  Pairs are deleted at teardown.
    """
    _require_root()
    from pyroute2 import IPRoute, NetNS

    made: list[str] = []
    with IPRoute() as ipr:

        def make(a: str, b: str, netns_b: str | None = None) -> tuple[str, str]:
            if ipr.link_lookup(ifname=a):
                ipr.link("del", ifname=a)
            ipr.link("add", ifname=a, kind="veth", peer={"ifname": b})
            made.append(a)
            _quiet(a)
            idx_a = ipr.link_lookup(ifname=a)[0]
            idx_b = ipr.link_lookup(ifname=b)[0]
            if netns_b is None:
                _quiet(b)
                ipr.link("set", index=idx_b, state="up")
            else:
                ipr.link("set", index=idx_b, net_ns_fd=netns_b)
                with NetNS(netns_b) as ns:
                    ns.link("set", index=ns.link_lookup(ifname=b)[0], state="up")
            ipr.link("set", index=idx_a, state="up")
            # carrier comes up asynchronously (the kernel's linkwatch): a frame sent before it is
            # dropped unseen, so wait (bounded) until both ends are operationally up
            _wait_oper_up(ipr, a)
            if netns_b is None:
                _wait_oper_up(ipr, b)
            else:
                with NetNS(netns_b) as ns:
                    _wait_oper_up(ns, b)
            return a, b

        try:
            yield make
        finally:
            for a in made:
                if ipr.link_lookup(ifname=a):  # may be gone with its namespace
                    ipr.link("del", ifname=a)


def _wait_oper_up(ipr, ifname: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        links = ipr.get_links(ifname=ifname)
        if links and links[0].get_attr("IFLA_OPERSTATE") == "UP":
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{ifname} not operationally up after {timeout_s} s")
        time.sleep(0.01)  # polling interval of a bounded wait


def _quiet(ifname: str) -> None:
    """Disable IPv6 on an interface of this namespace so the kernel sends nothing on it."""
    try:
        with open(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6", "w") as f:
            f.write("1")
    except OSError:
        pass
