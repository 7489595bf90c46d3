"""A ToolContext and RuntimeView for calling a tool directly in a test."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.app_config import AppConfig
from atomic_agent.hook_records import ToolContext
from atomic_agent.plugin_host.service_registry import NO_DEFAULT, ServiceNotFoundError


@attrs.define
class TestRuntimeView:
    """The registration-time part of a RuntimeView — config (loaded from `state_dir` with
    default blocks), state dir, services — for calling a plugin's hook or tool factory
    directly. The members a turn needs (gate, sessions, provider, turns) are absent: a test
    that needs them builds a real runtime with `runtime_for_test`."""

    config: AppConfig
    state_dir: Path
    provided: dict[str, Any] = attrs.field(factory=dict, alias="services")

    __test__ = False  # not a pytest test class

    def service(self, name: str, default: Any = NO_DEFAULT) -> Any:
        if name in self.provided:
            return self.provided[name]
        if default is NO_DEFAULT:
            raise ServiceNotFoundError(f"no service {name!r} in this test view (give it in `services`)")
        return default

    def services(self, name: str) -> list[Any]:
        return [self.provided[name]] if name in self.provided else []


def make_runtime_view(state_dir: Path, services: Mapping[str, Any] | None = None) -> TestRuntimeView:
    from atomic_agent.config.config_file import load_config

    state_dir.mkdir(parents=True, exist_ok=True)
    return TestRuntimeView(load_config(state_dir, {}, environ={}), state_dir, dict(services or {}))


def make_tool_context(working_dir: Path, *, approve: bool = True, session_id: str = "test-session",
                      state_dir: Path | None = None) -> ToolContext:
    """A context whose approval requests are answered `approve` without asking anyone."""

    async def request_approval(category: str, summary: str, **_binding: object) -> bool:
        return approve

    return ToolContext(session_id=session_id, working_dir=working_dir, state_dir=state_dir or working_dir,
                       cancelled=asyncio.Event(), request_approval=request_approval)
