"""What `storage migrate` copies of the tasks (postgresql_contract.SHARED_STATE_SERVICE):
tasks.sqlite's tables and their twins of steps tasks.mNNN_* in the fleet's database; the
run and delivery ids continue past every id the source handed out. The fleet's live runner
list (task_runners) is not state to move: each runner registers itself."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .fleet_runner_lease import LEASE_PREFIX
from .pg_task_schema import SCHEMA_OWNER, STEPS
from .task_database import TASKS_FILE


@attrs.frozen
class TasksState:
    owner: str = SCHEMA_OWNER
    schema_steps: Sequence[tuple[str, Sequence[str]]] = tuple(STEPS)
    path: str = TASKS_FILE
    tables: Sequence[tuple[str, str, Sequence[str], str]] = (
        ("tasks", "tasks", ("id",), ""),
        ("task_runs", "task_runs", ("id",), "id"),
        ("task_sessions", "task_sessions", ("session_id",), ""),
        ("named_sessions", "named_sessions", ("name",), ""),
        ("task_deliveries", "task_deliveries", ("id",), "id"),
    )
    forms: Mapping[str, tuple[str, str, str, str]] = attrs.field(factory=dict)
    # doctor's lease health (postgresql_contract.FleetLeaseHolders): each registered runner's
    # lease (fleet_runner_lease) and the tasks it runs; a dead one's are settled by a live scheduler
    leases: Sequence[tuple[str, str]] = (
        ("task runners", f"SELECT '{LEASE_PREFIX}' || r.owner, (SELECT count(*) FROM tasks t "
                         "WHERE t.status = 'running' AND t.owner = r.owner) FROM task_runners r"),
    )

    @contextlib.contextmanager
    def open_sqlite(self, state_dir: Path) -> Iterator[Any]:
        from .task_database import TaskDatabase, tasks_db_path

        database = TaskDatabase(tasks_db_path(state_dir))  # migrated to this build's schema
        try:
            yield database.conn
        finally:
            database.close()
