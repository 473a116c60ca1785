"""A tiny real Pipeline for engine tests (independent of the P4 compiler).

Forwarding rule: byte 0 of the frame is the egress port, byte 1 the priority; egress port 511
drops.  Byte 2 == 0xEE asks egress to recirculate once (byte 2 rewritten to 0).  The egress
result records the queue metadata it received so tests can read what the TM filled in.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from softswitch.contract import DROP_PORT, EgressResult, Frame, IngressResult, TmItem


@dataclass
class TinyPipeline:
    """Forward by the first byte of the frame; records every egress item."""

    seen: list[TmItem] = field(default_factory=list)
    ingress_ports: list[int] = field(default_factory=list)

    def ingress(self, data: bytes, ingress_port: int, now_us: int) -> IngressResult:
        self.ingress_ports.append(ingress_port)
        if len(data) < 3:
            return IngressResult(dropped=True, drop_reason="too short")
        port = data[0]
        if port == 0xFF:
            port = DROP_PORT
        if port == DROP_PORT:
            return IngressResult(dropped=True, drop_reason="egress_spec 511")
        return IngressResult(to_tm=[TmItem(port, data[1] & 7, len(data), data)])

    def ingress_recirculated(self, data: bytes, preserved: object, now_us: int) -> IngressResult:
        return self.ingress(data, 0, now_us)

    def egress(self, item: TmItem, now_us: int) -> EgressResult:
        self.seen.append(item)
        data = item.meta
        if data[2] == 0xEE:
            return EgressResult(recirculate=[(data[:2] + b"\x00" + data[3:], None)])
        return EgressResult(frames=[Frame(item.egress_port, data)])
