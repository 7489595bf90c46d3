"""`atomic-agent models list|add|use|pull`: the GGUF models the local server can load."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Optional

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

from .command_context import llama_settings

models_app = typer.Typer(no_args_is_help=True, help="List, add, pull and choose local GGUF models.")


@models_app.command("list")
def list_command(ctx: typer.Context,
                 json_out: bool = typer.Option(False, "--json", help="Print the models as JSON.")) -> None:
    """Every registered model; `*` marks the one llama.model selects."""
    from atomic_agent.api import resolve_cache_dir

    from .llama_errors import LlamaServerError
    from .model_registry import list_models

    cfg, state_dir = llama_settings(ctx)
    try:
        models = list_models(state_dir, resolve_cache_dir())
    except LlamaServerError as exc:
        fail(str(exc))
    if json_out:
        print_json([{**m.to_json(), "present": m.present(), "current": m.id == cfg.model} for m in models])
        return
    rows = [("*" if m.id == cfg.model else "", m.id, m.source, "yes" if m.present() else "no",
             _size(m.size_bytes), m.path) for m in models]
    print_table(["", "ID", "SOURCE", "PRESENT", "SIZE", "PATH"], rows)


@models_app.command("add")
def add_command(ctx: typer.Context, path: Path = typer.Argument(..., help="An existing .gguf file."),
                model_id: Optional[str] = typer.Option(None, "--id", help="Id to register it under (default: from the file name).")) -> None:
    """Register a GGUF file that is already on disk (it is not copied)."""
    from atomic_agent.api import resolve_cache_dir

    from .llama_errors import LlamaServerError
    from .model_registry import register_model

    _cfg, state_dir = llama_settings(ctx)
    try:
        entry = register_model(state_dir, resolve_cache_dir(), path, model_id)
    except LlamaServerError as exc:
        fail(str(exc))
    print(f"added {entry.id}: {entry.path}")
    print(f"use it: atomic-agent models use {entry.id}")


@models_app.command("use")
def use_command(ctx: typer.Context, model_id: str = typer.Argument(..., help="A model id from `models list`.")) -> None:
    """Make MODEL_ID the model `llama start` serves (sets llama.model in config.json)."""
    from atomic_agent.api import ConfigError, config_file, read_raw_config, resolve_cache_dir

    from .llama_errors import LlamaServerError
    from .model_registry import find_model

    _cfg, state_dir = llama_settings(ctx)
    boot = current_cli_state(ctx).require()
    try:
        entry = find_model(state_dir, resolve_cache_dir(), model_id)
    except LlamaServerError as exc:
        fail(str(exc))
    if entry is None:
        fail(f"no model with id {model_id!r} is registered. See `atomic-agent models list`; register a file with "
             "`atomic-agent models add PATH --id ID` or download one with `atomic-agent models pull URL`.")
    try:
        raw = read_raw_config(boot.config.path)
        raw = config_file.set_key(raw, "llama.model", model_id)
        config_file.save_raw_config(boot.config.path, raw, boot.config_blocks)
    except ConfigError as exc:
        fail(str(exc))
    print(f"llama.model = {model_id}")
    if not entry.present():
        print(f"note: its file is missing ({entry.path})", file=sys.stderr)
    print("restart the server to load it: atomic-agent llama stop && atomic-agent llama start")


@models_app.command("pull")
def pull_command(ctx: typer.Context, url: str = typer.Argument(..., help="http(s) URL of a .gguf file."),
                 sha256: Optional[str] = typer.Option(None, "--sha256", help="Expected sha256 (64 hex)."),
                 model_id: Optional[str] = typer.Option(None, "--id", help="Id to register it under.")) -> None:
    """Download a GGUF into the cache (resumable), verify it, and register it."""
    from atomic_agent.api import resolve_cache_dir

    from .cache_locations import models_dir
    from .gguf_file import normalise_sha256
    from .llama_errors import LlamaServerError
    from .model_download import pull_model
    from .model_registry import SOURCE_PULLED, register_model, validate_model_id

    _cfg, state_dir = llama_settings(ctx)
    cache = resolve_cache_dir()
    try:
        expected = normalise_sha256(sha256) if sha256 else None
    except ValueError as exc:
        fail(f"--sha256 {exc}.")
    try:
        if model_id:
            validate_model_id(model_id)  # refuse a bad id before a long download
        with _download_progress(url) as on_progress:
            result = pull_model(url, models_dir(cache), sha256=expected, on_progress=on_progress)
        entry = register_model(state_dir, cache, result.path, model_id, source=SOURCE_PULLED,
                               sha256=result.sha256, url=url)
    except LlamaServerError as exc:
        fail(str(exc))
    how = "already downloaded" if result.already_present else (
        f"resumed at {_size(result.resumed_from)}" if result.resumed_from else "downloaded")
    print(f"{how}: {entry.path} ({_size(entry.size_bytes)}, sha256 {entry.sha256})")
    print(f"registered as {entry.id}; use it: atomic-agent models use {entry.id}")


@contextlib.contextmanager
def _download_progress(url: str) -> Iterator[Callable[[int, "int | None"], None]]:
    """A rich progress bar on stderr; yields the callback pull_model reports to."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True)) as progress:
        task = progress.add_task(url.rsplit("/", 1)[-1][:40] or "download", total=None)

        def on_progress(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        yield on_progress


def _size(n: int) -> str:
    if n <= 0:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)
