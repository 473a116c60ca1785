"""Errors raised by the front end: every message is ``file:line:col: error: ...``."""
from __future__ import annotations

from .ir import Loc


class P4Error(Exception):
    """A problem in a P4 program, located in its original source file."""

    kind = "error"

    def __init__(self, loc: Loc | None, message: str) -> None:
        self.loc = loc
        self.message = message
        where = f"{loc}: " if loc is not None else ""
        super().__init__(f"{where}error: {message}")


class PreprocessorError(P4Error):
    """Bad directive, missing include, unbalanced #if."""


class P4SyntaxError(P4Error):
    """The source does not parse."""


class P4TypeError(P4Error):
    """Types, names or widths do not check."""


class P4Unsupported(P4Error):
    """A construct outside the softswitch P4 subset (message ``unsupported: <construct>``)."""

    def __init__(self, loc: Loc | None, construct: str) -> None:
        where = f" at {loc}" if loc is not None else ""
        super().__init__(loc, f"unsupported: {construct}{where}")
        self.construct = construct


class P4InfoError(P4Error):
    """The program cannot be given a P4Info (e.g. a bad ``@id``)."""
