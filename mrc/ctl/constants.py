"""Enumerations and limits of ``mrc_ctl.h``, with the C values, so numbers on the wire or in logs match.

Each class is named after its C enum (``enum mrc_ctl_ev_state`` -> ``EvState``) and each member after
its C constant with the common prefix removed (``MRC_CTL_EV_ASSUMED_BAD`` -> ``EvState.ASSUMED_BAD``).
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

from mrc.core.types import EvState  # enum mrc_ctl_ev_state: one definition, in the transport core

EV_MAX_BYTES = 32  # MRC_CTL_EV_MAX_BYTES
MAX_VENDOR_CFG_SIZE = 128  # MRC_CTL_MAX_VENDOR_CFG_SIZE: vendor_cfg is a uint8_t array of this size
CC_ALGO_NSCC = "uet-1.0-nscc"  # the common algorithm string defined by mrc_ctl.h


class ProtocolVersion(IntFlag):
    """enum mrc_ctl_protocol_version."""

    V0 = 0
    V1 = 1 << 0


class ProfileState(IntEnum):
    """enum mrc_ctl_profile_state (shared by EV format, EV and CC profiles)."""

    INIT = 0
    OFFLINE = 1
    ONLINE = 2


class AttrOpt(IntFlag):
    """enum mrc_ctl_attr_opt: optional features a device advertises in ``opt_attr``."""

    EV_PROFILE_MODIFY_ONLINE = 1 << 0
    CC_PROFILE_MODIFY_ONLINE = 1 << 1
    EV_EVENT = 1 << 2
    EV_EXPLICIT_RANGE = 1 << 3
    EV_EVENT_PRECISE_DROP_CNT = 1 << 4
    EP_OP_EV_PROBE = 1 << 5


class PortAdminState(IntEnum):
    """enum mrc_ctl_port_admin_state."""

    DISABLED = 0
    ENABLED = 1


class PortAttrMask(IntFlag):
    """enum mrc_ctl_port_attr_mask."""

    ADMIN_STATE = 1 << 0


class EvFmtMode(IntFlag):
    """enum mrc_ctl_ev_fmt_mode: how an expanded EV is carried in a packet."""

    STEV = 1 << 0
    SRV6 = 1 << 1
    UDP = 1 << 2


# Total expanded width a format mode can carry, in bits.  STEV: flow label low 16 + UDP sport;
# SRv6: IPv6 destination (128) + the single SRH segment (128); UDP: the UDP source port.
FMT_MODE_MAX_WIDTH = {EvFmtMode.STEV: 32, EvFmtMode.SRV6: 256, EvFmtMode.UDP: 16}


class EvFmtOp(IntEnum):
    """enum mrc_ctl_ev_fmt_op."""

    MODIFY_FIELDS = 0
    QUERY_FIELDS = 1


class EvFmtProfileAttrMask(IntFlag):
    """enum mrc_ctl_ev_fmt_profile_attr_mask."""

    STATE = 1 << 0
    CUR_STATE = 1 << 1
    MODE = 1 << 2
    OP = 1 << 3
    VENDOR_CFG = 1 << 31


class EvMode(IntFlag):
    """enum mrc_ctl_ev_mode: who provides the EV array of a profile."""

    AUTO = 1 << 0
    EXP = 1 << 1
    GEN = 1 << 2


class EvOp(IntEnum):
    """enum mrc_ctl_ev_op."""

    REPLACE_EV = 0
    MODIFY_EV_STATE = 1
    QUERY_EV_STATE = 2
    QUERY_EV_ARRAY = 3


class EvFieldsOp(IntEnum):
    """enum mrc_ctl_ev_fields_op."""

    MODIFY_FIELDS = 0
    QUERY_FIELDS = 1


class EvProfileAttrMask(IntFlag):
    """enum mrc_ctl_ev_profile_attr_mask."""

    STATE = 1 << 0
    CUR_STATE = 1 << 1
    MODE = 1 << 2
    FMT_ID = 1 << 3
    COUNT = 1 << 4
    MIN_ACTIVE = 1 << 5
    EVENT_MASK = 1 << 6
    EV_OP = 1 << 7
    EV_FIELDS_OP = 1 << 8
    VENDOR_CFG = 1 << 31


class EvOpFlags(IntFlag):
    """enum mrc_ctl_ev_op_flags."""

    NONE = 0
    ALL_COPIES = 1 << 0


class CcProfileAttrMask(IntFlag):
    """enum mrc_ctl_cc_profile_attr_mask."""

    STATE = 1 << 0
    CUR_STATE = 1 << 1
    ALGORITHM = 1 << 2
    CONFIG = 1 << 3
    VENDOR_CFG = 1 << 31


class EpOpType(IntEnum):
    """enum mrc_ctl_ep_op_type."""

    EV_PROBE = 0
    PORT_STATUS_UPDATE = 1


EVENT_STATES = EvState.GOOD | EvState.ASSUMED_BAD  # the only states an event mask may name
