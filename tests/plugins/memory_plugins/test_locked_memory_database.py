"""memory.sqlite locked by another process, seen through the runtime: the turn still
completes, memory tools answer with an error result, reflection counts as failed, and
the read path keeps rendering."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory.test_locked_database import HOLDER
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, reflection_runner
from tests.plugins.memory_plugins.routing_provider import RoutingProvider
from tests.plugins.memory_plugins.unframed_prompt import unframed


async def test_locked_database_degrades_memory_without_failing_the_turn(tmp_path: Path) -> None:
    state = tmp_path / "s"
    db = MemoryDatabase.open(memory_db_path(state))
    NoteStore(db).store("the lock test note about kites")
    db.close()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(memory_db_path(state))], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        provider = RoutingProvider([calls(("memory.notes.store", {"content": "blocked write"})),
                                    calls(("reply", {"text": "ok"}))], "SET kite_colour=red")
        runtime = make_memory_runtime(state, provider, environ={"ATOMIC_AGENT_MEMORY_BUSY_TIMEOUT_MS": "100"})
        result = await runtime.run_turn("kites? mine are red", working_dir=tmp_path)
        await runtime.close()
    finally:
        holder.communicate("\n", timeout=10)
    assert result.status == "done" and result.reply == "ok"
    assert "### recalled\n#1 the lock test note about kites" in unframed(provider.requests[0].prompt)
    assert "locked by another process" in provider.requests[1].prompt  # the tool's error result, shown to the model
    outcome = reflection_runner(runtime).outcomes[-1]
    assert outcome.outcome == "failed" and "locked" in (outcome.error or "")
