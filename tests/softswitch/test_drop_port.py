"""The drop port is softswitch.contract.DROP_PORT (bmv2's 511), named once in softswitch and equal to
the value mrc_switch.p4's define.p4 relies on."""
from __future__ import annotations

import ast
from pathlib import Path

from controller import p4contract as P4
from softswitch.contract import DROP_PORT

SOFTSWITCH = Path(__file__).resolve().parents[2] / "softswitch"


def test_drop_port_is_named_once():
    found = []
    for path in sorted(SOFTSWITCH.rglob("*.py")):
        if path.name == "contract.py" and path.parent == SOFTSWITCH:
            continue
        tree = ast.parse(path.read_text(), str(path))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if id(node) in docs:
                continue
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value in (DROP_PORT, DROP_PORT - 1):
                found.append(f"{path.relative_to(SOFTSWITCH.parent)}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and f"= {DROP_PORT}" in node.value:
                found.append(f"{path.relative_to(SOFTSWITCH.parent)}:{node.lineno} (generated code)")
    assert not found, "the drop port typed outside softswitch/contract.py:\n" + "\n".join(found)


def test_the_programs_drop_port_is_the_targets():
    assert P4.DROP_PORT == DROP_PORT
