"""PTF platform ``netns_eth``: the ``eth`` platform, plus interfaces that live in network namespaces.

An interface given as ``-i <device>-<port>@<netns>/<ifname>`` is opened inside namespace ``<netns>``
(``/run/netns/<netns>``): the AF_PACKET socket is created and bound there and then used from PTF's
root-namespace process as usual (a socket stays in the namespace it was created in).  A plain
``<ifname>`` is opened in PTF's own namespace.  This lets one PTF process drive every host NIC of an
emulated fabric whose hosts each have their own namespace.

    ptf --platform-dir ptf_tests/platforms --platform netns_eth -i 1-1@lab-h1/nic1 -i 1001-1@labs3p1 ...
"""
from __future__ import annotations

import ctypes
import os
from contextlib import contextmanager

from ptf.dataplane import DataPlanePortLinux

CLONE_NEWNET = 0x40000000
NETNS_DIR = "/run/netns"
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextmanager
def in_netns(name: str):
    """Run the body with the calling thread in network namespace ``name``, then come back."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(os.path.join(NETNS_DIR, name), os.O_RDONLY)
    except FileNotFoundError:
        os.close(own)
        raise OSError(f"network namespace {name!r} does not exist ({NETNS_DIR}/{name})") from None
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


def split_iface(spec: str) -> tuple[str | None, str]:
    """``"ns/if"`` -> ("ns", "if"); ``"if"`` -> (None, "if")."""
    ns, sep, ifname = spec.rpartition("/")
    return (ns, ifname) if sep else (None, spec)


class NetnsPort(DataPlanePortLinux):
    """PTF's Linux raw-socket port, opened inside the interface's namespace."""

    def __init__(self, interface_name, device_number, port_number, config=None):
        ns, ifname = split_iface(interface_name)
        if ns is None:
            super().__init__(ifname, device_number, port_number, config or {})
        else:
            with in_netns(ns):
                super().__init__(ifname, device_number, port_number, config or {})
        self.interface_name = interface_name

    def down(self):
        raise NotImplementedError("netns_eth ports do not change link state; use the fabric's faults")

    def up(self):
        raise NotImplementedError("netns_eth ports do not change link state; use the fabric's faults")


def platform_config_update(config):
    """Port map from ``--interface`` (no default veths) and the namespace-aware port class."""
    config["port_map"] = {(dev, port): iface for dev, port, iface in config["interfaces"]}
    config.setdefault("dataplane", {})["portclass"] = NetnsPort
