"""Bounded polling for the engine tests: wait for a condition with a deadline instead of sleeping."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(cond: Callable[[], T], timeout: float = 5.0, what: str = "condition") -> T:
    """The first truthy value of ``cond()``, polled every 5 ms; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")
