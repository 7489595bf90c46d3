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

Here too are the standard categories and level names, checking and changing the level
(`set_approval_level`), and the callables a tool asks through (`bind_request_approval`,
`bind_ask_question`). The answers, the binding a yes is tied to, the session grants and
the audit log are modules beside this one (approval_answers, approval_binding,
session_grants, approval_audit_log).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.approval.approval_answers import ApprovalAnswer, answer_of, normalise_answer
from atomic_agent.approval.approval_audit_log import clean_summary
from atomic_agent.approval.approval_records import (
    ANSWERED,
    APPROVAL,
    CANCELLED,
    EXPIRED,
    OPERATOR,
    PENDING,
    QUESTION,
    ApprovalHostClosedError,
    ApprovalRecord,
    ApprovalRecordError,
    FrozenCall,
    canonical_json,
)
from atomic_agent.approval.approval_repository import ApprovalAudit, ApprovalRepository
from atomic_agent.approval.session_grants import CATEGORY, SHAPE, SessionGrant, SessionGrants
from atomic_agent.config.config_file import save_raw_config, set_key
from atomic_agent.config.raw_config import config_path, read_raw_config
from atomic_agent.hook_records import ApprovalCategory

# isort: split
# re-exported: these are part of the public `approval_gate` namespace of atomic_agent.api (docs/plugin-api.md)
from atomic_agent.approval.approval_answers import AnswerKind as AnswerKind
from atomic_agent.approval.approval_answers import ApprovalRequest as ApprovalRequest
from atomic_agent.approval.approval_answers import offered_answers as offered_answers
from atomic_agent.approval.approval_audit_log import ApprovalAuditLog as ApprovalAuditLog
from atomic_agent.approval.approval_audit_log import audit_path as audit_path
from atomic_agent.approval.approval_binding import ApprovalBinding as ApprovalBinding

# The ten standard categories of the five-level ladder (a product decision, pinned by tests).
#
# Level 1 paranoid asks for everything; 2 workspace stops asking for writes inside the
# session's working dir; 3 home adds home-dir writes, trash and HTTP; 4 operator adds shell,
# scripts and process kills; 5 full trust asks for nothing.

STANDARD_CATEGORIES: tuple[ApprovalCategory, ...] = (
    ApprovalCategory("fs_write_workspace", 2, "file write · workspace"),
    ApprovalCategory("fs_write_home", 3, "file write · home"),
    ApprovalCategory("fs_trash", 3, "move to trash"),
    ApprovalCategory("http", 3, "HTTP request"),
    ApprovalCategory("shell", 4, "shell command"),
    ApprovalCategory("script", 4, "skill script"),
    ApprovalCategory("proc_kill", 4, "kill process"),
    ApprovalCategory("browser_nonweb", 5, "browser · non-web URL"),
    ApprovalCategory("trust_config", 5, "agent trust config", grantable=False),
    ApprovalCategory("other", 5, "other action"),
)

LEVEL_NAMES = {1: "paranoid", 2: "workspace", 3: "home", 4: "operator", 5: "full trust"}


# Changing the standing approval level: validate, persist to config.json, then hot-apply.
#
# The level is a machine-local trust posture. It is written to `agent.approvalLevel` first,
# so the next boot picks it up, and only then applied to the live gate; if applying fails
# after the write, the error names the already-rewritten file. `--no-approval` forces level
# 5 for one process and is never persisted.

LEVEL_KEY = "agent.approvalLevel"


class ApprovalLevelError(RuntimeError):
    """The level was persisted but could not be applied to the running gate."""


def parse_level(value: object) -> int:
    """One of the integers 1..5 (a CLI may pass it as the digits "1".."5"); anything else —
    2.5, 0, 9, true, "high" — is refused with a ValueError naming the ladder, never clamped."""
    if isinstance(value, str) and value.strip().isdigit():
        return check_level(int(value.strip()))
    return check_level(value)


def resolve_boot_level(no_approval: bool, configured: int) -> int:
    """The level a process starts at: the persisted one, or 5 for `--no-approval` (never stricter)."""
    return 5 if no_approval else check_level(configured)


def set_approval_level(state_dir: Path, config_blocks: Mapping[str, Any], gate: ApprovalGate, level: object) -> int:
    """Persist `level` (an integer 1..5, else ValueError) to config.json, then apply it to `gate`; returns the level."""
    value = parse_level(level)
    path = config_path(state_dir)
    raw = set_key(read_raw_config(path), LEVEL_KEY, value)
    save_raw_config(path, raw, config_blocks)
    try:
        return gate.set_level(value)
    except Exception as exc:
        raise ApprovalLevelError(
            f"{path} now says {LEVEL_KEY}={value} (the next start uses it), but the running gate could not "
            f"be switched ({type(exc).__name__}: {exc}); restart to apply it") from exc


# The `request_approval` callable a ToolContext carries, bound to one gate, session and tool.
#
# The agent loop and `atomic-agent tools call` both build contexts with it, so a tool asks
# through exactly the same path wherever it runs.

RequestApproval = Callable[..., Awaitable[bool]]


def bind_request_approval(gate: ApprovalGate, session_id: str, tool: str,
                          call: CallIdentity | None = None) -> RequestApproval:
    async def request_approval(category: str, summary: str, *, binding: ApprovalBinding | None = None,
                               command_shape: str | None = None, egress: str | None = None) -> bool:
        decision = await gate.request(session_id, tool, category, summary, command_shape=command_shape,
                                      binding=binding, call=call, egress=egress)
        return decision.approved

    return request_approval


@attrs.frozen
class CallIdentity:
    """Which transcript call asks (turn, step, batch slot) and its args: what a durable
    record freezes, and how a call resumed after a restart finds the answer given to it."""

    turn_index: int
    step: int
    batch_index: int
    args: Mapping[str, Any] = attrs.field(factory=dict)

    def key(self, session_id: str) -> str:
        return f"{session_id}/{self.turn_index}/{self.step}/{self.batch_index}"


def bind_ask_question(gate: ApprovalGate, session_id: str, tool: str,
                      call: CallIdentity | None = None) -> Callable[[Mapping[str, Any]], Awaitable[ApprovalRecord]]:
    async def ask_question(question: Mapping[str, Any]) -> ApprovalRecord:
        return await gate.ask_question(session_id, tool, question, call=call)

    return ask_question


FALLBACK_CATEGORY = "other"
TRUST_CONFIG = "trust_config"  # never grantable, whatever a registration says
MAX_REBIND_ASKS = 2
DEFAULT_RECORD_TTL_S = 480.0  # how long a durable approval waits for an answer before it expires


@attrs.frozen
class ApprovalDecision:
    approved: bool
    reason: str  # "level" | "grant" | "user" | "denied" | "no-host" | "host-error" | "binding-changed" | "expired"
    #             | "already-ran" (a resumed call whose approval was used once already)
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
                 audit: ApprovalAudit | None = None, clock: Callable[[], float] = time.monotonic,
                 records: ApprovalRepository | None = None, record_ttl_s: float = DEFAULT_RECORD_TTL_S) -> None:
        self.categories = {c.name: c for c in categories}
        self._level = check_level(level)
        self.ask = ask
        self.audit = audit
        self.grants = SessionGrants(clock)
        self._session_hosts: dict[str, AskHost] = {}
        self._session_surfaces: dict[str, str] = {}
        self.surface = "terminal"  # how the host's answers are labelled in records and the audit log
        self.records = records
        self.record_ttl_s = record_ttl_s
        self._answerers: dict[str, tuple[str, ...]] = {}
        self._waiting: dict[str, str] = {}  # record id -> session id, while a turn here waits on it

    # -- per-session routing -------------------------------------------------------------------
    def set_surface(self, surface: str) -> None:
        """Label the host's answers (in records and the audit log) as given on `surface`: a host
        that asks through its own screen (the TUI) rather than the terminal says so."""
        self.surface = surface

    def route_session(self, session_id: str, ask: AskHost, surface: str = "channel") -> None:
        """Ask `ask` instead of the host for the requests of one session (a channel's own
        session: its approvals go to the phone, everyone else's to the host)."""
        self._session_hosts[session_id] = ask
        self._session_surfaces[session_id] = surface

    def allow_answerers(self, session_id: str, principals: Iterable[str]) -> None:
        """Besides the operator, who may answer this session's records (a serve client, a
        paired Telegram chat); recorded on each record when it is made."""
        self._answerers[session_id] = tuple(dict.fromkeys([*self._answerers.get(session_id, ()), *principals]))

    def withdraw_waits(self, session_id: str, why: str) -> list[str]:
        """Cancel the records the session's turn waits on in this process (its turn was stopped:
        nobody should answer them now, and nothing runs); the ids withdrawn."""
        if self.records is None:
            return []
        ids = [rid for rid, sid in list(self._waiting.items()) if sid == session_id]
        return [rid for rid in ids if self.records.cancel(rid, why)]

    def surface_for(self, session_id: str) -> str:
        return self._session_surfaces.get(session_id, self.surface) if session_id in self._session_hosts \
            else self.surface

    def unroute_session(self, session_id: str, ask: AskHost | None = None) -> None:
        """Give the session back to the host (only when it is still routed to `ask`, if given)."""
        if ask is None or self._session_hosts.get(session_id) == ask:  # == : bound methods are made per access
            self._session_hosts.pop(session_id, None)
            self._session_surfaces.pop(session_id, None)

    def host_for(self, session_id: str) -> AskHost | None:
        return self._session_hosts.get(session_id, self.ask)

    # -- level -------------------------------------------------------------------------------
    @property
    def level(self) -> int:
        return self._level

    @property
    def level_name(self) -> str:
        """The standing level's name ("home", "full trust", ...)."""
        return LEVEL_NAMES.get(self._level, str(self._level))

    def set_level(self, level: int) -> int:
        """Hot-apply a level (an integer 1..5, anything else is refused). Persisting it is
        `set_approval_level`."""
        self._level = check_level(level)
        return self._level

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

    def revoke_grant(self, session_id: str, kind: str, value: str) -> bool:
        """Withdraw one session grant (a host's revoke); the next such call asks again."""
        return self.grants.revoke(session_id, kind, value)

    def grants_snapshot(self, session_id: str | None = None) -> list[dict[str, object]]:
        return self.grants.snapshot(session_id)

    # -- requests ------------------------------------------------------------------------------
    async def request(self, session_id: str, tool: str, category: str, summary: str, *,
                      command_shape: str | None = None, binding: ApprovalBinding | None = None,
                      call: CallIdentity | None = None, egress: str | None = None) -> ApprovalDecision:
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
        if self.records is not None and call is not None:
            resumed = self._resume(session_id, tool, cat, summary, command_shape, binding, call, egress, grantable)
            if resumed is not None:
                return resumed
        ask = self.host_for(session_id)
        if ask is None:
            return self._record(session_id, tool, cat, summary, command_shape, binding,
                                ApprovalDecision(False, "no-host", cat.name), who="nobody")
        if self.records is not None:
            return await self._ask_durably(ask, session_id, tool, cat, summary, command_shape, binding, call, egress,
                                           grantable)
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

    # -- durable records -------------------------------------------------------------------------
    async def ask_question(self, session_id: str, tool: str, question: Mapping[str, Any], *,
                           call: CallIdentity | None = None) -> ApprovalRecord:
        """Commit a question record, show it where questions are shown, and return it settled
        (answered by any surface, or expired). A call asking again after a restart gets the
        record it already has. Raises RuntimeError when no records are kept."""
        records = self.records
        if records is None:
            raise RuntimeError("questions need the durable approval records, which this gate does not keep")
        frozen = FrozenCall(tool, canonical_json(dict(question)))
        key = call.key(session_id) if call is not None else None
        same = [r for r in records.for_call(key) if r.kind == QUESTION and r.fingerprint == frozen.fingerprint
                and r.state != CANCELLED] if key is not None else []
        record = same[-1] if same else records.create(
            kind=QUESTION, session_id=session_id, category=QUESTION, level=self._level,
            summary=clean_summary(str(question.get("prompt", ""))), frozen=frozen, ttl_s=self.record_ttl_s, call_key=key,
            turn_id=str(call.turn_index) if call is not None else None, answerers=self._answerers.get(session_id, ()),
            question=question)
        cat = self.category(FALLBACK_CATEGORY)
        if not same:
            self._record(session_id, tool, cat, record.summary, None, None, None, who="pending", kind=QUESTION,
                         approvalId=record.id, reasonCategory=question.get("reason"))
        if record.state == PENDING:
            ask = self.host_for(session_id)
            shows = ask is not None and getattr(getattr(ask, "__self__", None), "shows_questions", False)
            if shows and ask is not None:
                request = ApprovalRequest(session_id, tool, QUESTION, "question", record.summary, level=self._level,
                                          approval_id=record.id, expires_at=record.expires_at,
                                          question=dict(question))
                try:
                    record = await self._first_answer(ask, request, record, self.surface_for(session_id))
                except ApprovalHostClosedError:
                    return records.get(record.id)
            else:  # the terminal and channels without question support: any records surface answers
                self._waiting[record.id] = session_id
                try:
                    record = await records.wait(record.id)
                finally:
                    self._waiting.pop(record.id, None)
            self._record(session_id, tool, cat, record.summary, None, None,
                         ApprovalDecision(record.state == ANSWERED, record.state, QUESTION), who="user",
                         kind=QUESTION, approvalId=record.id, answer=record.decision, surface=record.surface,
                         answeredBy=record.answered_by)
        records.consume(record.id)
        return record

    def _frozen(self, tool: str, binding: ApprovalBinding | None, call: CallIdentity | None,
                egress: str | None) -> FrozenCall:
        return FrozenCall(tool, canonical_json(dict(call.args) if call is not None else {}),
                          binding.cwd if binding is not None else "", binding.argv if binding is not None else (),
                          binding.files if binding is not None else (), egress)

    def _resume(self, session_id: str, tool: str, cat: ApprovalCategory, summary: str, command_shape: str | None,
                binding: ApprovalBinding | None, call: CallIdentity, egress: str | None,
                grantable: bool) -> ApprovalDecision | None:
        """A call asking again after a restart: the answer its frozen call already got, or None (ask)."""
        assert self.records is not None
        fingerprint = self._frozen(tool, binding, call, egress).fingerprint
        for record in reversed(self.records.for_call(call.key(session_id))):
            if record.category != cat.name or record.fingerprint != fingerprint or record.state in (PENDING,
                                                                                                    CANCELLED):
                continue  # another request of the call, a changed call, or one still to be answered
            extra = {"approvalId": record.id, "resumed": True, "surface": record.surface,
                     "answeredBy": record.answered_by}
            if record.approved:
                if not self.records.consume(record.id):
                    return self._record(session_id, tool, cat, summary, command_shape, binding,
                                        ApprovalDecision(False, "already-ran", cat.name), who="record", **extra)
                answer = answer_of(record)
                created = self._grant_from(session_id, cat, command_shape, answer, grantable)
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(True, "user", cat.name, created), who="user",
                                    answer=answer.kind.value, **extra)
            reason = "expired" if record.state == EXPIRED else "denied"
            return self._record(session_id, tool, cat, summary, command_shape, binding,
                                ApprovalDecision(False, reason, cat.name), who="user", **extra)
        return None

    async def _ask_durably(self, ask: AskHost, session_id: str, tool: str, cat: ApprovalCategory, summary: str,
                           command_shape: str | None, binding: ApprovalBinding | None, call: CallIdentity | None,
                           egress: str | None, grantable: bool) -> ApprovalDecision:
        """Commit the record, show it, and take the first answer any surface gives it."""
        records = self.records
        assert records is not None
        note = ""
        for _attempt in range(1 + MAX_REBIND_ASKS):
            frozen = self._frozen(tool, binding, call, egress)
            key = call.key(session_id) if call is not None else None
            waiting = [r for r in records.for_call(key) if r.state == PENDING and r.category == cat.name
                       and r.fingerprint == frozen.fingerprint] if key is not None else []
            record = waiting[-1] if waiting else records.create(
                kind=APPROVAL, session_id=session_id, category=cat.name, level=self._level, summary=clean_summary(summary),
                frozen=frozen, ttl_s=self.record_ttl_s, call_key=key,
                turn_id=str(call.turn_index) if call is not None else None,
                answerers=self._answerers.get(session_id, ()))
            if not waiting:
                self._record(session_id, tool, cat, summary, command_shape, binding, None, who="pending",
                             approvalId=record.id, fingerprint=record.fingerprint)
            request = ApprovalRequest(session_id, tool, cat.name, cat.label, summary, command_shape, self._level,
                                      can_grant_category=grantable, can_grant_shape=grantable and bool(command_shape),
                                      binding=record.fingerprint, note=note, approval_id=record.id,
                                      expires_at=record.expires_at)
            try:
                final = await self._first_answer(ask, request, record, self.surface_for(session_id))
            except ApprovalHostClosedError:  # shutting down: the record waits for the next start
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(False, "host-closed", cat.name), who="nobody",
                                    approvalId=record.id)
            except Exception as exc:  # a broken host never approves; its record is withdrawn
                records.cancel(record.id, f"the host failed: {type(exc).__name__}")
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(False, "host-error", cat.name), who="nobody",
                                    approvalId=record.id, error=f"{type(exc).__name__}: {exc}")
            extra = {"approvalId": record.id, "surface": final.surface, "answeredBy": final.answered_by}
            if not final.approved:
                reason = {EXPIRED: "expired", CANCELLED: "cancelled"}.get(final.state, "denied")
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(False, reason, cat.name), who="user", state=final.state,
                                    **extra)
            if binding is not None and not binding.holds():
                changed = binding.changed_files()
                self._record(session_id, tool, cat, summary, command_shape, binding,
                             ApprovalDecision(False, "binding-changed", cat.name), who="user", changedFiles=changed,
                             **extra)
                binding = binding.recapture()
                note = "changed after you approved it" + (f": {', '.join(changed)}" if changed else "")
                continue
            if not records.consume(final.id):
                return self._record(session_id, tool, cat, summary, command_shape, binding,
                                    ApprovalDecision(False, "already-ran", cat.name), who="record", **extra)
            answer = answer_of(final)
            created = self._grant_from(session_id, cat, command_shape, answer, grantable)
            return self._record(session_id, tool, cat, summary, command_shape, binding,
                                ApprovalDecision(True, "user", cat.name, created), who="user",
                                answer=answer.kind.value, **extra)
        return ApprovalDecision(False, "binding-changed", cat.name)

    async def _first_answer(self, ask: AskHost, request: ApprovalRequest, record: ApprovalRecord,
                            surface: str) -> ApprovalRecord:
        """Race the host's prompt against the record (answered by any process, or expired)."""
        records = self.records
        assert records is not None
        host = asyncio.ensure_future(ask(request))
        waiter = asyncio.ensure_future(records.wait(record.id))
        self._waiting[record.id] = request.session_id
        try:
            await asyncio.wait({host, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            host.cancel()
            waiter.cancel()
            raise
        finally:
            self._waiting.pop(record.id, None)
        if waiter.done():
            host.cancel()  # answered elsewhere: the host's prompt is withdrawn
            await asyncio.gather(host, return_exceptions=True)
            return waiter.result()
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        result = host.result()  # raises what the host raised
        if record.kind == QUESTION:
            return await self._question_answered(result, record, surface)
        answer = normalise_answer(result)
        bounds = {k: v for k, v in (("ttlS", answer.ttl_s), ("uses", answer.uses)) if v is not None}
        try:
            return records.answer(record.id, answer.kind.value, principal=OPERATOR, surface=surface,
                                  text=json.dumps(bounds) if bounds else None)
        except ApprovalRecordError:  # another surface won (or it expired): its answer stands
            return records.get(record.id)
    async def _question_answered(self, result: object, record: ApprovalRecord, surface: str) -> ApprovalRecord:
        """A question's host either committed its answer itself (serve, Telegram) or hands it
        back (the terminal): `{"option": id}`, `{"text": ...}`, or `{"cancel": why}` when the
        person gave none. Another surface's earlier answer stands; the record says what won."""
        records = self.records
        assert records is not None
        if isinstance(result, Mapping):
            try:
                if result.get("cancel"):
                    records.cancel(record.id, str(result["cancel"]))
                elif result.get("option") is not None:
                    records.answer(record.id, str(result["option"]), principal=OPERATOR, surface=surface)
                elif result.get("text") is not None:
                    records.answer(record.id, "text", principal=OPERATOR, surface=surface, text=str(result["text"]))
            except ApprovalRecordError:
                pass  # answered elsewhere first, expired, or not an answer this record takes
        current = records.get(record.id)
        return await records.wait(record.id) if current.state == PENDING else current

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
                binding: ApprovalBinding | None, decision: ApprovalDecision | None, who: str,
                **extra: Any) -> ApprovalDecision:
        """Audit one decision (None: a record was committed and is now shown, still undecided)."""
        if self.audit is not None:
            self.audit.append(sessionId=session_id, tool=tool, category=cat.name, level=self._level,
                              approved=decision.approved if decision is not None else None,
                              reason=decision.reason if decision is not None else "asked", who=who,
                              grant=decision.grant if decision is not None else None, commandShape=command_shape,
                              binding=binding.fingerprint if binding is not None else None, summary=summary, **extra)
        return decision if decision is not None else ApprovalDecision(False, "asked", cat.name)
