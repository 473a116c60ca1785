"""P4Runtime gRPC server of softswitch."""
from .packet_io import ControllerHeader
from .server import P4RuntimeServer, api_version

__all__ = ["ControllerHeader", "P4RuntimeServer", "api_version"]
