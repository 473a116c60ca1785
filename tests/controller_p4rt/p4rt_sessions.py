"""Shared by the controller's P4Runtime tests: a softswitch running a program, with a primary
controller session on it that resolves names against the switch's own P4Info.  A plain module, not
a conftest: ``from conftest import`` takes whichever folder's conftest pytest loaded last."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.session import SwitchSession

# one spine and one leaf on one plane, one host: the smallest fabric a Controller runs (tiny_fabric)
TINY = """
planes: 1
switches:
- {name: p1s1, role: spine, plane: 1, device_id: 1}
- {name: p1l1, role: leaf, plane: 1, device_id: 2}
hosts: [h1]
links:
- ['p1l1:1', 'p1s1:1']
- ['h1:1', 'p1l1:2']
"""


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


@contextmanager
def tiny_fabric(tmp_path: Path, program: Path) -> Iterator[tuple[object, object, object]]:
    """``TINY`` as two softswitch processes running ``program`` (device ids 1 and 2): yields the
    controller's plan for it, the spine and the leaf."""
    from controller import build_plan, load_topology
    from softswitch.api import SoftSwitch

    (tmp_path / "tiny.yaml").write_text(TINY)
    plan = build_plan(load_topology(tmp_path / "tiny.yaml"))
    with SoftSwitch(program, cpu_port=255, device_id=1, subprocess=True) as spine, \
            SoftSwitch(program, cpu_port=255, device_id=2, subprocess=True) as leaf:
        yield plan, spine, leaf
