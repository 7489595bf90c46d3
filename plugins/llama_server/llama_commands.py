"""`atomic-agent llama install|start|stop|status|logs`: the managed local llama-server.

The runtime never starts llama-server itself (it only connects); this command group is
the whole managed-mode lifecycle. Heavy modules are imported inside the commands.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from atomic_agent.api import current_cli_state, fail, print_json

from .command_context import llama_settings, vision_enabled

llama_app = typer.Typer(no_args_is_help=True, help="Install, start, stop and inspect the local llama-server.")


def _note(message: str) -> None:
    print(f"llama: {message}", file=sys.stderr, flush=True)


@llama_app.command("install")
def install_command(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print where things are as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show all pip and cmake output, not only progress."),
    portable: bool = typer.Option(False, "--portable", help="Build the portable variant (instruction sets named "
                                  "explicitly, AMX off) even where the native one would be tried first."),
    native: bool = typer.Option(False, "--native", help="Build the native variant (-march=native), even on a CPU "
                                "where it is known to crash."),
    embeddings: Optional[bool] = typer.Option(None, "--embeddings/--no-embeddings",
                                              help="Also fetch the embedding model (default: llama.embeddings.enabled)."),
) -> None:
    """Build llama-server for this machine (once), prove it by decoding on the starter model,
    and fetch the starter model (and the embedding model, for hybrid memory recall)."""
    from atomic_agent.api import resolve_cache_dir

    from .binary_build import install_llama_server, is_progress_line
    from .build_variant import AUTO, NATIVE, PORTABLE
    from .llama_binary import binary_version, installed_build, resolve_binary
    from .llama_errors import LlamaServerError
    from .starter_model import STARTER_MODEL_ID, ensure_starter_model, starter_model_path, starter_model_present

    if portable and native:
        fail("--portable and --native exclude each other; pass one of them (or neither for the automatic choice)")
    choice = PORTABLE if portable else NATIVE if native else AUTO
    cfg, _state_dir = llama_settings(ctx)
    cache = resolve_cache_dir()

    def show(line: str) -> None:
        if verbose or is_progress_line(line):
            print(line[:160], file=sys.stderr, flush=True)

    had_model = starter_model_present(starter_model_path(cache))
    before = None if cfg.binary else installed_build(cache)
    try:
        model = ensure_starter_model(cache, on_line=show if verbose else None)
        if cfg.binary:
            binary = resolve_binary(cfg.binary, cache)
            build = None
        else:
            build = install_llama_server(cache, model, choice=choice, on_step=_note, on_line=show)
            binary = build.binary
    except LlamaServerError as exc:
        fail(str(exc))
    embedding_model = None
    if cfg.embeddings.enabled if embeddings is None else embeddings:
        from .embedding_model import ensure_embedding_model

        try:
            embedding_model = ensure_embedding_model(cache, on_line=show if verbose else None)
        except LlamaServerError as exc:
            fail(str(exc))
    built_now = build is not None and (before is None or before.binary != build.binary
                                       or before.installed_at != build.installed_at)
    info: dict[str, object] = {
        "binary": str(binary), "binarySource": "llama.binary" if cfg.binary else "cache",
        "binaryVersion": build.binary_version if build else binary_version(binary),
        "binaryWasPresent": not built_now, "model": str(model), "modelId": STARTER_MODEL_ID,
        "modelWasPresent": had_model, "cacheDir": str(cache),
        "embeddingModel": str(embedding_model) if embedding_model else None,
        "build": build.to_json() if build else None}
    if json_out:
        print_json(info)
        return
    print(f"llama-server: {binary}" + (" (built now)" if built_now else ""))
    print(f"  version:    {info['binaryVersion']}")
    if build is not None:
        print(f"  variant:    {build.variant.describe()}")
        print(f"  why:        {build.variant.reason}")
        print(f"  proof:      {build.proof}")
    else:
        print("  variant:    set by llama.binary (not built or proven by atomic-agent)")
    print(f"model:        {model}" + ("" if had_model else " (downloaded now)"))
    print(f"  id:         {STARTER_MODEL_ID}")
    if embedding_model is not None:
        print(f"embedding model: {embedding_model}")
    print("next: atomic-agent llama start")


@llama_app.command("start")
def start_command(
    ctx: typer.Context,
    port: Optional[int] = typer.Option(None, "--port", min=1, max=65535, help="Port to listen on (default: llama.port, 19091)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model id or GGUF path (default: llama.model)."),
    timeout: float = typer.Option(120.0, "--timeout", min=1.0, help="Seconds to wait for /health."),
    json_out: bool = typer.Option(False, "--json", help="Print the status as JSON."),
    embeddings: Optional[bool] = typer.Option(None, "--embeddings/--no-embeddings",
                                              help="Also start the embedding daemon (default: llama.embeddings.enabled)."),
) -> None:
    """Start llama-server in the background, wait until it is healthy, print its status.

    With llama.embeddings.enabled (or --embeddings) a second server, started with
    `--embeddings`, follows the chat server: the chat server is primary (when it fails,
    nothing else starts), the embedding one optional (when it fails, the chat server stays
    up and memory recall runs on full-text search alone)."""
    from atomic_agent.api import resolve_cache_dir

    from .llama_config import MODE_EXTERNAL, effective_llama_url
    from .llama_errors import LlamaServerError
    from .server_launch import launch_spec_from_config, start_server
    from .server_process import ServerPaths
    from .server_status import managed_status

    cfg, state_dir = llama_settings(ctx)
    paths = ServerPaths.for_state_dir(state_dir)
    try:
        spec = launch_spec_from_config(cfg, state_dir, resolve_cache_dir(), port=port, model=model,
                                       vision=vision_enabled(current_cli_state(ctx).config))
        outcome = start_server(spec, paths, timeout_s=timeout)
    except LlamaServerError as exc:
        fail(str(exc))
    if outcome.already_running:
        _note(f"already running (pid {outcome.pid}); `atomic-agent llama stop` first to change its settings")
    url, mode = effective_llama_url(cfg)
    if mode == MODE_EXTERNAL:
        _note(f"llama.url is set, so the runtime connects to {url}, not to this server")
    elif port is not None and port != cfg.port:
        _note(f"the runtime connects to llama.port {cfg.port}; set llama.port (or ATOMIC_AGENT_LLAMA_PORT) "
              f"to {port} to use this server")
    status = managed_status(cfg, state_dir)
    embedding: dict[str, object] | None = None
    if cfg.embeddings.enabled if embeddings is None else embeddings:
        embedding = _start_embedding_daemon(cfg, state_dir, timeout)
    if json_out:
        print_json({**status.to_json(), "embedding": embedding})
        return
    _print_status(status, False)
    if embedding is not None:
        _print_embedding(embedding)


def _start_embedding_daemon(cfg: object, state_dir: object, timeout: float) -> dict[str, object]:
    """Start the second daemon; a failure is reported, never raised (the chat server stays up)."""
    from atomic_agent.api import resolve_cache_dir

    from .llama_errors import LlamaServerError
    from .server_launch import embedding_launch_spec, start_server
    from .server_process import ServerPaths

    paths = ServerPaths.for_embeddings(state_dir)  # type: ignore[arg-type]
    try:
        spec = embedding_launch_spec(cfg, state_dir, resolve_cache_dir(), on_line=_note)  # type: ignore[arg-type]
        outcome = start_server(spec, paths, timeout_s=timeout)
    except (LlamaServerError, OSError) as exc:
        _note(f"the embedding daemon did not start, so memory recall uses full-text search only: {exc}")
        return {"running": False, "error": str(exc), "logFile": str(paths.log_file)}
    if outcome.already_running:
        _note(f"embedding daemon already running (pid {outcome.pid})")
    return {"running": True, "pid": outcome.pid, "url": outcome.base_url, "model": str(spec.model),
            "health": outcome.snapshot.health, "logFile": str(paths.log_file)}


def _print_embedding(embedding: dict[str, object]) -> None:
    print(f"embedding daemon: {'running' if embedding.get('running') else 'not running'}")
    for key in ("url", "pid", "model", "health", "error", "logFile"):
        if embedding.get(key) is not None:
            print(f"  {key + ':':<12}{embedding[key]}")


@llama_app.command("stop")
def stop_command(ctx: typer.Context) -> None:
    """Stop the managed llama-server and its embedding daemon (SIGTERM, then SIGKILL after a
    grace period). Both pid files are always tried, so a half-started pair is cleaned up."""
    from .llama_errors import LlamaServerError
    from .server_process import ServerPaths, stop_recorded_server

    _cfg, state_dir = llama_settings(ctx)
    failures: list[str] = []
    for label, paths in (("llama-server", ServerPaths.for_state_dir(state_dir)),
                         ("embedding daemon", ServerPaths.for_embeddings(state_dir))):
        try:
            record = stop_recorded_server(paths)
        except LlamaServerError as exc:
            failures.append(str(exc))
            continue
        if record is not None:
            print(f"stopped {label} (pid {record.pid})")
        elif label == "llama-server":
            print("llama-server is not running")
    if failures:
        fail("\n".join(failures))


@llama_app.command("status")
def status_command(ctx: typer.Context,
                   json_out: bool = typer.Option(False, "--json", help="Print the status as JSON.")) -> None:
    """Running or stopped, pid, URL, health, model, context per slot and slot count."""
    from .server_status import embedding_daemon_status, server_status

    cfg, state_dir = llama_settings(ctx)
    status = server_status(cfg, state_dir)
    embedding = embedding_daemon_status(cfg, state_dir)
    if json_out:
        print_json({**status.to_json(), "embedding": embedding})
        return
    _print_status(status, False)
    if embedding["enabled"] or embedding["running"]:
        _print_embedding(embedding)


@llama_app.command("logs")
def logs_command(ctx: typer.Context,
                 lines: int = typer.Option(40, "-n", "--lines", min=0, help="How many lines from the end.")) -> None:
    """Print the end of the managed server's log."""
    from .server_process import ServerPaths, log_tail

    _cfg, state_dir = llama_settings(ctx)
    paths = ServerPaths.for_state_dir(state_dir)
    if not paths.log_file.exists():
        fail(f"there is no llama-server log yet ({paths.log_file}). Start the server with `atomic-agent llama start`.")
    for line in log_tail(paths.log_file, lines):
        print(line)


def _print_status(status: object, json_out: bool) -> None:
    from .server_status import ServerStatus

    assert isinstance(status, ServerStatus)
    if json_out:
        print_json(status.to_json())
        return
    state = "running" if status.running else "stopped"
    print(f"llama-server: {state} ({status.mode})")
    rows = [("url", status.url), ("pid", status.pid), ("health", status.health), ("model", status.model),
            ("n_ctx/slot", status.n_ctx), ("slots", status.total_slots), ("threads", status.threads),
            ("log", status.log_file),
            ("build", status.build or None), ("why", status.build_reason or None)]
    for label, value in rows:
        if value is not None:
            print(f"  {label + ':':<12}{value}")
    if status.prompt_cache is not None:
        print(f"  {'prompts:':<12}{status.prompt_cache.sentence()}")
    if status.detail and (status.health != "ok" or status.pid is None) and status.running:
        print(f"  {'detail:':<12}{status.detail}")
