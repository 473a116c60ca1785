"""Deterministic discrete-event simulation of MRC endpoints over a network of paths."""

from mrc.sim.network import LinkStats, Network, PathSpec, encap_route_key, frame_route_key
from mrc.sim.scenario import Pair, make_pair, transfer

__all__ = ["LinkStats", "Network", "Pair", "PathSpec", "encap_route_key", "frame_route_key", "make_pair",
           "transfer"]
