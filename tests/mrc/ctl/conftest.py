"""Fixtures of the control-model tests: a configured context (builders in ``ctl_builders``)."""

from __future__ import annotations

import pytest
from ctl_builders import SRV6_FMT, STEV_FMT, make_fmt

from mrc.ctl import DeviceAttr, EvFmtMode, MrcCtlContext


@pytest.fixture
def ctx() -> MrcCtlContext:
    """A 4-port device with an ONLINE STEV (2 x 16) and SRv6 (32 + 4 x 16) format profile."""
    c = MrcCtlContext(DeviceAttr.for_ports(4))
    make_fmt(c, STEV_FMT, EvFmtMode.STEV, [16, 16])
    make_fmt(c, SRV6_FMT, EvFmtMode.SRV6, [32, 16, 16, 16, 16])
    return c
