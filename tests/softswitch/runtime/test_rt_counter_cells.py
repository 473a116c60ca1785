"""Counter cells packed into one int (issue 16, fifth speed round): ``packets * 2**64 + bytes``,
so the data plane counts a packet with one addition.  Every value P4Runtime can write (int64
byte and packet counts, negative ones included) must read back exactly, and counting on top of
a written value must give what two separate counts would."""
from __future__ import annotations

import itertools

from softswitch.runtime.counters import ONE_PACKET, pack_cell, unpack_cell
from softswitch.runtime.entry import Entry

EDGES = [0, 1, 2, 1500, 2**31, 2**63 - 1, -1, -1500, -(2**63)]


def test_every_int64_pair_reads_back():
    for b, p in itertools.product(EDGES, EDGES):
        assert unpack_cell(pack_cell(b, p)) == (b, p), (b, p)


def test_counting_on_a_written_cell_adds_to_both_counts():
    for b, p in itertools.product([0, -1500, 7, 2**62], [0, 3, -2, 2**62]):
        c = pack_cell(b, p)
        for n in (64, 0, 1500):
            c += n + ONE_PACKET
        assert unpack_cell(c) == (b + 1564, p + 3), (b, p)


def test_an_entry_reads_and_sets_its_cell_as_a_pair():
    e = Entry((), 0, 0)
    assert e.counter == [0, 0]
    e.counter = [-3, 9]
    assert e.counter == [-3, 9] and e.cnt == pack_cell(-3, 9)
    e.cnt += 100 + ONE_PACKET
    assert e.counter == [97, 10]
