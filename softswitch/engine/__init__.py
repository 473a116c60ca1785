"""Traffic manager, Linux ports, packet loop and runtime control of the embedded switch."""
from softswitch.engine.control import ControlError, ControlHandler, ControlServer, send_command
from softswitch.engine.loop import PacketLoop
from softswitch.engine.ports import LinuxPort, parse_interface
from softswitch.engine.tm import DEFAULT_QUEUE_DEPTH, DEFAULT_QUEUE_RATE, NB_PRIORITIES, TrafficManager

__all__ = [
    "DEFAULT_QUEUE_DEPTH",
    "DEFAULT_QUEUE_RATE",
    "NB_PRIORITIES",
    "ControlError",
    "ControlHandler",
    "ControlServer",
    "LinuxPort",
    "PacketLoop",
    "TrafficManager",
    "parse_interface",
    "send_command",
]
