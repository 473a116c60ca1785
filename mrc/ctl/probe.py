"""Endpoint operations: EV probes and PORT_STATUS_UPDATE (mrc_ctl_ep_batch_send_wait), sans-IO.

:class:`EpBatch` is the state machine of one batch: it turns requests into :class:`EpWireRequest`
records (what the wire codec encodes), matches :class:`EpWireResponse` records back to them and
computes RTTs.  :class:`EpResponder` is the other side.  :func:`ep_batch_send_wait` drives a batch over
any :class:`EpTransport` (a socket driver, or a simulated network in tests); ctl opens no sockets.
"""

from __future__ import annotations

import errno
import ipaddress
from dataclasses import dataclass, field
from typing import Protocol

from .constants import EpOpType, EvFmtMode
from .errors import MrcCtlError, einval, enum_arg
from .types import DeviceAttr, Ev

MAX_DSCP = 63


def wire_port_mask(port_mask: int) -> int:
    """A port mask in the API's convention (``phy_port_mask``: bit N = port N, 1-based) as the wire
    carries it in PORT_STATUS (bit p-1 = port p, docs/protocol.md)."""
    if port_mask & 1:
        raise einval(f"port mask {port_mask:#x} sets bit 0: ports are 1-based (bit N = port N)")
    return port_mask >> 1


def api_port_mask(wire_mask: int) -> int:
    """The inverse of :func:`wire_port_mask`: a PORT_STATUS up-mask as bit N = port N."""
    return wire_mask << 1


def _gid(value: object) -> bytes:
    """A GID as 16 bytes, from bytes, an IPv6/IPv4 address object or string (IPv4 is v4-mapped)."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) != 16:
            raise einval(f"a GID is 16 bytes, got {len(value)}")
        return bytes(value)
    try:
        addr = ipaddress.ip_address(value)  # type: ignore[arg-type]
    except ValueError:
        raise einval(f"{value!r} is not a GID (IPv6 or IPv4 address)") from None
    if addr.version == 4:
        return ipaddress.IPv6Address("::ffff:" + str(addr)).packed
    return addr.packed


@dataclass(frozen=True)
class EpReq:
    """struct mrc_ctl_ep_req: request id, GIDs, EV format and EV+port, and the op's parameters.

    ``port_status`` (PORT_STATUS_UPDATE only) uses the ``phy_port_mask`` convention: bit N set means
    port N (1-based) is up; on the wire it becomes bit N-1 (:func:`wire_port_mask`).
    """

    req_id: int
    sgid: bytes | str
    dgid: bytes | str
    ev_fmt_mode: EvFmtMode
    req_ev: Ev
    port_status: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sgid", _gid(self.sgid))
        object.__setattr__(self, "dgid", _gid(self.dgid))


@dataclass(frozen=True)
class EpRsp:
    """struct mrc_ctl_ep_rsp: request id, port the response came in on, RTT in ns, service-time flag."""

    req_id: int
    port: int
    rtt: int
    adj_svc_time: bool


@dataclass(frozen=True)
class EpWireRequest:
    """What goes on the wire for one request (the codec encodes it as PROBE_REQ or PORT_STATUS).

    ``port_status`` is already in the wire's convention: bit p-1 = port p up.
    """

    op_type: EpOpType
    req_id: int
    sgid: bytes
    dgid: bytes
    ev_fmt_mode: EvFmtMode
    ev: Ev
    dscp: int
    sender_ts_ns: int
    port_status: int = 0


@dataclass(frozen=True)
class EpWireResponse:
    """A response as received: echoes the request's id and timestamp; ``rx_port``/``rx_ns`` are local."""

    op_type: EpOpType
    req_id: int
    sender_ts_ns: int
    rx_port: int
    rx_ns: int
    service_time_ns: int | None = None  # None: the responder did not report its service time


class EpTransport(Protocol):
    """What :func:`ep_batch_send_wait` needs: a clock, a way to send, and a way to wait for answers."""

    def now_ns(self) -> int:
        """Current time in ns (the transport's clock: real or simulated)."""

    def send(self, request: EpWireRequest) -> None:
        """Send one request on ``request.ev.port`` with ``request.dscp``."""

    def wait(self, deadline_ns: int) -> list[EpWireResponse]:
        """Return responses that arrived, blocking at most until ``deadline_ns`` (may return [])."""


@dataclass
class EpBatch:
    """One batch of same-type endpoint requests; feed responses, read results (sans-IO)."""

    op_type: EpOpType
    requests: list[EpWireRequest]
    deadline_ns: int
    responses: list[EpRsp] = field(default_factory=list)
    stale: int = 0  # responses that matched no outstanding request (late, duplicate, foreign)
    _pending: dict[int, EpWireRequest] = field(default_factory=dict, repr=False)

    @classmethod
    def start(cls, device: DeviceAttr, req_tc: int, op_type: EpOpType, reqs: list[EpReq],
              rsp_timeout_ns: int, now_ns: int) -> EpBatch:
        """Validate a batch (EINVAL on bad input) and stamp its requests with ``now_ns``."""
        op_type = enum_arg(EpOpType, op_type, "op_type")
        if not reqs:
            raise einval("an endpoint batch needs at least one request")
        if not 0 <= req_tc <= MAX_DSCP:
            raise einval(f"req_tc {req_tc} is not a DSCP (0..{MAX_DSCP})")
        if rsp_timeout_ns <= 0 or rsp_timeout_ns >> 32:
            raise einval(f"rsp_timeout {rsp_timeout_ns} ns must be a positive uint32")
        ports = device.phy_port_mask
        seen: set[int] = set()
        wire = []
        for i, r in enumerate(reqs):
            if not 0 <= r.req_id <= 0xFFFF:
                raise einval(f"request {i}: req_id {r.req_id} is not a uint16")
            if r.req_id in seen:
                raise einval(f"request {i}: req_id {r.req_id} is used twice in the batch")
            seen.add(r.req_id)
            if r.ev_fmt_mode not in (EvFmtMode.STEV, EvFmtMode.SRV6, EvFmtMode.UDP):
                raise einval(f"request {i}: ev_fmt_mode {r.ev_fmt_mode!r} is not one format mode")
            if r.req_ev.port == 0 or not ports >> r.req_ev.port & 1:
                raise einval(f"request {i}: port {r.req_ev.port} is not a port of this device")
            if op_type == EpOpType.PORT_STATUS_UPDATE and r.port_status & ~ports:
                raise einval(f"request {i}: port_status {r.port_status:#x} names ports the device lacks")
            status = wire_port_mask(r.port_status) if op_type == EpOpType.PORT_STATUS_UPDATE else 0
            wire.append(EpWireRequest(op_type, r.req_id, bytes(r.sgid), bytes(r.dgid), r.ev_fmt_mode, r.req_ev,
                                      req_tc, now_ns, status))
        batch = cls(op_type, wire, now_ns + rsp_timeout_ns)
        batch._pending = {w.req_id: w for w in wire}
        return batch

    def on_response(self, rsp: EpWireResponse) -> EpRsp | None:
        """Match one response; returns the result, or None (counted in ``stale``) if it matches nothing."""
        req = self._pending.get(rsp.req_id)
        if req is None or rsp.op_type != self.op_type or rsp.sender_ts_ns != req.sender_ts_ns \
                or rsp.rx_ns > self.deadline_ns:
            self.stale += 1
            return None
        del self._pending[rsp.req_id]
        rtt = rsp.rx_ns - req.sender_ts_ns
        adjusted = rsp.service_time_ns is not None and 0 <= rsp.service_time_ns <= rtt
        if adjusted:
            rtt -= rsp.service_time_ns  # type: ignore[operator]
        out = EpRsp(rsp.req_id, rsp.rx_port, max(0, rtt), adjusted)
        self.responses.append(out)
        return out

    @property
    def done(self) -> bool:
        """True when every request has its response."""
        return not self._pending

    @property
    def outstanding(self) -> list[int]:
        """Request ids still waiting for a response."""
        return sorted(self._pending)


def ep_batch_send_wait(transport: EpTransport, device: DeviceAttr, req_tc: int, op_type: EpOpType,
                       reqs: list[EpReq], rsp_timeout_ns: int) -> list[EpRsp]:
    """mrc_ctl_ep_batch_send_wait: send the batch, wait for every response or the timeout.

    Returns the responses in arrival order.  If the timeout elapses first, raises ETIMEDOUT with the
    responses that did arrive in ``exc.responses`` (as the C call returns -1 with ``num_rsp`` set).
    """
    batch = EpBatch.start(device, req_tc, op_type, reqs, rsp_timeout_ns, transport.now_ns())
    for w in batch.requests:
        transport.send(w)
    while not batch.done:
        got = transport.wait(batch.deadline_ns)
        for rsp in got:
            batch.on_response(rsp)
        if not got and transport.now_ns() >= batch.deadline_ns:
            break
    if not batch.done:
        raise MrcCtlError(errno.ETIMEDOUT, f"no response to request id(s) {batch.outstanding} within "
                          f"{rsp_timeout_ns} ns", responses=list(batch.responses))
    return list(batch.responses)


@dataclass
class EpResponder:
    """The answering side: echoes probes with its service time and records peers' port status."""

    report_service_time: bool = True
    peer_port_status: dict[bytes, int] = field(default_factory=dict)  # sgid -> up ports, bit N = port N

    def respond(self, req: EpWireRequest, rx_port: int, rx_ns: int, tx_ns: int) -> EpWireResponse:
        """Answer ``req`` (received at ``rx_ns`` on ``rx_port``, answered at ``tx_ns``).

        The returned record's ``rx_port``/``rx_ns`` are placeholders the requester's receive path
        overwrites with its own port and clock.
        """
        if tx_ns < rx_ns:
            raise einval("a response cannot leave before its request arrived")
        if req.op_type == EpOpType.PORT_STATUS_UPDATE:
            self.peer_port_status[req.sgid] = api_port_mask(req.port_status)
        svc = tx_ns - rx_ns if self.report_service_time else None
        return EpWireResponse(req.op_type, req.req_id, req.sender_ts_ns, rx_port, tx_ns, svc)
