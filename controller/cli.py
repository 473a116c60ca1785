"""``mrc-controller``: topology generation/checking, SID plan, static plan, EV plans, and the
P4Runtime daemon (``run``) with its terminal view (``status``).

This module is the console script's entry point and imports nothing heavy: the commands live in
``cli_commands``, imported inside ``main`` (gRPC, the telemetry, yaml: about half a second), so a
Ctrl-C then is one line and exit 130; until 2026-12-08 it was a KeyboardInterrupt traceback out of
the script's ``from controller.cli import main``.  ``build_parser`` and the rest are reachable here.
"""
from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-controller``; bad input exits 2 with a message naming the element."""
    try:
        from . import cli_commands
    except KeyboardInterrupt:
        print("mrc-controller: interrupted", file=sys.stderr)
        return 130
    return cli_commands.main(argv)


def __getattr__(name: str) -> Any:  # controller.cli.build_parser and the rest, as before the split
    if name.startswith("__"):  # `from controller.cli import main` asks for __path__: not a reason to load
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import cli_commands

    try:
        return getattr(cli_commands, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


if __name__ == "__main__":
    sys.exit(main())
