"""`atomic-agent storage`: where the shared state lives. `storage migrate --to URL` copies the
state dir's whole embedded state (what every plugin declares through SHARED_STATE_SERVICE:
sessions, turns, approvals and their audit, tasks, webhook and Telegram deliveries, MCP drift
approvals) into an empty PostgreSQL database; `storage migrate --to sqlite` copies the
database storage.url names back into a state dir that has none of it. Either way verified by
row counts and hashes, nothing kept unless every table matches (state_copy)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

storage_app = typer.Typer(no_args_is_help=True)


@storage_app.command("migrate")
def storage_migrate(ctx: typer.Context,
                    to: str = typer.Option(..., "--to", help="postgresql://user@host:port/database (password: .env), "
                                           "or `sqlite` to copy the storage.url database back into the state dir"),
                    json_out: bool = typer.Option(False, "--json")) -> None:
    """Copy the state dir's sessions, turns, approvals, tasks and deliveries into an empty PostgreSQL database (or back)."""
    from .database_url import StorageUrlError, parse_database_url
    from .doctor_findings import configured_url, storage_environ

    boot = current_cli_state(ctx).require()
    state_dir = boot.state_dir
    environ = storage_environ(state_dir)
    back = to.strip().lower() in ("sqlite", "sqlite:")
    raw = configured_url(state_dir, environ) if back else to
    if back and not raw:
        fail("storage migrate --to sqlite copies the PostgreSQL database storage.url names back into this state dir, "
             "but storage.url is not set here; set it (or ATOMIC_AGENT_STORAGE_URL) to the database to copy from")
    try:
        url = parse_database_url(raw, environ)
    except StorageUrlError as exc:
        fail(str(exc))
    states = _declared_states(boot)
    copied = _copy(states, state_dir, url, back)
    if json_out:
        where = {"from": url.shown, "to": "sqlite"} if back else {"to": url.shown}
        print_json(where | {"tables": [{"table": c.table, "owner": c.owner or "core", "rows": c.rows,
                                        "sha256": c.digest} for c in copied]})
        return
    print_table(["table", "of", "rows", "sha256 (verified)"],
                [[c.table, c.owner or "core", c.rows, c.digest[:16]] for c in copied])
    if back:
        print(f"copied from {url.shown} into {state_dir}; unset storage.url (`atomic-agent config set storage.url "
              "\"\"`) and restart the processes that use this state dir")
    else:
        print(f"copied into {url.shown}; set storage.url to it (`atomic-agent config set storage.url {url.shown}`) "
              "and restart every process that uses this state dir")


def _declared_states(boot: Any) -> list[Any]:
    """Every plugin's declared shared state (the core's first: this plugin declares it)."""
    from atomic_agent.api import SessionStoreError

    from .postgresql_contract import SHARED_STATE_SERVICE

    try:
        provided = boot.host.command_services(boot.state_dir, boot.config, SHARED_STATE_SERVICE)
    except SessionStoreError as exc:
        fail(str(exc))
    return sorted((state for states in provided for state in states), key=lambda state: state.owner != "")


def _copy(states: list[Any], state_dir: Path, url: Any, back: bool) -> list[Any]:
    import sqlite3

    import psycopg

    from .pg_backend import connect
    from .pg_schema import Step, migrate
    from .state_copy import copy_back_to_state_dir, copy_into_postgresql

    where = f"storage migrate from {url.shown} to sqlite" if back else f"storage migrate to {url.shown}"
    try:
        with connect(url, 10) as pg:
            migrate(pg, url.shown)  # refuses a database from a newer build before reading or writing it
            owners = {state.owner: state.schema_steps for state in states if state.owner}
            for owner, steps in owners.items():
                migrate(pg, url.shown, [Step(name, tuple(sql)) for name, sql in steps], owner)
            if back:
                return copy_back_to_state_dir(states, pg, state_dir)
            return copy_into_postgresql(states, state_dir, pg)
    # RuntimeError: a newer database (NewerDatabaseError), a copy refused (StateCopyError), a
    # store that refused its file (the session, task or Telegram store's error)
    except (psycopg.Error, sqlite3.Error, RuntimeError) as exc:
        fail(f"{where}: {url.scrub(str(exc))}")
