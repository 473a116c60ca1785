"""What the console scripts' entry modules (``mrc.cli``, ``controller.cli``, ``mrc_fabric.cli``) share.

An entry module imports nothing heavy: its commands live in the package's ``cli_commands``, imported
inside ``main``, so a Ctrl-C during those imports (gRPC, the endpoint, the scenario runner: up to a
second) ends the command with 130 instead of a KeyboardInterrupt traceback out of the script's own
``from PKG.cli import main`` (until 2026-12-08).  Names of ``cli_commands`` (``build_parser``, the
``cmd_*`` functions) stay reachable on the entry module, loaded on first use.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def run(package: str, prog: str | None, argv: list[str] | None) -> int:
    """``package.cli_commands.main(argv)``; a Ctrl-C while it imports: ``PROG: interrupted`` on stderr
    (nothing with ``prog`` None, as a Ctrl-C during an ``mrc-perf`` run) and 130."""
    try:
        commands = importlib.import_module(f"{package}.cli_commands")
    except KeyboardInterrupt:
        if prog:
            print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    return commands.main(argv)


def forward(module: str, package: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module`` that finds other names in ``package.cli_commands``.  Not
    for dunders: ``from PKG.cli import main`` asks for ``__path__``, which would import everything."""
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        commands = importlib.import_module(f"{package}.cli_commands")
        try:
            return getattr(commands, name)
        except AttributeError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
    return __getattr__
