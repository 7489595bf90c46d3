"""`atomic-agent storage`: where the session state lives. `storage migrate --to URL` copies
the state dir's sessions.sqlite into an empty PostgreSQL database, verified by row counts and
hashes, in one transaction (nothing is kept unless every table matches)."""

from __future__ import annotations

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

storage_app = typer.Typer(no_args_is_help=True)


@storage_app.command("migrate")
def storage_migrate(ctx: typer.Context,
                    to: str = typer.Option(..., "--to", help="postgresql://user@host:port/database (password: .env)"),
                    json_out: bool = typer.Option(False, "--json")) -> None:
    """Copy sessions, transcripts, turns, steers and idempotency keys into an empty PostgreSQL database."""
    from atomic_agent.api import SessionStoreError, open_session_store

    from .database_url import StorageUrlError, parse_database_url
    from .doctor_findings import storage_environ
    from .pg_schema import NewerDatabaseError, migrate
    from .state_copy import StateCopyError, copy_sessions_state

    state_dir = current_cli_state(ctx).require().state_dir
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
