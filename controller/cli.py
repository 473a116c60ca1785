"""``mrc-controller``: topology generation/checking, SID plan, static plan, EV plans, and the
P4Runtime daemon (``run``) with its terminal view (``status``).

This module is the console script's entry point and imports nothing heavy: the commands live in
``cli_commands``, imported inside ``main`` (gRPC, the telemetry, yaml: about half a second), so a
Ctrl-C then is one line and exit 130; until 2026-12-08 it was a KeyboardInterrupt traceback out of
the script's ``from controller.cli import main``.  ``build_parser`` and the rest are reachable here.
"""
from __future__ import annotations

import sys

from mrc.entry import forward, run


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-controller``; bad input exits 2 with a message naming the element."""
    return run(__package__, "mrc-controller", argv)


__getattr__ = forward(__name__, __package__)  # build_parser and the rest, as before the split

if __name__ == "__main__":
    sys.exit(main())
