"""Plain data of the control API: one dataclass per ``mrc_ctl.h`` struct, same field names."""

from __future__ import annotations

from dataclasses import dataclass, field

from .constants import (
    CC_ALGO_NSCC,
    EV_MAX_BYTES,
    MAX_VENDOR_CFG_SIZE,
    AttrOpt,
    EvFieldsOp,
    EvFmtMode,
    EvFmtOp,
    EvMode,
    EvOp,
    EvOpFlags,
    EvState,
    PortAdminState,
    ProfileState,
    ProtocolVersion,
)
from .errors import einval


@dataclass(frozen=True, slots=True)
class Ev:
    """struct mrc_ctl_ev: an EV value of up to 32 bytes plus the 1-based NIC port (the plane).

    ``val`` is always stored zero-padded to 32 bytes, so two EVs are equal exactly when the C
    structs would compare equal.  Port 0 with an all-zero value is MRC_CTL_EV_UNPOPULATED.
    """

    val: bytes = bytes(EV_MAX_BYTES)
    port: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.val, (bytes, bytearray)):
            raise einval(f"EV value must be bytes, got {type(self.val).__name__}")
        if len(self.val) > EV_MAX_BYTES:
            raise einval(f"EV value is {len(self.val)} bytes; the maximum is {EV_MAX_BYTES}")
        if not 0 <= self.port <= 255:
            raise einval(f"EV port {self.port} does not fit uint8")
        object.__setattr__(self, "val", bytes(self.val).ljust(EV_MAX_BYTES, b"\0"))

    @classmethod
    def from_int(cls, value: int, nbytes: int, port: int) -> Ev:
        """EV whose first ``nbytes`` bytes hold ``value`` big-endian (e.g. a 32-bit STEV, 4 bytes)."""
        if value < 0 or value >> (8 * nbytes):
            raise einval(f"EV value {value:#x} does not fit {nbytes} bytes")
        return cls(value.to_bytes(nbytes, "big"), port)

    def to_int(self, nbytes: int = EV_MAX_BYTES) -> int:
        """The first ``nbytes`` bytes of the value as a big-endian integer."""
        return int.from_bytes(self.val[:nbytes], "big")

    @property
    def populated(self) -> bool:
        """False for MRC_CTL_EV_UNPOPULATED (the initial content of an explicit array)."""
        return self != EV_UNPOPULATED

    def __repr__(self) -> str:
        body = self.val.rstrip(b"\0").hex() or "0"
        return f"Ev(0x{body}, port={self.port})"


EV_UNPOPULATED = Ev()  # MRC_CTL_EV_UNPOPULATED


def vendor_cfg_bytes(value: object, where: str) -> bytes:
    """``vendor_cfg`` as bytes; EINVAL past MRC_CTL_MAX_VENDOR_CFG_SIZE (the C member is a fixed array)."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise einval(f"{where}: vendor_cfg must be bytes, got {type(value).__name__}")
    data = bytes(value)
    if len(data) > MAX_VENDOR_CFG_SIZE:
        raise einval(f"{where}: vendor_cfg is {len(data)} bytes; the maximum is {MAX_VENDOR_CFG_SIZE}")
    return data


@dataclass(frozen=True)
class EvFmtField:
    """struct mrc_ctl_ev_fmt_field: the wire width of one field, in bits."""

    width: int


@dataclass(frozen=True)
class EvField:
    """struct mrc_ctl_ev_field: how one field is built from the compact EV bits."""

    width: int
    init_val: int = 0
    min_val: int = 0
    max_val: int = 0
    mask: int = 0


@dataclass
class EvOpEntry:
    """struct mrc_ctl_ev_op_entry: subject EV, replacement EV, state and flags of one EV operation."""

    ev: Ev = EV_UNPOPULATED
    ev_new: Ev = EV_UNPOPULATED
    state: EvState = EvState.UNKNOWN
    flags: EvOpFlags = EvOpFlags.NONE


@dataclass
class EvFmtOpArgs:
    """The ``ev_fmt_op`` member of struct mrc_ctl_ev_fmt_profile_attr."""

    op: EvFmtOp = EvFmtOp.QUERY_FIELDS
    fmt_fields: list[EvFmtField] = field(default_factory=list)
    fmt_field_count: int | None = None  # query capacity (None: no limit); out: fields returned


@dataclass
class EvFmtProfileAttr:
    """struct mrc_ctl_ev_fmt_profile_attr."""

    profile_state: ProfileState = ProfileState.INIT
    cur_profile_state: ProfileState = ProfileState.INIT
    ev_fmt_mode: EvFmtMode = EvFmtMode.STEV
    ev_fmt_op: EvFmtOpArgs = field(default_factory=EvFmtOpArgs)
    vendor_cfg: bytes = b""


@dataclass
class EvOpArgs:
    """The ``ev_op`` member of struct mrc_ctl_ev_profile_attr."""

    op: EvOp = EvOp.QUERY_EV_ARRAY
    entries: list[EvOpEntry] = field(default_factory=list)
    entry_count: int | None = None  # QUERY_EV_ARRAY capacity (None: no limit); out: entries


@dataclass
class EvFieldsOpArgs:
    """The ``ev_fields_op`` member of struct mrc_ctl_ev_profile_attr."""

    op: EvFieldsOp = EvFieldsOp.QUERY_FIELDS
    fields: list[EvField] = field(default_factory=list)
    field_count: int | None = None  # query capacity (None: no limit); out: fields returned


@dataclass
class EvProfileAttr:
    """struct mrc_ctl_ev_profile_attr."""

    profile_state: ProfileState = ProfileState.INIT
    cur_profile_state: ProfileState = ProfileState.INIT
    ev_mode: EvMode = EvMode.AUTO
    ev_fmt_profile_id: int = 0
    ev_count: int = 0
    ev_min_active: int = 0
    ev_event_mask: EvState = EvState.NONE
    ev_op: EvOpArgs = field(default_factory=EvOpArgs)
    ev_fields_op: EvFieldsOpArgs = field(default_factory=EvFieldsOpArgs)
    vendor_cfg: bytes = b""


@dataclass
class CcProfileAttr:
    """struct mrc_ctl_cc_profile_attr; ``algorithm`` None disables CC (the C NULL)."""

    profile_state: ProfileState = ProfileState.INIT
    cur_profile_state: ProfileState = ProfileState.INIT
    algorithm: str | None = None
    cc_config: object | None = None
    vendor_cfg: bytes = b""


@dataclass
class PortAttr:
    """struct mrc_ctl_port_attr."""

    port_admin_state: PortAdminState = PortAdminState.ENABLED


@dataclass
class EvDeviceAttr:
    """The ``ev`` member of struct mrc_ctl_device_attr (EV limits of the device)."""

    ev_max_fmt_profiles: int = 64
    ev_max_profiles: int = 256
    ev_max_count: int = 1 << 20
    ev_free_count: int = 1 << 20
    ev_max_count_profile: int = 1 << 16
    ev_count_align: int = 1
    ev_max_width: int = 8 * EV_MAX_BYTES
    ev_fmt_mode_mask: EvFmtMode = EvFmtMode.STEV | EvFmtMode.SRV6 | EvFmtMode.UDP
    ev_mode_mask: EvMode = EvMode.AUTO | EvMode.EXP | EvMode.GEN
    ev_op_max_entries: int = 0  # 0: no cap


@dataclass
class CcDeviceAttr:
    """The ``cc`` member of struct mrc_ctl_device_attr."""

    cc_max_profiles: int = 64
    algorithms: tuple[str, ...] = (CC_ALGO_NSCC,)


def _all_opts() -> AttrOpt:
    return (AttrOpt.EV_EVENT | AttrOpt.EV_EVENT_PRECISE_DROP_CNT | AttrOpt.EP_OP_EV_PROBE)


@dataclass
class DeviceAttr:
    """struct mrc_ctl_device_attr; ``phy_port_mask`` bit N set means port N exists (1-based)."""

    mrc_ctl_protocol_version: ProtocolVersion = ProtocolVersion.V1
    ev: EvDeviceAttr = field(default_factory=EvDeviceAttr)
    cc: CcDeviceAttr = field(default_factory=CcDeviceAttr)
    phy_port_mask: int = 0b1_1111_1110  # ports 1..8: one per plane
    opt_attr: AttrOpt = field(default_factory=_all_opts)

    @classmethod
    def for_ports(cls, num_ports: int, **kwargs: object) -> DeviceAttr:
        """Device with ports 1..num_ports (each NIC port is one plane)."""
        if not 1 <= num_ports <= 31:
            raise einval(f"num_ports {num_ports} must be in 1..31")
        return cls(phy_port_mask=((1 << num_ports) - 1) << 1, **kwargs)  # type: ignore[arg-type]

    def ports(self) -> list[int]:
        """The 1-based port numbers present in ``phy_port_mask``."""
        return [p for p in range(1, 32) if self.phy_port_mask >> p & 1]
