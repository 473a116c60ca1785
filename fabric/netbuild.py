"""Namespaces, veth pairs, addresses and sysctls with pyroute2 (no shelling out to ``ip``)."""
from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import socket
import struct
import subprocess
from collections.abc import Iterator

from pyroute2 import IPRoute, NetNS, netns
from pyroute2.netlink.exceptions import NetlinkError

from softswitch.engine.ports import ETHTOOL_GET, ETHTOOL_SET, ethtool

IFA_F_NODAD = 0x02
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
# Offloads a switch port turns off (softswitch's legacy ethtool commands): TCP segmentation, generic
# segmentation, generic receive offload.
SWITCH_PORT_OFFLOADS = ("tso", "gso", "gro")
IFF_UP = 0x1
CLONE_NEWNET = 0x40000000
_IFREQ_FLAGS = struct.Struct("16sH22x")
DEFAULT_MTU = 9000
# Host namespaces: no DAD, no router solicitations, no RAs, so the kernel stays quiet on the fabric.
HOST_SYSCTLS = {
    "net/ipv6/conf/{}/accept_dad": "0",
    "net/ipv6/conf/{}/dad_transmits": "0",
    "net/ipv6/conf/{}/router_solicitations": "0",
    "net/ipv6/conf/{}/accept_ra": "0",
    "net/ipv6/conf/{}/autoconf": "0",
}


class NetBuildError(RuntimeError):
    """A namespace or interface operation failed; the message names the object."""


def _write(path: str, value: str) -> None:
    with open(f"/proc/sys/{path}", "w") as f:
        f.write(value)


def sysctl(path: str, value: str, ns: str | None = None) -> None:
    """Write ``/proc/sys/<path>`` in the root namespace or in ``ns``."""
    if ns is None:
        _write(path, value)
        return
    netns.pushns(ns)
    try:
        _write(path, value)
    finally:
        netns.popns()


@contextlib.contextmanager
def ipr(ns: str | None = None) -> Iterator[IPRoute]:
    """An rtnetlink socket in the root namespace or in ``ns``."""
    sock = IPRoute() if ns is None else NetNS(ns)
    try:
        yield sock
    finally:
        sock.close()


def netns_exists(name: str) -> bool:
    return name in netns.listnetns()


def create_netns(name: str) -> None:
    """Create a namespace with loopback up and a quiet IPv6 configuration."""
    if netns_exists(name):
        raise NetBuildError(f"network namespace {name} already exists (a previous run? "
                            "try `mrc-fabric down --prefix ...`)")
    netns.create(name)
    for key in ("all", "default"):
        for path, v in HOST_SYSCTLS.items():
            sysctl(path.format(key), v, name)
    with ipr(name) as ns:
        ns.link("set", index=ns.link_lookup(ifname="lo")[0], state="up")


def delete_netns(name: str) -> bool:
    """Remove a namespace (and with it every interface inside); False if it was not there."""
    if not netns_exists(name):
        return False
    netns.remove(name)
    return True


def if_index(sock: IPRoute, ifname: str) -> int | None:
    found = sock.link_lookup(ifname=ifname)
    return found[0] if found else None


def interface_exists(ifname: str, ns: str | None = None) -> bool:
    with ipr(ns) as s:
        return if_index(s, ifname) is not None


def _switch_side(sock: IPRoute, ifname: str, mac: str, mtu: int) -> None:
    """Configure a root-namespace switch port end: no IPv6 at all, MTU, MAC, up."""
    idx = if_index(sock, ifname)
    if idx is None:
        raise NetBuildError(f"interface {ifname} vanished after creation")
    sysctl(f"net/ipv6/conf/{ifname}/disable_ipv6", "1")  # before up: no DAD/RS/MLD ever sent
    disable_offloads(ifname)
    sock.link("set", index=idx, mtu=mtu, address=mac)
    sock.link("set", index=idx, state="up")


def offloads(ifname: str, ns: str | None = None) -> dict[str, bool]:
    """Whether each offload of ``SWITCH_PORT_OFFLOADS`` is on, as the legacy ethtool queries answer -- the
    ones libpcap asks (``iface_get_offload`` in ``pcap-linux.c``).  ``ethtool -k`` may still show
    ``tcp-segmentation-offload: on`` after ``disable_offloads``: on newer kernels it also counts
    feature bits the legacy TSO command leaves alone (e.g. ``tx-tcp-accecn-segmentation``)."""
    s = _ns_socket(ns)
    try:
        return {name: bool(ethtool(ifname, ETHTOOL_GET[name], sock=s)) for name in SWITCH_PORT_OFFLOADS}
    except OSError as exc:
        raise NetBuildError(f"interface {ns + '/' if ns else ''}{ifname}: {exc.strerror or exc}") from None
    finally:
        s.close()


def disable_offloads(ifname: str, ns: str | None = None) -> None:
    """Turn a switch port's segmentation and receive offloads off through the legacy ethtool commands
    (about ``ethtool -K IF tso off gso off gro off``; see ``offloads`` for what ``ethtool -k`` shows).  bmv2 reads a port with libpcap in immediate mode (``src/BMI/bmi_interface.c``; its
    ``configure.ac`` turns that on wherever libpcap has it), and libpcap sizes every slot of its 2 MB
    capture ring for the largest frame the interface can hand it: MTU + 18 bytes, but 64 KiB when any
    of these offloads is on (``create_ring`` in libpcap's ``pcap-linux.c``), as it is on a new veth.
    That ring held 32 frames: of a burst arriving while the reader was not scheduled it kept 32 and
    the kernel dropped the rest before the switch saw them; with the offloads off it kept 1,310 at
    MTU 1,500 and 231 at 9,000 (measured 2026-12-06 on a veth with a capture opened the way bmv2
    opens one).  The frames here are never larger than the MTU, so the offloads bought nothing.
    An offload the device does not have is left alone."""
    s = _ns_socket(ns)
    where = f"{ns + '/' if ns else ''}{ifname}"
    try:
        for name in SWITCH_PORT_OFFLOADS:
            try:
                ethtool(ifname, ETHTOOL_SET[name], 0, sock=s)
            except OSError as exc:
                if exc.errno == errno.ENODEV:
                    raise NetBuildError(f"interface {where} does not exist") from None
                if exc.errno != errno.EOPNOTSUPP:
                    raise NetBuildError(f"interface {where}: {exc.strerror or exc}") from None
    finally:
        s.close()


def _check_free(sock: IPRoute, *names: str) -> None:
    for n in names:
        if if_index(sock, n) is not None:
            raise NetBuildError(f"interface {n} already exists (a previous run? try `mrc-fabric down`)")


def add_switch_link(if_a: str, mac_a: str, if_b: str, mac_b: str, mtu: int = DEFAULT_MTU) -> None:
    """A veth pair joining two switch ports (both ends in the root namespace)."""
    with ipr() as s:
        _check_free(s, if_a, if_b)
        try:
            s.link("add", ifname=if_a, kind="veth", peer={"ifname": if_b})
        except NetlinkError as e:
            raise NetBuildError(f"veth {if_a}<->{if_b}: {e}") from e
        _switch_side(s, if_a, mac_a, mtu)
        _switch_side(s, if_b, mac_b, mtu)


def add_host_link(sw_if: str, sw_mac: str, ns: str, host_if: str, host_mac: str,
                  addresses: list[str], mtu: int = DEFAULT_MTU) -> None:
    """A veth pair from a switch port (root) to a host NIC inside ``ns`` with its /128 addresses."""
    with ipr() as s:
        _check_free(s, sw_if)
        try:
            s.link("add", ifname=sw_if, kind="veth", peer={"ifname": host_if, "net_ns_fd": ns})
        except NetlinkError as e:
            raise NetBuildError(f"veth {sw_if}<->{ns}/{host_if}: {e}") from e
        _switch_side(s, sw_if, sw_mac, mtu)
    for path, v in HOST_SYSCTLS.items():
        sysctl(path.format(host_if), v, ns)
    with ipr(ns) as h:
        idx = if_index(h, host_if)
        if idx is None:
            raise NetBuildError(f"{ns}/{host_if} missing after creation")
        h.link("set", index=idx, mtu=mtu, address=host_mac)
        for a in addresses:
            h.addr("add", index=idx, address=a, prefixlen=128, flags=IFA_F_NODAD)
        h.link("set", index=idx, state="up")


def add_loopback_address(ns: str, address: str) -> None:
    """A /128 on the namespace's ``lo`` (the host GID)."""
    with ipr(ns) as h:
        h.addr("add", index=if_index(h, "lo"), address=address, prefixlen=128, flags=IFA_F_NODAD)


def set_state(ifname: str, up: bool, ns: str | None = None) -> None:
    """Administratively bring an interface up or down."""
    set_states([(ifname, up, ns)])


def _ns_socket(ns: str | None) -> socket.socket:
    """A datagram socket in ``ns`` (a socket keeps the namespace it was made in; only this thread
    enters ``ns``, and only while making it)."""
    if ns is None:
        return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        there = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    except FileNotFoundError:
        raise NetBuildError(f"network namespace {ns} does not exist") from None
    here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise NetBuildError(f"cannot enter network namespace {ns}: {os.strerror(err)}")
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        finally:
            if libc.setns(here, CLONE_NEWNET) != 0:  # this thread must not stay in ns
                raise OSError(ctypes.get_errno(), "setns back to the thread's namespace failed")
    finally:
        os.close(here)
        os.close(there)


def set_states(changes: list[tuple[str, bool, str | None]]) -> None:
    """Bring interfaces up or down (``(ifname, up, ns)`` each), back to back: a socket is made in
    each namespace first, then the flags are changed by ioctl, well under a millisecond apart [ours].
    Through a pyroute2 ``NetNS`` each change waited for its namespace's helper to start (13-41 ms
    measured on a loaded 2-core machine), so a link failure took effect 15-90 ms after the time a
    scenario recorded for it, and ``bench/fabric_scenarios.py`` counted that time as MRC's recovery
    (packets sent on the failed link up to 16 ms after the recorded failure were delivered)."""
    socks: list[tuple[socket.socket, str, bool, str | None]] = []
    try:
        for ifname, up, ns in changes:
            socks.append((_ns_socket(ns), ifname, up, ns))
        for s, ifname, up, ns in socks:
            name = ifname.encode()
            try:
                flags = _IFREQ_FLAGS.unpack(fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, _IFREQ_FLAGS.pack(name, 0)))[1]
                flags = flags | IFF_UP if up else flags & ~IFF_UP
                fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, _IFREQ_FLAGS.pack(name, flags))
            except OSError as exc:
                where = f"{ns + '/' if ns else ''}{ifname}"
                if exc.errno == errno.ENODEV:
                    raise NetBuildError(f"interface {where} does not exist") from None
                raise NetBuildError(f"interface {where}: {exc.strerror or exc}") from None
    finally:
        for s, *_ in socks:
            s.close()


def link_info(ifname: str, ns: str | None = None) -> dict | None:
    """``{"mtu", "mac", "up", "carrier"}`` of an interface, or None if absent."""
    with ipr(ns) as s:
        idx = if_index(s, ifname)
        if idx is None:
            return None
        msg = s.get_links(idx)[0]
        return {"mtu": msg.get("IFLA_MTU"), "mac": msg.get("IFLA_ADDRESS"),
                "up": bool(msg["flags"] & 1), "carrier": msg.get("IFLA_CARRIER") == 1}


def delete_interface(ifname: str) -> bool:
    """Delete a root-namespace interface (its veth peer goes with it); False if absent."""
    with ipr() as s:
        idx = if_index(s, ifname)
        if idx is None:
            return False
        try:
            s.link("del", index=idx)
        except NetlinkError as e:
            if e.code != errno.ENODEV:
                raise
            return False
    return True


class NetemUnavailable(RuntimeError):
    """The kernel (or the tc binary) cannot give an interface a netem delay."""


def set_netem_delay(ifname: str, delay_us: int) -> None:
    """Delay every frame sent out of ``ifname`` (root namespace) by ``delay_us`` with the netem qdisc
    (``tc qdisc replace dev IF root netem delay Nus``); 0 removes it.  The link model for targets
    without one of their own (bmv2); softswitch delays in its ports instead."""
    if delay_us <= 0:
        subprocess.run(["tc", "qdisc", "del", "dev", ifname, "root"], check=False, capture_output=True, text=True)
        return
    try:
        r = subprocess.run(["tc", "qdisc", "replace", "dev", ifname, "root", "netem", "delay", f"{int(delay_us)}us"],
                           check=False, capture_output=True, text=True, timeout=10)
    except FileNotFoundError:
        raise NetemUnavailable("tc (iproute2) is not installed") from None
    if r.returncode != 0:
        raise NetemUnavailable(f"tc qdisc replace dev {ifname} root netem delay {int(delay_us)}us: "
                               f"{(r.stderr or r.stdout).strip() or 'exit ' + str(r.returncode)}")


def netem_available() -> bool:
    """Whether netem delays can be set here: tried on a throw-away veth pair."""
    name = "mrcnetemprb0"
    with ipr() as sock, contextlib.suppress(NetlinkError):
        sock.link("add", ifname=name, kind="veth", peer="mrcnetemprb1")
    try:
        set_netem_delay(name, 1000)
        return True
    except NetemUnavailable:
        return False
    finally:
        delete_interface(name)
