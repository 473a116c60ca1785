"""The folder ``fabric/`` installs as the import package ``mrc_fabric`` (issue 12, item 5).

A top-level ``fabric`` package would collide with Fabric, the SSH library on PyPI; these tests keep
the name from coming back and check that the installed package list covers every sub-package.
"""
from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("controller", "fabric", "mrc", "softswitch", "tests", "ptf_tests", "bench", "scripts", "tools")


def _python_files() -> list[Path]:
    return [p for d in SOURCES if (REPO / d).is_dir() for p in (REPO / d).rglob("*.py")]


def test_no_source_imports_top_level_fabric() -> None:
    bad = []
    for path in _python_files():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bad += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names
                    if n == "fabric" or n.startswith("fabric.")]
    assert not bad, "import the emulated-fabric package as mrc_fabric, not fabric:\n" + "\n".join(bad)


def test_no_code_string_imports_top_level_fabric() -> None:
    """Code run in child processes (``python -c "..."``, the image's smoke test, the scripts) is
    text to the AST check above."""
    pat = re.compile(r"\bfrom fabric(\.\w+)* import\b|\bimport fabric\b|-m fabric\b|import [\w, ]*\bfabric\b")
    others = [REPO / "docker" / "Dockerfile", REPO / "Makefile", *(REPO / "scripts").glob("*.sh")]
    bad = [f"{p.relative_to(REPO)}:{n}" for p in [*_python_files(), *others] if p != Path(__file__) and p.is_file()
           for n, line in enumerate(p.read_text().splitlines(), 1) if pat.search(line)]
    assert not bad, "use mrc_fabric:\n" + "\n".join(bad)


def test_every_fabric_subpackage_imports_as_mrc_fabric() -> None:
    subs = sorted(d.parent.relative_to(REPO / "fabric") for d in (REPO / "fabric").rglob("__init__.py"))
    assert len(subs) >= 4, subs
    for sub in subs:
        name = ".".join(("mrc_fabric", *sub.parts))
        assert Path(importlib.import_module(name).__file__).parent == REPO / "fabric" / sub, name


def test_mrc_fabric_imports_and_runs_as_module() -> None:
    mod = importlib.import_module("mrc_fabric")
    assert Path(mod.__file__).resolve().parent == REPO / "fabric"
    out = subprocess.run([sys.executable, "-m", "mrc_fabric", "--help"],
                         check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "mrc-fabric" in out.stdout, out.stderr
