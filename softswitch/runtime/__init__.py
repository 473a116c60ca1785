"""Runtime state of a loaded program: everything P4Runtime writes and the data plane reads."""
from .action_profiles import ActionProfileState, Group, Member
from .actions import NO_ACTION_ID, ActionInfo
from .counters import CounterState, DirectCounterState
from .digests import DigestListOut, DigestState, digest_values
from .entry import Entry
from .errors import Code, P4InfoError, P4RuntimeError
from .meters import GREEN, RED, YELLOW, DirectMeterState, MeterState
from .pre import CloneSession, PacketReplicationEngine
from .registers import RegisterState
from .state import SwitchState
from .tables import TableState

__all__ = [
    "GREEN",
    "NO_ACTION_ID",
    "RED",
    "YELLOW",
    "ActionInfo",
    "ActionProfileState",
    "CloneSession",
    "Code",
    "CounterState",
    "DigestListOut",
    "DigestState",
    "DirectCounterState",
    "DirectMeterState",
    "Entry",
    "Group",
    "Member",
    "MeterState",
    "P4InfoError",
    "P4RuntimeError",
    "PacketReplicationEngine",
    "RegisterState",
    "SwitchState",
    "TableState",
    "digest_values",
]
