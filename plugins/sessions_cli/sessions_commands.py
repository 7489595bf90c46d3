"""Session commands over the session state: `<state>/sessions.sqlite`, or the PostgreSQL
database storage.url names (the store the runtime would use)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

if TYPE_CHECKING:
    from atomic_agent.api import SessionRepository

sessions_app = typer.Typer(no_args_is_help=True)


def _store(ctx: typer.Context) -> SessionRepository:
    from atomic_agent.api import SessionStoreError, open_session_store

    try:
        return open_session_store(current_cli_state(ctx).require())  # the configured backend (storage.url)
    except SessionStoreError as exc:
        fail(str(exc))


def _load(store: SessionRepository, session_id: str) -> Any:
    from atomic_agent.api import SessionNotFoundError

    try:
        return store.load(session_id)
    except SessionNotFoundError as exc:
        fail(str(exc))


def _entry_json(entry: Any) -> dict[str, Any]:
    return {k: v for k, v in {
        "seq": entry.seq, "kind": entry.kind, "turn": entry.turn_index, "step": entry.step,
        "batchIndex": entry.batch_index, "tool": entry.tool, "args": entry.args, "status": entry.status,
        "reason": entry.reason, "text": entry.text or None, "reasoning": entry.reasoning,
        "details": entry.details, "createdAt": entry.created_at}.items() if v is not None}


def session_json(state: Any) -> dict[str, Any]:
    return {"id": state.id, "createdAt": state.created_at, "status": state.status, "title": state.title,
            "workingDir": str(state.working_dir), "loadedTools": state.loaded_tools, "knownFacts": state.known_facts,
            "turns": state.turn_summaries(), "transcript": [_entry_json(e) for e in state.entries]}


@sessions_app.command("list")
def sessions_list(ctx: typer.Context, limit: int = typer.Option(50, "--limit"),
                  json_out: bool = typer.Option(False, "--json")) -> None:
    """Most recently used sessions first."""
    rows = _store(ctx).list(limit)
    if json_out:
        print_json(rows)
        return
    print_table(["id", "updated", "status", "turns", "working dir"],
                [[r["id"], r["updated_at"][:19], r["status"], r["turns"], r["working_dir"]] for r in rows])


@sessions_app.command("show")
def sessions_show(ctx: typer.Context, session_id: str, json_out: bool = typer.Option(False, "--json")) -> None:
    """The transcript, with each turn's state and reason."""
    state = _load(_store(ctx), session_id)
    if json_out:
        print_json(session_json(state))
        return
    print(f"session {state.id} ({state.status}) in {state.working_dir}")
    current = None
    summaries = {t["turn"]: t for t in state.turn_summaries()}
    for entry in state.entries:
        if entry.turn_index != current:
            current = entry.turn_index
            t = summaries[current]
            print(f"\n## turn {current}: {t['state']}" + (f" ({t['reason']})" if t["reason"] else ""))
        if entry.kind == "user":
            print(f"user: {entry.text}")
        elif entry.kind == "assistant_tool_call":
            print(f"  → {entry.tool} {json.dumps(entry.args, ensure_ascii=False)}")
        elif entry.kind == "tool_result":
            print(f"    {entry.status}: {entry.text[:200]}")
        elif entry.kind == "assistant_reply":
            print(f"assistant: {entry.text}")
        elif entry.kind == "failure_note":
            print(f"system: {entry.text}")
        elif entry.kind == "compaction":
            print(f"summary of earlier conversation: {entry.text}")


@sessions_app.command("search")
def sessions_search(ctx: typer.Context, query: str,
                    limit: int = typer.Option(10, "--limit", min=1, max=100),
                    channel: list[str] = typer.Option([], "--channel",
                                                      help="Only sessions of this channel: local, http or telegram "
                                                           "(repeatable; default every channel)."),
                    json_out: bool = typer.Option(False, "--json")) -> None:
    """Find past sessions by what was said in them (words; search syntax is taken literally)."""
    from .session_search_config import CHANNELS

    bad = [c for c in channel if c not in CHANNELS]
    if bad:
        fail(f"--channel must be one of {', '.join(CHANNELS)}; got {', '.join(bad)}")
    try:
        hits = _store(ctx).search(query, channels=set(channel) or None, limit=limit)
    except ValueError as exc:  # a query with no words
        fail(str(exc))
    if json_out:
        print_json([h.to_json() for h in hits])
        return
    if not hits:
        print(f"no session mentions {query!r}")
        return
    print_table(["session", "turn", "when", "channel", "snippet"],
                [[h.session_id, h.turn_index, h.created_at[:16], h.channel, h.snippet] for h in hits])


@sessions_app.command("open")
def sessions_open(ctx: typer.Context, session_id: str,
                  max_chars: int = typer.Option(12_000, "--max-chars", min=200, max=10_000_000,
                                                help="Keep the newest lines that fit in this many characters.")) -> None:
    """What was said in a session (user messages and replies), as sessions.open shows it to the agent."""
    from .session_search_tools import transcript_text

    state = _load(_store(ctx), session_id)
    print(transcript_text(state.id, state.created_at, state.entries, max_chars))


@sessions_app.command("export")
def sessions_export(ctx: typer.Context, session_id: str,
                    output: Path = typer.Option(None, "--output", "-o", help="Write to this file (default stdout).")) -> None:
    """The whole session as JSON you can keep."""
    from atomic_agent.api import write_atomic

    data = json.dumps(session_json(_load(_store(ctx), session_id)), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        print(data, end="")
    else:
        write_atomic(output, data, mode=0o600)
        print(f"wrote {output}")


@sessions_app.command("compact")
def sessions_compact(ctx: typer.Context, session_id: str) -> None:
    """Replace the session's history with a summary the model writes (messages that arrive meanwhile are kept)."""
    import asyncio

    from atomic_agent.api import create_runtime

    async def go() -> Any:
        runtime = await create_runtime(boot_context=current_cli_state(ctx).require())
        try:
            return await runtime.compact(session_id)
        finally:
            await runtime.close()

    try:
        result = asyncio.run(go())
    except (LookupError, RuntimeError) as exc:  # unknown session, or a compaction that changed nothing
        fail(str(exc))
    if not result.compacted:
        print(f"nothing to compact in {session_id}")
        return
    print(f"compacted {session_id}: {result.replaced_rows} rows replaced by a summary, {result.kept_rows} kept")


@sessions_app.command("delete")
def sessions_delete(ctx: typer.Context, session_id: str) -> None:
    """Delete a session and its transcript (its trace file stays)."""
    from atomic_agent.api import SessionNotFoundError

    try:
        _store(ctx).delete(session_id)
    except SessionNotFoundError as exc:
        fail(str(exc))
    print(f"deleted {session_id}")
