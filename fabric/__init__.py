"""mrc-fabric emulation: topologies in network namespaces, switch processes, faults, clean teardown."""
from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# pyroute2 forks a helper to work inside a namespace; with gRPC loaded in the same process (the
# controller, the demo, the PTF runner) gRPC's fork handlers can abort that child. The helper never
# uses gRPC, so switch them off before gRPC is first imported (an explicit setting wins).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

# The names below are loaded on first use (PEP 562), not on ``import mrc_fabric``: importing .fabric
# here imported .supervise with it, so ``python -m mrc_fabric.supervise`` found its own module loaded
# before running it and printed runpy's RuntimeWarning (until 2026-12-07).
_LAZY = {"Fabric": "fabric", "FabricError": "fabric", "down_prefix": "fabric", "teardown": "fabric",
         "Names": "naming", "NamingError": "naming", "FabricState": "state"}

if TYPE_CHECKING:
    from .fabric import Fabric, FabricError, down_prefix, teardown
    from .naming import Names, NamingError
    from .state import FabricState

__all__ = ["Fabric", "FabricError", "FabricState", "Names", "NamingError", "down_prefix", "teardown"]


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
