"""The public test kit builds a real runtime the way a third-party plugin's tests would:
only `atomic_agent.api`, chosen plugins, a config, a scripted provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, ScriptedProvider, ToolResult, ToolSpec, hookimpl, runtime_for_test


class GreeterPlugin:
    def __init__(self) -> None:
        self.greeted: list[str] = []

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        async def greet(args: dict[str, Any], ctx: Any) -> ToolResult:
            self.greeted.append(args["name"])
            return ToolResult.ok(f"hello {args['name']}")

        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
                  "additionalProperties": False}
        return [ToolSpec("greeter.greet", "Greet someone by name.", schema, ResourceClass.PURE_READ, greet)]


def step(*pairs: tuple[str, dict[str, Any]]) -> str:
    return json.dumps([{"tool": tool, "args": args} for tool, args in pairs])


async def test_a_third_party_plugin_runs_in_a_real_turn_through_the_kit(tmp_path: Path) -> None:
    plugin = GreeterPlugin()
    provider = ScriptedProvider([step(("greeter.greet", {"name": "Ada"})), step(("reply", {"text": "greeted"}))])
    runtime = await runtime_for_test(tmp_path / "state", plugins={"greeter": plugin}, provider=provider,
                                     config={"agent": {"maxSteps": 4}})
    try:
        result = await runtime.run_turn("greet Ada")
    finally:
        await runtime.close()
    assert (result.status, result.reply) == ("done", "greeted")
    assert plugin.greeted == ["Ada"]
    assert "hello Ada" in provider.requests[1].prompt  # the tool's result reached the next step


async def test_the_kit_writes_the_config_it_is_given_and_keeps_an_existing_one(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = await runtime_for_test(state, config={"agent": {"maxSteps": 3}})
    await first.close()
    again = await runtime_for_test(state, start=False)  # a restart on the same state dir
    try:
        assert again.config.agent.max_steps == 3
        assert again.registry.get("greeter.greet") is None  # no plugin it was not given
    finally:
        await again.close()
