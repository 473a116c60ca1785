"""Name resolution, type checking, constant folding and lowering of the parse tree to ``ir``.

The checker is split by concern: declarations and types (``check_decl``), expressions
(``check_expr``), statements (``check_stmt``), actions/parsers/controls (``check_blocks``) and
tables (``check_tables``), over the shared state and helpers of ``checkbase``.
"""
from __future__ import annotations

from lark import Tree

from . import ir
from .check_blocks import BlockChecker
from .check_decl import DeclChecker
from .check_expr import ExprChecker
from .check_stmt import StmtChecker
from .check_tables import TableChecker
from .errors import P4TypeError

__all__ = ["Checker"]


class Checker(DeclChecker, BlockChecker, TableChecker, StmtChecker, ExprChecker):
    """Lowers a whole parse tree; one instance per program."""

    # ------------------------------------------------------------ program
    def program(self, tree: Tree) -> ir.Program:
        for d in tree.children:
            if isinstance(d, Tree):
                self.declaration(d)
        if self.main is None:
            raise P4TypeError(ir.Loc(self.source_file, 1, 1), "no 'main' package instantiation")
        return self.lower_main(self.main)
