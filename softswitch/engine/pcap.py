"""``--pcap [DIR]``: every frame a port receives and sends, in pcap files, as bmv2 writes them.

bmv2's ``simple_switch --pcap DIR`` writes two files per interface, ``IFNAME_in.pcap`` (frames the
switch received on it) and ``IFNAME_out.pcap`` (frames it sent on it), in ``DIR`` (the current
directory without one).  ``CapturingPort`` does the same for a softswitch port: the frames as the
parser saw them (an outer VLAN tag the kernel took off is back in place, ``ports.with_vlan_tag``)
and as the switch handed them to the interface, each stamped with the wall-clock time it was
captured.  A frame the interface then refused (link down, device queue full) is in the ``_out``
file and counted as a tx drop.  Frames to and from the CPU port are PacketIn/PacketOut messages,
not frames on an interface: in no file.

The files are classic libpcap files (Ethernet link type, microsecond stamps) that tcpdump,
tshark and scapy read.  They are flushed every ``loop.LINK_CHECK_S`` (so ``tshark -r`` on a running
switch sees the frames of the last quarter second) and closed when the switch stops.  Without
``--pcap`` the ports are plain ``LinuxPort``s and nothing here runs per packet.
"""
from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass, field

from softswitch.engine.ports import LinuxPort

LINKTYPE_ETHERNET = 1
SNAPLEN = 65535
# libpcap's file header (magic, version 2.4, zone, sigfigs, snaplen, link type) and record header
# (seconds, microseconds, bytes captured, bytes on the wire), in this machine's byte order as
# libpcap writes them: readers tell the order from the magic number
_FILE_HDR = struct.Struct("=IHHiIII")
_REC_HDR = struct.Struct("=IIII")
PCAP_MAGIC = 0xA1B2C3D4


class PcapFile:
    """One pcap file being written: the header at open, then one record per frame."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f = open(path, "wb")  # noqa: SIM115 - held open for the switch's lifetime, closed in close()
        self._f.write(_FILE_HDR.pack(PCAP_MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        self._f.flush()  # a reader finds a valid (empty) capture at once
        self.frames = 0

    def write(self, frames: list[bytes]) -> None:
        """Append ``frames``, all stamped with the time of this call."""
        ns = time.time_ns()
        sec, usec = ns // 1_000_000_000, ns // 1000 % 1_000_000
        w = self._f.write
        for data in frames:
            n = len(data)
            cap = min(n, SNAPLEN)
            w(_REC_HDR.pack(sec, usec, cap, n))
            w(data if cap == n else data[:cap])
        self.frames += len(frames)

    def flush(self) -> None:
        if not self._f.closed:
            self._f.flush()

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


@dataclass
class CapturingPort(LinuxPort):
    """A ``LinuxPort`` that also writes what it receives and sends to ``IFNAME_in.pcap`` and
    ``IFNAME_out.pcap`` in ``pcap_dir`` (bmv2's ``--pcap``).  The files are opened (truncated) when
    the port is made and stay open across link flaps and socket re-opens."""

    pcap_dir: str = "."
    rx_pcap: PcapFile | None = field(default=None, repr=False)
    tx_pcap: PcapFile | None = field(default=None, repr=False)
    _sending_many: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        os.makedirs(self.pcap_dir, exist_ok=True)
        self.rx_pcap = PcapFile(os.path.join(self.pcap_dir, f"{self.ifname}_in.pcap"))
        self.tx_pcap = PcapFile(os.path.join(self.pcap_dir, f"{self.ifname}_out.pcap"))

    def receive(self, budget: int) -> list[bytes]:
        frames = LinuxPort.receive(self, budget)
        if frames:
            self.rx_pcap.write(frames)
        return frames

    def receive_stamped(self, budget: int, stamps: list[int], off_ns: int) -> list[bytes]:
        frames = LinuxPort.receive_stamped(self, budget, stamps, off_ns)
        if frames:
            self.rx_pcap.write(frames)
        return frames

    def send_many(self, frames: list[bytes]) -> None:
        self.tx_pcap.write(frames)
        self._sending_many = True  # without a tx ring, send_many sends through send(): one record each
        try:
            LinuxPort.send_many(self, frames)
        finally:
            self._sending_many = False

    def send(self, data: bytes) -> bool:
        if not self._sending_many:
            self.tx_pcap.write([data])
        return LinuxPort.send(self, data)

    def refresh(self) -> bool:
        self.rx_pcap.flush()
        self.tx_pcap.flush()
        return LinuxPort.refresh(self)

    def shutdown(self) -> None:
        LinuxPort.shutdown(self)
        self.rx_pcap.close()
        self.tx_pcap.close()
