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


def started_loop(program_path: str, ports: list) -> object:
    """A running ``PacketLoop`` with the program at ``program_path`` on ``ports``, whose transmitted
    frames collect in ``lp.got`` (under a lock) instead of leaving; the caller stops it."""
    import threading

    from softswitch.engine.loop import PacketLoop
    from softswitch.engine.tm import TrafficManager
    from softswitch.exec import build_pipeline
    from softswitch.frontend import load_program
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState

    program = load_program(str(program_path), {}, [])
    lp = PacketLoop(TrafficManager(), ports, cpu_port=255)
    lp.set_pipeline(build_pipeline(program, SwitchState(build_p4info(program)), 255))
    got: list[bytes] = []
    lock = threading.Lock()

    def sink(port: int, data: bytes) -> None:
        with lock:
            got.append(data)

    lp.set_tx_hook(sink)
    lp.got = got
    lp.start()
    return lp


def collecting_loop(program_path) -> tuple[object, list[tuple[int, bytes]]]:
    """A ``PacketLoop`` with the program at ``program_path``, no ports and its thread not started (the
    test drives it), and the list its transmitted frames collect in as (port, frame)."""
    from softswitch.engine.loop import PacketLoop
    from softswitch.engine.tm import TrafficManager
    from softswitch.exec import build_pipeline
    from softswitch.frontend import load_program
    from softswitch.p4info import build_p4info
    from softswitch.runtime import SwitchState

    program = load_program(str(program_path), {}, [])
    lp = PacketLoop(TrafficManager(), [], cpu_port=255)
    lp.set_pipeline(build_pipeline(program, SwitchState(build_p4info(program)), 255))
    sent: list[tuple[int, bytes]] = []
    lp.set_tx_hook(lambda port, data: sent.append((port, data)))
    return lp, sent
