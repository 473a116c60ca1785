"""Actions from P4Info, and validation of P4Runtime ``Action`` messages against them."""
from __future__ import annotations

from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from . import bytestrings
from .errors import denied, invalid

NO_ACTION_ID = 0
"""Action id the data plane sees when nothing runs: a hit on an empty selector group (bmv2 runs
its no-op ``empty_action`` there)."""

SCOPE_TABLE_AND_DEFAULT = p4info_pb2.ActionRef.TABLE_AND_DEFAULT
SCOPE_TABLE_ONLY = p4info_pb2.ActionRef.TABLE_ONLY
SCOPE_DEFAULT_ONLY = p4info_pb2.ActionRef.DEFAULT_ONLY


@dataclass(frozen=True, slots=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True, slots=True)
class ActionInfo:
    """One P4Info action: its id, name and parameters in P4Info order."""

    id: int
    name: str
    params: tuple[ParamInfo, ...]

    @classmethod
    def from_p4info(cls, a: p4info_pb2.Action) -> ActionInfo:
        return cls(a.preamble.id, a.preamble.name,
                   tuple(ParamInfo(p.id, p.name, p.bitwidth) for p in a.params))

    def parse_args(self, params, what: str) -> tuple[int, ...]:
        """Validate ``Action.params`` (or P4Info ``TableActionCall.arguments``) -> ints in order."""
        by_id = {p.id: i for i, p in enumerate(self.params)}
        args: list[int | None] = [None] * len(self.params)
        for p in params:
            pid = p.param_id
            i = by_id.get(pid)
            if i is None:
                raise invalid(f"{what}: action '{self.name}' has no parameter id {pid}")
            if args[i] is not None:
                raise invalid(f"{what}: parameter '{self.params[i].name}' given twice")
            info = self.params[i]
            args[i] = bytestrings.decode(p.value, info.bitwidth, f"{what}: parameter '{info.name}'")
        missing = [self.params[i].name for i, v in enumerate(args) if v is None]
        if missing:
            raise invalid(f"{what}: action '{self.name}' is missing parameter(s) {', '.join(missing)}")
        return tuple(args)  # type: ignore[arg-type]

    def to_proto(self, args: tuple[int, ...], out: p4runtime_pb2.Action) -> None:
        """Fill ``out`` with this action and canonical parameter bytes."""
        out.action_id = self.id
        for info, v in zip(self.params, args):
            out.params.add(param_id=info.id, value=bytestrings.encode(v))


class ActionSet:
    """The actions a table (or an action profile's tables) may use, with their scopes."""

    def __init__(self, owner: str, refs, actions: dict[int, ActionInfo]) -> None:
        self.owner = owner
        self.scopes: dict[int, int] = {}
        for r in refs:
            self.scopes[r.id] = r.scope
        self.actions = actions

    def parse(self, action: p4runtime_pb2.Action, *, default: bool, what: str) -> tuple[int, tuple[int, ...]]:
        """Check the action id and scope and parse params -> (action_id, args)."""
        aid = action.action_id
        scope = self.scopes.get(aid)
        if scope is None:
            raise invalid(f"{what}: action id {aid} is not an action of {self.owner}")
        if default and scope == SCOPE_TABLE_ONLY:
            raise denied(f"{what}: action '{self.actions[aid].name}' is @tableonly, "
                         f"it cannot be the default action of {self.owner}")
        if not default and scope == SCOPE_DEFAULT_ONLY:
            raise denied(f"{what}: action '{self.actions[aid].name}' is @defaultonly in {self.owner}")
        return aid, self.actions[aid].parse_args(action.params, what)
