"""softswitch: an embedded P4_16 v1model software switch with a P4Runtime server."""
from softswitch.api import SoftSwitch, SoftSwitchError
from softswitch.switch import Switch, SwitchConfig, SwitchError

__all__ = ["SoftSwitch", "SoftSwitchError", "Switch", "SwitchConfig", "SwitchError"]
