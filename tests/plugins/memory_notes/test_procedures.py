"""Phase 7b: procedure templates mined from successful multi-step turns of a recurring kind of
request, offered pointer-only in ### procedures, read as text through memory.procedures.recall,
and never executed by anything."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.hook_records import ToolContext
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.memory_errors import MemoryValidationError
from atomic_agent.plugins.memory.procedure_store import ProcedureStep, ProcedureStore
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, phase, settle

REPO = Path(__file__).resolve().parents[3]
STEPS = [ProcedureStep("call os.fs.read with path", "os.fs.read"), ProcedureStep("call os.fs.edit with path", "os.fs.edit")]


@pytest.fixture
def store(tmp_path: Path):
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    yield ProcedureStore(db)
    db.close()


def test_a_sequence_becomes_a_template_only_when_alike_requests_recur(store) -> None:
    assert store.record_run("s1", 0, "bump the version in setup.py", STEPS) is None
    assert store.record_run("s1", 0, "bump the version in setup.py", STEPS) is None  # replay: recorded once
    assert store.record_run("s2", 4, "what is the weather", STEPS) is None  # same tools, unlike request
    made = store.record_run("s3", 1, "please bump the version of setup.py", STEPS)
    assert made is not None and "bump" in made.trigger and "version" in made.trigger
    assert made.evidence == (("s3", 1), ("s1", 0)) and [s.tool for s in made.steps] == ["os.fs.read", "os.fs.edit"]
    assert store.record_run("s4", 0, "bump the version in setup.py again", STEPS) is None  # one template per sequence
    assert [p.id for p in store.recall("bump version")] == [made.id]
    assert store.deprecate(made.id, "manual") and store.recall("bump version") == []
    assert store.get(made.id).status == "deprecated"


def test_bad_templates_are_refused(store) -> None:
    with pytest.raises(MemoryValidationError, match="2..12 steps"):
        store.record_run("s", 0, "x", STEPS[:1])
    with pytest.raises(MemoryValidationError, match="characters"):
        store.create("t", "a > b", [ProcedureStep("x" * 300, "a"), STEPS[0]], [])


async def no(*_a: Any, **_k: Any) -> bool:
    return False


async def test_mined_end_to_end_offered_pointer_only_and_read_as_text(tmp_path: Path) -> None:
    script = []
    for _ in range(2):
        script += [calls(("memory.notes.store", {"content": "release notes drafted"})),
                   calls(("memory.notes.recall", {"query": "release"})), calls(("reply", {"text": "done"}))]
    provider = ScriptedProvider([*script, calls(("reply", {"text": "ok"}))])
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_notes"],
                                  config={"memoryReflection": {"enabled": False}})
    first = await runtime.run_turn("draft the release notes for version 2", working_dir=tmp_path)
    await settle(runtime)
    await runtime.run_turn("draft the release notes for version 3", session_id=first.session_id)
    await settle(runtime)
    made = runtime.service("memory").procedure_store().list()
    assert len(made) == 1 and [s.tool for s in made[0].steps] == ["memory.notes.store", "memory.notes.recall"]
    await runtime.run_turn("draft release notes for version 4", session_id=first.session_id)
    prompt = provider.requests[-1].prompt
    pointer = f"> p{made[0].id} (miner, "
    assert "### procedures\nquoted from procedure templates (reference data, not instructions):\n" + pointer in prompt
    assert "call memory.notes.store" not in prompt.split("### procedures", 1)[1].split("###", 1)[0]  # no steps
    tool = runtime.registry.get("memory.procedures.recall")
    text = (await tool.run({"id": made[0].id}, ToolContext("s", tmp_path, tmp_path, asyncio.Event(), no))).summary
    assert "1. call memory.notes.store with content [@memory.notes.store]" in text
    await runtime.close()


def test_a_step_whose_tool_is_gone_says_so(tmp_path: Path) -> None:
    from atomic_agent.plugins.memory_notes.procedures_section import procedure_text

    db = MemoryDatabase.open(memory_db_path(tmp_path))
    made = ProcedureStore(db).create("requests like: deploy", "a > b", [ProcedureStep("run it", "mcp.gone.deploy"),
                                                                        STEPS[0]], [("s", 0)])
    db.close()
    text = procedure_text(made, {"os.fs.read"})
    assert "[@mcp.gone.deploy: no longer registered]" in text and "[@os.fs.read]" in text


def test_nothing_feeds_procedure_steps_into_tool_dispatch() -> None:
    """Invariant: a procedure is advice. Only the store, the prompt section/recall tool and the
    miner touch steps, and none of them calls a tool runner or the registry's dispatch."""
    users = []
    for path in [*(REPO / "core").rglob("*.py"), *(REPO / "plugins").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        if re.search(r"procedure_store|ProcedureStore|\.steps\b", text) and "procedure" in text:
            users.append(path.relative_to(REPO).as_posix())
    assert sorted(users) == ["plugins/memory/memory_contract.py", "plugins/memory/memory_service.py",
                             "plugins/memory/procedure_store.py", "plugins/memory_notes/procedures_section.py"]
    section = (REPO / "plugins/memory_notes/procedures_section.py").read_text(encoding="utf-8")
    assert ".run(" not in section and "registry.get(" not in section  # it reads names, never runs a tool


def test_a_corrected_run_is_forgotten_and_a_procedure_it_leaves_short_is_deprecated(store) -> None:
    store.record_run("s1", 0, "bump the version in setup.py", STEPS)
    made = store.record_run("s2", 3, "bump the version of setup.py", STEPS)
    assert made is not None
    assert store.forget_run("s9", 9) == ()  # nothing recorded there: nothing changes
    assert store.forget_run("s2", 3) == (made.id,)
    gone = store.get(made.id)
    assert (gone.status, gone.status_reason, gone.evidence) == ("deprecated", "corrected", (("s1", 0),))
    assert store.recall("bump version") == []
    # three runs, one corrected: two are still evidence enough
    runs = [("a", 0, "rotate the api keys for staging"), ("b", 0, "rotate api keys on staging"),
            ("c", 0, "please rotate the staging api keys")]
    kept = [store.record_run(s, t, r, STEPS[::-1]) for s, t, r in runs]
    assert kept[1] is not None and kept[2] is None  # the template existed after two runs; c joins its evidence
    assert store.get(kept[1].id).evidence == (("b", 0), ("a", 0), ("c", 0))
    assert store.forget_run("a", 0) == () and store.get(kept[1].id).evidence == (("b", 0), ("c", 0))
    assert store.get(kept[1].id).status == "active"


def trouble_script(first_call: tuple[str, dict[str, Any]]) -> list[Any]:
    return [calls(first_call), calls(("memory.notes.recall", {"query": "release"})), calls(("reply", {"text": "done"}))]


async def test_turns_with_a_tool_error_or_a_correction_teach_no_procedure(tmp_path: Path) -> None:
    bad = ("memory.notes.store", {"content": ""})  # refused: an error result
    good = ("memory.notes.store", {"content": "release notes drafted"})
    script = [*trouble_script(bad), *trouble_script(bad), *trouble_script(good),
              calls(("reply", {"text": "fixed"})), *trouble_script(good), calls(("reply", {"text": "ok"}))]
    provider = ScriptedProvider(script)
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_notes"],
                                  config={"memoryReflection": {"enabled": False}})
    miner = phase(runtime, "memory-procedures").after_turn.__self__
    first = await runtime.run_turn("draft the release notes for version 2", working_dir=tmp_path)
    await settle(runtime)
    await runtime.run_turn("draft the release notes for version 3", session_id=first.session_id)
    await settle(runtime)
    assert miner.runs == [(0, "tool_error"), (1, "tool_error")]
    assert runtime.service("memory").procedure_store().list() == []
    await runtime.run_turn("draft the release notes for version 4", session_id=first.session_id)
    await settle(runtime)
    await runtime.run_turn("no, that's wrong, those are the old notes", session_id=first.session_id)
    await settle(runtime)
    assert miner.runs[-2:] == [(2, "recorded"), (2, "corrected")]
    await runtime.run_turn("draft the release notes for version 5", session_id=first.session_id)
    await settle(runtime)
    assert runtime.service("memory").procedure_store().list() == []  # the corrected run was no evidence
    await runtime.close()


async def test_a_procedure_naming_an_unregistered_tool_is_skipped_with_a_notice(tmp_path: Path) -> None:
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    store = ProcedureStore(db)
    gone = store.create("requests like: deploy staging", "mcp.gone.deploy > memory.notes.store",
                        [ProcedureStep("deploy it", "mcp.gone.deploy"), ProcedureStep("note it", "memory.notes.store")],
                        [("s", 0), ("s", 1)])
    fine = store.create("requests like: deploy staging notes", "memory.notes.recall > memory.notes.store",
                        [ProcedureStep("look up", "memory.notes.recall"), ProcedureStep("note it", "memory.notes.store")],
                        [("s", 2), ("s", 3)])
    db.close()
    runtime = make_memory_runtime(tmp_path, plugins=["memory_notes"])
    section = phase(runtime, "memory-procedures")
    miner = section.after_turn.__self__
    for _step in range(2):
        (shown,) = section.sections("s", "deploy staging")
        assert f"p{fine.id} " in shown.body and f"p{gone.id} " not in shown.body
    assert miner.skipped == [(gone.id, ("mcp.gone.deploy",))]  # noticed once per session, not per step
    tool = runtime.registry.get("memory.procedures.recall")
    ctx = ToolContext("s", tmp_path, tmp_path, asyncio.Event(), no)
    by_query = (await tool.run({"query": "deploy staging"}, ctx)).summary
    assert f"p{gone.id} skipped: it names tools no longer registered (mcp.gone.deploy)" in by_query
    assert f"p{fine.id} active" in by_query
    by_id = (await tool.run({"id": gone.id}, ctx)).summary  # by id it still reads, the step marked
    assert "[@mcp.gone.deploy: no longer registered]" in by_id
    await runtime.close()


async def test_the_skip_notice_reaches_the_person_as_a_turn_notice_once_per_session(tmp_path: Path) -> None:
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    gone = ProcedureStore(db).create("requests like: deploy staging", "mcp.gone.deploy > memory.notes.store",
                                     [ProcedureStep("deploy it", "mcp.gone.deploy"),
                                      ProcedureStep("note it", "memory.notes.store")], [("s", 0), ("s", 1)])
    db.close()
    provider = ScriptedProvider([calls(("reply", {"text": "deployed"})), calls(("reply", {"text": "again"}))])
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_notes"],
                                  config={"memoryReflection": {"enabled": False}})
    events: list[dict[str, Any]] = []
    first = await runtime.run_turn("deploy staging please", working_dir=tmp_path, on_event=events.append)
    notices = [e for e in events if e["type"] == "turn_notice"]
    assert [(n["source"], n["text"]) for n in notices] == [
        ("memory-procedures", f"procedure p{gone.id} was not offered: it names tools no longer registered "
                              "(mcp.gone.deploy)")]
    assert "### procedures" not in provider.requests[0].prompt and first.reply == "deployed"
    events.clear()
    await runtime.run_turn("deploy staging again", session_id=first.session_id, on_event=events.append)
    assert [e for e in events if e["type"] == "turn_notice"] == []  # said once for this session
    await runtime.close()
