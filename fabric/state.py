"""The on-disk record of a running fabric, so ``mrc-fabric down`` can clean up after a crash.

Everything is recorded *before* it is created, so the file always covers what may exist.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_STATE_DIR = Path(os.environ.get("MRC_FABRIC_STATE_DIR", "/run/mrc-fabric"))


class StateError(RuntimeError):
    """A state file (or --state-dir) that cannot be read: bad input, named in one line by the CLI."""


# what a state file that is not one gets: what it recorded is unknown, so nothing is removed
_NOT_STATE = "{p}: not a fabric state file ({e}); nothing was touched: remove what is left of the fabric by hand " \
             "(`ip netns list`, `ip link`), then the file"


@dataclass(slots=True)
class ProcRecord:
    """A switch process we started: enough to recognise it (pid + start time) and restart it."""

    switch: str
    argv: list[str]
    pid: int = 0
    start_time: int = 0  # /proc/<pid>/stat field 22, guards against pid reuse
    log: str = ""
    grpc_port: int = 0
    runtime_port: int = 0


@dataclass(slots=True)
class FabricState:
    """What a fabric run created: namespaces, root interfaces, links and switch processes."""

    prefix: str
    topology: str = ""
    target: str = ""
    namespaces: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)  # root-namespace veth ends
    # link name -> [[netns or "", ifname], [netns or "", ifname]]
    links: dict[str, list[list[str]]] = field(default_factory=dict)
    procs: dict[str, ProcRecord] = field(default_factory=dict)

    @staticmethod
    def path(prefix: str, state_dir: Path | None = None) -> Path:
        return (state_dir or DEFAULT_STATE_DIR) / f"{prefix}.json"

    def save(self, state_dir: Path | None = None) -> Path:
        """Write atomically (tmp + rename)."""
        p = self.path(self.prefix, state_dir)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1))
        os.replace(tmp, p)
        return p

    @classmethod
    def load(cls, prefix: str, state_dir: Path | None = None) -> FabricState | None:
        p = cls.path(prefix, state_dir)
        try:
            raw = json.loads(p.read_text())
        except FileNotFoundError:
            return None
        except OSError as e:  # a --state-dir that is a file, a state file that cannot be read
            raise StateError(f"{p}: cannot read the fabric state: {e.strerror or e} (--state-dir)") from e
        except ValueError as e:  # cut short or edited
            raise StateError(_NOT_STATE.format(p=p, e=e)) from e
        try:  # valid JSON of another shape ({}, a list, unknown keys) was a TypeError traceback
            procs = {k: ProcRecord(**v) for k, v in raw.pop("procs", {}).items()}
            return cls(procs=procs, **raw)
        except (TypeError, AttributeError) as e:
            raise StateError(_NOT_STATE.format(p=p, e=e)) from e

    def remove(self, state_dir: Path | None = None) -> None:
        self.path(self.prefix, state_dir).unlink(missing_ok=True)
