"""The approval gate: the single live switch deciding whether a gated call may run.

Order of a request: the standing level (auto-approve when the level is at or above the
category's level, never for a category that always asks), then a session grant of the asking session (never for `trust_config`
or any non-grantable category), then the host's `ask` callback (CLI prompt, sidecar
event) or, for a session a channel routed to itself (`route_session`), the channel's
(Telegram button). With no way to ask, the answer is no. Unknown categories are
treated as `other` (asks below level 5). A yes is bound to the exact call: when the call's
binding changed while the person was deciding, they are asked again. Every decision is
appended to the audit log when one is attached.

Hardline rules (the shell guard) run in the tool before it ever reaches the gate, so no
level or grant can let them through.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import attrs

from atomic_agent.approval.approval_answer import AnswerKind, ApprovalAnswer, normalise_answer
from atomic_agent.approval.approval_audit import ApprovalAuditLog
from atomic_agent.approval.approval_binding import ApprovalBinding
from atomic_agent.approval.session_grants import CATEGORY, SHAPE, SessionGrant, SessionGrants
from atomic_agent.records.approval_category import ApprovalCategory

FALLBACK_CATEGORY = "other"
TRUST_CONFIG = "trust_config"  # never grantable, whatever a registration says
MAX_REBIND_ASKS = 2


@attrs.frozen
class ApprovalRequest:
    """What a host shows: why (category + label), what (tool, summary) and what it may grant."""

    session_id: str
    tool: str
    category: str
    label: str
    summary: str
    command_shape: str | None = None
    level: int = 1
    can_grant_category: bool = False
    can_grant_shape: bool = False
    binding: str | None = None  # fingerprint of the exact call
    note: str = ""  # e.g. why the person is asked again


@attrs.frozen
class ApprovalDecision:
    approved: bool
    reason: str  # "level" | "grant" | "user" | "denied" | "no-host" | "host-error" | "binding-changed"
    category: str = ""
    grant: str | None = None  # the grant used ("category:shell", "shape:git") or created


AskHost = Callable[[ApprovalRequest], Awaitable[Any]]  # returns bool | ApprovalAnswer | "y"/"s"/"a"/"n"


LEVELS = (1, 2, 3, 4, 5)


def check_level(level: object) -> int:
    """`level` when it is one of the integers 1..5; a ValueError naming the ladder otherwise."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise ValueError(f"approval level must be an integer 1..5, got {level!r}; "
                         "1 paranoid, 2 workspace, 3 home, 4 operator, 5 full trust")
    return level


class ApprovalGate:
    def __init__(self, categories: Iterable[ApprovalCategory], level: int, ask: AskHost | None = None, *,
                 audit: ApprovalAuditLog | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.categories = {c.name: c for c in categories}
        self._level = check_level(level)
        self.ask = ask
        self.audit = audit
        self.grants = SessionGrants(clock)
        self._session_hosts: dict[str, AskHost] = {}

    # -- per-session routing -------------------------------------------------------------------
    def route_session(self, session_id: str, ask: AskHost) -> None:
        """Ask `ask` instead of the host for the requests of one session (a channel's own
        session: its approvals go to the phone, everyone else's to the host)."""
        self._session_hosts[session_id] = ask

    def unroute_session(self, session_id: str, ask: AskHost | None = None) -> None:
        """Give the session back to the host (only when it is still routed to `ask`, if given)."""
        if ask is None or self._session_hosts.get(session_id) == ask:  # == : bound methods are made per access
            self._session_hosts.pop(session_id, None)

    def host_for(self, session_id: str) -> AskHost | None:
        return self._session_hosts.get(session_id, self.ask)

    # -- level -------------------------------------------------------------------------------
    @property
    def level(self) -> int:
        return self._level

    def set_level(self, level: int) -> int:
        """Hot-apply a level (an integer 1..5, anything else is refused). Persisting it is
        `approval_level.set_approval_level`."""
        self._level = check_level(level)
        return self._level

    def attach_audit(self, audit: ApprovalAuditLog | None) -> None:
        self.audit = audit

    # -- categories ----------------------------------------------------------------------------
    def category(self, name: str) -> ApprovalCategory:
        return self.categories.get(name) or self.categories[FALLBACK_CATEGORY]

    def is_grantable(self, name: str) -> bool:
        cat = self.category(name)
        return cat.grantable and not cat.always_asks and cat.name != TRUST_CONFIG

    def auto_approves(self, name: str) -> bool:
        """Whether the standing level alone lets a call in this category through."""
        cat = self.category(name)
        return not cat.always_asks and self._level >= cat.auto_approve_level

    # -- grants --------------------------------------------------------------------------------
    def grant(self, session_id: str, category: str, command_shape: str | None = None, *,
              ttl_s: float | None = None, uses: int | None = None) -> SessionGrant:
        """Grant a category (or, with `command_shape`, one binary) to one session."""
        cat = self.category(category)
        if not self.is_grantable(cat.name):
            raise ValueError(f"category {cat.name!r} cannot be granted; it asks every time below level "
                             f"{cat.auto_approve_level}")
        if command_shape is not None:
            return self.grants.add(session_id, SHAPE, command_shape, cat.name, ttl_s, uses)
        return self.grants.add(session_id, CATEGORY, cat.name, cat.name, ttl_s, uses)

    def clear_session_grants(self, session_id: str | None = None) -> None:
        self.grants.clear(session_id)

    def grants_snapshot(self, session_id: str | None = None) -> list[dict[str, object]]:
        return self.grants.snapshot(session_id)

    # -- requests ------------------------------------------------------------------------------
    async def request(self, session_id: str, tool: str, category: str, summary: str, *,
                      command_shape: str | None = None, binding: ApprovalBinding | None = None) -> ApprovalDecision:
        cat = self.category(category)
        level = self._level
        if self.auto_approves(cat.name):
            return self._record(session_id, tool, cat, summary, command_shape, binding,
                                ApprovalDecision(True, "level", cat.name), who="level")
        grantable = self.is_grantable(cat.name)
        if grantable:
            used = self.grants.match(session_id, cat.name, command_shape)
            if used is not None:
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(True, "grant", cat.name, used.describe()), who="grant")
        ask = self.host_for(session_id)
        if ask is None:
            return self._record(session_id, tool, cat, summary, command_shape, binding,
                                ApprovalDecision(False, "no-host", cat.name), who="nobody")
        note = ""
        for _attempt in range(1 + MAX_REBIND_ASKS):
            request = ApprovalRequest(session_id, tool, cat.name, cat.label, summary, command_shape, level,
                                      can_grant_category=grantable, can_grant_shape=grantable and bool(command_shape),
                                      binding=binding.fingerprint if binding is not None else None, note=note)
            try:
                answer = normalise_answer(await ask(request))
            except Exception as exc:  # a broken host never approves
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(False, "host-error", cat.name), who="nobody",
                                    error=f"{type(exc).__name__}: {exc}")
            if not answer.approved:
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(False, "denied", cat.name), who="user")
            if binding is not None and not binding.holds():
                changed = binding.changed_files()
                self._record(session_id, tool, cat, summary, command_shape, binding,
                             ApprovalDecision(False, "binding-changed", cat.name), who="user", changedFiles=changed)
                binding = binding.recapture()
                note = "changed after you approved it" + (f": {', '.join(changed)}" if changed else "")
                continue
            created = self._grant_from(session_id, cat, command_shape, answer, grantable)
            return self._record(session_id, tool, cat, summary, command_shape, binding,
                                ApprovalDecision(True, "user", cat.name, created), who="user",
                                answer=answer.kind.value)
        return ApprovalDecision(False, "binding-changed", cat.name)

    def _grant_from(self, session_id: str, cat: ApprovalCategory, command_shape: str | None,
                    answer: ApprovalAnswer, grantable: bool) -> str | None:
        # the grant comes from the gate's own pending request, never from what the host claims
        if not grantable:
            return None
        if answer.kind is AnswerKind.SESSION:
            return self.grants.add(session_id, CATEGORY, cat.name, cat.name, answer.ttl_s, answer.uses).describe()
        if answer.kind is AnswerKind.SHAPE and command_shape:
            return self.grants.add(session_id, SHAPE, command_shape, cat.name, answer.ttl_s, answer.uses).describe()
        return None

    def _record(self, session_id: str, tool: str, cat: ApprovalCategory, summary: str, command_shape: str | None,
                binding: ApprovalBinding | None, decision: ApprovalDecision, who: str,
                **extra: Any) -> ApprovalDecision:
        if self.audit is not None:
            self.audit.append(sessionId=session_id, tool=tool, category=cat.name, level=self._level,
                              approved=decision.approved, reason=decision.reason, who=who, grant=decision.grant,
                              commandShape=command_shape,
                              binding=binding.fingerprint if binding is not None else None, summary=summary, **extra)
        return decision
