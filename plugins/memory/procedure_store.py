"""Advisory procedure templates: how a recurring kind of request was done, step by step.

A successful turn that took several tool steps is recorded as a run (its request, its tool
sequence). When the same sequence answers a recurring kind of request (`min_runs` turns whose
requests share words), it becomes a procedure: a trigger (the request's shared words), the
ordered steps (what each did and the tool it used, as text), the evidence (the runs' session
and turn). A procedure is guidance the model reads; nothing ever executes its steps. A run
the user then corrects is forgotten (`forget_run`), and a procedure it leaves short of
`min_runs` evidence runs is deprecated.
"""

from __future__ import annotations

import builtins  # this class has a `list` method: annotations name the builtin as builtins.list
import json
from collections.abc import Sequence
from typing import Any

import attrs

from atomic_agent.api import store_clock

from .fts_query import build_match_query, query_terms
from .memory_database import MemoryDatabase
from .memory_errors import MemoryValidationError

ACTIVE, DEPRECATED = "active", "deprecated"
MIN_STEPS, MAX_STEPS = 2, 12
STEP_MAX_CHARS = 200
REQUEST_MAX_CHARS = 500
DEFAULT_MIN_RUNS = 2
MIN_SHARED_WORDS = 2
MAX_EVIDENCE = 20  # runs a procedure cites


@attrs.frozen
class ProcedureStep:
    text: str
    tool: str | None = None


@attrs.frozen
class Procedure:
    id: int
    trigger: str
    signature: str
    steps: tuple[ProcedureStep, ...]
    evidence: tuple[tuple[str, int], ...]
    status: str
    status_reason: str | None
    use_count: int
    source: str
    created_at: int
    updated_at: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "trigger": self.trigger, "status": self.status, "statusReason": self.status_reason,
                "steps": [{"text": s.text, "tool": s.tool} for s in self.steps],
                "evidence": [{"sessionId": s, "turn": t} for s, t in self.evidence], "useCount": self.use_count,
                "source": self.source, "createdAt": store_clock.iso_ms(self.created_at)}


def _procedure(row: dict[str, Any]) -> Procedure:
    steps = tuple(ProcedureStep(s["text"], s.get("tool")) for s in json.loads(row["steps"]))
    evidence = tuple((e[0], int(e[1])) for e in json.loads(row["evidence"]))
    return Procedure(row["id"], row["trigger"], row["signature"], steps, evidence, row["status"], row["status_reason"],
                     row["use_count"], row["source"], row["created_at"], row["updated_at"])


StepLike = ProcedureStep | tuple[str, str | None]


def validate_steps(steps: Sequence[StepLike]) -> tuple[ProcedureStep, ...]:
    """Steps as ProcedureStep or (text, tool) pairs, checked: 2..12 of them, each one line."""
    given = [s if isinstance(s, ProcedureStep) else ProcedureStep(s[0], s[1]) for s in steps]
    if not MIN_STEPS <= len(given) <= MAX_STEPS:
        raise MemoryValidationError(f"a procedure has {MIN_STEPS}..{MAX_STEPS} steps, got {len(given)}")
    out = []
    for step in given:
        text = " ".join(str(step.text).split())
        if not text or len(text) > STEP_MAX_CHARS:
            raise MemoryValidationError(f"a procedure step must be 1..{STEP_MAX_CHARS} characters, got {len(text)}")
        out.append(ProcedureStep(text, step.tool))
    return tuple(out)


class ProcedureStore:
    def __init__(self, database: MemoryDatabase, *, min_runs: int = DEFAULT_MIN_RUNS) -> None:
        self.database = database
        self.min_runs = min_runs

    def record_run(self, session_id: str, turn_index: int, request: str, steps: Sequence[StepLike],
                   now: int | None = None) -> Procedure | None:
        """Keep one successful multi-step turn (its first MAX_STEPS steps); returns the procedure
        it completes, if any. A turn is recorded once (a replay changes nothing)."""
        valid = validate_steps(steps[:MAX_STEPS])
        signature = " > ".join(s.tool or "?" for s in valid)
        stamp = store_clock.now_ms() if now is None else now
        request = " ".join(request.split())[:REQUEST_MAX_CHARS]
        with self.database.write() as conn:
            added = conn.execute("INSERT OR IGNORE INTO procedure_runs (session_id, turn_index, signature, request, "
                                 "steps, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                                 [session_id, int(turn_index), signature, request,
                                  json.dumps([attrs.asdict(s) for s in valid]), stamp])
            if added.rowcount == 0:
                return None
            known = conn.execute("SELECT id, trigger, evidence FROM procedures WHERE signature = ? AND status = ?",
                                 [signature, ACTIVE]).fetchone()
            if known is not None:  # one template per sequence; an alike request adds to its evidence
                evidence = json.loads(known[2])
                trigger_words = set(query_terms(known[1]))
                if len(evidence) < MAX_EVIDENCE and len(trigger_words & set(query_terms(request))) >= min(
                        MIN_SHARED_WORDS, len(trigger_words)):
                    conn.execute("UPDATE procedures SET evidence = ?, updated_at = ? WHERE id = ?",
                                 [json.dumps([*evidence, [session_id, int(turn_index)]]), stamp, known[0]])
                return None
            runs = conn.execute("SELECT session_id, turn_index, request FROM procedure_runs WHERE signature = ? "
                                "ORDER BY created_at DESC LIMIT 20", [signature]).fetchall()
        words = set(query_terms(request))
        alike = [(s, t, r) for s, t, r in runs if len(words & set(query_terms(r))) >= MIN_SHARED_WORDS]
        if len(alike) < self.min_runs:
            return None
        shared = [w for w in query_terms(request) if all(w in set(query_terms(r)) for _s, _t, r in alike)]
        trigger = "requests like: " + " ".join(shared[:12])
        return self.create(trigger, signature, valid, [(s, t) for s, t, _r in alike], now=stamp)

    def create(self, trigger: str, signature: str, steps: Sequence[StepLike],
               evidence: Sequence[tuple[str, int]], *, source: str = "miner", now: int | None = None) -> Procedure:
        valid = validate_steps(steps)
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            cursor = conn.execute(
                "INSERT INTO procedures (trigger, signature, steps, evidence, status, source, valid_from, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [" ".join(trigger.split())[:300], signature, json.dumps([attrs.asdict(s) for s in valid]),
                 json.dumps([list(e) for e in evidence]), ACTIVE, source, stamp, stamp, stamp])
        found = self.get(int(cursor.lastrowid or 0))
        assert found is not None
        return found

    def get(self, procedure_id: int) -> Procedure | None:
        rows = self.database.query("SELECT * FROM procedures WHERE id = ?", [int(procedure_id)])
        return _procedure(rows[0]) if rows else None

    def list(self, status: str | None = None, limit: int = 100) -> builtins.list[Procedure]:
        where = "WHERE status = ?" if status else ""
        rows = self.database.query(f"SELECT * FROM procedures {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
                                   [status, limit] if status else [limit])
        return [_procedure(r) for r in rows]

    def recall(self, query: str, k: int = 3) -> builtins.list[Procedure]:
        """Active procedures whose trigger, steps or tags share words with `query`, best first."""
        match = build_match_query(query or "")
        if match is None or k < 1:
            return []
        rows = self.database.query(
            "SELECT p.* FROM procedures_fts f JOIN procedures p ON p.rowid = f.rowid "
            "WHERE procedures_fts MATCH ? AND p.status = ? ORDER BY bm25(procedures_fts), p.id LIMIT ?",
            [match, ACTIVE, k])
        return [_procedure(r) for r in rows]

    def forget_run(self, session_id: str, turn_index: int, reason: str = "corrected",
                   now: int | None = None) -> tuple[int, ...]:
        """A recorded run turned out wrong (the user's next message corrected that turn): it is
        dropped, every active procedure citing it loses it as evidence, and one left with
        fewer than `min_runs` runs is deprecated (`reason`). Returns the ids deprecated."""
        stamp = store_clock.now_ms() if now is None else now
        key = [session_id, int(turn_index)]
        deprecated: list[int] = []
        with self.database.write() as conn:
            gone = conn.execute("DELETE FROM procedure_runs WHERE session_id = ? AND turn_index = ?", key).rowcount
            if not gone:
                return ()
            rows = conn.execute("SELECT id, evidence FROM procedures WHERE status = ?", [ACTIVE]).fetchall()
            for procedure_id, raw in rows:
                evidence = json.loads(raw)
                kept = [e for e in evidence if [e[0], int(e[1])] != key]
                if len(kept) == len(evidence):
                    continue
                if len(kept) < self.min_runs:
                    conn.execute("UPDATE procedures SET status = ?, status_reason = ?, evidence = ?, valid_to = ?, "
                                 "updated_at = ? WHERE id = ?",
                                 [DEPRECATED, reason, json.dumps(kept), stamp, stamp, procedure_id])
                    deprecated.append(int(procedure_id))
                else:
                    conn.execute("UPDATE procedures SET evidence = ?, updated_at = ? WHERE id = ?",
                                 [json.dumps(kept), stamp, procedure_id])
        return tuple(deprecated)

    def deprecate(self, procedure_id: int, reason: str, now: int | None = None) -> bool:
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            cursor = conn.execute("UPDATE procedures SET status = ?, status_reason = ?, valid_to = ?, updated_at = ? "
                                  "WHERE id = ? AND status = ?", [DEPRECATED, reason, stamp, stamp,
                                                                  int(procedure_id), ACTIVE])
        return cursor.rowcount > 0
