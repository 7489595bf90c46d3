"""Which session a run uses, by the session rules of scheduled tasks.

- given (CLI/HTTP/agent named one): used as is; a deleted one blocks the task
  (`session_not_found`).
- ephemeral (a one-shot with none): a fresh session is made lazily before the first run
  and written back to the row; from then on it is the row's session.
- recurring (cron/interval with none): one persistent session made at create and reused
  by every firing; if someone deleted it, a new one is made, written back and a warning
  logged. Requeueing a recurring task never touches its session id.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .task_records import TaskRecord
from .task_store import TaskStore

GIVEN, EPHEMERAL, RECURRING = "given", "ephemeral", "recurring"


class SessionMissing(Exception):
    """The task names a session that no longer exists and may not be recreated."""


def session_for_run(task: TaskRecord, store: TaskStore, sessions: Any, metrics: Any) -> str:
    """The session id the run of `task` uses (made and written back when the rules say so)."""
    if task.session_id is not None and sessions.exists(task.session_id):
        return task.session_id
    if task.session_mode == GIVEN:
        raise SessionMissing(f"session {task.session_id} does not exist (deleted?)")
    working_dir = Path(task.working_dir) if task.working_dir else Path.home()
    made = sessions.create(working_dir).id
    if task.session_id is not None:  # a recurring (or written-back ephemeral) session was deleted
        print(f"atomic-agent: task {task.id}: its session {task.session_id} was deleted; continuing in a new "
              f"session {made}", file=sys.stderr)
        metrics.inc("agent.tasks.session_recreated")
    else:
        metrics.inc("agent.tasks.session_auto_created")
    store.set_session(task.id, made, task.session_mode)
    return made
