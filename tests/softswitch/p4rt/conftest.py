"""The ``rig`` fixture shared by the P4Runtime server tests: a real server on a loopback port."""
from __future__ import annotations

import pytest


@pytest.fixture()
def rig():
    from test_p4rt_server import Rig
    r = Rig()
    try:
        yield r
    finally:
        r.close()
