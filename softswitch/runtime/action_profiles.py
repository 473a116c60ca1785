"""Action profiles and action selectors: members, groups and one-shot groups.

Group member choice for the data plane, as bmv2 behind its P4Runtime server (PI) makes it: every
member has bmv2 member handles -- the profile's lowest free number when it is created, and, for a
weight w > 1 in some group, w - 1 copies made when a group first needs them (PI's
``create_missing_weighted_members``; dropped again when no group needs that many) -- and a group
is the set of the handles its members contribute (a member of weight w its first w), sorted;
``choices`` lists them in that order and a packet takes ``choices[sel_hash % len(choices)]``
(bmv2's ``GroupMgr::get_from_hash`` over a sorted set).  A one-shot action set's members are
made one after the other (PI: in list order, weight copies each right after its member), so
their order is the list's: they are numbered by position, and the profile's handles are not
involved (a selector in one-shot mode holds no members or groups whose numbers they could change).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from .actions import ActionInfo, ActionSet
from .errors import exhausted, exists, invalid, not_found, precondition, unimplemented
from .handles import Handles


@dataclass(slots=True, eq=False)
class Member:
    """An action instance; ``result`` is swapped whole on MODIFY so readers never see a mix."""

    id: int
    result: tuple[int, tuple[int, ...]]
    group_refs: int = 0
    entry_refs: int = 0
    handles: list[int] = field(default_factory=list)  # bmv2 member handles: its own, then weight copies
    weight_counts: dict[int, int] = field(default_factory=dict)  # weight -> groups using it with that weight


@dataclass(slots=True, eq=False)
class Group:
    id: int
    max_size: int
    weights: dict[int, int] = field(default_factory=dict)  # member id -> weight, in given order
    choices: tuple[Member, ...] = ()
    entry_refs: int = 0

    def total_weight(self) -> int:
        return sum(self.weights.values())


def _choices(members: dict[int, Member], weights: dict[int, int]) -> tuple[Member, ...]:
    """The group's members in bmv2's order: by the handles they contribute (first ``weight``)."""
    pairs = [(h, members[mid]) for mid, w in weights.items() for h in members[mid].handles[:w]]
    pairs.sort(key=lambda p: p[0])
    return tuple(m for _, m in pairs)


# the largest total weight of one group, and the most member copies one selector holds: a weight
# of w makes w - 1 member copies (PI's weighted members), so unbounded weights (a sum_of_members
# selector without max_member_weight) could hold the server for minutes; 65,536 copies take
# about 0.1 s
MAX_WEIGHT = 1 << 16
MAX_COPIES = 1 << 18


class ActionProfileState:
    """One ``action_profile``/``action_selector`` instance and what P4Runtime wrote into it."""

    def __init__(self, info: p4info_pb2.ActionProfile, actions: ActionSet) -> None:
        self.id = info.preamble.id
        self.name = info.preamble.name
        self.with_selector = info.with_selector
        self.size = int(info.size)
        self.max_group_size = info.max_group_size
        self.sum_of_members = info.WhichOneof("selector_size_semantics") == "sum_of_members"
        self.max_member_weight = info.sum_of_members.max_member_weight if self.sum_of_members else 0
        self.table_ids = tuple(info.table_ids)
        self.actions = actions
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self._member_msgs: dict[int, p4runtime_pb2.ActionProfileMember] = {}
        self._group_msgs: dict[int, p4runtime_pb2.ActionProfileGroup] = {}
        self._hidden_members = 0  # members held by one-shot groups
        self._group_usage = 0  # sum of weights (or of members) over all groups incl. one-shots
        self._handles = Handles()  # bmv2's member handles

    def _weights_changed(self, old: dict[int, int], new: dict[int, int]) -> None:
        """A group's membership goes from ``old`` to ``new`` (member id -> weight): make the weight
        copies it needs (members in id order, as PI's update walks them), count the weights, and
        drop copies no group needs any more (PI's purge, after the update)."""
        changed = sorted(mid for mid in set(old) | set(new) if old.get(mid, 0) != new.get(mid, 0))
        for mid in changed:
            m = self.members[mid]
            while len(m.handles) < new.get(mid, 0):
                m.handles.append(self._handles.take())
            if old.get(mid, 0):
                m.weight_counts[old[mid]] -= 1
            if new.get(mid, 0):
                m.weight_counts[new[mid]] = m.weight_counts.get(new[mid], 0) + 1
        for mid in changed:
            m = self.members[mid]
            keep = max([w for w, n in m.weight_counts.items() if n > 0], default=1)
            m.weight_counts = {w: n for w, n in m.weight_counts.items() if n > 0}
            if len(m.handles) > keep:
                self._handles.give(*m.handles[keep:][::-1])
                del m.handles[keep:]

    # ---- members ------------------------------------------------------------------------------
    def write_member(self, utype: int, m: p4runtime_pb2.ActionProfileMember) -> None:
        mid = m.member_id
        what = f"action profile '{self.name}' member {mid}"
        if mid == 0:
            raise invalid(f"{what}: member id 0 is invalid")
        cur = self.members.get(mid)
        if utype == p4runtime_pb2.Update.DELETE:
            if cur is None:
                raise not_found(f"{what} does not exist")
            if cur.group_refs:
                raise precondition(f"{what} is still in {cur.group_refs} group(s)")
            if cur.entry_refs:
                raise precondition(f"{what} is still used by {cur.entry_refs} table entr(y/ies)")
            self._handles.give(*cur.handles)
            del self.members[mid]
            del self._member_msgs[mid]
            return
        if utype == p4runtime_pb2.Update.INSERT and cur is not None:
            raise exists(f"{what} already exists")
        if utype == p4runtime_pb2.Update.MODIFY and cur is None:
            raise not_found(f"{what} does not exist")
        self._check_mode(manual=True, what=what)
        if not m.HasField("action"):
            raise invalid(f"{what}: an action is required")
        result = self.actions.parse(m.action, default=False, what=what)
        if cur is None:
            if self.size and len(self.members) + self._hidden_members >= self.size:
                raise exhausted(f"action profile '{self.name}' is full ({self.size} members)")
            self.members[mid] = Member(mid, result, handles=[self._handles.take()])
        else:
            cur.result = result
        msg = p4runtime_pb2.ActionProfileMember(action_profile_id=self.id, member_id=mid)
        self.actions.actions[result[0]].to_proto(result[1], msg.action)
        self._member_msgs[mid] = msg

    def _check_mode(self, manual: bool, what: str) -> None:
        """One selector is programmed either with members and groups or with one-shot action sets,
        never both at once: mixing them is INVALID_ARGUMENT (spec, "One Shot Action Selector
        Programming"); an empty selector may be taken either way (as PI switches its mode)."""
        if manual and self._hidden_members:
            raise invalid(f"{what}: action selector '{self.name}' is programmed with one-shot action "
                          "sets; members and groups cannot be mixed with them")
        if not manual and (self.members or self.groups):
            raise invalid(f"{what}: action selector '{self.name}' is programmed with members and groups; "
                          "one-shot action sets cannot be mixed with them")

    # ---- groups -------------------------------------------------------------------------------
    def _usage(self, weights: dict[int, int]) -> int:
        return len(weights) if self.sum_of_members else sum(weights.values())

    def _check_weights(self, weights: dict[int, int], max_size: int, what: str, oneshot: bool) -> None:
        total = sum(weights.values())
        if total > MAX_WEIGHT:  # each unit of weight is one member copy (as PI makes them for bmv2)
            raise exhausted(f"{what}: its weights total {total}, more than this target holds in one group "
                            f"({MAX_WEIGHT}: one member copy per unit of weight, as bmv2's PI server makes them)")
        copies = sum(len(m.handles) for m in self.members.values()) + sum(
            max(0, w - len(self.members[mid].handles)) for mid, w in weights.items() if mid in self.members)
        if copies > MAX_COPIES:
            raise exhausted(f"{what}: the selector would hold {copies} member copies, more than this target "
                            f"holds ({MAX_COPIES}; a member of weight w is w copies)")
        usage = self._usage(weights)
        if self.sum_of_members and self.max_member_weight:
            big = [w for w in weights.values() if w > self.max_member_weight]
            if big:
                raise invalid(f"{what}: weight {big[0]} exceeds max_member_weight {self.max_member_weight}")
        # one-shot sets and groups created with max_size 0 are bounded by the P4Info's max_group_size
        limit, name = (max_size, "the group's max_size") if max_size and not oneshot else \
            (self.max_group_size, "max_group_size")
        if limit and usage > limit:
            raise exhausted(f"{what}: size {usage} exceeds {name} {limit}")

    def write_group(self, utype: int, g: p4runtime_pb2.ActionProfileGroup) -> None:
        gid = g.group_id
        what = f"action selector '{self.name}' group {gid}"
        if not self.with_selector:
            raise invalid(f"action profile '{self.name}' has no selector: it has no groups")
        if gid == 0:
            raise invalid(f"{what}: group id 0 is invalid")
        cur = self.groups.get(gid)
        if utype == p4runtime_pb2.Update.DELETE:
            if cur is None:
                raise not_found(f"{what} does not exist")
            if cur.entry_refs:
                raise precondition(f"{what} is still used by {cur.entry_refs} table entr(y/ies)")
            self._release_weights(cur.weights)
            self._weights_changed(cur.weights, {})
            self._group_usage -= self._usage(cur.weights)
            del self.groups[gid]
            del self._group_msgs[gid]
            return
        if utype == p4runtime_pb2.Update.INSERT and cur is not None:
            raise exists(f"{what} already exists")
        if utype == p4runtime_pb2.Update.MODIFY and cur is None:
            raise not_found(f"{what} does not exist")
        self._check_mode(manual=True, what=what)
        if g.max_size < 0:
            raise invalid(f"{what}: max_size must be >= 0")
        # max_size 0 is "not known at creation": the group may hold up to the P4Info's max_group_size
        # (p4runtime.proto's ActionProfileGroup; bmv2's PI server takes it so too).  It cannot change
        # afterwards; a MODIFY that leaves it 0 keeps the group's.
        if cur is None:
            if self.max_group_size and g.max_size > self.max_group_size:
                raise invalid(f"{what}: max_size {g.max_size} exceeds max_group_size {self.max_group_size}")
        elif g.max_size and g.max_size != cur.max_size:
            raise invalid(f"{what}: max_size cannot change ({cur.max_size} -> {g.max_size})")
        max_size = cur.max_size if cur is not None else g.max_size
        weights: dict[int, int] = {}
        for mem in g.members:
            if mem.member_id in weights:
                raise invalid(f"{what}: member {mem.member_id} listed twice")
            if mem.weight <= 0:
                raise invalid(f"{what}: member {mem.member_id} weight must be > 0")
            if mem.WhichOneof("watch_kind") is not None:
                raise unimplemented(f"{what}: watch ports are not supported")
            if mem.member_id not in self.members:
                raise not_found(f"{what}: member {mem.member_id} does not exist")
            weights[mem.member_id] = mem.weight
        self._check_weights(weights, max_size, what, oneshot=False)
        old_usage = self._usage(cur.weights) if cur is not None else 0
        new_usage = self._group_usage - old_usage + self._usage(weights)
        if self.size and new_usage > self.size:
            raise exhausted(f"action selector '{self.name}' is full ({self.size})")
        self._group_usage = new_usage
        for mid in weights:
            self.members[mid].group_refs += 1
        if cur is None:
            cur = Group(gid, max_size)
            self.groups[gid] = cur
        else:
            self._release_weights(cur.weights)
        self._weights_changed(cur.weights, weights)
        cur.weights = weights
        cur.choices = _choices(self.members, weights)
        msg = p4runtime_pb2.ActionProfileGroup(action_profile_id=self.id, group_id=gid, max_size=max_size)
        for mid, w in weights.items():
            msg.members.add(member_id=mid, weight=w)
        self._group_msgs[gid] = msg

    def _release_weights(self, weights: dict[int, int]) -> None:
        for mid in weights:
            m = self.members.get(mid)
            if m is not None:
                m.group_refs -= 1

    # ---- one-shot -----------------------------------------------------------------------------
    def oneshot(self, action_set: p4runtime_pb2.ActionProfileActionSet, what: str) -> Group:
        """Build the hidden group of a one-shot table action (not visible to member/group reads)."""
        if not self.with_selector:
            raise invalid(f"{what}: one-shot action sets need an action selector")
        self._check_mode(manual=False, what=what)
        acts = action_set.action_profile_actions
        if not acts:
            raise invalid(f"{what}: empty one-shot action set")
        members: dict[int, Member] = {}
        weights: dict[int, int] = {}
        for i, a in enumerate(acts, start=1):
            if a.weight <= 0:
                raise invalid(f"{what}: one-shot action weight must be > 0")
            if a.WhichOneof("watch_kind") is not None:
                raise unimplemented(f"{what}: watch ports are not supported")
            members[i] = Member(i, self.actions.parse(a.action, default=False, what=what))
            weights[i] = a.weight
        self._check_weights(weights, 0, what, oneshot=True)
        if self.size and len(self.members) + self._hidden_members + len(members) > self.size:
            raise exhausted(f"action selector '{self.name}' is full ({self.size} members)")
        if self.size and self._group_usage + self._usage(weights) > self.size:
            raise exhausted(f"action selector '{self.name}' is full ({self.size})")
        self._hidden_members += len(members)
        self._group_usage += self._usage(weights)
        pos = 0
        for i, m in members.items():  # list order, each weight copy right after its member
            m.handles = list(range(pos, pos + weights[i]))
            pos += weights[i]
        return Group(0, 0, weights, _choices(members, weights))

    def release_oneshot(self, group: Group) -> None:
        self._hidden_members -= len(group.weights)
        self._group_usage -= self._usage(group.weights)

    def reacquire_oneshot(self, group: Group) -> None:
        """Undo ``release_oneshot`` (a failed MODIFY keeps the entry's one-shot group as it was)."""
        self._hidden_members += len(group.weights)
        self._group_usage += self._usage(group.weights)

    # ---- reads --------------------------------------------------------------------------------
    def read_members(self, mid: int) -> list[p4runtime_pb2.Entity]:
        return self._read(self._member_msgs, mid, "action_profile_member")

    def read_groups(self, gid: int) -> list[p4runtime_pb2.Entity]:
        return self._read(self._group_msgs, gid, "action_profile_group")

    @staticmethod
    def _read(msgs: dict, id_: int, field: str) -> list[p4runtime_pb2.Entity]:
        """Entities for one stored member/group message (``id_`` != 0; none if it does not exist, as a
        read of a table key that does not exist, and as from bmv2's PI server -- it was NOT_FOUND until
        2026-12-05) or all of them, by id."""
        out = []
        for i in (sorted(msgs) if id_ == 0 else [id_] if id_ in msgs else []):
            e = p4runtime_pb2.Entity()
            getattr(e, field).CopyFrom(msgs[i])
            out.append(e)
        return out


def profile_actions(info: p4info_pb2.ActionProfile, p4info: p4info_pb2.P4Info,
                    actions: dict[int, ActionInfo]) -> ActionSet:
    """Actions a profile's members may use: those of (the first of) the tables it implements."""
    for t in p4info.tables:
        if t.preamble.id in info.table_ids:
            return ActionSet(f"action profile '{info.preamble.name}'", t.action_refs, actions)
    return ActionSet(f"action profile '{info.preamble.name}'", [], actions)
