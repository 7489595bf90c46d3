"""`<state>/approvals.sqlite`: every approval and question as a durable record, answered once.

A record is committed (synchronous=FULL) before any surface shows it, so whatever a
surface displays can be answered after a restart, from any other surface. It freezes the
call it asks about (tool, canonical args, working dir, the hash of every file that decides
what runs, the argv a shell call resolves to, the egress target) under one fingerprint:
an answer given for another fingerprint is refused, and the gate asks again when the call
changed.

Answering is one conditional UPDATE (`state = 'pending'` and not yet due) under SQLite's
write lock, so when two surfaces answer at once exactly one wins; the loser is told who
answered, where and when (AlreadyAnsweredError), or that the record expired. An approved
call is `consume`d (also one conditional UPDATE) right before it runs, so it runs at most
once whichever process resumes it.

Each row carries the record schema it was written with: a row from a newer build is shown
as such and never answered by this one (its meaning may have changed).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.storage.sqlite_store import SqliteStore
from atomic_agent.storage.store_clock import iso_ms

RECORDS_FILE = "approvals.sqlite"
RECORD_SCHEMA = 1  # the meaning of a row's fields; a row with a higher number is left alone

APPROVAL, QUESTION = "approval", "question"
PENDING, APPROVED, GRANTED, DENIED, EXPIRED, CANCELLED, ANSWERED = (
    "pending", "approved", "granted", "denied", "expired", "cancelled", "answered")
FINAL_STATES = (APPROVED, GRANTED, DENIED, EXPIRED, CANCELLED, ANSWERED)
# a gate decision -> the state it leaves the record in
DECISION_STATES = {"once": APPROVED, "session": GRANTED, "shape": GRANTED, "deny": DENIED}
OPERATOR = "operator"  # the principal of a local surface (terminal, CLI): the state dir's owner
WAIT_POLL_S = 0.1  # how often a waiter reads the file for an answer given by another process


class ApprovalHostClosedError(Exception):
    """A host stopped showing a record it did not answer (it is shutting down): the record
    stays pending for the next start, and the asking call is not approved now."""


class ApprovalRecordError(Exception):
    """An answer that changed nothing; `code` names why for the surfaces' wire errors."""

    code = "approval_error"

    def __init__(self, approval_id: str, message: str) -> None:
        super().__init__(message)
        self.approval_id = approval_id
        self.message = message


class ApprovalNotFoundError(ApprovalRecordError):
    code = "approval_not_found"


class AlreadyAnsweredError(ApprovalRecordError):
    code = "approval_already_answered"

    def __init__(self, record: ApprovalRecord) -> None:
        super().__init__(record.id, f"{record.kind} {record.id} was already {_settled_words(record)}; "
                                    "each one takes exactly one answer and yours changed nothing")
        self.record = record


class ApprovalExpiredError(ApprovalRecordError):
    code = "approval_expired"

    def __init__(self, record: ApprovalRecord) -> None:
        super().__init__(record.id, f"{record.kind} {record.id} expired at {iso_ms(int(record.expires_at * 1000))} "
                                    "and was settled as expired; a late answer changes nothing")
        self.record = record


class CallChangedError(ApprovalRecordError):
    code = "approval_call_changed"


class NotAllowedToAnswerError(ApprovalRecordError):
    code = "approval_not_yours"


class InvalidAnswerError(ApprovalRecordError):
    code = "invalid_answer"


class NewerRecordError(ApprovalRecordError):
    code = "approval_newer_schema"


def _settled_words(record: ApprovalRecord) -> str:
    if record.state == EXPIRED:
        return "expired"
    if record.state == CANCELLED:
        return f"cancelled ({record.answer_text or 'its turn ended'})"
    what = record.decision or record.state
    where = f" via {record.surface}" if record.surface else ""
    when = f" at {iso_ms(int(record.answered_at * 1000))}" if record.answered_at else ""
    return f"answered {what!r} by {record.answered_by or 'someone'}{where}{when}"


def canonical_json(value: object) -> str:
    """The one byte form of a call's args: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


@attrs.frozen
class FrozenCall:
    """Exactly what an answer applies to; any change makes a new fingerprint."""

    tool: str
    args: str = "{}"  # canonical JSON
    cwd: str = ""
    argv: tuple[str, ...] = ()  # the resolved argv of a shell call, or a file write's targets
    files: tuple[tuple[str, str], ...] = ()  # (canonical path, sha256 or "missing"): scripts, binaries
    egress: str | None = None  # the host a network call reaches

    @property
    def fingerprint(self) -> str:
        body = canonical_json([self.tool, self.args, self.cwd, list(self.argv), [list(f) for f in self.files],
                               self.egress])
        return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:24]

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": json.loads(self.args), "cwd": self.cwd, "argv": list(self.argv),
                "files": [list(f) for f in self.files], "egress": self.egress, "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> FrozenCall:
        return cls(str(raw.get("tool", "")), canonical_json(raw.get("args", {})), str(raw.get("cwd", "")),
                   tuple(str(a) for a in raw.get("argv", ())), tuple((str(p), str(d)) for p, d in raw.get("files", ())),
                   raw.get("egress"))


@attrs.frozen
class ApprovalRecord:
    id: str
    kind: str  # approval | question
    session_id: str
    turn_id: str | None
    call_key: str | None  # session/turn/step/batch of the transcript call it gates
    category: str
    level: int
    summary: str
    frozen: FrozenCall
    answerers: tuple[str, ...]  # principals besides the operator that may answer
    created_at: float
    expires_at: float
    state: str
    decision: str | None = None
    answer_text: str | None = None  # a question's free text, or why a record was cancelled
    answered_by: str | None = None
    surface: str | None = None
    answered_at: float | None = None
    used_at: float | None = None  # when the approved call was let run (once)
    question: dict[str, Any] | None = None  # prompt, options, allowFreeText, reason
    schema: int = RECORD_SCHEMA

    @property
    def fingerprint(self) -> str:
        return self.frozen.fingerprint

    @property
    def approved(self) -> bool:
        return self.state in (APPROVED, GRANTED)

    def may_answer(self, principal: str) -> bool:
        return principal == OPERATOR or principal in self.answerers

    def as_dict(self) -> dict[str, Any]:
        return {"approvalId": self.id, "kind": self.kind, "sessionId": self.session_id, "turnId": self.turn_id,
                "callKey": self.call_key, "category": self.category, "level": self.level, "summary": self.summary,
                "call": self.frozen.as_dict(), "answerers": list(self.answerers),
                "createdAt": iso_ms(int(self.created_at * 1000)), "expiresAt": iso_ms(int(self.expires_at * 1000)),
                "state": self.state, "decision": self.decision, "answerText": self.answer_text,
                "answeredBy": self.answered_by, "surface": self.surface,
                "answeredAt": iso_ms(int(self.answered_at * 1000)) if self.answered_at else None,
                "usedAt": iso_ms(int(self.used_at * 1000)) if self.used_at else None,
                "question": self.question, "schema": self.schema}


def m001_approval_records(db: Any) -> None:
    """One row per approval or question; answered at most once (see the module docstring)."""
    with SqliteStore.transaction(db.conn):
        db.conn.execute(
            "CREATE TABLE IF NOT EXISTS approval_records (id TEXT PRIMARY KEY, kind TEXT NOT NULL, "
            "session_id TEXT NOT NULL, turn_id TEXT, call_key TEXT, category TEXT NOT NULL, level INTEGER NOT NULL, "
            "summary TEXT NOT NULL, frozen TEXT NOT NULL, fingerprint TEXT NOT NULL, answerers TEXT NOT NULL, "
            "created_at REAL NOT NULL, expires_at REAL NOT NULL, state TEXT NOT NULL, decision TEXT, "
            "answer_text TEXT, answered_by TEXT, surface TEXT, answered_at REAL, used_at REAL, question TEXT, "
            "schema INTEGER NOT NULL)")
        db.conn.execute("CREATE INDEX IF NOT EXISTS approval_records_state ON approval_records (state, created_at)")
        db.conn.execute("CREATE INDEX IF NOT EXISTS approval_records_call ON approval_records (call_key)")


COLUMNS = ("id, kind, session_id, turn_id, call_key, category, level, summary, frozen, answerers, created_at, "
           "expires_at, state, decision, answer_text, answered_by, surface, answered_at, used_at, question, schema")


# What follows is backend-neutral: the embedded file and the PostgreSQL plugin's table
# (reached through session_backend_kit) build, map, validate and refuse records with these
# same functions, so the two cannot drift on what an answer may be or what a loser is told.

def new_record(*, kind: str, session_id: str, category: str, level: int, summary: str, frozen: FrozenCall,
               now: float, ttl_s: float, turn_id: str | None = None, call_key: str | None = None,
               answerers: Sequence[str] = (), question: Mapping[str, Any] | None = None) -> ApprovalRecord:
    """A pending record created at `now` (epoch seconds) under a fresh id, not yet stored."""
    return ApprovalRecord(f"apr_{uuid.uuid4().hex[:16]}", kind, session_id, turn_id, call_key, category, level,
                          summary, frozen, tuple(answerers), now, now + max(ttl_s, 0.0), PENDING,
                          question=dict(question) if question is not None else None)


def insert_values(record: ApprovalRecord) -> list[Any]:
    """A new record's values in `COLUMNS` order followed by its fingerprint."""
    return [record.id, record.kind, record.session_id, record.turn_id, record.call_key, record.category,
            record.level, record.summary, canonical_json(record.frozen.as_dict()), json.dumps(list(record.answerers)),
            record.created_at, record.expires_at, record.state, None, None, None, None, None, None,
            canonical_json(record.question) if record.question is not None else None, record.schema,
            record.fingerprint]


def record_of(row: Sequence[Any]) -> ApprovalRecord:
    """A stored row (`COLUMNS` order) as a record."""
    (rid, kind, sid, turn, key, cat, level, summary, frozen, answerers, created, expires, state, decision, text, by,
     surface, answered, used, question, schema) = row
    return ApprovalRecord(rid, kind, sid, turn, key, cat, int(level), summary, FrozenCall.from_dict(json.loads(frozen)),
                          tuple(json.loads(answerers)), float(created), float(expires), state, decision, text, by,
                          surface, float(answered) if answered is not None else None,
                          float(used) if used is not None else None, json.loads(question) if question else None,
                          int(schema))



def answer_state(record: ApprovalRecord, decision: str, *, principal: str, fingerprint: str | None,
                 text: str | None) -> str:
    """The state a valid answer settles `record` in; the ApprovalRecordError saying what is
    wrong with any other (a principal not allowed, a changed call, a bad decision, a record
    from a newer build). Whether the record is still pending is the storage's one conditional
    UPDATE, not decided here."""
    approval_id = record.id
    if not record.may_answer(principal):
        raise NotAllowedToAnswerError(approval_id, f"{principal} may not answer {record.kind} {approval_id}; it "
                                                   "is answered by the client whose turn asked, or the operator")
    if fingerprint is not None and fingerprint != record.fingerprint:
        raise CallChangedError(approval_id, f"{record.kind} {approval_id} is for call {record.fingerprint}, not "
                                            f"{fingerprint}: the call changed since it was shown; answer the "
                                            "current request instead")
    if record.schema > RECORD_SCHEMA:
        raise NewerRecordError(record.id, f"{record.kind} {record.id} was written by a newer atomic-agent "
                                          f"(record schema {record.schema}, this build knows {RECORD_SCHEMA}); "
                                          "answer it with that build")
    if record.kind == QUESTION:
        options = {str(o.get("id")) for o in (record.question or {}).get("options", [])}
        if decision == "text":
            if not (record.question or {}).get("allowFreeText") or not (text or "").strip():
                raise InvalidAnswerError(record.id, "this question takes no free text; answer with an option "
                                                    f"id: {', '.join(sorted(options))}")
            return ANSWERED
        if decision not in options:
            raise InvalidAnswerError(record.id, f"{decision!r} is not an option of question {record.id}; answer "
                                                f"with one of: {', '.join(sorted(options))}")
        return ANSWERED
    if decision not in DECISION_STATES:
        raise InvalidAnswerError(record.id, f"decision must be one of {', '.join(DECISION_STATES)}, "
                                            f"got {decision!r}")
    return DECISION_STATES[decision]


def lost_answer(final: ApprovalRecord) -> ApprovalRecordError:
    """What the loser of the conditional UPDATE is told, from the record as it now stands."""
    return ApprovalExpiredError(final) if final.state == EXPIRED else AlreadyAnsweredError(final)


def parks_on(records: Sequence[ApprovalRecord]) -> bool:
    """Whether a call with these records waits on (or already got) an answer never acted on."""
    return any(r.state != CANCELLED and r.used_at is None for r in records)


class ApprovalRecords(SqliteStore):
    migrations = (m001_approval_records,)

    def __init__(self, path: Path, busy_timeout_s: float | None = None, clock: Any = time.time) -> None:
        self.clock = clock
        super().__init__(path, busy_timeout_s)

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> ApprovalRecords:
        return cls(state_dir / RECORDS_FILE)

    # -- writing -------------------------------------------------------------------------
    def create(self, *, kind: str, session_id: str, category: str, level: int, summary: str, frozen: FrozenCall,
               ttl_s: float, turn_id: str | None = None, call_key: str | None = None,
               answerers: Sequence[str] = (), question: Mapping[str, Any] | None = None) -> ApprovalRecord:
        """Commit a pending record; only after this returns may a surface show it."""
        record = new_record(kind=kind, session_id=session_id, category=category, level=level, summary=summary,
                            frozen=frozen, now=self.clock(), ttl_s=ttl_s, turn_id=turn_id, call_key=call_key,
                            answerers=answerers, question=question)
        with self.write() as conn:
            conn.execute(f"INSERT INTO approval_records ({COLUMNS}, fingerprint) VALUES ({', '.join('?' * 22)})",
                         insert_values(record))
        return record

    def answer(self, approval_id: str, decision: str, *, principal: str, surface: str,
               fingerprint: str | None = None, text: str | None = None) -> ApprovalRecord:
        """Settle a pending record with the first valid answer; every later one raises.

        `decision` is a gate decision (once, session, shape, deny) for an approval, an option
        id (or "text" with `text`) for a question. `fingerprint`, when the surface showed one,
        must still be the record's: an answer never carries over to a changed call."""
        state = answer_state(self.get(approval_id), decision, principal=principal, fingerprint=fingerprint, text=text)
        now = self.clock()
        with self.write() as conn:
            won = conn.execute(
                "UPDATE approval_records SET state = ?, decision = ?, answer_text = ?, answered_by = ?, surface = ?, "
                "answered_at = ? WHERE id = ? AND state = ? AND expires_at > ? AND schema <= ?",
                [state, decision, text, principal, surface, now, approval_id, PENDING, now, RECORD_SCHEMA]).rowcount
            if not won:
                self._expire_in(conn, now)
        if won:
            return self.get(approval_id)
        raise lost_answer(self.get(approval_id))

    def consume(self, approval_id: str) -> bool:
        """Let the approved call run (or a question's answer reach its turn): True exactly once
        per approved record; any other settled record is marked acted on (nothing to resume)."""
        with self.write() as conn:
            won = conn.execute(
                "UPDATE approval_records SET used_at = ? WHERE id = ? AND state IN (?, ?) AND used_at IS NULL",
                [self.clock(), approval_id, APPROVED, GRANTED]).rowcount == 1
            if not won:
                conn.execute("UPDATE approval_records SET used_at = ? WHERE id = ? AND state NOT IN (?, ?, ?) "
                             "AND used_at IS NULL", [self.clock(), approval_id, PENDING, APPROVED, GRANTED])
            return bool(won)

    def cancel(self, approval_id: str, why: str) -> bool:
        """Withdraw a pending record (its call changed, or it is no longer needed)."""
        with self.write() as conn:
            return bool(conn.execute(
                "UPDATE approval_records SET state = ?, answer_text = ?, answered_at = ? WHERE id = ? AND state = ?",
                [CANCELLED, why, self.clock(), approval_id, PENDING]).rowcount == 1)

    def expire(self, approval_id: str) -> bool:
        """Settle one pending record as expired now (its host's own timeout passed first)."""
        with self.write() as conn:
            return bool(conn.execute("UPDATE approval_records SET state = ?, answered_at = ? WHERE id = ? AND "
                                     "state = ?", [EXPIRED, self.clock(), approval_id, PENDING]).rowcount == 1)

    def expire_due(self) -> list[str]:
        """Settle every pending record past its expiry as expired; their ids."""
        with self.write() as conn:
            return self._expire_in(conn, self.clock())

    def _expire_in(self, conn: Any, now: float) -> list[str]:
        rows = conn.execute("UPDATE approval_records SET state = ?, answered_at = ? WHERE state = ? AND "
                            "expires_at <= ? AND schema <= ? RETURNING id",
                            [EXPIRED, now, PENDING, now, RECORD_SCHEMA]).fetchall()
        return [r[0] for r in rows]

    # -- reading -------------------------------------------------------------------------
    def get(self, approval_id: str) -> ApprovalRecord:
        row = self.conn.execute(f"SELECT {COLUMNS} FROM approval_records WHERE id = ?", [approval_id]).fetchone()
        if row is None:
            raise ApprovalNotFoundError(approval_id, f"no approval or question {approval_id!r}; "
                                                     "`atomic-agent approvals list` shows them")
        return record_of(row)

    def find(self, states: Sequence[str] = (), limit: int = 200) -> list[ApprovalRecord]:
        """Newest first; only `states` when given."""
        where = f"WHERE state IN ({', '.join('?' * len(states))})" if states else ""
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM approval_records {where} ORDER BY created_at DESC "
                                 "LIMIT ?", [*states, limit]).fetchall()
        return [record_of(r) for r in rows]

    def for_call(self, call_key: str) -> list[ApprovalRecord]:
        """The records of one transcript call, oldest first."""
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM approval_records WHERE call_key = ? ORDER BY created_at",
                                 [call_key]).fetchall()
        return [record_of(r) for r in rows]

    def parks(self, call_key: str) -> bool:
        """Whether a call cut off by a restart waits on (or already got) an answer that was
        never acted on: then it is resumed from that answer instead of being interrupted."""
        return parks_on(self.for_call(call_key))

    def pending_now(self, limit: int = 200) -> list[ApprovalRecord]:
        """Pending records not yet due, newest first."""
        return [r for r in self.find((PENDING,), limit=limit) if r.expires_at > self.clock()]

    async def wait(self, approval_id: str, poll_s: float = WAIT_POLL_S) -> ApprovalRecord:
        """The record once it is no longer pending (an answer from any process, or expiry)."""
        while True:
            record = self.get(approval_id)
            if record.state != PENDING:
                return record
            if self.clock() >= record.expires_at:
                self.expire_due()
                continue
            await asyncio.sleep(min(poll_s, max(record.expires_at - self.clock(), 0.0) + 0.001))


def approvals_status(state_dir: Path, open_records: Callable[[], Any] | None = None, where: str = RECORDS_FILE,
                     limit: int = 20) -> list[dict[str, Any]]:
    """`atomic-agent status`'s approvals line: the pending records every surface shares.

    `open_records` opens the configured backend's records (`where` names them), None the
    state dir's file, read only when it exists (status creates nothing). Records that cannot
    be read are reported as an error line, not raised."""
    if open_records is None:
        path = state_dir / RECORDS_FILE
        if not path.exists():
            return [{"section": "approvals", "name": "records", "state": "ok", "summary": "0 pending"}]
        open_records = lambda: ApprovalRecords(path)  # noqa: E731
    try:
        records = open_records()
    except Exception as exc:  # a newer or damaged file, an unusable database: doctor says what to do
        return [approvals_unreadable(where, exc)]
    try:
        pending = records.pending_now(limit)
    except Exception as exc:
        return [approvals_unreadable(where, exc)]
    finally:
        records.close()
    return [{"section": "approvals", "name": "records", "state": "warn" if pending else "ok",
             "summary": f"{len(pending)} pending",
             "problems": [f"{r.kind} {r.id}: {r.category} {r.summary[:100]} "
                          f"(answer: atomic-agent approvals answer {r.id} ...)" for r in pending],
             "detail": {"pending": [r.as_dict() for r in pending]}}]


def approvals_unreadable(where: str, exc: Exception) -> dict[str, Any]:
    return {"section": "approvals", "name": "records", "state": "error", "summary": f"{where} could not be read: {exc}"}
