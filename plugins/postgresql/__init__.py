"""The `postgresql` plugin: sessions, transcripts, the turn ledger and steers in one
PostgreSQL database shared by several runtime processes, selected by `storage.url`
(or ATOMIC_AGENT_STORAGE_URL); the password lives in `<state>/.env` as
ATOMIC_AGENT_STORAGE_PASSWORD. With an empty url nothing here runs and SQLite stays.

It provides the core's `session_backend` service, a tick by which a serving host takes over
the work of a dead host of the fleet (fleet_takeover), `doctor` checks (connection, schema
version) and `atomic-agent storage migrate` (an embedded state dir into PostgreSQL and back:
whatever each plugin declares through postgresql_contract.SHARED_STATE_SERVICE, the core's
sessions, approvals and approval audit declared here). Hookimpls
only; psycopg is imported when a backend is built or a command runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.api import ConfigBlock, DoctorFinding, RuntimeView, ServiceSpec, TickSpec

CONFIG_KEY = "storage"
SESSION_BACKEND_SERVICE = "session_backend"  # the core's seam (turns/session_backends)
SESSION_BACKEND_KIT_SERVICE = "session_backend_kit"  # the core's records for a backend


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .storage_config import StorageConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=StorageConfig)]


def build_backend(runtime: RuntimeView) -> Any:
    """The PostgreSQL backend when storage.url names one, else None (SQLite stays)."""
    config = runtime.config.block(CONFIG_KEY)
    url = config.url.strip()
    if not url:
        return None
    from .database_url import parse_database_url  # StorageUrlError, saying how to write it, for a bad url
    from .pg_backend import PgBackend
    from .pg_owner_lease import GRACE_S

    # every live host renews its lease each takeover pass: two passes fit in the grace
    return PgBackend(parse_database_url(url, runtime.environ), runtime.service(SESSION_BACKEND_KIT_SERVICE),
                     pool_size=config.pool_size, connect_timeout_s=config.connect_timeout_s,
                     state_dir=runtime.state_dir, lease_grace_s=max(GRACE_S, 2.0 * config.takeover_interval_s))


def build_shared_database(runtime: RuntimeView) -> Any:
    """The session backend's database lent to other plugins (postgresql_contract), else None."""
    backend = runtime.service(SESSION_BACKEND_SERVICE, None)
    if backend is None:
        return None
    from .shared_database import SharedDatabase

    return SharedDatabase(backend)


def build_core_shared_state(runtime: RuntimeView) -> Any:
    from .core_shared_state import core_shared_state

    return core_shared_state(runtime.service(SESSION_BACKEND_KIT_SERVICE))


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    from .postgresql_contract import SHARED_DATABASE_SERVICE, SHARED_STATE_SERVICE

    return [ServiceSpec(SHARED_STATE_SERVICE, build_core_shared_state, multiple=True,
                        summary="what storage migrate copies of the core's state (sessions, approvals, audit)"),
            ServiceSpec(SESSION_BACKEND_SERVICE, build_backend, close=lambda backend: backend and backend.close(),
                        summary="sessions, turns and steers in PostgreSQL when storage.url is postgresql://..."),
            ServiceSpec(SHARED_DATABASE_SERVICE, build_shared_database,
                        summary="the fleet's PostgreSQL database for other plugins' shared state (None on SQLite)")]


@hookimpl
def register_ticks(runtime: RuntimeView) -> Iterable[TickSpec]:
    """A serving host on PostgreSQL adopts a dead host's work (fleet_takeover); none on SQLite."""
    config = runtime.config.block(CONFIG_KEY)
    if not config.url.strip() or config.takeover_interval_s <= 0:
        return []
    backend = runtime.service(SESSION_BACKEND_SERVICE, None)
    if backend is None:
        return []
    from .fleet_takeover import takeover_ticks

    return takeover_ticks(runtime, backend, float(config.takeover_interval_s))


@hookimpl
def report_doctor_findings(state_dir: Path, plugin_host: Any, config: Any) -> Iterable[DoctorFinding]:
    from .doctor_findings import storage_findings

    return storage_findings(state_dir, plugin_host, config)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .storage_commands import storage_app

    app.add_typer(storage_app, name="storage", help="Where the session state lives: migrate it into PostgreSQL.")
