"""Run `atomic-agent ...` in-process with the memory and metrics command plugins registered."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import attrs
from typer.testing import CliRunner

from atomic_agent.cli.cli_state import CliState
from atomic_agent.cli.main import build_app
from atomic_agent.runtime.boot_context import boot
from atomic_agent.testing.runtime_kit import fresh_plugin_host

COMMAND_PLUGINS = ("memory", "metrics", "memory_notes", "memory_profile")


@attrs.frozen
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(state_dir: Path, *args: str, plugins: tuple[str, ...] = ()) -> CliResult:
    host = fresh_plugin_host()
    for name in dict.fromkeys([*COMMAND_PLUGINS, *plugins]):
        host.register(importlib.import_module(f"atomic_agent.plugins.{name}"), name)
    ctx = boot(state_dir, environ={}, host=host)
    app = build_app(CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir))
    result = CliRunner().invoke(app, ["--state-dir", str(state_dir), *args])  # type: ignore[arg-type]
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return CliResult(result.exit_code, result.stdout, result.stderr)
