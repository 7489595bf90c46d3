"""memory.notes.store | recall | forget as the model calls them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.testing.tool_context_kit import make_tool_context
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime


async def call(runtime: Any, tool: str, args: dict[str, Any], wd: Path) -> Any:
    spec = runtime.registry.get(tool)
    assert spec is not None
    return await spec.run(args, make_tool_context(wd, session_id="sess-1"))


async def test_store_then_recall_by_query_and_by_pointer_id(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_notes"])
    stored = await call(runtime, "memory.notes.store", {"content": "CI runs on self-hosted runners",
                                                        "tags": ["ci"]}, tmp_path)
    assert stored.status == "ok" and stored.summary == "stored #1"
    assert stored.details["note"]["sessionId"] == "sess-1"
    by_query = await call(runtime, "memory.notes.recall", {"query": "where does CI run?"}, tmp_path)
    assert by_query.summary == "#1 [ci] CI runs on self-hosted runners"
    for ref in (1, "#1", "1"):
        assert (await call(runtime, "memory.notes.recall", {"id": ref}, tmp_path)).status == "ok"
    miss = await call(runtime, "memory.notes.recall", {"id": "#99"}, tmp_path)
    assert miss.status == "error" and "memory-index" in miss.summary
    metrics = runtime.service("metrics")
    assert metrics.counter_value("agent.memory.notes.recall", source="tool", outcome="hit") == 1
    await runtime.close()


async def test_recall_needs_query_or_id_and_tolerates_fts_syntax(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_notes"])
    assert (await call(runtime, "memory.notes.recall", {}, tmp_path)).status == "error"
    odd = await call(runtime, "memory.notes.recall", {"query": 'NEAR("a" (b*'}, tmp_path)
    assert odd.status == "ok" and odd.summary.startswith("no notes match")
    await runtime.close()


async def test_workdir_scope_defaults_to_the_calls_working_dir(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_notes"])
    a, b = tmp_path / "a", tmp_path / "b"
    await call(runtime, "memory.notes.store", {"content": "use tabs here", "scope": "workdir"}, a)
    assert (await call(runtime, "memory.notes.recall", {"query": "tabs"}, a)).details["notes"]
    assert not (await call(runtime, "memory.notes.recall", {"query": "tabs"}, b)).details["notes"]
    await runtime.close()


async def test_forget_and_bad_ids(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_notes"])
    await call(runtime, "memory.notes.store", {"content": "temporary"}, tmp_path)
    assert (await call(runtime, "memory.notes.forget", {"id": "#1"}, tmp_path)).summary == "forgot #1"
    assert (await call(runtime, "memory.notes.forget", {"id": 1}, tmp_path)).status == "error"
    assert "not a note id" in (await call(runtime, "memory.notes.forget", {"id": "one"}, tmp_path)).summary
    await runtime.close()


async def test_over_limit_content_is_an_error_result(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_notes"],
                                  config={"memoryNotes": {"maxContentChars": 100}})
    result = await call(runtime, "memory.notes.store", {"content": "x" * 101}, tmp_path)
    assert result.status == "error" and "maxContentChars" in result.summary
    await runtime.close()


async def test_store_reports_fifo_evictions(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_notes"], config={"memoryNotes": {"maxEntries": 2}})
    for text in ("one", "two"):
        await call(runtime, "memory.notes.store", {"content": text}, tmp_path)
    third = await call(runtime, "memory.notes.store", {"content": "three"}, tmp_path)
    assert third.summary == "stored #3; evicted 1 oldest" and third.details["evicted"] == [1]
    assert runtime.service("metrics").counter_value("agent.memory.notes.evicted") == 1
    await runtime.close()


def test_descriptors(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path, plugins=["memory_notes"])
    specs = {s.name: s for s in runtime.registry.specs() if s.name.startswith("memory.notes.")}
    assert set(specs) == {"memory.notes.store", "memory.notes.recall", "memory.notes.forget"}
    assert specs["memory.notes.store"].args_schema["required"] == ["content"]
    assert specs["memory.notes.recall"].resource_class.value == "pure_read"
    assert specs["memory.notes.forget"].tier.value == "rare"
