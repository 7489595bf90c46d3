"""`atomic-agent serve`: the OpenAI-compatible HTTP server over the agent runtime."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail


def local_api_key(state_dir: Path, required: bool, key_env: str) -> str | None:
    """The generated key when none is configured (None when serve.requireApiKey is false):
    any user of this machine can reach a loopback port, only this user can read the key."""
    from atomic_agent.plugins.serve.client_identity import api_key_path, ensure_api_key

    path = api_key_path(state_dir)
    if not required:
        print(f"atomic-agent serve: WARNING: serve.requireApiKey is false and {key_env} is not set: every user of "
              "this machine can drive this agent through its port (its tools, files and approvals). Remove "
              "requireApiKey to require a key", file=sys.stderr)
        return None
    key, created = ensure_api_key(state_dir)
    if created:
        print(f"atomic-agent serve: generated an API key; clients send 'Authorization: Bearer {key}'. It is shown "
              f"this once and kept (mode 0600) in {path}", file=sys.stderr)
    else:
        print(f"atomic-agent serve: clients send 'Authorization: Bearer <key>' with the key in {path} (or set "
              f"{key_env})", file=sys.stderr)
    return key


def serve_command(
    ctx: typer.Context,
    host: str = typer.Option(None, "--host", help="Address to bind (default: serve.host, 127.0.0.1). A "
                             "non-loopback address needs an API key (serve.apiKeyEnv)."),
    port: int = typer.Option(None, "--port", help="Port to bind (default: serve.port, 8765)."),
    no_approval: bool = typer.Option(False, "--no-approval", help="Full trust (level 5) for this process only."),
    cwd: Path = typer.Option(None, "--cwd", help="Working directory of new sessions (default: current)."),
) -> None:
    import asyncio

    from atomic_agent.plugins.serve.bind_policy import bind_problem, is_loopback
    from atomic_agent.plugins.serve.client_identity import ensure_operator_token, operator_token_path
    from atomic_agent.plugins.serve.serve_config import SERVE_BLOCK
    from atomic_agent.plugins.serve.serve_runner import default_settings, serve_forever

    boot_context = current_cli_state(ctx).require()
    block = boot_context.config.blocks.get(SERVE_BLOCK)
    host = host or (block.host if block else "127.0.0.1")
    port = port if port is not None else (block.port if block else 8765)
    if not 0 < port < 65536:
        fail(f"--port must be 1..65535, got {port}")
    key_env = block.api_key_env if block else "ATOMIC_AGENT_API_KEY"
    api_key = os.environ.get(key_env) or None
    problem = bind_problem(host, api_key, key_env)
    if problem:
        fail(problem)
    if api_key is None:
        api_key = local_api_key(boot_context.state_dir, block.require_api_key if block else True, key_env)
    token = ensure_operator_token(boot_context.state_dir)
    print(f"atomic-agent serve: approvals can be answered from any surface that sends X-Atomic-Operator with the "
          f"token in {operator_token_path(boot_context.state_dir)}", file=sys.stderr)
    settings = default_settings(boot_context.config, api_key, (cwd or Path.cwd()).resolve(), is_loopback(host),
                                token)
    try:
        asyncio.run(serve_forever(boot_context, settings, host, port, no_approval=no_approval))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc}")
