"""mrc-fabric emulation: topologies in network namespaces, switch processes, faults, clean teardown."""
from .fabric import Fabric, FabricError, down_prefix, teardown
from .naming import Names, NamingError
from .state import FabricState

__all__ = ["Fabric", "FabricError", "FabricState", "Names", "NamingError", "down_prefix", "teardown"]
