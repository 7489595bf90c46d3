"""`atomic-agent storage`: where the session state lives. `storage migrate --to URL` copies
the state dir's sessions.sqlite into an empty PostgreSQL database; `storage migrate --to
sqlite` copies the database storage.url names back into an empty sessions.sqlite of the state
dir. Either way verified by row counts and hashes, in one transaction (nothing is kept unless
every table matches)."""

from __future__ import annotations

from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

storage_app = typer.Typer(no_args_is_help=True)


@storage_app.command("migrate")
def storage_migrate(ctx: typer.Context,
                    to: str = typer.Option(..., "--to", help="postgresql://user@host:port/database (password: .env), "
                                           "or `sqlite` to copy the storage.url database back into the state dir"),
                    json_out: bool = typer.Option(False, "--json")) -> None:
    """Copy sessions, transcripts, turns, steers and idempotency keys into an empty PostgreSQL database (or back)."""
    from atomic_agent.api import SessionStoreError, open_session_store

    from .database_url import StorageUrlError, parse_database_url
    from .doctor_findings import storage_environ
    from .pg_schema import NewerDatabaseError, migrate
    from .state_copy import StateCopyError, copy_sessions_state

    state_dir = current_cli_state(ctx).require().state_dir
    if to.strip().lower() in ("sqlite", "sqlite:"):
        _migrate_back(state_dir, json_out)
        return
    try:
        url = parse_database_url(to, storage_environ(state_dir))
    except StorageUrlError as exc:
        fail(str(exc))
    import psycopg

    from .pg_backend import connect

    try:
        source = open_session_store(state_dir)  # the SQLite store, migrated to this build's schema
    except SessionStoreError as exc:
        fail(str(exc))
    try:
        with connect(url, 10) as pg:
            migrate(pg, url.shown)
            copied = copy_sessions_state(source.conn, pg)  # type: ignore[attr-defined]
    except (psycopg.Error, NewerDatabaseError, StateCopyError) as exc:
        fail(f"storage migrate to {url.shown}: {url.scrub(str(exc))}")
    finally:
        source.close()
    if json_out:
        print_json({"to": url.shown, "tables": [{"table": c.table, "rows": c.rows, "sha256": c.digest}
                                                 for c in copied]})
        return
    print_table(["table", "rows", "sha256 (verified)"], [[c.table, c.rows, c.digest[:16]] for c in copied])
    print(f"copied into {url.shown}; set storage.url to it (`atomic-agent config set storage.url {url.shown}`) "
          "and restart every process that uses this state dir")


def _migrate_back(state_dir: Path, json_out: bool) -> None:
    """The storage.url database's session state into this state dir's (empty) sessions.sqlite."""
    import psycopg

    from atomic_agent.api import SessionStoreError, open_session_store

    from .database_url import StorageUrlError, parse_database_url
    from .doctor_findings import configured_url, storage_environ
    from .pg_backend import connect
    from .pg_schema import NewerDatabaseError, migrate
    from .state_copy import StateCopyError, copy_back_to_sqlite

    environ = storage_environ(state_dir)
    raw = configured_url(state_dir, environ)
    if not raw:
        fail("storage migrate --to sqlite copies the PostgreSQL database storage.url names back into this state dir, "
             "but storage.url is not set here; set it (or ATOMIC_AGENT_STORAGE_URL) to the database to copy from")
    try:
        url = parse_database_url(raw, environ)
    except StorageUrlError as exc:
        fail(str(exc))
    try:
        target = open_session_store(state_dir)  # the state dir's SQLite store (created when absent)
    except SessionStoreError as exc:
        fail(str(exc))
    try:
        with connect(url, 10) as pg:
            migrate(pg, url.shown)  # refuses a database from a newer build before reading it
            copied = copy_back_to_sqlite(pg, target.conn)  # type: ignore[attr-defined]
    except (psycopg.Error, NewerDatabaseError, StateCopyError) as exc:
        fail(f"storage migrate from {url.shown} to sqlite: {url.scrub(str(exc))}")
    finally:
        target.close()
    if json_out:
        print_json({"from": url.shown, "to": "sqlite", "tables": [{"table": c.table, "rows": c.rows,
                                                                   "sha256": c.digest} for c in copied]})
        return
    print_table(["table", "rows", "sha256 (verified)"], [[c.table, c.rows, c.digest[:16]] for c in copied])
    print(f"copied from {url.shown} into {state_dir / 'sessions.sqlite'}; unset storage.url (`atomic-agent config "
          "set storage.url \"\"`) and restart the processes that use this state dir")
