"""``mrc-fabric``: bring an emulated fabric up or down, show it, inject faults.

This module is the console script's entry point and imports nothing heavy: the commands live in
``cli_commands``, imported inside ``main``, whose imports (the controller, the scenario runner, gRPC)
take about a second; a Ctrl-C during them was a KeyboardInterrupt traceback out of the script's own
``from mrc_fabric.cli import main`` (until 2026-12-08), where it is now the usual one line and exit 130.
``build_parser``, ``main``'s helpers and the ``cmd_*`` functions are reachable here as before.
"""
from __future__ import annotations

import sys

from mrc.entry import forward, run


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-fabric``; errors exit 2 with a message naming the element."""
    return run(__package__, "mrc-fabric", argv)


__getattr__ = forward(__name__, __package__)  # build_parser and the rest, as before the split

if __name__ == "__main__":
    sys.exit(main())
