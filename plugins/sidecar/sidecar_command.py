"""`atomic-agent sidecar`: speak the NDJSON protocol on stdin/stdout for a desktop host."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from atomic_agent.api import current_cli_state

TRACING_ENV = "ATOMIC_AGENT_TRACING"


def sidecar_command(
    ctx: typer.Context,
    trace: bool = typer.Option(False, "--trace", help="Write per-session traces (off by default in sidecar mode; "
                               "the host may also opt in with hello {\"tracing\": true} or ATOMIC_AGENT_TRACING)."),
    no_approval: bool = typer.Option(False, "--no-approval", help="Full trust (level 5) for this process only."),
    cwd: Path = typer.Option(None, "--cwd", help="Working directory of new sessions (default: current)."),
) -> None:
    from atomic_agent.plugins.sidecar.sidecar_main import run_sidecar

    boot_context = current_cli_state(ctx).require()
    # tracing stays off unless the host asked for it: a flag, or an explicit env setting
    tracing = trace or TRACING_ENV in os.environ
    code = run_sidecar(boot_context, tracing=tracing, no_approval=no_approval,
                       working_dir=(cwd or Path.cwd()).resolve())
    raise typer.Exit(code)
