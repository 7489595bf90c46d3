"""The tasks' tables in the fleet's PostgreSQL: the `shared_database` service's QmarkEngine
(the interface TaskStore uses on tasks.sqlite: `query`, `write`, `closed`, `close`, the row
locks), so the store's SQL is written once. Errors of the database become TaskStoreError
(password scrubbed by the shared database), so commands say what to check."""

from __future__ import annotations

from atomic_agent.plugins.postgresql.postgresql_contract import QmarkEngine, SharedDatabase

from .pg_task_schema import SCHEMA_OWNER, STEPS
from .task_errors import TaskStoreError


def pg_task_database(shared: SharedDatabase) -> QmarkEngine:
    """The tasks' engine on the fleet's database, its schema ensured."""
    return shared.qmark_engine(SCHEMA_OWNER, STEPS, TaskStoreError)
