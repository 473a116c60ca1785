"""Names of everything a fabric creates, derived from a run prefix so parallel runs never collide.

* host namespace: ``<prefix>-<host>``;
* host NIC interface (inside its namespace): ``nic<plane>``;
* switch port interface (root namespace): ``<prefix>s<switch#>p<port>``, switch# = 1-based position
  of the switch in the topology file; at most 15 characters (IFNAMSIZ - 1).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from controller.topology import Topology

IFNAMSIZ = 15
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,5}$")


class NamingError(ValueError):
    """A prefix or topology that cannot give valid, unique interface names."""


def check_prefix(prefix: str) -> str:
    """A run prefix: a lowercase letter then up to 5 letters/digits."""
    if not _PREFIX_RE.match(prefix):
        raise NamingError(f"prefix {prefix!r}: must be a lowercase letter followed by at most 5 "
                          "lowercase letters or digits (interface names are limited to 15 characters)")
    return prefix


@dataclass(frozen=True, slots=True)
class Names:
    """Name derivation for one run prefix and topology."""

    prefix: str
    switch_index: dict[str, int]

    @classmethod
    def for_topology(cls, prefix: str, topo: Topology) -> Names:
        return cls(check_prefix(prefix), {name: i for i, name in enumerate(topo.switches, start=1)})

    def netns(self, host: str) -> str:
        """Network namespace of a host."""
        return f"{self.prefix}-{host}"

    @staticmethod
    def host_if(plane: int) -> str:
        """Host NIC interface (inside the host namespace) of NIC port ``plane``."""
        return f"nic{plane}"

    def switch_if(self, switch: str, port: int) -> str:
        """Root-namespace interface bound to ``switch`` P4 port ``port``."""
        name = f"{self.prefix}s{self.switch_index[switch]}p{port}"
        if len(name) > IFNAMSIZ:
            raise NamingError(f"switch {switch} port {port}: interface name {name} exceeds {IFNAMSIZ} "
                              "characters; use a shorter prefix")
        return name
