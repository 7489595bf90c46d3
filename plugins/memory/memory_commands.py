"""Memory commands over `<state>/memory.sqlite` (the same stores the agent uses)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

memory_app = typer.Typer(no_args_is_help=True)
JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of a table.")


@contextmanager
def _database(ctx: typer.Context, create: bool = False) -> Iterator[Any]:
    """The open database, or None when it does not exist yet and `create` is off."""
    from .memory_database import MemoryDatabase, memory_db_path
    from .memory_errors import MemoryStoreError

    path = memory_db_path(current_cli_state(ctx).require().state_dir)
    if not path.exists() and not create:
        yield None
        return
    try:
        database = MemoryDatabase.open(path)
    except MemoryStoreError as exc:
        fail(str(exc))
    try:
        yield database
    except MemoryStoreError as exc:
        fail(str(exc))
    finally:
        database.close()


def _profile_store(database: Any) -> Any:
    from .profile_store import ProfileStore

    return ProfileStore(database)


def _note_store(ctx: typer.Context, database: Any) -> Any:
    from .note_store import NoteStore

    blocks = current_cli_state(ctx).config.blocks
    cfg = blocks.get("memoryNotes")
    # the configured cap: `memory add` evicts the oldest notes past it, as the agent's store does
    return NoteStore(database, max_entries=getattr(cfg, "max_entries", 1000))


def _preview(text: str, chars: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


@memory_app.command("profile")
def profile_command(ctx: typer.Context, history: str = typer.Option(None, "--history", metavar="KEY",
                                                                    help="Every version of one key, oldest first."),
                    include_superseded: bool = typer.Option(False, "--all", help="Superseded versions too."),
                    json_out: bool = JSON_OPT) -> None:
    """The active profile facts (what `### profile` draws from) with their vote scores: a fact
    at or below -memoryProfile.voteFilterThreshold is kept but no longer shown to the model."""
    with _database(ctx) as database:
        if database is None:
            facts = []
        else:
            store = _profile_store(database)
            if history:
                facts = store.history(history)
                if not facts:
                    fail(f"no profile history for {history!r}; `atomic-agent memory profile` lists the keys")
            else:
                facts = store.all_rows() if include_superseded else store.list()
        rows = [{**f.to_json(), "voteScore": round(f.vote_score, 3)} for f in facts]
    if json_out:
        print_json(rows)
        return
    print_table(["id", "key", "value", "pinned", "keywords", "valid from", "votes", "state"],
                [[r["id"], r["key"], _preview(r["value"], 60), "yes" if r["pinned"] else "no", ",".join(r["keywords"]),
                  r["validFrom"][:19], f"{r['voteScore']:+g}" if r["voteScore"] else "0",
                  "active" if r["active"] else f"→ #{r['supersededBy']}"] for r in rows])


@memory_app.command("notes")
def notes_command(ctx: typer.Context, limit: int = typer.Option(50, "--limit", min=1),
                  json_out: bool = JSON_OPT) -> None:
    """The most recently updated notes, newest first."""
    with _database(ctx) as database:
        notes = [] if database is None else _note_store(ctx, database).recent(limit)
        total = 0 if database is None else _note_store(ctx, database).count()
    if json_out:
        print_json({"total": total, "notes": [n.to_json() for n in notes]})
        return
    print_table(["id", "tags", "source", "updated", "content"],
                [[f"#{n.id}", ",".join(n.tags), n.source, n.to_json()["updatedAt"][:19], _preview(n.content)]
                 for n in notes])
    print(f"{len(notes)} of {total} notes")


def relevance(scores: list[float]) -> list[float]:
    """Each hit's match as a share of the best hit's (1.0 = the best; higher is better).

    Recall scores are BM25 in SQLite's sign (lower, more negative, is better) or minus a fused
    score: a number only the ranking can read. Divided by the best one, they read as "how good
    a match, next to the top hit"."""
    best = min(scores, default=0.0)
    if best >= 0:
        return [1.0 for _ in scores]
    return [max(0.0, min(1.0, score / best)) for score in scores]


@memory_app.command("search")
def search_command(ctx: typer.Context, query: str, k: int = typer.Option(10, "-k", "--k", min=1, max=200),
                   json_out: bool = JSON_OPT) -> None:
    """Full-text search over notes, ranked by BM25 (the recall the agent uses). `match` is each
    hit's relevance next to the best hit (100% = the best)."""
    with _database(ctx) as database:
        hits = [] if database is None else _note_store(ctx, database).recall(query, k)
    shares = relevance([h.score for h in hits])
    if json_out:
        print_json([{**h.note.to_json(), "relevance": round(share, 4), "score": round(h.score, 4)}
                    for h, share in zip(hits, shares, strict=True)])
        return
    if not hits:
        print(f"no note matches {query!r}")
        return
    print_table(["id", "match", "tags", "content"],
                [[f"#{h.note.id}", f"{share:.0%}", ",".join(h.note.tags), _preview(h.note.content)]
                 for h, share in zip(hits, shares, strict=True)])


@memory_app.command("add")
def add_command(ctx: typer.Context, content: str = typer.Argument(..., help="The note's text."),
                tag: list[str] = typer.Option([], "--tag", "-t", help="A tag (repeatable), e.g. --tag deploy."),
                json_out: bool = JSON_OPT) -> None:
    """Store a note, as the agent's memory.notes.store does (source `cli`): recall finds it next turn."""
    from .memory_errors import MemoryValidationError

    with _database(ctx, create=True) as database:
        try:
            outcome = _note_store(ctx, database).store(content, tag, source="cli")
        except MemoryValidationError as exc:
            fail(str(exc))
    note = outcome.note
    if json_out:
        print_json({**note.to_json(), "evicted": list(outcome.evicted)})
        return
    evicted = f"; the oldest note(s) {', '.join(f'#{i}' for i in outcome.evicted)} made room" if outcome.evicted else ""
    print(f"stored #{note.id}" + (f" [{', '.join(note.tags)}]" if note.tags else "") + evicted)


@memory_app.command("forget")
def forget_command(ctx: typer.Context, note_ids: list[str] = typer.Argument(None, metavar="[NOTE_ID]...",
                                                                            help="Note ids such as 42 or #42."),
                   profile_key: list[str] = typer.Option(None, "--profile", metavar="KEY",
                                                         help="Forget the active value of a profile fact."),
                   json_out: bool = JSON_OPT) -> None:
    """Delete notes by id and/or the active value of profile facts (their history stays)."""
    ids: list[int] = []
    for raw in note_ids or []:
        text = raw.strip().lstrip("#")
        if not text.isdigit():
            fail(f"{raw!r} is not a note id; pass numbers such as 42 or #42")
        ids.append(int(text))
    if not ids and not profile_key:
        fail("nothing to forget: pass note ids, or --profile KEY")
    result: dict[str, Any] = {"notes": {}, "profile": {}}
    with _database(ctx) as database:
        if database is None:
            fail("there is no memory database yet, so there is nothing to forget")
        notes = _note_store(ctx, database)
        for note_id in ids:
            result["notes"][str(note_id)] = notes.forget(note_id)
        profile = _profile_store(database)
        for key in profile_key or []:
            result["profile"][key] = profile.remove(key)
    missing = [f"#{k}" for k, ok in result["notes"].items() if not ok]
    missing += [k for k, ok in result["profile"].items() if not ok]
    if json_out:
        print_json({**result, "missing": missing})
    else:
        for k, ok in result["notes"].items():
            print(f"#{k}: {'forgotten' if ok else 'no such note'}")
        for k, ok in result["profile"].items():
            print(f"{k}: {'forgotten (history kept)' if ok else 'no active fact'}")
    if missing:
        raise typer.Exit(1)


OUTPUT_OPT = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout.")


@memory_app.command("export")
def export_command(ctx: typer.Context, output: Path = OUTPUT_OPT) -> None:
    """Everything in memory.sqlite as one JSON document (profile history included)."""
    with _database(ctx) as database:
        if database is None:
            body: dict[str, Any] = {"profile": [], "notes": [], "links": []}
        else:
            from .link_store import LinkStore

            body = {"profile": [f.to_json() for f in _profile_store(database).all_rows()],
                    "notes": [n.to_json() for n in _note_store(ctx, database).all_notes()],
                    "links": [link.to_json() for link in LinkStore(database).all_links()]}
    if output is None:
        print_json(body)
        return
    from atomic_agent.api import write_atomic

    write_atomic(output, json.dumps(body, indent=2, ensure_ascii=False) + "\n", mode=0o600)
    print(f"wrote {len(body['profile'])} profile rows and {len(body['notes'])} notes to {output}")


@memory_app.command("phases")
def phases_command(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Which memory phases the loaded plugins declare, on or off, with their main settings."""
    from .phase_switches import phase_switches

    rows = phase_switches(current_cli_state(ctx).config.blocks)
    if json_out:
        print_json(rows)
        return
    print_table(["phase", "config block", "state", "settings"],
                [[r["phase"], r["block"], r["state"], ", ".join(f"{k}={v}" for k, v in r["settings"].items())]
                 for r in rows])


@memory_app.command("links")
def links_command(ctx: typer.Context, note: str = typer.Option(None, "--note", metavar="ID",
                                                               help="Only the links touching this note."),
                  limit: int = typer.Option(50, "--limit", min=1), json_out: bool = JSON_OPT) -> None:
    """The link graph between notes (newest first), as the link generator or a tool wrote it."""
    from .link_store import LinkStore

    note_id = None
    if note is not None:
        text = note.strip().lstrip("#")
        if not text.isdigit():
            fail(f"{note!r} is not a note id; pass a number such as 42 or #42")
        note_id = int(text)
    with _database(ctx) as database:
        if database is None:
            links, total, previews = [], 0, {}
        else:
            store = LinkStore(database)
            links = store.links_of(note_id) if note_id is not None else store.all_links(limit)
            total = store.count()
            notes = _note_store(ctx, database)
            ids = {i for link in links for i in (link.from_id, link.to_id)}
            previews = {i: _preview(n.content, 40) for i in ids if (n := notes.get(i)) is not None}
    if json_out:
        print_json({"total": total, "links": [link.to_json() for link in links]})
        return
    print_table(["from", "kind", "to", "source", "created"],
                [[f"#{k.from_id} {previews.get(k.from_id, '')}", k.kind, f"#{k.to_id} {previews.get(k.to_id, '')}",
                  k.source, str(k.to_json()["createdAt"])[:19]] for k in links])
    print(f"{len(links)} of {total} links")


lessons_app = typer.Typer(no_args_is_help=True, help="Lessons the agent learned: list, show, deprecate.")
memory_app.add_typer(lessons_app, name="lessons")


def _lesson_store(database: Any) -> Any:
    from .lesson_store import LessonStore

    return LessonStore(database)


def _lesson_id(raw: str) -> int:
    text = raw.strip().lstrip("*#")
    if not text.isdigit() or int(text) < 1:
        fail(f"{raw!r} is not a lesson id; use the number `memory lessons list` shows, e.g. 3 or *3")
    return int(text)


@lessons_app.command("list")
def lessons_list(ctx: typer.Context, status: str = typer.Option(None, "--status",
                                                                help="candidate, active, deprecated or superseded."),
                 limit: int = typer.Option(50, "--limit", min=1), json_out: bool = JSON_OPT) -> None:
    """Lessons, most recently changed first."""
    from .lesson_store import LESSON_STATES

    if status is not None and status not in LESSON_STATES:
        fail(f"--status must be one of {', '.join(LESSON_STATES)}, got {status!r}")
    with _database(ctx) as database:
        lessons = [] if database is None else _lesson_store(database).list(status, limit)
    if json_out:
        print_json([x.to_json() for x in lessons])
        return
    print_table(["id", "status", "votes", "tags", "trigger"],
                [[f"*{x.id}", x.status, f"+{x.success_count}/-{x.failure_count}", ",".join(x.tags),
                  _preview(x.trigger, 70)] for x in lessons])


@lessons_app.command("show")
def lessons_show(ctx: typer.Context, lesson_id: str, json_out: bool = JSON_OPT) -> None:
    """One lesson in full: trigger, advice, evidence (a deleted evidence note is marked), lifecycle."""
    number = _lesson_id(lesson_id)
    with _database(ctx) as database:
        store = None if database is None else _lesson_store(database)
        lesson = None if store is None else store.get(number)
        if store is None or lesson is None:
            fail(f"no lesson *{number}; `atomic-agent memory lessons list` shows them", code=1)
        missing = store.missing_evidence(lesson)
    if json_out:
        print_json({**lesson.to_json(), "missingEvidence": list(missing)})
        return
    evidence = ", ".join(f"#{i}" + (" (deleted)" if i in missing else "") for i in lesson.evidence) or "none"
    data = lesson.to_json()
    print(f"lesson *{lesson.id}: {lesson.status}" + (f" ({lesson.status_reason})" if lesson.status_reason else ""))
    print(f"when:     {lesson.trigger}\nadvice:   {lesson.advice}\nevidence: {evidence}")
    print(f"votes:    +{lesson.success_count} / -{lesson.failure_count} (score {lesson.vote_score:g})")
    print(f"valid:    {data['validFrom'][:19]} .. {(data['validTo'] or 'now')[:19]}")
    print(f"source:   {lesson.source}" + (f", from turn {lesson.origin}" if lesson.origin else ""))


@lessons_app.command("deprecate")
def lessons_deprecate(ctx: typer.Context, lesson_id: str,
                      reason: str = typer.Option("manual", "--reason", help="Kept with the lesson's history.")) -> None:
    """Retire a live lesson: it leaves ### lessons and recall, and stays readable by id."""
    number = _lesson_id(lesson_id)
    with _database(ctx) as database:
        store = None if database is None else _lesson_store(database)
        lesson = None if store is None else store.get(number)
        if store is None or lesson is None:
            fail(f"no lesson *{number}; `atomic-agent memory lessons list` shows them", code=1)
        if not store.deprecate(number, " ".join(reason.split())[:200] or "manual"):
            fail(f"lesson *{number} is already {lesson.status}; only candidate or active lessons can be deprecated",
                 code=1)
    print(f"deprecated *{number}")
