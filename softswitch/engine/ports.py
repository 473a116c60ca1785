"""Linux interfaces as P4 ports: AF_PACKET raw sockets, offloads off, link state tracking.

A bound interface that goes down stops carrying packets (sends are counted as drops); the switch
keeps running and the port carries packets again when the interface comes back, even if it was
deleted and re-created (the socket is re-opened on the new ifindex).

Receiving goes through a ``PACKET_RX_RING`` (TPACKET_V2, mmap'ed): frames are read from shared
memory with no system call per packet.  The kernel strips the outer 802.1Q/802.1ad tag before
AF_PACKET sees a frame (the tag travels in the skb's metadata, also on a veth whose peer sent it in
the bytes); like libpcap, the port puts it back from the ring header (``tp_vlan_tci``/
``tp_vlan_tpid``), so the parser sees the frame as it was on the wire and the rx byte counter
includes the tag.  When the ring cannot be set up, ``recvmsg`` with ``PACKET_AUXDATA`` does the
same one frame per call.

Sending goes through a ``PACKET_TX_RING`` on the same socket: the loop writes the frames one
round of the traffic manager dequeued into ring slots (``queue``) and hands them all to the
kernel with one ``send`` (``flush``), instead of one system call per frame.  A frame the kernel
did not take in that call (socket buffer full, link down) is taken back out of the ring and
counted as a tx drop, as a failed ``send`` was, so the ring never holds frames back for later.
``SOFTSWITCH_TX_RING=0`` (or a kernel refusing the ring) sends one frame per ``send``.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import logging
import mmap
import os
import socket
import struct
from dataclasses import dataclass, field

from softswitch.contract import DROP_PORT

log = logging.getLogger("softswitch.ports")

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23  # linux/if_packet.h, Linux >= 4.20
PACKET_RX_RING = 5
PACKET_TX_RING = 13
PACKET_LOSS = 14  # tx ring: skip a malformed frame instead of stopping at it
TP_STATUS_AVAILABLE = 0
TP_STATUS_SEND_REQUEST = 0x1
TX_SLOTS = 256  # tx ring slots per port: one traffic-manager round (loop.TM_BATCH) fits
# tx slot: tpacket2_hdr (status, len) then the frame at TPACKET_ALIGN(sizeof(tpacket2_hdr)) = 32,
# where the kernel reads it when PACKET_TX_HAS_OFF is off
_TX_HDR = struct.Struct("=II")
_TX_DATA = 32
PACKET_AUXDATA = 8
PACKET_VERSION = 10
TPACKET_V2 = 1
TP_STATUS_KERNEL = 0
TP_STATUS_USER = 0x1
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
ETH_P_8021Q = 0x8100
# struct tpacket2_hdr: status, len, snaplen, mac, net, sec, nsec, vlan_tci, vlan_tpid, padding
# (net, sec and nsec skipped: not read per frame)
_TP2_HDR = struct.Struct("=IIIH10xHH4x")
# the same with tp_sec, tp_nsec: when the kernel put the frame in the ring (CLOCK_REALTIME; its
# software timestamp of the skb when it has one, else the time af_packet's tpacket_rcv ran)
_TP2_HDR_TS = struct.Struct("=IIIH2xIIHH4x")
# struct tpacket_auxdata: status, len, snaplen, mac, net, vlan_tci, vlan_tpid
_AUXDATA = struct.Struct("=IIIHHHH")
_TAG = struct.Struct("!HH")
RING_BYTES = 2 << 20  # rx ring memory per port (at least RING_MIN_SLOTS slots, see below)
# A ring holds a fixed number of frames whatever their size, unlike the socket buffer it replaces
# (~250 small frames at the default rmem): with jumbo-MTU slots 2 MiB was only 128 frames, and a
# 250-frame burst lost half of itself in the kernel before the pipeline saw it.  512 slots keep a
# burst the socket buffer held.
RING_MIN_SLOTS = 512
RING_BLOCK = 1 << 16  # one ring block (frames never straddle blocks)
PACKET_STATISTICS = 6  # linux/if_packet.h: struct tpacket_stats {tp_packets, tp_drops}, reset on read
SIOCETHTOOL = 0x8946
# legacy ethtool_value commands (linux/ethtool.h)
ETHTOOL_SET = {"tso": 0x1F, "gso": 0x24, "gro": 0x2C, "tx-checksum": 0x17, "sg": 0x19}
ETHTOOL_GET = {"tso": 0x1E, "gso": 0x23, "gro": 0x2B, "tx-checksum": 0x16, "sg": 0x18}
MAX_FRAME = 65536 + 128
ETH_HLEN = 14
_VLAN_TPID = b"\x81\x00"  # an 802.1Q frame may be 4 bytes over MTU + 14 (not 802.1ad: measured)
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


def ethtool(ifname: str, cmd: int, data: int = 0, sock: socket.socket | None = None) -> int:
    """One legacy ETHTOOL_{G,S}* ioctl (``ETHTOOL_GET`` / ``ETHTOOL_SET``); returns the value read
    back.  ``sock``: a socket of the interface's network namespace (default: a new one in ours)."""
    val = _EthtoolValue(cmd, data)
    ifreq = struct.pack("16sP16x", ifname.encode()[:15], ctypes.addressof(val))  # struct ifreq, 40 bytes
    if sock is not None:
        fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    else:
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
            if ethtool(ifname, ETHTOOL_GET[name]):
                ethtool(ifname, ETHTOOL_SET[name], 0)
        except OSError:
            failed.append(name)
    return failed


def ifindex(ifname: str) -> int:
    """The interface index of ``ifname``, 0 when it does not exist."""
    try:
        return socket.if_nametoindex(ifname)
    except OSError:
        return 0


def mtu(ifname: str) -> int:
    """The interface MTU (1500 when it cannot be read)."""
    try:
        with open(f"/sys/class/net/{ifname}/mtu") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 1500


def ring_frame_size(if_mtu: int) -> int:
    """Ring slot size for an interface MTU: the ring header, the link header, two VLAN tags of
    slack and the MTU, rounded up to a power of two (at least 2 KiB)."""
    need = if_mtu + 14 + 8 + 128
    size = 2048
    while size < need:
        size <<= 1
    return size


def with_vlan_tag(data: bytes, status: int, tci: int, tpid: int) -> bytes:
    """``data`` with the outer VLAN tag the kernel took off put back after the MAC addresses.

    ``status`` is the ring/auxdata ``tp_status``; like libpcap, a non-zero TCI also counts as a
    tag (kernels before TP_STATUS_VLAN_VALID reported TCI 0 as "no tag")."""
    if not (tci or status & TP_STATUS_VLAN_VALID):
        return data
    if not status & TP_STATUS_VLAN_TPID_VALID:
        tpid = ETH_P_8021Q
    return data[:12] + _TAG.pack(tpid, tci) + data[12:]


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
    # False: recvmsg + PACKET_AUXDATA, one frame per call (SOFTSWITCH_RX_RING=0 sets it, for benches)
    use_ring: bool = field(default_factory=lambda: os.environ.get("SOFTSWITCH_RX_RING", "1") != "0")
    ring: mmap.mmap | None = field(default=None, repr=False)
    ring_frame: int = 0  # bytes per ring slot
    ring_slots: int = 0
    ring_next: int = 0  # next slot the kernel fills
    mtu: int = 0  # interface MTU the ring was sized for
    # False: one send per frame (SOFTSWITCH_TX_RING=0 sets it, for benches)
    use_tx_ring: bool = field(default_factory=lambda: os.environ.get("SOFTSWITCH_TX_RING", "1") != "0")
    tx_ring: mmap.mmap | None = field(default=None, repr=False)  # the same mapping as ``ring``
    # the mapping as native 32-bit words: a slot's tp_status (and tp_len) read and written by index,
    # cheaper per frame than a struct call or a slice; released before the mapping is closed
    ring_words: memoryview | None = field(default=None, repr=False)
    tx_base: int = 0  # byte offset of the tx ring in the mapping (after the rx ring)
    tx_frame: int = 0
    tx_slots: int = 0
    tx_next: int = 0  # next slot to fill; the kernel's send position when nothing is pending
    tx_pending: int = 0  # frames queued since the last flush
    tx_pending_bytes: int = 0

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
        self.mtu = mtu(self.ifname)
        self._open_ring(s)
        return True

    def _request_ring(self, s: socket.socket, opt: int, name: str, block: int, nblocks: int, frame: int,
                      fallback: str) -> int:
        """Ask the kernel for one TPACKET_V2 ring of ``nblocks`` blocks; its size in bytes, or 0
        (logged, with what the port does instead) when the kernel refuses it."""
        try:
            s.setsockopt(SOL_PACKET, opt, struct.pack("IIII", block, nblocks, frame, nblocks * (block // frame)))
        except OSError as e:
            log.warning("%s: no %s (%s); %s", self.ifname, name, e, fallback)
            return 0
        return block * nblocks

    def _open_ring(self, s: socket.socket) -> None:
        """Map a TPACKET_V2 rx ring and tx ring on ``s``; without the rx ring, ``recvmsg`` +
        PACKET_AUXDATA is used, without the tx ring one ``send`` per frame."""
        frame = ring_frame_size(self.mtu)
        block = max(RING_BLOCK, frame)
        per_block = block // frame
        nblocks = max(1, RING_BYTES // block, -(-RING_MIN_SLOTS // per_block))
        tx_blocks = -(-TX_SLOTS // per_block)
        rx_len = tx_len = 0
        want_rx, want_tx = self.use_ring, self.use_tx_ring
        if want_rx or want_tx:
            try:
                s.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
                if want_tx:  # like the version, only settable before any ring exists (EBUSY)
                    s.setsockopt(SOL_PACKET, PACKET_LOSS, 1)
            except OSError as e:
                log.warning("%s: no TPACKET_V2 (%s): no rx/tx rings", self.ifname, e)
                want_rx = want_tx = False
        if want_rx:
            rx_len = self._request_ring(s, PACKET_RX_RING, "PACKET_RX_RING", block, nblocks, frame,
                                        "receiving one frame per recvmsg")
        elif not self.use_ring:
            log.info("%s: rx ring disabled (SOFTSWITCH_RX_RING=0); receiving one frame per recvmsg",
                     self.ifname)
        if want_tx:
            tx_len = self._request_ring(s, PACKET_TX_RING, "PACKET_TX_RING", block, tx_blocks, frame,
                                        "sending one frame per send")
        mapping = None
        if rx_len or tx_len:
            try:
                mapping = mmap.mmap(s.fileno(), rx_len + tx_len, mmap.MAP_SHARED,
                                    mmap.PROT_READ | mmap.PROT_WRITE)
            except OSError as e:
                # the rings exist on the socket but cannot be used: start over without them
                log.warning("%s: cannot map the packet rings (%s); plain socket calls", self.ifname, e)
                self.use_ring = self.use_tx_ring = False
                self.open()
                return
        self.ring = mapping if rx_len else None
        self.ring_frame = frame
        self.ring_slots = nblocks * per_block if rx_len else 0
        self.ring_next = 0
        self.tx_ring = mapping if tx_len else None
        self.tx_base = rx_len
        self.tx_frame = frame
        self.tx_slots = tx_blocks * per_block if tx_len else 0
        self.tx_next = self.tx_pending = self.tx_pending_bytes = 0
        self.ring_words = memoryview(mapping).cast("I") if mapping is not None else None
        if not rx_len:
            try:
                s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            except OSError:
                log.warning("%s: no PACKET_AUXDATA: VLAN tags of received frames are lost", self.ifname)

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
        if self.tx_pending:
            self.flush()
        mapping = self.ring or self.tx_ring
        if self.ring_words is not None:
            self.ring_words.release()  # an exported buffer would make mmap.close() fail
            self.ring_words = None
        if mapping is not None:
            mapping.close()
        self.ring = self.tx_ring = None
        self.tx_pending = self.tx_pending_bytes = 0
        if self.sock is not None:
            self.kernel_drops()  # keep what the old socket counted
            self.sock.close()
            self.sock = None
        self.bound_ifindex = 0

    def shutdown(self) -> None:
        """The switch is stopping: close the socket for good (``CapturingPort`` closes its files too)."""
        self.close()

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
        if idx and (self.ring is not None or self.tx_ring is not None) and mtu(self.ifname) != self.mtu:
            was = self.fileno()
            self.open()  # MTU changed: re-size the ring slots so no frame is cut
            return self.fileno() != was
        return False

    def receive(self, budget: int) -> list[bytes]:
        """Up to ``budget`` frames waiting on the socket (non-blocking), as they were on the wire."""
        ring = self.ring
        if ring is not None:
            return self._receive_ring(ring, budget)
        s = self.sock
        out: list[bytes] = []
        if s is None:
            return out
        recvmsg = s.recvmsg
        c = self.counters
        aux_level, aux_type, aux_size = SOL_PACKET, PACKET_AUXDATA, socket.CMSG_SPACE(_AUXDATA.size)
        try:
            for _ in range(budget):
                data, anc, _flags, _addr = recvmsg(MAX_FRAME, aux_size)
                for level, typ, raw in anc:
                    if level == aux_level and typ == aux_type and len(raw) >= _AUXDATA.size:
                        st, _l, _sl, _m, _n, tci, tpid = _AUXDATA.unpack_from(raw)
                        data = with_vlan_tag(data, st, tci, tpid)
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

    def receive_stamped(self, budget: int, stamps: list[int], off_ns: int) -> list[bytes]:
        """``receive``, and for each frame read from the rx ring, when the kernel put it there
        appended to ``stamps``: the slot's ``tp_sec``/``tp_nsec`` (CLOCK_REALTIME) less ``off_ns``
        (the caller's clock's offset from realtime, ns), in µs (a slot with no timestamp gives
        a negative time).  Without a ring (``recvmsg``) nothing is appended: the caller takes
        the time it read the frames instead."""
        ring = self.ring
        if ring is not None:
            return self._receive_ring_stamped(ring, budget, stamps, off_ns)
        return LinuxPort.receive(self, budget)  # (not a subclass's: it wraps this method itself)

    def take_error(self) -> None:
        """Read (and so clear) the socket's pending error, e.g. ENETDOWN after a link flap.

        ``recv`` used to consume it; with the rx ring nothing does, and a pending error would
        make poll() report the socket forever and fail the next ``send``."""
        s = self.sock
        if s is None:
            return
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err in _DOWN_ERRNOS:
            self.up = False
        elif err:
            self.counters.rx_errors += 1

    def _receive_ring(self, ring: mmap.mmap, budget: int) -> list[bytes]:
        """Frames the kernel has put in the rx ring, each slot handed back once copied."""
        out: list[bytes] = []
        c = self.counters
        unpack = _TP2_HDR.unpack_from
        words = self.ring_words
        frame, slots = self.ring_frame, self.ring_slots
        i = self.ring_next
        nbytes = 0
        for _ in range(budget):
            off = i * frame
            status, wire_len, snaplen, mac, tci, tpid = unpack(ring, off)
            if not status & TP_STATUS_USER:
                break
            start = off + mac
            data = ring[start:start + snaplen]
            words[off >> 2] = TP_STATUS_KERNEL  # the slot is the kernel's again
            i += 1
            if i == slots:
                i = 0
            if snaplen < wire_len:  # cannot happen with slots sized from the MTU; never forward a cut frame
                c.rx_errors += 1
                continue
            if tci or status & TP_STATUS_VLAN_VALID:
                data = with_vlan_tag(data, status, tci, tpid)
            out.append(data)
            nbytes += len(data)
        self.ring_next = i
        c.rx_packets += len(out)
        c.rx_bytes += nbytes
        return out

    def _receive_ring_stamped(self, ring: mmap.mmap, budget: int, stamps: list[int], off_ns: int) -> list[bytes]:
        """``_receive_ring`` that also appends each frame's ring timestamp (``receive_stamped``) to
        ``stamps``: a separate copy so that a program reading no timestamp pays nothing for it."""
        out: list[bytes] = []
        c = self.counters
        unpack = _TP2_HDR_TS.unpack_from
        stamp = stamps.append
        last_sec = -1
        sec_ns = 0  # last_sec in ns less off_ns: computed once per second the frames carry
        words = self.ring_words
        frame, slots = self.ring_frame, self.ring_slots
        i = self.ring_next
        nbytes = 0
        for _ in range(budget):
            off = i * frame
            status, wire_len, snaplen, mac, sec, nsec, tci, tpid = unpack(ring, off)
            if not status & TP_STATUS_USER:
                break
            start = off + mac
            data = ring[start:start + snaplen]
            words[off >> 2] = TP_STATUS_KERNEL  # the slot is the kernel's again
            i += 1
            if i == slots:
                i = 0
            if snaplen < wire_len:
                c.rx_errors += 1
                continue
            if tci or status & TP_STATUS_VLAN_VALID:
                data = with_vlan_tag(data, status, tci, tpid)
            out.append(data)
            if sec != last_sec:
                last_sec = sec
                sec_ns = sec * 1_000_000_000 - off_ns
            # rounded down once, in the caller's clock: two frames keep their order whatever
            # the offset's own sub-µs part
            stamp((sec_ns + nsec) // 1000)
            nbytes += len(data)
        self.ring_next = i
        c.rx_packets += len(out)
        c.rx_bytes += nbytes
        return out

    def send(self, data: bytes) -> bool:
        """Transmit one frame now; a frame that cannot leave (link down, queue full) is counted as
        a drop.  With a tx ring, frames queued before it leave first."""
        if self.tx_ring is not None:
            if not self.queue(data):
                return False
            return self.flush() == 0
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

    def queue(self, data: bytes) -> bool:
        """Put one frame in the tx ring; True when ``flush`` must be called to send it.  Without a
        tx ring the frame is sent at once (False)."""
        ring = self.tx_ring
        if ring is None:
            self.send(data)
            return False
        n = len(data)
        frame = self.tx_frame
        off = self.tx_base + self.tx_next * frame
        if n > frame - _TX_DATA or self.sock is None or self._over_mtu(data):
            # larger than the MTU allows: with PACKET_LOSS set the kernel would skip it without a
            # word (the slot comes back free, as if sent), so it is counted here
            self.counters.tx_drops += 1
            return self.tx_pending > 0
        if _TX_HDR.unpack_from(ring, off)[0] != TP_STATUS_AVAILABLE:
            # the kernel still holds the slot (a sent frame not yet freed): send what is queued
            if self.tx_pending:
                self.flush()
            if _TX_HDR.unpack_from(ring, off)[0] != TP_STATUS_AVAILABLE:
                self.counters.tx_drops += 1  # every slot in flight: like a full device queue
                return self.tx_pending > 0
        start = off + _TX_DATA
        ring[start:start + n] = data
        _TX_HDR.pack_into(ring, off, TP_STATUS_SEND_REQUEST, n)
        nxt = self.tx_next + 1
        self.tx_next = 0 if nxt == self.tx_slots else nxt
        self.tx_pending += 1
        self.tx_pending_bytes += n
        return True

    def _over_mtu(self, data: bytes) -> bool:
        """True when the kernel refuses ``data`` on this interface for its size: longer than the MTU
        plus the Ethernet header, or than 4 bytes more when it carries an 802.1Q tag (af_packet's
        ``packet_extra_vlan_len_allowed``)."""
        n = len(data) - ETH_HLEN - self.mtu
        return n > 0 and (n > 4 or data[12:14] != _VLAN_TPID)

    def send_many(self, frames: list[bytes]) -> None:
        """``queue`` every frame of ``frames`` in order, then ``flush``: the loop's way to send one
        round's frames for this port.  The common case (a free slot, a frame that fits) is
        ``queue``'s own path written out with the ring's state in locals; any other frame goes
        through ``queue`` itself with that state written back first, so the outcome is the same."""
        ring = self.tx_ring
        if ring is None or self.sock is None:
            for data in frames:
                self.queue(data)
            if self.tx_pending:
                self.flush()
            return
        frame, base, slots = self.tx_frame, self.tx_base, self.tx_slots
        limit = min(frame - _TX_DATA, self.mtu + ETH_HLEN)  # past it: ``queue`` decides (VLAN tag, drop)
        words = self.ring_words
        i = self.tx_next
        k = nbytes = 0
        for data in frames:
            n = len(data)
            off = base + i * frame
            w = off >> 2  # the slot's tp_status word; tp_len follows it
            if n > limit or words[w] != TP_STATUS_AVAILABLE:
                self.tx_next = i
                self.tx_pending += k
                self.tx_pending_bytes += nbytes
                k = nbytes = 0
                self.queue(data)
                i = self.tx_next
                continue
            start = off + _TX_DATA
            ring[start:start + n] = data
            words[w + 1] = n
            words[w] = TP_STATUS_SEND_REQUEST  # read by the kernel at the flush's send, after both stores
            i += 1
            if i == slots:
                i = 0
            k += 1
            nbytes += n
        self.tx_next = i
        self.tx_pending += k
        self.tx_pending_bytes += nbytes
        if self.tx_pending:
            self.flush()

    def flush(self) -> int:
        """Send every frame queued in the tx ring with one system call; returns how many of them
        were dropped (taken back out of the ring and counted as tx drops)."""
        pending, nbytes = self.tx_pending, self.tx_pending_bytes
        if not pending:
            return 0
        self.tx_pending = self.tx_pending_bytes = 0
        c = self.counters
        s = self.sock
        err = 0
        if s is not None:
            try:
                s.send(b"", socket.MSG_DONTWAIT)
            except OSError as e:
                err = e.errno or -1
        dropped, dropped_bytes = self._tx_unwind(pending)
        if err in _DOWN_ERRNOS:
            self.up = False
        c.tx_packets += pending - dropped
        c.tx_bytes += nbytes - dropped_bytes
        c.tx_drops += dropped
        return dropped

    def _tx_unwind(self, pending: int) -> tuple[int, int]:
        """Take the frames the last send left in the ring back out (the kernel sends in slot order
        and stops at the first it cannot, so they are the newest ones); ``tx_next`` moves back to
        the first of them, which is where the kernel will look next.  Returns (frames, bytes)."""
        ring = self.tx_ring
        frame, slots, base = self.tx_frame, self.tx_slots, self.tx_base
        i = self.tx_next
        frames = nbytes = 0
        for _ in range(pending):
            j = i - 1 if i else slots - 1
            off = base + j * frame
            status, n = _TX_HDR.unpack_from(ring, off)
            if status != TP_STATUS_SEND_REQUEST:
                break
            _TX_HDR.pack_into(ring, off, TP_STATUS_AVAILABLE, 0)
            frames += 1
            nbytes += n
            i = j
        self.tx_next = i
        return frames, nbytes


def parse_interface(spec: str) -> tuple[int, str]:
    """Parse bmv2's ``-i N@IFNAME`` value."""
    num, sep, name = spec.partition("@")
    if not sep or not (num.strip().isascii() and num.strip().isdigit()) or not name:  # '²' crashed int()
        raise ValueError(f"bad interface '{spec}': expected PORT@IFNAME, e.g. 1@veth1")
    port = int(num)
    if port >= DROP_PORT:
        raise ValueError(f"bad interface '{spec}': port {port} is reserved ({DROP_PORT} is the drop port)")
    if len(name) > 15:
        raise ValueError(f"bad interface '{spec}': interface names are at most 15 characters")
    return port, name

