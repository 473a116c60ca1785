"""Fields a differential run may mask before comparing: values that report time or load.

softswitch runs a script on a virtual clock; bmv2 reads it from pcap files with ``--use-files``,
which replays the packets as fast as it can, whatever their timestamps (its ``DevMgr`` builds the
pcap reader with real-time replay off).  A timestamp, a latency or a queue depth that a program
copies into a packet therefore cannot agree byte for byte, while everything the program decides
from them can be made to (``tests/softswitch/diff/mrc_script.py`` keeps its queues deterministic).
``python -m softswitch.diff ... --normalise NAME`` applies one of ``NORMALISERS`` to both sides.
"""
from __future__ import annotations

from collections.abc import Callable

from mrc.wire import formats as F

_ETH, _IPV6, _HBH = 14, 40, 0
_RECORDS_AT = 8  # next header, length, option type, option length, max hops, hop count, 2 reserved
_TELEMETRY_OPT, _TELEMETRY_OPT_LEN = F.HBH_OPT_TELEMETRY, F.TELEMETRY_OPT_DATA_LEN
_RECORD_LEN, _MAX_HOPS = F.TELEMETRY_RECORD_LEN, F.TELEMETRY_MAX_HOPS


def mrc_telemetry(frame: bytes) -> bytes:
    """``p4src/mrc_switch.p4``'s telemetry (a Hop-by-Hop option 0x3E right after the outer IPv6
    header, docs/dataplane.md): every record's ingress timestamp, hop latency and queue depth set to
    0; switch id, ports, queue id and the hop count are kept.  Other frames are returned unchanged."""
    if len(frame) < _ETH + _IPV6 + _RECORDS_AT or frame[12:14] != b"\x86\xdd" or frame[_ETH + 6] != _HBH:
        return frame
    off = _ETH + _IPV6
    if frame[off + 2] != _TELEMETRY_OPT or frame[off + 3] != _TELEMETRY_OPT_LEN:
        return frame
    out = bytearray(frame)
    for k in range(_MAX_HOPS):
        r = off + _RECORDS_AT + k * _RECORD_LEN
        if r + _RECORD_LEN > len(out):
            break
        out[r + 8:r + 19] = bytes(11)  # ingress_ts_us(32) hop_latency_us(32) queue_depth(24)
    return bytes(out)


NORMALISERS: dict[str, Callable[[bytes], bytes]] = {"mrc-telemetry": mrc_telemetry}
