"""`atomic-agent approvals list|show|answer ID`: the durable approvals and questions of a
state dir, answered from the terminal.

The CLI is the operator's surface (whoever can run it owns the state dir), so it may answer
any record; its answer wins only if it is the first one (see approval_records). The process
whose turn asked picks the answer up from the records and runs the frozen call once. With
storage.url set the records are the fleet's database's, so any host may answer any host's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from atomic_agent.cli.cli_state import current_cli_state, fail, print_json, print_table

if TYPE_CHECKING:
    from atomic_agent.approval.approval_repository import ApprovalRepository

approvals_app = typer.Typer(no_args_is_help=True)
SURFACE = "cli"


def _records(ctx: typer.Context) -> ApprovalRepository:
    """The records the runtime would use: the configured backend's (storage.url: the fleet's
    database), else the state dir's approvals.sqlite."""
    from atomic_agent.sessions.store_errors import SessionStoreError
    from atomic_agent.storage.sqlite_migrations import NewerSchemaError
    from atomic_agent.turns.configured_backend import configured_backend

    boot = current_cli_state(ctx).require()
    try:
        return configured_backend(boot.state_dir, boot.config, boot.host).approvals(boot.state_dir)
    except (NewerSchemaError, SessionStoreError) as exc:
        fail(str(exc))


@approvals_app.command("list")
def list_command(ctx: typer.Context,
                 every: bool = typer.Option(False, "--all", help="Include answered, expired and cancelled ones."),
                 json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List pending approvals and questions (newest first)."""
    from atomic_agent.approval.approval_records import PENDING
    from atomic_agent.sessions.store_errors import SessionStoreError

    records = _records(ctx)
    try:
        records.expire_due()
        found = records.find(() if every else (PENDING,))
    except SessionStoreError as exc:
        fail(str(exc))
    finally:
        records.close()
    if json_out:
        print_json([r.as_dict() for r in found])
        return
    print_table(["id", "kind", "state", "session", "category", "tool", "summary", "answered by"],
                [[r.id, r.kind, r.state, r.session_id, r.category, r.frozen.tool, r.summary[:60],
                  f"{r.answered_by} via {r.surface}" if r.answered_by else ""] for r in found])


@approvals_app.command("show")
def show_command(ctx: typer.Context, approval_id: str = typer.Argument(..., help="The approval or question id.")) -> None:
    """Print one record as JSON: the frozen call, who may answer, its state and answer."""
    from atomic_agent.approval.approval_records import ApprovalRecordError
    from atomic_agent.sessions.store_errors import SessionStoreError

    records = _records(ctx)
    try:
        print_json(records.get(approval_id).as_dict())
    except ApprovalRecordError as exc:
        fail(exc.message)
    except SessionStoreError as exc:
        fail(str(exc))
    finally:
        records.close()


@approvals_app.command("answer")
def answer_command(ctx: typer.Context, approval_id: str = typer.Argument(..., help="The approval or question id."),
                   decision: str = typer.Argument(..., help="once|session|shape|deny for an approval; an option id "
                                                            "(or `text`) for a question."),
                   text: str = typer.Option(None, "--text", help="A question's free-text answer (with `text`)."),
                   fingerprint: str = typer.Option(None, "--call", help="The call fingerprint you reviewed; refused "
                                                                         "if the call changed since.")) -> None:
    """Answer one pending record; the first answer from any surface wins."""
    from atomic_agent.approval.approval_records import OPERATOR, ApprovalRecordError
    from atomic_agent.sessions.store_errors import SessionStoreError

    records = _records(ctx)
    try:
        record = records.answer(approval_id, decision, principal=OPERATOR, surface=SURFACE, fingerprint=fingerprint,
                                text=text)
    except ApprovalRecordError as exc:
        fail(exc.message)
    except SessionStoreError as exc:
        fail(str(exc))
    finally:
        records.close()
    print(f"{record.kind} {record.id}: {record.state} ({record.decision}); the waiting turn picks it up")
