"""docs/fabric.md's "Python API" example runs as written (root: it builds its fabric, prefix h7).
Until 2026-12-08 it named a hook, ``controller_set_port_admin``, that it never defined: a NameError
after the fabric was up."""
from __future__ import annotations

import ast
import builtins
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _snippet() -> str:
    doc = (REPO / "docs" / "fabric.md").read_text()
    m = re.search(r"## Python API\n\n```python\n(.*?)```", doc, re.DOTALL)
    assert m, "docs/fabric.md has no Python API example"
    return m.group(1)


def test_the_example_defines_every_name_it_uses():
    """No root: the example is whole (compiles, and each name it calls is imported or defined)."""
    tree = ast.parse(_snippet(), "docs/fabric.md")
    bound = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert used - bound - set(dir(builtins)) == set()


@pytest.mark.root
def test_the_example_runs_as_written():
    import os

    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")
    r = subprocess.run([sys.executable, "-c", _snippet()], cwd=REPO, capture_output=True, text=True, timeout=240,
                       check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "p1l1 1 down" in r.stdout  # the hook port_admin calls
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    assert not [ln for ln in ns.splitlines() if ln.startswith("h7-")]
