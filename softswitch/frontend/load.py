"""Entry points: P4 source text or file -> checked ``ir.Program``."""
from __future__ import annotations

from . import ir
from .check import Checker
from .parse import parse_text
from .preprocess import Preprocessed, preprocess_file, preprocess_source


def load_preprocessed(pp: Preprocessed, filename: str) -> ir.Program:
    """Parse and check already-preprocessed text (used by device configs)."""
    tree = parse_text(pp.text, pp.origins)
    return Checker(pp.origins, filename).program(tree)


def load_source(text: str, filename: str = "<input>", defines: dict[str, str] | None = None,
                include_dirs: list[str] | None = None) -> ir.Program:
    """Preprocess, parse and check P4 source ``text``; errors are ``P4Error``s."""
    return load_preprocessed(preprocess_source(text, filename, defines, include_dirs), filename)


def load_program(path: str, defines: dict[str, str] | None = None,
                 include_dirs: list[str] | None = None) -> ir.Program:
    """Load the P4 program at ``path`` (``-D``-style ``defines``, ``-I``-style ``include_dirs``)."""
    pp = preprocess_file(path, defines, include_dirs)
    return load_preprocessed(pp, path)
