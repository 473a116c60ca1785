"""Shared by the controller's P4Runtime tests: a softswitch running a program, with a primary
controller session on it that resolves names against the switch's own P4Info.  A plain module, not
a conftest: ``from conftest import`` takes whichever folder's conftest pytest loaded last."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.session import SwitchSession


@contextmanager
def primary_session(program: Path) -> Iterator[SwitchSession]:
    from softswitch.api import SoftSwitch

    with SoftSwitch(program, cpu_port=255) as sw:
        s = SwitchSession("s1", sw.grpc_addr, sw.device_id, election_id=7)
        s.connect(5.0)
        assert s.wait_primary(5.0)
        s.use_p4info(s.get_p4info())
        try:
            yield s
        finally:
            s.close()
