"""MRC wire formats: byte layouts (``formats``), fast bytes codec (``codec``) and the RoCEv2 ICRC."""

from mrc.wire import formats
from mrc.wire.codec import (
    AckInfo,
    Frame,
    PortStatusInfo,
    ProbeInfo,
    TelemetryRecord,
    WireError,
    decode_frame,
    encode_ack,
    encode_data,
    encode_port_status,
    encode_probe,
    mark_ce,
    trim_packet,
)
from mrc.wire.icrc import icrc_of, verify_icrc

__all__ = [
    "AckInfo",
    "Frame",
    "PortStatusInfo",
    "ProbeInfo",
    "TelemetryRecord",
    "WireError",
    "decode_frame",
    "encode_ack",
    "encode_data",
    "encode_port_status",
    "encode_probe",
    "formats",
    "icrc_of",
    "mark_ce",
    "trim_packet",
    "verify_icrc",
]
