"""The spray over a multi-port NIC: an EV passed while its NIC port was busy keeps its turn.

Before the fix, ``EvSet.pick(port_ok)`` walked one round robin over all EVs and an EV whose port
could not send just then lost its turn; with the ports freeing one at a time (each paced at its line
rate) a QP came back to the same few EVs of every port: 256 picks over 256 EVs on 8 ports used 8 of
them in the plan's port-major order and ~33 in a shuffled one, and on the simulated 8-plane fabric
a 1 MiB flow put its 256 packets on ~123 of its 256 paths, up to 5 on one.
"""
from __future__ import annotations

import random
from collections import Counter

from mrc.core.ev import EvEntry, EvSet
from mrc.core.types import EvState

PORTS, PER_PORT = 8, 32


def _entries(order: str, seed: int = 1) -> list[EvEntry]:
    ents = [EvEntry(i, 1 + i // PER_PORT) for i in range(PORTS * PER_PORT)]  # port-major, as the EV plan
    if order == "shuffled":
        random.Random(seed).shuffle(ents)
    return ents


def _picks(es: EvSet, n: int) -> Counter:
    used: Counter = Counter()
    for k in range(n):
        free = 1 + k % PORTS  # one port at a time has room, in turn
        i = es.pick(lambda p, f=free: p == f)
        assert i >= 0 and es.entries[i].port == free
        used[i] += 1
    return used


def test_every_ev_gets_its_turn_when_ports_free_in_turn():
    for order in ("plan", "shuffled"):
        for seed in range(5):
            es = EvSet(0x100 + seed, _entries(order, seed))
            used = _picks(es, PORTS * PER_PORT)
            assert len(used) == PORTS * PER_PORT, (order, seed, len(used))  # before: 8 (plan), 24-65 (shuffled)
            assert max(used.values()) == 1
            # and a second round gives each EV its second packet
            used2 = _picks(es, PORTS * PER_PORT)
            assert set(used2) == set(used) and max(used2.values()) == 1


def test_an_owed_ev_that_became_unusable_loses_its_turn():
    ents = [EvEntry(i, 1 + i % 2) for i in range(4)]  # EVs 0, 2 on port 1; 1, 3 on port 2
    es = EvSet(7, ents)
    es.rr = 0
    assert es.pick(lambda p: p == 2) == 1  # EV 0 (port 1, busy) is passed and owed its turn
    es.prof.states[0] = EvState.ASSUMED_BAD
    assert es.pick(lambda p: p == 1) == 2  # not EV 0: it is no longer GOOD
    es.rr = 0
    es.prof.states[0] = EvState.GOOD
    assert es.pick(lambda p: p == 2) == 1  # EV 0 owed again
    es.ports_down.add(1)
    assert es.pick(lambda p: True) == 3  # port 1 went down: EV 0's turn is gone, port 2 sends
    es.ports_down.clear()
    ents[2].penalty = 1
    es.rr = 0
    assert es.pick(lambda p: p == 2) == 1  # EV 0 owed; EV 2 not reached
    assert es.pick(lambda p: p == 1) == 0  # the owed EV goes first


def test_an_owed_ev_moved_to_another_port_keeps_its_turns_there():
    """A REPLACE_EV moves an EV off a port (typically one gone down) while the EV is owed a turn there.
    The stale debt kept it marked as owed, so on its new port the walk never owed it again: each time
    that port was busy the EV lost its turn -- 2 picks in 600 against ~100 for each EV beside it."""
    ents = [EvEntry(0, 1), EvEntry(1, 2), EvEntry(2, 3), EvEntry(3, 2), EvEntry(4, 3), EvEntry(5, 2), EvEntry(6, 3)]
    es = EvSet(7, ents)
    es.rr = 0
    assert es.pick(lambda p: p == 2) == 1  # EV 0 (port 1, busy) is passed and owed its turn on port 1
    es.ports_down.add(1)  # port 1 goes down and the controller moves EV 0 to port 2 (REPLACE_EV)
    ents[0].port = 2
    es.refresh_ports()  # as QueuePair._sync_evs does
    used: Counter = Counter()
    for k in range(600):  # ports 2 and 3 have room in turn
        i = es.pick(lambda p, f=2 + k % 2: p == f)
        assert i >= 0 and es.entries[i].port == 2 + k % 2
        used[i] += 1
    on2 = [used[i] for i in (0, 1, 3, 5)]  # port 2's 300 picks, EV 0 among them (port 3's 300 over 2, 4, 6)
    assert max(on2) - min(on2) <= 1, sorted(used.items())  # before: EV 0 2, EVs 1, 3, 5 ~99 each
