"""``register<T>(N)`` arrays: plain value lists, read/written by index."""
from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2

from . import bytestrings
from .errors import P4InfoError, check_index, invalid


def _width(spec: p4info_pb2.P4DataTypeSpec, name: str) -> tuple[int, bool]:
    bs = spec.bitstring
    if bs.HasField("bit"):
        return bs.bit.bitwidth, False
    if bs.HasField("int"):
        return bs.int.bitwidth, True
    raise P4InfoError(f"register '{name}': only bit<W> and int<W> registers are supported")


class RegisterState:
    """Values are kept as unsigned ints of ``bitwidth`` bits (int<W> in two's complement)."""

    def __init__(self, info: p4info_pb2.Register) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.size = int(info.size)
        self.bitwidth, self.signed = _width(info.type_spec, self.name)
        self.mask = (1 << self.bitwidth) - 1
        self.values = [0] * self.size

    def read(self, index: int) -> int:
        """Data plane: the value at ``index``; out of range reads 0 (v1model leaves it unspecified)."""
        if 0 <= index < self.size:
            return self.values[index]
        return 0

    def write(self, index: int, value: int) -> None:
        """Data plane: store ``value`` (truncated to the width); out of range is a no-op (v1model)."""
        if 0 <= index < self.size:
            self.values[index] = value & self.mask

    def check_index(self, index: int) -> None:
        check_index(f"register '{self.name}'", index, self.size)

    def parse_data(self, data: p4data_pb2.P4Data) -> int:
        if data.WhichOneof("data") != "bitstring":
            raise invalid(f"register '{self.name}': data must be a bitstring")
        if self.signed:
            return bytestrings.decode_signed(data.bitstring, self.bitwidth, f"register '{self.name}'")
        return bytestrings.decode(data.bitstring, self.bitwidth, f"register '{self.name}'")

    def encode(self, index: int) -> bytes:
        """The canonical bytestring of one cell (two's complement for an int<W> register)."""
        v = self.values[index]
        return bytestrings.encode_signed(v, self.bitwidth) if self.signed else bytestrings.encode(v)

    def control_write(self, index: int | None, value: int) -> None:
        """Control plane: set one cell, or every cell when ``index`` is None."""
        if index is None:
            self.values[:] = [value] * self.size
            return
        self.check_index(index)
        self.values[index] = value
