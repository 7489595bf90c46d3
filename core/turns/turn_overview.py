"""The core's lines of `atomic-agent status`: turns running and queued across every process on
the session state, and the latest failed turns. Read from the configured session backend
(sessions.sqlite, or the PostgreSQL database storage.url names: the whole fleet's turns, the
owners' liveness from the database); a state dir without sessions.sqlite, on SQLite, has no
sessions yet (nothing is created to find that out)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.turns.turn_owner import OWNERS_DIR, owner_alive
from atomic_agent.turns.turn_states import FAILED, PARKED, QUEUED, RUNNING

if TYPE_CHECKING:
    from atomic_agent.config.app_config import AppConfig
    from atomic_agent.plugin_host.plugin_host import PluginHost
    from atomic_agent.turns.session_backends import SessionBackend

LAST_FAILURES = 5
STATUS_OWNER = "status"  # the ledger's owner name for a read-only look (it writes nothing)

# sessions; (turn_id, session_id, state, origin, owner) of live turns; (turn_id, session_id, origin, reason) of
# parked ones; (turn_id, session_id, origin, category, reason) of failed ones; whether an owner is alive
Rows = tuple[int, list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]], Callable[[str | None], bool]]


def turn_status(state_dir: Path, config: AppConfig | None = None, host: PluginHost | None = None
                ) -> list[dict[str, Any]]:
    """The lines; `config` and `host` (the status command's) select the configured backend, else SQLite."""
    from atomic_agent.sessions.store_errors import SessionStoreError
    from atomic_agent.turns.session_backends import DEFAULT_BACKEND

    backend = DEFAULT_BACKEND
    if config is not None and host is not None:
        from atomic_agent.turns.configured_backend import configured_backend

        try:
            backend = configured_backend(state_dir, config, host)
        except SessionStoreError as exc:
            return [_unreadable(exc)]
    if backend is DEFAULT_BACKEND:
        return _sqlite_status(state_dir)
    try:
        rows = _backend_rows(backend, state_dir)
    except SessionStoreError as exc:
        return [_unreadable(exc)]
    return _lines(*rows)


def _unreadable(exc: Exception) -> dict[str, Any]:
    return {"section": "sessions", "name": "turns", "state": "error", "summary": "the session state cannot be read",
            "problems": [str(exc)], "detail": {}}


def _backend_rows(backend: SessionBackend, state_dir: Path) -> Rows:
    """What the lines need, through the backend's repositories (no SQL of a backend here)."""
    store = backend.open_store(state_dir)
    lease = backend.lease(state_dir)
    try:
        ledger = backend.ledger(store, STATUS_OWNER)
        sessions = len(store.session_ids())
        live = sorted([*ledger.in_state(RUNNING), *ledger.in_state(QUEUED)], key=lambda t: t.admitted_order)
        waiting = sorted(ledger.in_state(PARKED), key=lambda t: t.admitted_order)
        failed = sorted(ledger.in_state(FAILED), key=lambda t: t.admitted_order, reverse=True)[:LAST_FAILURES]
        alive = {owner: lease.is_alive(owner) for owner in {t.owner for t in live if t.state == RUNNING}}
    finally:
        lease.release()
        store.close()
    return (sessions, [(t.turn_id, t.session_id, t.state, t.origin, t.owner) for t in live],
            [(t.turn_id, t.session_id, t.origin, t.reason) for t in waiting],
            [(t.turn_id, t.session_id, t.origin, t.category, t.reason) for t in failed],
            lambda owner: alive.get(owner, False))


def _sqlite_status(state_dir: Path) -> list[dict[str, Any]]:
    from atomic_agent.sessions.session_store import SESSIONS_FILE, SessionStore

    if not (state_dir / SESSIONS_FILE).exists():
        return [{"section": "sessions", "name": "turns", "state": "ok", "summary": "no sessions yet",
                 "detail": {"sessions": 0, "running": [], "queued": []}}]
    store = SessionStore(state_dir)
    try:
        conn = store.conn
        sessions = int(conn.execute("select count(*) from sessions").fetchone()[0])
        live = conn.execute("select turn_id, session_id, state, origin, owner from turns where state in (?, ?) "
                            "order by admitted_order", [RUNNING, QUEUED]).fetchall()
        waiting = conn.execute("select turn_id, session_id, origin, reason from turns where state = ? "
                               "order by admitted_order", [PARKED]).fetchall()
        failed = conn.execute("select turn_id, session_id, origin, category, reason from turns where state = 'failed' "
                              "order by admitted_order desc limit ?", [LAST_FAILURES]).fetchall()
    finally:
        store.close()
    owners = state_dir / OWNERS_DIR
    return _lines(sessions, live, waiting, failed, lambda owner: owner_alive(owners, owner))


def _lines(sessions: int, live: list[tuple[Any, ...]], waiting: list[tuple[Any, ...]], failed: list[tuple[Any, ...]],
           alive: Callable[[str | None], bool]) -> list[dict[str, Any]]:
    running = [{"turnId": t, "sessionId": s, "origin": o, "ownerAlive": alive(w)}
               for t, s, state, o, w in live if state == RUNNING]
    queued = [{"turnId": t, "sessionId": s, "origin": o} for t, s, state, o, _w in live if state == QUEUED]
    parked = [{"turnId": t, "sessionId": s, "origin": o, "waitingFor": r} for t, s, o, r in waiting]
    orphaned = [r for r in running if not r["ownerAlive"]]
    busy_sessions = len({r["sessionId"] for r in [*running, *queued]})
    summary = (f"{len(running)} running, {len(queued)} queued" + (f", {len(parked)} parked" if parked else "")
               + (f" in {busy_sessions} session(s)" if busy_sessions else "") + f"; {sessions} session(s) in all")
    problems = [f"{len(orphaned)} turn(s) were running in a process that is gone; the next start of a host "
                "(serve, sidecar, telegram run, scheduler) answers them"] if orphaned else []
    problems += [f"turn {p['turnId']} (session {p['sessionId']}) is parked, {p['waitingFor']}" for p in parked]
    line: dict[str, Any] = {"section": "sessions", "name": "turns", "state": "warn" if orphaned or parked else "ok",
                            "summary": summary, "problems": problems,
                            "detail": {"sessions": sessions, "running": running, "queued": queued,
                                       "parked": parked}}
    failures = [{"turnId": t, "sessionId": s, "origin": o, "category": c, "reason": r} for t, s, o, c, r in failed]
    errors: dict[str, Any] = {"section": "errors", "name": "turns", "state": "ok" if not failures else "warn",
                              "summary": "no failed turns" if not failures else
                              f"last failed turn: {failures[0]['category'] or 'failed'} ({failures[0]['origin']}, "
                              f"session {failures[0]['sessionId']})",
                              "problems": [f"turn {f['turnId']} ({f['origin']}) failed: {f['category'] or '?'}"
                                           f"{' — ' + f['reason'] if f['reason'] else ''}" for f in failures],
                              "detail": {"lastFailed": failures}}
    return [line, errors]
