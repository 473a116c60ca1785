"""mrc-fabric emulation: topologies in network namespaces, switch processes, faults, clean teardown."""
import os

# pyroute2 forks a helper to work inside a namespace; with gRPC loaded in the same process (the
# controller, the demo, the PTF runner) gRPC's fork handlers can abort that child. The helper never
# uses gRPC, so switch them off before gRPC is first imported (an explicit setting wins).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

from .fabric import Fabric, FabricError, down_prefix, teardown
from .naming import Names, NamingError
from .state import FabricState

__all__ = ["Fabric", "FabricError", "FabricState", "Names", "NamingError", "down_prefix", "teardown"]
