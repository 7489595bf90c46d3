"""The core's lines of `atomic-agent status`: turns running and queued across every process on
the state dir, and the latest failed turns. Read from sessions.sqlite alone; a state dir
without one has no sessions yet (nothing is created to find that out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.turns.turn_owner import OWNERS_DIR, owner_alive
from atomic_agent.turns.turn_states import PARKED, QUEUED, RUNNING

LAST_FAILURES = 5


def turn_status(state_dir: Path) -> list[dict[str, Any]]:
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
    running = [{"turnId": t, "sessionId": s, "origin": o, "ownerAlive": owner_alive(owners, w)}
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
