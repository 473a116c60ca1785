"""FabricTest.shape's undo puts a port back as the fabric shaped it (pure: bmv2's run-time commands
replayed on a model of its per-priority queue rates)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "ptf_tests")]

from base.fabric_test import topology_shaping

from controller.topology import LinkProps
from mrc_fabric.targets import PRIORITY_QUEUES, get_target

PORT = 3


def queue_rates(commands: list[str], start: dict[int, int]) -> dict[int, int]:
    """simple_switch_CLI's set_queue_rate on one port: without a priority it sets every priority queue."""
    rates = dict(start)
    for line in commands:
        verb, *args = line.split()
        if verb != "set_queue_rate":
            continue
        rate, port, *prio = (int(a) for a in args)
        assert port == PORT
        for q in prio or range(PRIORITY_QUEUES):
            rates[q] = rate
    return rates


def bmv2_commands(**kw) -> list[str]:
    return get_target("bmv2")._shape_commands(PORT, **kw)


def test_undo_restores_the_fabric_shaping_on_bmv2() -> None:
    unshaped = dict.fromkeys(range(PRIORITY_QUEUES), 0)
    for rate in (0, 300):  # small.yaml (no link rate), and a topology with one
        props = LinkProps(rate_pps=rate)
        fabric = queue_rates(bmv2_commands(link_rate_pps=rate or None), unshaped)  # Fabric._shape_running
        during = queue_rates(bmv2_commands(rate_pps=12), fabric)  # StevSlowTargetTest
        assert set(during.values()) == {12}
        assert queue_rates(bmv2_commands(**topology_shaping(props)), during) == fabric, f"rate_pps {rate}"


def test_topology_shaping_keywords() -> None:
    assert topology_shaping(LinkProps()) == {"rate_pps": 0, "link_rate_pps": None}
    assert topology_shaping(LinkProps(rate_pps=300)) == {"rate_pps": 0, "link_rate_pps": 300}
