"""The user-facing docs name only files that exist and options the commands take.

README.md, docs/*.md and tools/bmv2-standins/README.md: users copy commands from them and open the
files they name; a path that was moved or an option that was renamed costs their trust.  Two checks,
both pure (no root, no network):

- every repository path the docs name under one of the project's top-level folders exists (a glob
  such as ``examples/mrc_ctl_*.md`` must match something), but for the few that name files of other
  repositories or files a command writes (``EXTERNAL_OR_GENERATED``);
- every ``--option`` of a ``mrc-fabric``, ``mrc-controller``, ``mrc-perf`` or ``softswitch`` command
  in a shell block, or in an inline command, is in that (sub)command's ``--help`` (softswitch's
  target options after ``--`` are simple_switch_grpc's and are not checked).

``test_docs_references_can_fail`` shows that each check rejects what it should.
"""
from __future__ import annotations

import io
import re
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "tools/bmv2-standins/README.md"]

TOP = ("p4src", "softswitch", "controller", "mrc", "fabric", "examples", "tests", "ptf_tests", "bench",
       "tools", "docker", "grafana", "scripts", "docs")
PATH_RE = re.compile(r"(?<![\w./$-])((?:" + "|".join(TOP) + r")/[\w./*-]*[\w*])")
# named in the docs on purpose, not in this repository
EXTERNAL_OR_GENERATED = {
    "examples/ev_expansion.c",  # the OCP MRC companion repository
    "examples/mrc_ctl_*.md",  # the same
    "examples/mrc_qp.md",  # the same
    "examples/hello/p4/hello.p4",  # finsy's repository
    "docker/base-image.lock",  # written by `make docker-pin`
    "softswitch/bmv2",  # a ratio (softswitch/bmv2), not a path
    "grafana/grafana-oss",  # a Docker image
}

TOOLS = ("mrc-fabric", "mrc-controller", "mrc-perf", "softswitch")
SWITCH_CLI = TOOLS[3]  # the console script (its subcommands and "--" differ), not the target of that name
MODULE_TOOL = {"mrc_fabric": "mrc-fabric", "controller": "mrc-controller", "mrc": "mrc-perf",
               "softswitch": "softswitch"}
SOFTSWITCH_SUBCOMMANDS = {"compile", "cli", "p4info-diff"}  # dispatched by softswitch.cli.main on argv[0]
CMD_RE = re.compile(r"(?:^|[\s;&|(])(?:\.venv/bin/)?(mrc-fabric|mrc-controller|mrc-perf|softswitch)(?=\s|$)"
                    r"|python -m (mrc_fabric|controller|mrc|softswitch)(?=\s|$)")
INLINE_RE = re.compile(r"`((?:sudo |TARGET=\S+ |flock \S+ |ip netns exec \S+ )*(?:\.venv/bin/)?"
                       r"(?:mrc-fabric|mrc-controller|mrc-perf|softswitch|python -m \w+) [^`]*)`")
WORD_RE = re.compile(r"[a-z][a-z0-9-]*")
FLAG_RE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _main(tool: str) -> Callable[[list[str]], object]:
    if tool == "mrc-fabric":
        from mrc_fabric.cli import main
    elif tool == "mrc-controller":
        from controller.cli import main
    elif tool == "mrc-perf":
        from mrc.cli import main
    else:
        from softswitch.cli import main
    return main


@cache
def help_text(tool: str, subs: tuple[str, ...]) -> str:
    """What ``tool *subs --help`` prints, run in this process."""
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        try:
            _main(tool)([*subs, "--help"])
        except SystemExit:
            pass
    return out.getvalue()


def _subcommands(tool: str, subs: tuple[str, ...]) -> set[str]:
    if tool == SWITCH_CLI:
        return SOFTSWITCH_SUBCOMMANDS if not subs else set()
    usage = help_text(tool, subs).split("\n\n", 1)[0]
    return {c for group in re.findall(r"\{([a-z0-9,-]+)\}", usage) for c in group.split(",")}


def unknown_flags(command: str) -> list[str]:
    """The ``--options`` of the project's command in ``command`` that its (sub)command's --help lacks."""
    m = CMD_RE.search(command)
    if not m:
        return []
    tool = m.group(1) or MODULE_TOOL[m.group(2)]
    rest = command[m.end():]
    if tool == SWITCH_CLI:
        rest = re.split(r"\s--(?:\s|$)", rest, maxsplit=1)[0]
    subs: tuple[str, ...] = ()
    for word in rest.split():
        if WORD_RE.fullmatch(word) and word in _subcommands(tool, subs):
            subs += (word,)
        else:
            break
    text = help_text(tool, subs)
    assert text, f"{tool} {' '.join(subs)} --help printed nothing"
    return [f for f in dict.fromkeys(FLAG_RE.findall(rest.split("#", 1)[0]))
            if not re.search(r"(?<![\w-])" + re.escape(f) + r"(?![\w-])", text)]


def missing_paths(line: str) -> list[str]:
    """The repository paths ``line`` names that match no file or folder."""
    found = []
    for m in PATH_RE.finditer(line):
        p = m.group(1).split("::", 1)[0].rstrip(".")
        if p in EXTERNAL_OR_GENERATED or any(ROOT.glob(p)) or (ROOT / p).exists():
            continue
        found.append(p)
    return found


def doc_commands() -> list[tuple[str, str]]:
    """(where, command) for each shell-block line and inline command of the docs."""
    cmds = []
    for doc in DOCS:
        in_block, shell = False, False
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            where = f"{doc.relative_to(ROOT)}:{n}"
            if line.strip().startswith("```"):
                in_block = not in_block
                shell = line.strip()[3:] in ("", "sh", "bash", "console", "shell")
                continue
            if in_block:
                if shell and CMD_RE.search(line):
                    cmds.append((where, line))
                continue
            cmds.extend((where, m.group(1)) for m in INLINE_RE.finditer(line))
    return cmds


def test_docs_name_only_paths_that_exist() -> None:
    dead = [f"{doc.relative_to(ROOT)}:{n}: {p}" for doc in DOCS
            for n, line in enumerate(doc.read_text().splitlines(), 1) for p in missing_paths(line)]
    assert not dead, "paths named in the docs that do not exist:\n" + "\n".join(dead)


def test_docs_commands_use_only_options_the_commands_take() -> None:
    cmds = doc_commands()
    assert len(cmds) > 100, f"only {len(cmds)} commands found in the docs: the extraction broke"
    bad = [f"{where}: {cmd.strip()} -> {flags}" for where, cmd in cmds if (flags := unknown_flags(cmd))]
    assert not bad, "options in the docs that the commands do not take:\n" + "\n".join(bad)


@pytest.mark.parametrize("command, flags", [
    ("mrc-fabric up -t examples/small.yaml --no-such-option", ["--no-such-option"]),
    ("mrc-fabric fault shape p1l1 1 --delay-us 50 --rate-bps 1", ["--rate-bps"]),  # not on shape
    ("mrc-controller run -t x.yaml --once --view-port 1", []),
    ("mrc-controller ev gen -t x.yaml --election-id 2", ["--election-id"]),  # run's, not ev gen's
    ("sudo .venv/bin/mrc-perf client --peer A --json", []),
    ("softswitch compile p4src/mrc_switch.p4 --lenient", ["--lenient"]),  # p4info-diff's
    ("softswitch --no-p4 -i 1@v -- --grpc-server-addr 127.0.0.1:9559 --cpu-port 255", []),
    ("python -m mrc_fabric demo --keep --bogus", ["--bogus"]),
])
def test_docs_references_can_fail(command: str, flags: list[str]) -> None:
    assert unknown_flags(command) == flags
    assert missing_paths("see `fabric/no_such_module.py` and `tests/mrc`") == ["fabric/no_such_module.py"]
