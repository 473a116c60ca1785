"""Helpers of the endpoint tests that run in the namespaces of ``conftest.py``'s direct links."""
from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator

CLONE_NEWNET = 0x40000000


def mac(side: str, plane: int) -> str:
    """The MAC address of host ``side``'s (``a`` or ``b``) NIC port on ``plane``."""
    return f"02:00:00:00:{0xA if side == 'a' else 0xB:02x}:{plane:02x}"


@contextlib.contextmanager
def in_netns(name: str) -> Iterator[None]:
    """Run the body with this thread in network namespace ``name`` (sockets made there keep it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    there = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")
        yield
    finally:
        libc.setns(here, CLONE_NEWNET)
        os.close(here)
        os.close(there)
