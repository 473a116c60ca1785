"""Linux interface I/O for the endpoint: AF_PACKET sockets, interface facts (MAC, MTU, up/running)
by ioctl, and a netlink link-event socket that wakes the loop when any interface changes state.

ioctl on a socket is used rather than /sys/class/net because sysfs shows the network namespace it
was mounted in, not the caller's (a process that entered a namespace with setns sees the wrong one).
"""

from __future__ import annotations

import fcntl
import socket
import struct

ETH_P_IPV6 = 0x86DD
SIOCGIFFLAGS = 0x8913
SIOCGIFMTU = 0x8921
SIOCGIFHWADDR = 0x8927
IFF_UP = 0x1
IFF_RUNNING = 0x40
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_QDISC_BYPASS = 20
SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
RTMGRP_LINK = 1
_IFREQ = struct.Struct("16s24s")


class InterfaceError(OSError):
    """An interface named on the command line or in a plan does not exist or cannot be opened."""


def _ifreq(name: str) -> bytes:
    b = name.encode()
    if not 0 < len(b) < 16:
        raise InterfaceError(f"bad interface name {name!r} (1..15 bytes)")
    return _IFREQ.pack(b, b"")


def _ioctl(sock: socket.socket, req: int, name: str) -> bytes:
    try:
        return fcntl.ioctl(sock.fileno(), req, _ifreq(name))
    except OSError as exc:
        raise InterfaceError(f"interface {name!r}: {exc.strerror or exc}") from None


def if_mac(sock: socket.socket, name: str) -> bytes:
    """The interface's Ethernet address (6 bytes)."""
    return _ioctl(sock, SIOCGIFHWADDR, name)[18:24]


def if_mtu(sock: socket.socket, name: str) -> int:
    """The interface MTU (bytes of IP packet)."""
    return struct.unpack_from("i", _ioctl(sock, SIOCGIFMTU, name), 16)[0]


def if_running(sock: socket.socket, name: str) -> bool:
    """True if the interface is administratively up and operationally running (carrier on)."""
    flags = struct.unpack_from("H", _ioctl(sock, SIOCGIFFLAGS, name), 16)[0]
    return bool(flags & IFF_UP) and bool(flags & IFF_RUNNING)


def open_port_socket(name: str, rcvbuf: int = 32 << 20, sndbuf: int = 4 << 20) -> socket.socket:
    """A non-blocking AF_PACKET socket bound to ``name`` receiving IPv6 frames (not our own sends)."""
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    except PermissionError:
        raise InterfaceError("AF_PACKET sockets need root (or CAP_NET_RAW)") from None
    try:
        for opt, force, size in ((socket.SO_RCVBUF, SO_RCVBUFFORCE, rcvbuf),
                                 (socket.SO_SNDBUF, SO_SNDBUFFORCE, sndbuf)):
            try:
                s.setsockopt(socket.SOL_SOCKET, force, size)
            except OSError:
                s.setsockopt(socket.SOL_SOCKET, opt, size)
        for opt in (PACKET_IGNORE_OUTGOING, PACKET_QDISC_BYPASS):
            try:
                s.setsockopt(SOL_PACKET, opt, 1)
            except OSError:  # older kernels: outgoing frames are not delivered to ETH_P_IPV6 binds anyway
                pass
        try:
            s.bind((name, ETH_P_IPV6))
        except OSError as exc:
            raise InterfaceError(f"interface {name!r}: {exc.strerror or exc}") from None
        s.setblocking(False)
        return s
    except BaseException:
        s.close()
        raise


def open_link_watch() -> socket.socket | None:
    """A netlink socket that becomes readable on any link change (None if netlink is unavailable)."""
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        s.bind((0, RTMGRP_LINK))
        s.setblocking(False)
        return s
    except OSError:
        return None


def drain(sock: socket.socket, limit: int = 64) -> int:
    """Read and discard what is queued on ``sock`` (bounded); returns the number of messages."""
    n = 0
    for _ in range(limit):
        try:
            sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            break
        except OSError:
            break
        n += 1
    return n


def parse_mac(text: str) -> bytes:
    """``"02:00:00:00:00:01"`` (or with ``-``) -> 6 bytes; ValueError with the bad text otherwise."""
    parts = text.replace("-", ":").split(":")
    try:
        if len(parts) != 6:
            raise ValueError
        b = bytes(int(p, 16) for p in parts)
    except ValueError:
        raise ValueError(f"bad MAC address {text!r} (want 6 hex bytes like 02:00:00:00:00:01)") from None
    return b


def format_mac(b: bytes) -> str:
    """6 bytes -> ``"02:00:00:00:00:01"``."""
    return ":".join(f"{x:02x}" for x in b)
