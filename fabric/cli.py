"""``mrc-fabric``: bring an emulated fabric up or down, show it, inject faults.

This module is the console script's entry point and imports nothing heavy: the commands live in
``cli_commands``, imported inside ``main``, whose imports (the controller, the scenario runner, gRPC)
take about a second; a Ctrl-C during them was a KeyboardInterrupt traceback out of the script's own
``from mrc_fabric.cli import main`` (until 2026-12-08), where it is now the usual one line and exit 130.
``build_parser``, ``main``'s helpers and the ``cmd_*`` functions are reachable here as before.
"""
from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-fabric``; errors exit 2 with a message naming the element."""
    try:
        from . import cli_commands
    except KeyboardInterrupt:
        print("mrc-fabric: interrupted", file=sys.stderr)
        return 130
    return cli_commands.main(argv)


def __getattr__(name: str) -> Any:  # mrc_fabric.cli.build_parser and the rest, as before the split
    # not for dunders: `from mrc_fabric.cli import main` asks for __path__, which imported everything
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import cli_commands

    try:
        return getattr(cli_commands, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


if __name__ == "__main__":
    sys.exit(main())
