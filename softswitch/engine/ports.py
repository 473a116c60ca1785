"""Linux interfaces as P4 ports: AF_PACKET raw sockets, offloads off, link state tracking.

A bound interface that goes down stops carrying packets (sends are counted as drops); the switch
keeps running and the port carries packets again when the interface comes back, even if it was
deleted and re-created (the socket is re-opened on the new ifindex).
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import logging
import socket
import struct
from dataclasses import dataclass, field

log = logging.getLogger("softswitch.ports")

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23  # linux/if_packet.h, Linux >= 4.20
PACKET_STATISTICS = 6  # linux/if_packet.h: struct tpacket_stats {tp_packets, tp_drops}, reset on read
SIOCETHTOOL = 0x8946
# legacy ethtool_value commands (linux/ethtool.h)
_ETHTOOL_SET = {"tso": 0x1F, "gso": 0x24, "gro": 0x2C, "tx-checksum": 0x17, "sg": 0x19}
_ETHTOOL_GET = {"tso": 0x1E, "gso": 0x23, "gro": 0x2B, "tx-checksum": 0x16, "sg": 0x18}
MAX_FRAME = 65536 + 128
_DOWN_ERRNOS = (errno.ENETDOWN, errno.ENXIO, errno.ENODEV, errno.EIO)


@dataclass(slots=True)
class PortCounters:
    """Per-port packet counters (the traffic manager counts queue drops separately)."""

    rx_packets: int = 0
    rx_bytes: int = 0
    tx_packets: int = 0
    tx_bytes: int = 0
    tx_drops: int = 0  # could not be sent: interface down, buffer full, gone
    rx_errors: int = 0
    rx_kernel_drops: int = 0  # frames the kernel dropped before we read them (socket buffer full)


class _EthtoolValue(ctypes.Structure):
    _fields_ = [("cmd", ctypes.c_uint32), ("data", ctypes.c_uint32)]


def _ethtool(ifname: str, cmd: int, data: int = 0) -> int:
    """One legacy ETHTOOL_{G,S}* ioctl; returns the value read back."""
    val = _EthtoolValue(cmd, data)
    ifreq = struct.pack("16sP", ifname.encode()[:15], ctypes.addressof(val))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifreq)
    return val.data


def disable_offloads(ifname: str) -> list[str]:
    """Turn off TSO/GSO/GRO/tx-checksum on ``ifname`` so the kernel hands us real wire frames.

    Without this a veth may give the switch >MTU GSO frames or frames with unfinished checksums.
    Returns the features that could not be changed (the interface may not support them).
    """
    failed = []
    for name in ("gro", "tso", "gso", "tx-checksum"):
        try:
            if _ethtool(ifname, _ETHTOOL_GET[name]):
                _ethtool(ifname, _ETHTOOL_SET[name], 0)
        except OSError:
            failed.append(name)
    return failed


def ifindex(ifname: str) -> int:
    """The interface index of ``ifname``, 0 when it does not exist."""
    try:
        return socket.if_nametoindex(ifname)
    except OSError:
        return 0


def oper_up(ifname: str) -> bool:
    """True when the interface exists, is administratively up and has carrier."""
    try:
        with open(f"/sys/class/net/{ifname}/operstate") as f:
            state = f.read().strip()
        with open(f"/sys/class/net/{ifname}/flags") as f:
            flags = int(f.read().strip(), 16)
    except OSError:
        return False
    return bool(flags & 0x1) and state in ("up", "unknown")


@dataclass
class LinuxPort:
    """P4 port ``number`` bound to Linux interface ``ifname`` through an AF_PACKET socket."""

    number: int
    ifname: str
    counters: PortCounters = field(default_factory=PortCounters)
    sock: socket.socket | None = None
    bound_ifindex: int = 0
    up: bool = False
    offload_failures: list[str] = field(default_factory=list)

    def open(self) -> bool:
        """(Re)open the socket if the interface exists; True when the port has a socket."""
        self.close()
        idx = ifindex(self.ifname)
        if not idx:
            self.up = False
            return False
        self.offload_failures = disable_offloads(self.ifname)
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        except OSError:
            log.warning("%s: kernel lacks PACKET_IGNORE_OUTGOING; own frames may be seen", self.ifname)
        for opt, size in ((socket.SO_RCVBUF, 4 << 20), (socket.SO_SNDBUF, 4 << 20)):
            try:
                s.setsockopt(socket.SOL_SOCKET, opt, size)
            except OSError:
                pass
        try:
            s.bind((self.ifname, ETH_P_ALL))
        except OSError:
            s.close()
            self.up = False
            return False
        s.setblocking(False)
        self.sock = s
        self.bound_ifindex = idx
        self.up = oper_up(self.ifname)
        return True

    def kernel_drops(self) -> int:
        """Frames lost outside the pipeline so far: the kernel's receive drops on this port's socket
        (``PACKET_STATISTICS``, which resets on every read, so they are added up here).  A switch
        process that cannot keep up loses frames there, where nothing is trimmed, marked or counted
        by the P4 program."""
        s = self.sock
        if s is not None:
            try:
                _packets, drops = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
            except OSError:
                drops = 0
            self.counters.rx_kernel_drops += drops
        return self.counters.rx_kernel_drops

    def close(self) -> None:
        """Close the socket (the port stays configured)."""
        if self.sock is not None:
            self.kernel_drops()  # keep what the old socket counted
            self.sock.close()
            self.sock = None
        self.bound_ifindex = 0

    def fileno(self) -> int:
        return self.sock.fileno() if self.sock is not None else -1

    def refresh(self) -> bool:
        """Re-check link state, re-opening the socket if the interface was re-created.

        Returns True when the socket (its file descriptor) changed.
        """
        idx = ifindex(self.ifname)
        if idx != self.bound_ifindex:
            was = self.fileno()
            if idx:
                self.open()
            else:
                self.close()
                self.up = False
            return self.fileno() != was
        self.up = bool(idx) and oper_up(self.ifname)
        return False

    def receive(self, budget: int) -> list[bytes]:
        """Up to ``budget`` frames waiting on the socket (non-blocking)."""
        s = self.sock
        out: list[bytes] = []
        if s is None:
            return out
        recv = s.recv
        c = self.counters
        try:
            for _ in range(budget):
                data = recv(MAX_FRAME)
                out.append(data)
                c.rx_bytes += len(data)
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno in _DOWN_ERRNOS:
                self.up = False
            else:
                c.rx_errors += 1
        c.rx_packets += len(out)
        return out

    def send(self, data: bytes) -> bool:
        """Transmit one frame; a frame that cannot leave (link down, queue full) is counted as a drop."""
        s = self.sock
        c = self.counters
        if s is None:
            c.tx_drops += 1
            return False
        try:
            s.send(data)
        except OSError as e:
            c.tx_drops += 1
            if e.errno in _DOWN_ERRNOS:
                self.up = False
            return False
        c.tx_packets += 1
        c.tx_bytes += len(data)
        return True


def parse_interface(spec: str) -> tuple[int, str]:
    """Parse bmv2's ``-i N@IFNAME`` value."""
    num, sep, name = spec.partition("@")
    if not sep or not num.strip().isdigit() or not name:
        raise ValueError(f"bad interface '{spec}': expected PORT@IFNAME, e.g. 1@veth1")
    port = int(num)
    if port >= 511:
        raise ValueError(f"bad interface '{spec}': port {port} is reserved (511 is the drop port)")
    if len(name) > 15:
        raise ValueError(f"bad interface '{spec}': interface names are at most 15 characters")
    return port, name

