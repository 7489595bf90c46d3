"""Build a Runtime with a chosen set of memory plugins (shared by the memory_* test dirs)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import fresh_plugin_host

ALL_MEMORY = ("memory_profile", "memory_notes", "memory_reflection")
# the plugins the memory phases use: `memory` owns memory.sqlite, `metrics` counts
SERVICE_PLUGINS = ("memory", "metrics")


def write_config(state_dir: Path, blocks: Mapping[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "config.json"
    from atomic_agent.config.migrate_config import CONFIG_VERSION

    raw = json.loads(path.read_text()) if path.exists() else {"version": CONFIG_VERSION}
    for key, value in blocks.items():
        raw[key] = {**raw.get(key, {}), **value}
    path.write_text(json.dumps(raw))


def make_memory_runtime(state_dir: Path, provider: Any = None, plugins: Iterable[str] = ALL_MEMORY, *,
                        config: Mapping[str, Any] | None = None, environ: dict[str, str] | None = None) -> Runtime:
    """A runtime whose host has the core, the memory and metrics plugins, plus `plugins`
    (names of `atomic_agent.plugins.*`)."""
    env = dict(environ or {})
    host = fresh_plugin_host(environ=env)
    for name in dict.fromkeys([*SERVICE_PLUGINS, *plugins]):
        host.register(importlib.import_module(f"atomic_agent.plugins.{name}"), name)
    if config:
        write_config(state_dir, config)
    ctx = boot(state_dir, environ=env, host=host)
    return Runtime(ctx, provider=provider, environ=env)


def phase(runtime: Runtime, name: str) -> Any:
    return next(p for p in runtime.memory_phases if p.name == name)


def reflection_runner(runtime: Runtime) -> Any:
    return phase(runtime, "memory-reflection").after_turn.__self__


async def settle(runtime: Runtime) -> None:
    """Wait for the after-turn work scheduled so far (reflections), as an idle user would."""
    import asyncio

    await asyncio.sleep(0)
    await runtime.memory.drain()
