"""`atomic-agent trace list|show|export|replay`: read the per-session NDJSON traces."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

trace_app = typer.Typer(no_args_is_help=True)

EXPORT_FORMATS = ("ndjson", "json")
EXIT_DRIFT = 1


def _state_dir(ctx: typer.Context) -> Path:
    return current_cli_state(ctx).require().state_dir


def _find(state_dir: Path, session_id: str) -> Path:
    from atomic_agent.api import trace_files

    from .trace_reader import find_trace

    try:
        return find_trace(state_dir, session_id)
    except trace_files.TraceError as exc:
        fail(str(exc))
        raise AssertionError("unreachable: fail() exits") from exc


def _read_events(path: Path) -> list[dict[str, Any]]:
    from .trace_reader import read_trace

    contents = read_trace(path)
    if contents.unreadable_lines:
        shown = ", ".join(str(n) for n in contents.unreadable_lines[:10])
        more = "…" if len(contents.unreadable_lines) > 10 else ""
        print(f"atomic-agent: skipped {len(contents.unreadable_lines)} unreadable line(s) of {path}: "
              f"{shown}{more}", file=sys.stderr)
    return contents.events


@trace_app.command("list")
def trace_list_command(
    ctx: typer.Context,
    limit: int = typer.Option(20, "--limit", min=1, help="Show at most N traces (newest first)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The most recent trace files: session id, events, size, last write."""
    from atomic_agent.api import trace_files

    from .trace_reader import list_traces

    state_dir = _state_dir(ctx)
    traces = list_traces(state_dir, limit=limit)
    if json_out:
        print_json([t.to_json() for t in traces])
        return
    if not traces:
        folder = trace_files.TraceFiles(state_dir).folder
        print(f"no traces in {folder} yet (tracing.enabled decides whether runs record one)")
        return
    rows = [[t.session_id, t.event_count, _human_size(t.size_bytes),
             t.modified_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")] for t in traces]
    print_table(["session", "events", "size", "modified"], rows)


@trace_app.command("show")
def trace_show_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id (or a unique prefix of one)."),
    step: int | None = typer.Option(None, "--step", help="Only the events of step N (of every turn, unless --turn)."),
    turn: int | None = typer.Option(None, "--turn", help="Only the events of turn N."),
    raw: bool = typer.Option(False, "--raw", help="Print full prompt tails, completions, args and details."),
    json_out: bool = typer.Option(False, "--json", help="Print the selected events as a JSON array."),
) -> None:
    """Pretty-print a session's chronology; long texts are summarised unless --raw."""
    from .step_attribution import attribute_steps
    from .trace_chronology import build_chronology, render_chronology, summarise_trace

    path = _find(_state_dir(ctx), session_id)
    events = _read_events(path)
    selected = [e for pos, e in attribute_steps(events) if pos.matches(step, turn)]
    if not selected and (step is not None or turn is not None):
        fail(f"session {path.stem!r} has no events for {_filter_label(step, turn)}; steps recorded: "
             f"{_recorded_steps(events) or 'none'}")
    if json_out:
        print_json(selected)
        return
    summary = summarise_trace(events)
    print(f"session {path.stem}: {summary.event_count} events, {summary.turns} turns, {summary.steps} steps, "
          f"{summary.tool_invocations} tool calls, {summary.errors} errors"
          f"{', TRUNCATED' if summary.truncated else ''}  ({summary.first_ts} .. {summary.last_ts})")
    print(render_chronology(build_chronology(events, raw=raw, step=step, turn=turn)))


@trace_app.command("export")
def trace_export_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id (or a unique prefix of one)."),
    fmt: str = typer.Option("ndjson", "--format", help="ndjson (the file as-is) or json (one array)."),
) -> None:
    """Dump a trace to stdout, byte for byte (ndjson) or as a JSON array (json)."""
    if fmt not in EXPORT_FORMATS:
        fail(f"--format {fmt!r} is not supported; use one of: {', '.join(EXPORT_FORMATS)}")
    path = _find(_state_dir(ctx), session_id)
    if fmt == "json":
        print_json(_read_events(path))
        return
    sys.stdout.flush()
    with path.open("rb") as handle:
        shutil.copyfileobj(handle, sys.stdout.buffer)
    sys.stdout.buffer.flush()


@trace_app.command("replay")
def trace_replay_command(
    ctx: typer.Context,
    session_id: str = typer.Argument(..., help="Session id (or a unique prefix of one)."),
    step: int | None = typer.Option(None, "--step", help="Only check step N (of every turn, unless --turn)."),
    turn: int | None = typer.Option(None, "--turn", help="Only check turn N."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    rerun: bool = typer.Option(False, "--rerun", help="Re-execute the whole session against its recorded completions "
                               "and tool results, checking every step's prompt, grammar and decisions."),
) -> None:
    """Rebuild the stable prefix from the current runtime and compare its hash with every recorded step;
    with --rerun, re-execute the session and name the first prompt section or decision that differs.

    Exits 1 when any step drifted (the prompt changed since it was recorded).
    """
    from atomic_agent.api import trace_files

    from .prefix_replay import replay_prefix_drift

    state_dir = _state_dir(ctx)
    path = _find(state_dir, session_id)
    if rerun:
        if step is not None or turn is not None:
            fail("--rerun re-executes the whole session; leave out --step and --turn")
        _rerun(state_dir, path.stem, json_out)
        return
    try:
        report = replay_prefix_drift(state_dir, path.stem, step=step, turn=turn)
    except trace_files.TraceError as exc:
        fail(str(exc))
    if not report.steps:
        what = _filter_label(step, turn) if step is not None or turn is not None else "the session"
        fail(f"no prompt_captured events for {what} in {path}, so there is nothing to compare; "
             "`atomic-agent trace show` lists what was recorded")
    if json_out:
        print_json(report.to_json())
    else:
        print(f"session {report.session_id}: current stable prefix {report.current_hash[:12]}")
        rows = [[f"t{_dash(s.turn_index)}.s{_dash(s.step)}", _dash(s.seq), s.status,
                 (s.recorded_hash or "")[:12]] for s in report.steps]
        print_table(["step", "seq", "status", "recorded"], rows)
        drifted = sum(1 for s in report.steps if s.drifted)
        print(f"{len(report.steps)} prompt(s) checked, {drifted} drifted"
              + ("; the stable prefix changed since recording" if drifted else ""))
    if report.drifted:
        raise typer.Exit(EXIT_DRIFT)


def _rerun(state_dir: Path, session_id: str, json_out: bool) -> None:
    from atomic_agent.api import trace_files, trace_replay

    try:
        report = trace_replay.rerun_trace(state_dir, session_id)
    except trace_files.TraceError as exc:
        fail(str(exc))
    if json_out:
        print_json(report.to_json())
    elif report.first is None:
        print(f"session {report.session_id}: {report.turns} turn(s), {report.steps} step(s) re-run; every prompt, "
              "grammar and decision is byte-identical")
    else:
        print(f"session {report.session_id}: {report.turns} turn(s), {report.steps} step(s) re-run; "
              f"{len(report.drifts)} drifted")
        print(f"first drift: {report.first.describe()}")
        for drift in report.drifts[1:RERUN_DRIFTS_SHOWN]:
            print(f"  then {drift.describe()}")
    if report.drifted:
        raise typer.Exit(EXIT_DRIFT)


RERUN_DRIFTS_SHOWN = 10


def _filter_label(step: int | None, turn: int | None) -> str:
    parts = ([f"turn {turn}"] if turn is not None else []) + ([f"step {step}"] if step is not None else [])
    return " ".join(parts)


def _recorded_steps(events: list[dict[str, Any]]) -> str:
    from .step_attribution import attribute_steps

    seen = sorted({(p.turn_index, p.step) for p, _ in attribute_steps(events) if p.step is not None},
                  key=lambda ts: (ts[0] if ts[0] is not None else -1, ts[1]))
    return ", ".join(f"t{_dash(t)}.s{s}" for t, s in seen)


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 ** 2:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 ** 2:.1f} MiB"
