"""``mrc-perf`` (also ``python -m mrc``): RDMA WRITE bandwidth/latency between two MRC endpoints.

This module is the console script's entry point and imports nothing heavy: the commands live in
``cli_commands``, imported inside ``main`` (the endpoint and the transport: about a quarter of a
second), so a Ctrl-C then ends it with 130 as a Ctrl-C during a run does; until 2026-12-08 it was a
KeyboardInterrupt traceback out of the script's ``from mrc.cli import main``.
"""
from __future__ import annotations

import sys

from mrc.entry import forward, run


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mrc-perf``: 0 success, 1 the run failed, 2 bad arguments or setup, 130 Ctrl-C."""
    return run(__package__, None, argv)


__getattr__ = forward(__name__, __package__)  # build_parser and the rest, as before the split

if __name__ == "__main__":
    sys.exit(main())
