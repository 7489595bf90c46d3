"""memory.profile.set | remove | list | history as the model calls them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.testing.tool_context_kit import make_tool_context
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime


async def call(runtime: Any, tool: str, args: dict[str, Any], tmp_path: Path) -> Any:
    spec = runtime.registry.get(tool)
    assert spec is not None, f"{tool} is not registered"
    return await spec.run(args, make_tool_context(tmp_path))


async def test_set_then_history_shows_the_chain_oldest_first(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_profile"])
    first = await call(runtime, "memory.profile.set", {"key": "language", "value": "ru"}, tmp_path)
    second = await call(runtime, "memory.profile.set", {"key": "language", "value": "en"}, tmp_path)
    assert first.status == second.status == "ok"
    assert "replaces #1" in second.summary
    history = await call(runtime, "memory.profile.history", {"key": "language"}, tmp_path)
    lines = history.summary.splitlines()
    assert lines[0].startswith("[#1] ") and lines[0].endswith(": ru → #2")
    assert lines[1].startswith(" * [#2] ") and lines[1].endswith(": en (active)")
    assert [row["active"] for row in history.details["history"]] == [False, True]
    await runtime.close()


async def test_setting_the_same_value_again_is_reported_unchanged(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_profile"])
    await call(runtime, "memory.profile.set", {"key": "name", "value": "Alex"}, tmp_path)
    again = await call(runtime, "memory.profile.set", {"key": "name", "value": "Alex"}, tmp_path)
    assert again.summary.startswith("unchanged")
    history = await call(runtime, "memory.profile.history", {"key": "name"}, tmp_path)
    assert len(history.details["history"]) == 1
    await runtime.close()


async def test_list_and_remove(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_profile"])
    await call(runtime, "memory.profile.set",
               {"key": "editor", "value": "helix", "pinned": False, "keywords": ["editor"]}, tmp_path)
    listed = await call(runtime, "memory.profile.list", {}, tmp_path)
    assert "editor: helix [contextual: editor]" in listed.summary
    removed = await call(runtime, "memory.profile.remove", {"key": "editor"}, tmp_path)
    assert removed.status == "ok" and "history is kept" in removed.summary
    missing = await call(runtime, "memory.profile.remove", {"key": "editor"}, tmp_path)
    assert missing.status == "error" and "memory.profile.list" in missing.summary
    assert (await call(runtime, "memory.profile.list", {}, tmp_path)).summary == "no profile facts yet"
    await runtime.close()


async def test_bad_input_is_an_error_result_not_an_exception(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_profile"])
    too_long = await call(runtime, "memory.profile.set", {"key": "bio", "value": "x" * 300}, tmp_path)
    assert too_long.status == "error" and "at most 200" in too_long.summary
    bad_key = await call(runtime, "memory.profile.set", {"key": "my key", "value": "v"}, tmp_path)
    assert bad_key.status == "error" and bad_key.details["errorType"] == "MemoryValidationError"
    unknown = await call(runtime, "memory.profile.history", {"key": "nothing"}, tmp_path)
    assert unknown.status == "error"
    await runtime.close()


def test_descriptors_have_args_schemas_resource_classes_and_tiers(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path, plugins=["memory_profile"])
    specs = {s.name: s for s in runtime.registry.specs() if s.name.startswith("memory.profile.")}
    assert set(specs) == {"memory.profile.set", "memory.profile.remove", "memory.profile.list",
                          "memory.profile.history"}
    assert specs["memory.profile.set"].args_schema["required"] == ["key", "value"]
    assert specs["memory.profile.set"].resource_class.value == "memory_write"
    assert specs["memory.profile.history"].resource_class.value == "pure_read"
    assert specs["memory.profile.set"].tier.value == "frequent"
    assert all(specs[n].tier.value == "rare" for n in ("memory.profile.remove", "memory.profile.list",
                                                        "memory.profile.history"))


def test_switched_off_registers_no_tools_and_no_phase(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path, plugins=["memory_profile"], config={"memoryProfile": {"enabled": False}})
    assert not [s for s in runtime.registry.names() if s.startswith("memory.")]
    assert runtime.memory_phases == []
    assert not (tmp_path / "memory.sqlite").exists()
