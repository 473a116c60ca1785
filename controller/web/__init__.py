"""Live fabric view: a page served by the controller (``mrc-controller run --view-port``).

The page (``static/``: plain HTML, CSS and JavaScript drawing SVG; no build step, nothing fetched from
the network) polls ``/api/state`` and redraws: the topology from the topology file, each link's
state from the wiring check and its load from the port counters, per-switch drops by reason, trims,
ECN marks and queue depth, and the latest telemetry postcards.  The state is built from the same
snapshot the Prometheus exporter serves (``Controller.metrics_snapshot``), so the two never disagree.
"""
from __future__ import annotations

from .server import ViewServer, serve_view
from .state import ViewState

__all__ = ["ViewServer", "ViewState", "serve_view"]
