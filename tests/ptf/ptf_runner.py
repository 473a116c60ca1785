"""Shared part of the PTF suite wrappers: skip when the target cannot run, run a ``ptf_tests/run*.py``
runner and check that ptf ran every test of its suite, each reported ok (an empty or partial selection
is a failure, not a pass)."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from mrc_fabric.targets import TargetError, get_target, selected_target

ROOT = Path(__file__).resolve().parents[2]
TARGET = selected_target()


def target_missing(target: str, root_why: str, compiles: bool = False) -> str | None:
    """Why ``target`` cannot run a suite here (not root; the target plugin's switch, run-time tools,
    and either its compiler when the suite ``compiles`` its own programs or the ``build/`` outputs it
    loads), or None when it can.  Asks the plugin (fabric/targets), never tests the target's name."""
    if os.geteuid() != 0:
        return f"needs root ({root_why})"
    try:
        t = get_target(target)
    except TargetError as e:
        return str(e)
    return t.missing() or t.tools_missing() or (t.compiler_missing() if compiles else t.build_missing())


def suite_tests(suite: Path) -> set[str]:
    """``module.Class`` of every test in the suite: public classes with a ``runTest`` method, read from
    the source (importing them would need ptf's runtime)."""
    found = set()
    for path in sorted(suite.glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and any(
                    isinstance(f, ast.FunctionDef) and f.name == "runTest" for f in node.body):
                found.add(f"{path.stem}.{node.name}")
    return found


def ran_count(output: str) -> int:
    """N of unittest's "Ran N tests" line in ptf's output (an AssertionError when it is missing)."""
    match = re.search(r"^Ran (\d+) tests? in ", output, re.MULTILINE)
    assert match, f"no 'Ran N tests' line in ptf's output:\n{output[-3000:]}"
    return int(match.group(1))


def skipped_tests(output: str) -> set[str]:
    """``module.Class`` of each test ptf reported as skipped (verbose ``... skipped 'why'`` lines)."""
    return set(re.findall(r"^(\S+) \.\.\. skipped", output, re.MULTILINE))


def assert_complete_run(out: str, expected: set[str], allowed_skips: set[str]) -> None:
    """ptf ran at least every test of ``expected``, each reported ok unless it is an allowed skip."""
    skipped = skipped_tests(out)
    assert skipped <= allowed_skips, f"unexpected skips: {sorted(skipped - allowed_skips)}"
    ran = ran_count(out)
    assert ran >= len(expected), f"ptf ran {ran} tests, the suite has {len(expected)}:\n{out[-3000:]}"
    passed = set(re.findall(r"^(\S+) \.\.\. ok$", out, re.MULTILINE))
    assert passed >= expected - skipped, f"not reported ok: {sorted(expected - skipped - passed)}"


def run_suite(runner: str, suite: Path, args: list[str], allowed_skips: set[str], timeout: float) -> None:
    """Run ``ptf_tests/<runner>`` with ``args``; it must exit 0 with every test of ``suite`` ok."""
    result = subprocess.run([sys.executable, str(ROOT / "ptf_tests" / runner), *args],
                            check=False, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert "\nOK" in out and "FAILED" not in out, out[-3000:]
    assert_complete_run(out, suite_tests(suite), allowed_skips)
