"""The control context: one object per NIC holding every profile, port and event queue.

Methods are the ``mrc_ctl_*`` calls without the prefix (``mrc_ctl_modify_ev_profile`` ->
``MrcCtlContext.modify_ev_profile``).  They raise :class:`MrcCtlError` where C returns -1 with errno.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import replace

from .cc_profile import CcProfile
from .constants import (
    AttrOpt,
    CcProfileAttrMask,
    EpOpType,
    EvFmtOp,
    EvFmtProfileAttrMask,
    EvOp,
    EvProfileAttrMask,
    EvState,
    PortAdminState,
    PortAttrMask,
    ProfileState,
)
from .errors import MrcCtlError, einval, enum_arg
from .ev_profile import EvProfile, EvProfileEnv
from .events import EvEvent, EvEventCq
from .fmt_profile import EvFmtProfile
from .probe import EpReq, EpRsp, EpTransport, ep_batch_send_wait
from .types import (
    CcProfileAttr,
    DeviceAttr,
    Ev,
    EvFmtProfileAttr,
    EvOpArgs,
    EvOpEntry,
    EvProfileAttr,
    PortAttr,
)

# mrc_ctl_api_ver.h: the versions this model implements, as the header defines them
API_VERSION = (1, 0, 1)  # MRC_CTL_API_CURRENT_VERSION
LAST_SUPPORTED_API_VERSION = (0, 0, 0)  # MRC_CTL_API_LAST_SUPPORTED_VERSION
VENDOR_API_VERSION = (1, 0, 0)  # MRC_CTL_VENDOR_API_CURRENT_VERSION
LAST_SUPPORTED_VENDOR_API_VERSION = (0, 0, 0)  # MRC_CTL_VENDOR_API_LAST_SUPPORTED_VERSION


def api_ver(major: int, minor: int, subminor: int) -> int:
    """MRC_CTL_API_VER(major, minor, subminor): major in bits 31..24, minor 23..16, subminor 15..0."""
    if not (0 <= major <= 0xFF and 0 <= minor <= 0xFF and 0 <= subminor <= 0xFFFF):
        raise einval(f"version {major}.{minor}.{subminor} does not fit 8.8.16 bits")
    return major << 24 | minor << 16 | subminor


class MrcCtlContext:
    """The controller's view of one MRC device (``struct mrc_context`` as the control API uses it)."""

    def __init__(self, device: DeviceAttr | None = None, *, gen_seed: int = 0,
                 clock: Callable[[], int] | None = None) -> None:
        self._device = device or DeviceAttr()
        self._gen_seed = gen_seed
        # the time (ns) on the time base of the endpoint whose profiles these are: it stamps the EV events
        # the control API itself causes (MODIFY_EV_STATE, port_down), so they sort among the transport's
        # own.  The driver sets time.monotonic_ns, the simulator its virtual clock; None: stamped 0 [ours]
        self.clock = clock
        self._fmt: dict[int, EvFmtProfile] = {}
        self._ev: dict[int, EvProfile] = {}
        self._cc: dict[int, CcProfile] = {}
        self._cqs: list[EvEventCq] = []
        self._ev_in_use = 0
        self._qp_ev: dict[int, int] = {}  # qpn -> EV profile id
        self._qp_cc: dict[int, int] = {}  # qpn -> CC profile id
        self._port_admin = {p: PortAdminState.ENABLED for p in self._device.ports()}
        self._port_oper = {p: True for p in self._device.ports()}

    # ------------------------------------------------------------------ device and version
    def query_device(self) -> DeviceAttr:
        """mrc_ctl_query_device: a copy of the device attributes with the current ``ev_free_count``."""
        ev = replace(self._device.ev, ev_free_count=self._device.ev.ev_max_count - self._ev_in_use)
        return replace(self._device, ev=ev)

    @staticmethod
    def query_version() -> tuple[int, int, int, int]:
        """mrc_ctl_query_version: (current, last supported, vendor, last supported vendor) versions."""
        return (api_ver(*API_VERSION), api_ver(*LAST_SUPPORTED_API_VERSION), api_ver(*VENDOR_API_VERSION),
                api_ver(*LAST_SUPPORTED_VENDOR_API_VERSION))

    # ------------------------------------------------------------------ ports
    def query_port(self, port_num: int, attr_mask: PortAttrMask = PortAttrMask.ADMIN_STATE) -> PortAttr:
        """mrc_ctl_query_port."""
        self._check_port(port_num)
        self._check_mask(attr_mask, PortAttrMask.ADMIN_STATE, "port")
        return PortAttr(self._port_admin[port_num])

    def modify_port(self, port_num: int, attr: PortAttr,
                    attr_mask: PortAttrMask = PortAttrMask.ADMIN_STATE) -> None:
        """mrc_ctl_modify_port: disabling a port makes its EVs ASSUMED_BAD like a link going down."""
        self._check_port(port_num)
        self._check_mask(attr_mask, PortAttrMask.ADMIN_STATE, "port")
        if attr_mask & PortAttrMask.ADMIN_STATE:
            state = enum_arg(PortAdminState, attr.port_admin_state, "port_admin_state")
            self._port_admin[port_num] = state
            if state == PortAdminState.DISABLED:
                # the port's EVs go as on a link down, but its operational state stays its own: until
                # 2026-12-06 this called port_down, which also marked the link down, so ENABLED again
                # left port_is_up False and port_status_mask() without the port for good
                self._retire_port_evs(port_num)

    def port_is_up(self, port_num: int) -> bool:
        """Administratively enabled and operationally up (what ibv_query_port would call ACTIVE)."""
        self._check_port(port_num)
        return self._port_admin[port_num] == PortAdminState.ENABLED and self._port_oper[port_num]

    def port_status_mask(self) -> int:
        """Our up ports as a PORT_STATUS_UPDATE mask (bit N = port N up, the API's convention; the
        wire carries bit p-1 for port p, see :func:`mrc.ctl.probe.wire_port_mask`)."""
        return sum(1 << p for p in self._port_admin if self.port_is_up(p))

    def now_ns(self) -> int:
        """``clock()``, or 0 when the context has no clock."""
        return self.clock() if self.clock is not None else 0

    def port_down(self, port_num: int) -> int:
        """A port went down: every EV on it ASSUMED_BAD at once (floor ignored); returns how many moved."""
        self._check_port(port_num)
        self._port_oper[port_num] = False
        return self._retire_port_evs(port_num)

    def _retire_port_evs(self, port_num: int) -> int:
        """Every GOOD EV on ``port_num`` ASSUMED_BAD at once, in every profile (floor ignored)."""
        moved = 0
        for prof in self._ev.values():
            for i, ev in enumerate(prof.evs):
                if ev.port == port_num and prof.states[i] == EvState.GOOD:
                    moved += prof.endpoint_set_state(
                        i, EvState.ASSUMED_BAD, force=True, now_ns=self.now_ns(), cause="port_down",
                        evidence={"rule": "port_down", "port": port_num,
                                  "ports_down": sorted(p for p in self._port_admin if not self.port_is_up(p))})
        return moved

    def port_up(self, port_num: int) -> None:
        """A port came back; its EVs stay ASSUMED_BAD until probes bring them back to GOOD."""
        self._check_port(port_num)
        self._port_oper[port_num] = True

    # ------------------------------------------------------------------ EV format profiles
    def modify_ev_fmt_profile(self, ev_fmt_profile_id: int, attr: EvFmtProfileAttr,
                              attr_mask: EvFmtProfileAttrMask) -> None:
        """mrc_ctl_modify_ev_fmt_profile (EINVAL, EBUSY, E2BIG as the header documents)."""
        self._fmt_profile(ev_fmt_profile_id).modify(attr, attr_mask)

    def query_ev_fmt_profile(self, ev_fmt_profile_id: int, attr_mask: EvFmtProfileAttrMask,
                             attr: EvFmtProfileAttr | None = None) -> EvFmtProfileAttr:
        """mrc_ctl_query_ev_fmt_profile; ``attr.ev_fmt_op.fmt_field_count`` is the query capacity."""
        capacity = None
        if attr is not None and attr_mask & EvFmtProfileAttrMask.OP:
            if enum_arg(EvFmtOp, attr.ev_fmt_op.op, "ev_fmt_op.op") == EvFmtOp.MODIFY_FIELDS:
                raise einval("query_ev_fmt_profile: MODIFY_FIELDS is not allowed")
            capacity = attr.ev_fmt_op.fmt_field_count
        return self._fmt_profile(ev_fmt_profile_id).query(attr_mask, capacity)

    # ------------------------------------------------------------------ EV profiles
    def modify_ev_profile(self, ev_profile_id: int, attr: EvProfileAttr, attr_mask: EvProfileAttrMask) -> None:
        """mrc_ctl_modify_ev_profile (EINVAL, EBUSY, E2BIG, ENOENT as the header documents)."""
        self.ev_profile(ev_profile_id).modify(attr, attr_mask)

    def query_ev_profile(self, ev_profile_id: int, attr_mask: EvProfileAttrMask,
                         attr: EvProfileAttr | None = None) -> EvProfileAttr:
        """mrc_ctl_query_ev_profile; ``attr`` carries the EV/fields query and its capacities."""
        return self.ev_profile(ev_profile_id).query(attr or EvProfileAttr(), attr_mask)

    def ev_profile(self, ev_profile_id: int) -> EvProfile:
        """The live profile object (what the endpoint core reads EVs and states from)."""
        if not 0 <= ev_profile_id < self._device.ev.ev_max_profiles:
            raise einval(f"EV profile id {ev_profile_id} is outside 0..{self._device.ev.ev_max_profiles - 1}")
        prof = self._ev.get(ev_profile_id)
        if prof is None:
            env = EvProfileEnv(self._device, self._fmt_profile, self._ev_qps, self._reserve_evs,
                               self._emit_event, self._gen_seed, self.now_ns)
            prof = self._ev[ev_profile_id] = EvProfile(ev_profile_id, env)
        return prof

    def unused_profile_id(self) -> int:
        """The lowest id whose EV format profile and EV profile are both unconfigured (INIT) [ours:
        a convenience for callers that make one profile pair per peer, e.g. from an EV plan]."""
        limit = min(self._device.ev.ev_max_fmt_profiles, self._device.ev.ev_max_profiles)
        for pid in range(limit):
            if self._fmt_profile(pid).state == ProfileState.INIT and self.ev_profile(pid).state == ProfileState.INIT:
                return pid
        raise MrcCtlError(errno.E2BIG, f"all {limit} profile ids are in use")

    def deny_evs(self, ev_profile_id: int, exists: Callable[[Ev, list[int]], bool]) -> list[Ev]:
        """Query the EV array and DENY every EV for which ``exists(ev, field_values)`` is False.

        ``field_values`` are the compact per-field values (e.g. the link chosen at each tier); this is
        how a controller retires generated EVs that name links that do not exist.  Returns the denied.
        """
        prof = self.ev_profile(ev_profile_id)
        arr = self.query_ev_profile(ev_profile_id, EvProfileAttrMask.EV_OP,
                                    EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_ARRAY)))
        deny = []
        seen: set[Ev] = set()
        for e in arr.ev_op.entries:
            if e.ev.populated and e.ev not in seen and e.state != EvState.DENIED \
                    and not exists(e.ev, prof.field_values(e.ev)):
                deny.append(e.ev)
            seen.add(e.ev)
        if deny:
            entries = [EvOpEntry(ev=ev, state=EvState.DENIED) for ev in deny]
            self.modify_ev_profile(ev_profile_id, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, entries)),
                                   EvProfileAttrMask.EV_OP)
        return deny

    # ------------------------------------------------------------------ CC profiles
    def modify_cc_profile(self, cc_profile_id: int, attr: CcProfileAttr, attr_mask: CcProfileAttrMask) -> None:
        """mrc_ctl_modify_cc_profile."""
        self._cc_profile(cc_profile_id).modify(attr, attr_mask)

    def query_cc_profile(self, cc_profile_id: int, attr_mask: CcProfileAttrMask) -> CcProfileAttr:
        """mrc_ctl_query_cc_profile."""
        return self._cc_profile(cc_profile_id).query(attr_mask)

    def cc_profile(self, cc_profile_id: int) -> CcProfile:
        """The live CC profile object (what a bound QP reads its algorithm and config from)."""
        return self._cc_profile(cc_profile_id)

    # ------------------------------------------------------------------ QPs (mrc.h side)
    def attach_qp(self, qpn: int, ev_profile_id: int, cc_profile_id: int | None = None) -> None:
        """Bind a QP to its EV (and CC) profile, as mrc.h's QP attributes do; profiles must be ONLINE."""
        if qpn in self._qp_ev:
            raise MrcCtlError(errno.EBUSY, f"QP {qpn} is already attached")
        if self.ev_profile(ev_profile_id).state != ProfileState.ONLINE:
            raise einval(f"QP {qpn}: EV profile {ev_profile_id} is not ONLINE")
        if cc_profile_id is not None and self._cc_profile(cc_profile_id).state != ProfileState.ONLINE:
            raise einval(f"QP {qpn}: CC profile {cc_profile_id} is not ONLINE")
        self._qp_ev[qpn] = ev_profile_id
        if cc_profile_id is not None:
            self._qp_cc[qpn] = cc_profile_id

    def detach_qp(self, qpn: int) -> None:
        """The QP was destroyed: its profiles may go OFFLINE again."""
        if qpn not in self._qp_ev:
            raise MrcCtlError(errno.ENOENT, f"QP {qpn} is not attached")
        del self._qp_ev[qpn]
        self._qp_cc.pop(qpn, None)

    # ------------------------------------------------------------------ EV events
    def create_ev_event_cq(self, cqe: int) -> EvEventCq:
        """mrc_ctl_create_ev_event_cq: a queue that receives every EV event of this context."""
        if not self._device.opt_attr & AttrOpt.EV_EVENT:
            raise MrcCtlError(errno.EOPNOTSUPP, "the device does not support EV events")
        cq = EvEventCq(cqe, precise_drop_count=bool(self._device.opt_attr & AttrOpt.EV_EVENT_PRECISE_DROP_CNT))
        self._cqs.append(cq)
        return cq

    def destroy_ev_event_cq(self, cq: EvEventCq) -> None:
        """Stop delivering events to ``cq``."""
        if cq not in self._cqs:
            raise einval("that EV event CQ does not belong to this context")
        self._cqs.remove(cq)

    @staticmethod
    def poll_ev_event(ev_cq: EvEventCq, num_entries: int) -> list[EvEvent]:
        """mrc_ctl_poll_ev_event."""
        return ev_cq.poll(num_entries)

    # ------------------------------------------------------------------ endpoint operations
    def ep_batch_send_wait(self, transport: EpTransport, req_tc: int, op_type: EpOpType, reqs: list[EpReq],
                           rsp_timeout: int) -> list[EpRsp]:
        """mrc_ctl_ep_batch_send_wait over ``transport`` (ETIMEDOUT carries partial responses)."""
        op_type = enum_arg(EpOpType, op_type, "op_type")
        if op_type == EpOpType.EV_PROBE and not self._device.opt_attr & AttrOpt.EP_OP_EV_PROBE:
            raise MrcCtlError(errno.EOPNOTSUPP, "the device does not support EV probes")
        return ep_batch_send_wait(transport, self._device, req_tc, op_type, reqs, rsp_timeout)

    # ------------------------------------------------------------------ internals
    def _fmt_profile(self, pid: int) -> EvFmtProfile:
        if not 0 <= pid < self._device.ev.ev_max_fmt_profiles:
            raise einval(f"EV format profile id {pid} is outside 0..{self._device.ev.ev_max_fmt_profiles - 1}")
        prof = self._fmt.get(pid)
        if prof is None:
            prof = self._fmt[pid] = EvFmtProfile(pid, allowed_modes=self._device.ev.ev_fmt_mode_mask,
                                                 _busy=lambda: self._fmt_busy(pid))
        return prof

    def _fmt_busy(self, pid: int) -> bool:
        return any(p.fmt_profile_id == pid and p.state == ProfileState.ONLINE for p in self._ev.values())

    def _cc_profile(self, pid: int) -> CcProfile:
        if not 0 <= pid < self._device.cc.cc_max_profiles:
            raise einval(f"CC profile id {pid} is outside 0..{self._device.cc.cc_max_profiles - 1}")
        prof = self._cc.get(pid)
        if prof is None:
            prof = self._cc[pid] = CcProfile(pid, self._device,
                                             lambda p: sum(1 for v in self._qp_cc.values() if v == p))
        return prof

    def _ev_qps(self, pid: int) -> int:
        return sum(1 for v in self._qp_ev.values() if v == pid)

    def _reserve_evs(self, delta: int) -> None:
        free = self._device.ev.ev_max_count - self._ev_in_use
        if delta > free:
            raise MrcCtlError(errno.E2BIG, f"{delta} more EVs requested; {free} EV resources are free")
        self._ev_in_use += delta

    def _emit_event(self, profile_id: int, ev: Ev, state: EvState, detail: EvEvent | None = None) -> None:
        for cq in self._cqs:
            cq.push(profile_id, ev, state, detail)

    def _check_port(self, port: int) -> None:
        if port not in self._port_admin:
            raise einval(f"port {port} is not a port of this device (ports {self._device.ports()})")

    @staticmethod
    def _check_mask(mask: int, allowed: int, what: str) -> None:
        if mask & ~allowed:
            raise einval(f"{what}: unknown attribute mask bits {mask & ~allowed:#x}")
