"""P4Info lookups by name and encoding of natural values ("2001:db8::/32", "00:11:..") to bytes.

Kept separate from the gRPC plumbing so it can be unit-tested without a switch.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

Value = int | str | bytes

_ENTITY_KINDS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
                 "direct_meters", "registers", "digests", "controller_packet_metadata")


def encode_value(value: Value, bitwidth: int) -> bytes:
    """Encode an int, an address string (MAC, IPv4, IPv6) or raw bytes as a P4Runtime bytestring.

    P4Runtime 1.x canonical form: big-endian, shortest representation (at least one byte).
    """
    if isinstance(value, bytes):
        number = int.from_bytes(value, "big")
    elif isinstance(value, str):
        number = _parse_address(value)
    else:
        number = int(value)
    if number < 0 or number >= (1 << bitwidth):
        raise ValueError(f"value {value!r} does not fit in {bitwidth} bits")
    length = max(1, (number.bit_length() + 7) // 8)
    return number.to_bytes(length, "big")


def _parse_address(text: str) -> int:
    if text.count(":") == 5 and all(len(p) <= 2 for p in text.split(":")):
        return int(text.replace(":", ""), 16)
    if ":" in text:
        return int(ipaddress.IPv6Address(text))
    if text.count(".") == 3:
        return int(ipaddress.IPv4Address(text))
    return int(text, 0)


def split_prefix(value: str | tuple[Value, int]) -> tuple[Value, int]:
    """Split "2001:db8::/32" (or a (value, prefix_len) tuple) for an LPM key."""
    if isinstance(value, tuple):
        return value
    addr, _, plen = value.partition("/")
    return addr, int(plen)


@dataclass
class P4Info:
    """A loaded P4Info with name -> entity lookups (full names and aliases)."""

    info: p4info_pb2.P4Info

    @classmethod
    def from_text(cls, text: str) -> P4Info:
        info = p4info_pb2.P4Info()
        text_format.Merge(text, info)
        return cls(info)

    @classmethod
    def from_file(cls, path: str) -> P4Info:
        with open(path, encoding="utf-8") as f:
            return cls.from_text(f.read())

    def get(self, kind: str, name: str):
        """The entity of ``kind`` (e.g. "tables") whose name or alias is ``name``."""
        if kind not in _ENTITY_KINDS:
            raise ValueError(f"unknown P4Info entity kind {kind!r}")
        matches = [e for e in getattr(self.info, kind)
                   if e.preamble.name == name or e.preamble.alias == name
                   or e.preamble.name.endswith("." + name)]
        exact = [e for e in matches if e.preamble.name == name or e.preamble.alias == name]
        if len(exact) == 1:
            return exact[0]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise KeyError(f"no {kind[:-1]} named {name!r} in the P4Info")
        raise KeyError(f"{kind[:-1]} name {name!r} is ambiguous: "
                       + ", ".join(e.preamble.name for e in matches))

    def get_id(self, kind: str, name: str) -> int:
        return self.get(kind, name).preamble.id

    def name_of(self, kind: str, entity_id: int) -> str:
        for e in getattr(self.info, kind):
            if e.preamble.id == entity_id:
                return e.preamble.name
        raise KeyError(f"no {kind[:-1]} with id {entity_id}")

    def match_field(self, table: str, field: str):
        for mf in self.get("tables", table).match_fields:
            if mf.name == field:
                return mf
        raise KeyError(f"table {table!r} has no match field {field!r}")

    def action_param(self, action: str, param: str):
        for p in self.get("actions", action).params:
            if p.name == param:
                return p
        raise KeyError(f"action {action!r} has no parameter {param!r}")

    def packet_metadata(self, header: str) -> dict[str, tuple[int, int]]:
        """``{name: (id, bitwidth)}`` of a controller header ("packet_in"/"packet_out")."""
        cpm = self.get("controller_packet_metadata", header)
        return {m.name: (m.id, m.bitwidth) for m in cpm.metadata}
