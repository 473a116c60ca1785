"""Controller headers (``@controller_header("packet_in"/"packet_out")``) <-> PacketIn/PacketOut
metadata. Fields are packed MSB first in P4Info order; the header is rounded up to whole bytes."""
from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from softswitch.runtime import bytestrings
from softswitch.runtime.errors import P4RuntimeError, invalid


class ControllerHeader:
    """Codec for one controller header described by P4Info ``controller_packet_metadata``."""

    def __init__(self, cpm: p4info_pb2.ControllerPacketMetadata) -> None:
        self.name = cpm.preamble.name
        self.fields = tuple((m.id, m.name, m.bitwidth) for m in cpm.metadata)
        self.bits = sum(w for _, _, w in self.fields)
        self.nbytes = (self.bits + 7) // 8
        self._pad = self.nbytes * 8 - self.bits
        self._ids = {fid: i for i, (fid, _, _) in enumerate(self.fields)}
        # fields that carry nothing: @padding (p4c puts it in the P4Info), or named as padding
        self.padding = frozenset(m.id for m in cpm.metadata if "@padding" in m.annotations
                                 or m.name.startswith("_") or "pad" in m.name.lower())

    def decode(self, frame: bytes) -> tuple[list[p4runtime_pb2.PacketMetadata], bytes] | None:
        """Split ``frame`` into metadata (canonical bytes) and payload; None if it is too short."""
        if len(frame) < self.nbytes:
            return None
        v = int.from_bytes(frame[:self.nbytes], "big") >> self._pad
        pos = self.bits
        out = []
        for fid, _, w in self.fields:
            pos -= w
            out.append(p4runtime_pb2.PacketMetadata(metadata_id=fid,
                                                    value=bytestrings.encode((v >> pos) & ((1 << w) - 1))))
        return out, frame[self.nbytes:]

    def encode(self, metadata) -> bytes:
        """Header bytes from PacketOut metadata; fields not given are 0 (as bmv2's PI server does;
        the spec asks for every field, see docs/softswitch.md). Raises INVALID_ARGUMENT."""
        values = [0] * len(self.fields)
        seen = set()
        for m in metadata:
            i = self._ids.get(m.metadata_id)
            if i is None:
                raise invalid(f"{self.name}: unknown metadata id {m.metadata_id}")
            if i in seen:
                raise invalid(f"{self.name}: metadata '{self.fields[i][1]}' given twice")
            seen.add(i)
            try:
                values[i] = bytestrings.decode(m.value, self.fields[i][2], f"{self.name} metadata '{self.fields[i][1]}'")
            except P4RuntimeError as err:  # StreamError: metadata not matching P4Info is INVALID_ARGUMENT
                raise invalid(err.message) from None
        v = 0
        for (_, _, w), x in zip(self.fields, values):
            v = (v << w) | x
        return (v << self._pad).to_bytes(self.nbytes, "big")


def controller_headers(p4info: p4info_pb2.P4Info) -> tuple[ControllerHeader | None, ControllerHeader | None]:
    """(packet_in, packet_out) headers of a P4Info, None when the program has none."""
    pin = pout = None
    for cpm in p4info.controller_packet_metadata:
        if cpm.preamble.name == "packet_in":
            pin = ControllerHeader(cpm)
        elif cpm.preamble.name == "packet_out":
            pout = ControllerHeader(cpm)
    return pin, pout
