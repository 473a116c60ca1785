"""Every console script's ``--help`` states the default of each option that has one.

A user reads defaults off ``--help`` (``mrc-controller run --help`` did not say that ``--interval``
is 10 s or that ``--metrics-port`` is off, ``mrc-perf client --help`` not that ``--mode`` is mrc),
so an option whose default is a value (not None, False or empty) must say "default" in its help.
"""
from __future__ import annotations

import argparse
import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The parsers behind the console scripts; softswitch dispatches `compile` and `p4info-diff` to parsers
# of their own modules.
PARSERS = {
    "softswitch": ("softswitch.cli", "build_parser"),
    "softswitch compile": ("softswitch.compile_cmd", "_parser"),
    "softswitch p4info-diff": ("softswitch.p4info_diff", "_parser"),
    "mrc-controller": ("controller.cli", "build_parser"),
    "mrc-perf": ("mrc.cli", "build_parser"),
    "mrc-fabric": ("mrc_fabric.cli", "build_parser"),
}


def _walk(parser: argparse.ArgumentParser, path: str):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")


def _has_value_default(action: argparse.Action) -> bool:
    d = action.default
    return not (action.required or d is None or d is False or d is argparse.SUPPRESS
                or (isinstance(d, (str, list, tuple)) and not d))


def test_every_console_script_is_covered():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) <= set(PARSERS), f"console scripts without a help check: {set(scripts) - set(PARSERS)}"
    for name, target in scripts.items():
        assert PARSERS[name][0] == target.split(":")[0], (name, target)


@pytest.mark.parametrize("script", sorted(PARSERS))
def test_help_names_every_default(script):
    module, func = PARSERS[script]
    parser = getattr(importlib.import_module(module), func)()
    missing = []
    for path, p in _walk(parser, script):
        assert "``" not in (p.description or ""), f"{path}: reST markup in the description: {p.description!r}"
        for a in p._actions:
            if not a.option_strings or isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if _has_value_default(a) and "default" not in (a.help or "").lower():
                missing.append(f"{path} {a.option_strings[-1]} (default {a.default!r}): {a.help!r}")
    assert not missing, "options whose --help does not state their default:\n" + "\n".join(missing)
