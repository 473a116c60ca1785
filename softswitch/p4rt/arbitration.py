"""Client arbitration (P4Runtime spec "Client Arbitration and Controller Replication"), sans-IO.

Only the default role exists. A controller whose election id is >= the highest id ever seen
becomes primary; when the primary leaves or downgrades there is no primary until a controller
sends an election id >= that highest id again. Every change is announced to all controllers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from softswitch.runtime.errors import Code, P4RuntimeError


@dataclass(eq=False)
class Controller:
    """One live stream. ``outbox`` is whatever the transport uses to send it messages."""

    outbox: object
    election_id: int | None = None
    joined: bool = False


@dataclass(frozen=True, slots=True)
class Notice:
    """Arbitration answer for one controller: status code and the election id to report."""

    to: Controller
    code: Code
    election_id: int | None


@dataclass
class Arbiter:
    controllers: list[Controller] = field(default_factory=list)
    primary: Controller | None = None
    highest: int | None = None

    def arbitrate(self, c: Controller, election_id: int | None) -> list[Notice]:
        """First or later MasterArbitrationUpdate from ``c``; raises INVALID_ARGUMENT on a clash."""
        if election_id is not None:
            for other in self.controllers:
                if other is not c and other.election_id == election_id:
                    raise P4RuntimeError(Code.INVALID_ARGUMENT,
                                         f"election id {election_id} is used by another controller")
        if not c.joined:
            c.joined = True
            self.controllers.append(c)
        was_primary = self.primary is c
        c.election_id = election_id
        if election_id is not None and (self.highest is None or election_id >= self.highest):
            self.highest = election_id
            self.primary = c
            return self._notify(self.controllers)
        if was_primary:
            self.primary = None
            return self._notify(self.controllers)
        return self._notify([c])

    def leave(self, c: Controller) -> list[Notice]:
        """The stream of ``c`` closed."""
        if not c.joined:
            return []
        c.joined = False
        self.controllers.remove(c)
        if self.primary is c:
            self.primary = None
            return self._notify(self.controllers)
        return []

    def is_primary_id(self, election_id: int | None) -> bool:
        """Whether a Write/SetForwardingPipelineConfig with this election id comes from the primary."""
        return self.primary is not None and election_id is not None and election_id == self.primary.election_id

    def _notify(self, targets: list[Controller]) -> list[Notice]:
        out = []
        for t in targets:
            if self.primary is None:
                code = Code.NOT_FOUND
            elif t is self.primary:
                code = Code.OK
            else:
                code = Code.ALREADY_EXISTS
            out.append(Notice(t, code, self.highest))
        return out
