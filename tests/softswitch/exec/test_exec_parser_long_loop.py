"""A parser loop that consumes packet bytes runs as long as the packet lasts, as on bmv2 (which
bounds no parser loop). Until 2026-12-06 softswitch stopped any parser after 1000 passes through
its loop states with ``error.ParserTimeout``: a loop skipping a byte per pass gave ParserTimeout
after 500 bytes, where bmv2 parses on (a silent misrun: ``parser_error`` and the headers differ).
The bound now grows with the packet; a loop that consumes nothing is still cut."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig, through_api, through_loop


@pytest.fixture(scope="module")
def rig():
    return Rig(DATA / "exec_parser_long_loop.p4")


@pytest.mark.parametrize("through", [through_api, through_loop])
@pytest.mark.parametrize("skip", [0, 10, 499, 500, 1200, 9000])
def test_marker_found_after_skipping(rig, through, skip):
    out = through(rig.pipeline, bytes(skip) + b"\xff" + bytes(4))
    # o: no parser error, the bytes skipped; then the marker; the rest truncated to 8 bytes
    assert out == b"\x00" + skip.to_bytes(2, "big") + b"\xff" + bytes(4)


def test_no_marker_is_packet_too_short(rig):
    out = through_api(rig.pipeline, bytes(3000))
    assert out[:3] == b"\x01" + (3000).to_bytes(2, "big")
