"""The script a differential run replays: table/PRE entities and timed input packets.

JSON::

    {"entities": ["table_entry { ... }", ...],      # P4Runtime Entity messages, text format
     "queues": [{"port": 2, "rate_pps": 1000, "depth": 64}],   # optional, like set_queue_rate
     "packets": [{"port": 1, "data": "hex", "time_us": 0,
                  "expect": [[2, "hex"], ...]}]}      # optional expected outputs

``time_us`` (default: 1 µs after the previous packet) lets a burst sit in a rate-limited queue,
so queue-depth paths are exercised with packets in flight.  Packets are listed in the order they
enter: times never go back, and packets at one time on different ports come in ascending port
order, the order bmv2's pcap reader takes them in (it sends the earliest head of its per-port
files, the lowest port on a tie: ``PcapFilesReader::scan``); a script that breaks this is refused.
``expect`` lists every frame the packet must produce (port, bytes), in order; a script without it
only compares targets.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2


@dataclass
class Packet:
    """One input frame and, optionally, what it must produce."""

    port: int
    data: bytes
    time_us: int
    expect: list[tuple[int, bytes]] | None = None


@dataclass
class Script:
    entities: list[p4runtime_pb2.Entity] = field(default_factory=list)
    queues: list[dict] = field(default_factory=list)
    packets: list[Packet] = field(default_factory=list)

    def to_json(self) -> str:
        """The script as JSON (what ``load_script`` reads)."""
        pk = []
        for p in self.packets:
            d: dict = {"port": p.port, "data": p.data.hex(), "time_us": p.time_us}
            if p.expect is not None:
                d["expect"] = [[port, data.hex()] for port, data in p.expect]
            pk.append(d)
        return json.dumps({"entities": [text_format.MessageToString(e, as_one_line=True)
                                        for e in self.entities],
                           "queues": self.queues, "packets": pk}, indent=1)


class ScriptError(ValueError):
    """The script is malformed (the message says where)."""


def load_script(path: str | Path) -> Script:
    """Read a JSON script (see the module docstring)."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ScriptError(f"{path}: {e}") from None
    return parse_script(raw, str(path))


def parse_script(raw: dict, where: str = "script") -> Script:
    """Build a ``Script`` from already-decoded JSON."""
    s = Script()
    for i, txt in enumerate(raw.get("entities", [])):
        try:
            s.entities.append(text_format.Parse(txt, p4runtime_pb2.Entity()))
        except text_format.ParseError as e:
            raise ScriptError(f"{where}: entities[{i}]: {e}") from None
    for q in raw.get("queues", []):
        if "port" not in q:
            raise ScriptError(f"{where}: a queue needs a port")
        s.queues.append(dict(q))
    t = 0
    for i, p in enumerate(raw.get("packets", [])):
        try:
            t = int(p.get("time_us", t + 1))
            exp = p.get("expect")
            s.packets.append(Packet(int(p["port"]), bytes.fromhex(p["data"]), t,
                                    None if exp is None else [(int(a), bytes.fromhex(b)) for a, b in exp]))
        except (KeyError, ValueError, TypeError) as e:
            raise ScriptError(f"{where}: packets[{i}]: {e!r}") from None
    check_order(s, where)
    return s


def check_order(s: Script, where: str = "script") -> None:
    """Refuse packets out of entry order (see the module docstring): an earlier time after a later
    one, or at one time a lower port after a higher one."""
    for i in range(1, len(s.packets)):
        a, b = s.packets[i - 1], s.packets[i]
        if (b.time_us, b.port) < (a.time_us, a.port):
            raise ScriptError(f"{where}: packets[{i}] (port {b.port}, time_us {b.time_us}) comes after "
                              f"packets[{i - 1}] (port {a.port}, time_us {a.time_us}): list packets by time, "
                              "and at one time by port, the order bmv2 reads them in")
