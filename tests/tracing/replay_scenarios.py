"""The sessions CI re-runs (tests/tracing/replay_sessions/), and how to record them.

Each scenario is a few user turns and the model's scripted answers; recording runs them
through the real runtime (installed plugins, default config, the scripted provider), with
real tool calls in a scratch working dir, and keeps what a rerun needs: config.json, the
salt and the trace. `scripts/record-replay-fixtures` re-records every one (after a deliberate
template or prompt-builder change); `python -m tests.tracing.replay_scenarios DIR` records
them into DIR instead.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs

from atomic_agent.api import Completion, CompletionRequest, ScriptedProvider, runtime_for_test
from atomic_agent.testing.scripted_provider import calls

FIXTURES = Path(__file__).parent / "replay_sessions"
RE_RECORD = "scripts/record-replay-fixtures"
NOTES = "the launch window opens at 09:40 UTC\n"


@attrs.frozen
class Scenario:
    name: str
    turns: tuple[str, ...]
    answers: tuple[str, ...]  # the model's completions, in order, across every turn


SCENARIOS = (
    Scenario("reply-only", ("hello there",), (calls(("reply", {"text": "Hi! What can I do for you?"})),)),
    Scenario("read-then-reply", ("what does notes.txt say?", "thanks"), (
        calls(("os.fs.read", {"path": "notes.txt"})),
        calls(("reply", {"text": "It says the launch window opens at 09:40 UTC."})),
        calls(("reply", {"text": "You're welcome."})),
    )),
    Scenario("retry-and-batch", ("list the files here and read notes.txt",), (
        "I think I should look at the files first",  # does not parse: the one parse retry
        calls(("os.fs.list", {"path": "."}), ("os.fs.read", {"path": "notes.txt"})),
        calls(("reply", {"text": "There is one file, notes.txt: the launch window opens at 09:40 UTC."})),
    )),
)


class ScenarioProvider(ScriptedProvider):
    """The scripted model for steps; a plugin's own model call (memory reflection after a turn,
    which carries no prompt parts) gets NONE, so it neither takes a step's answer nor stores a fact."""

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        if not request.parts:
            return Completion(content="NONE")
        return await super().complete(request, on_delta)


async def record_scenario(scenario: Scenario, target: Path) -> Path:
    """Record `scenario` and leave a state dir a rerun reads at `target`; returns its trace file."""
    with tempfile.TemporaryDirectory(prefix="atomic-agent-record-") as scratch:
        state, work = Path(scratch) / "state", Path(scratch) / "work"
        work.mkdir()
        (work / "notes.txt").write_text(NOTES, encoding="utf-8")
        runtime = await runtime_for_test(state, installed=True, config={},
                                         provider=ScenarioProvider(list(scenario.answers)))
        try:
            session = runtime.open_session(None, work)
            for text in scenario.turns:
                result = await runtime.run_turn(text, session_id=session.id)
                if result.status != "done":
                    raise RuntimeError(f"scenario {scenario.name}: turn {text!r} ended {result.status} "
                                       f"({result.error}); fix its scripted answers")
        finally:
            await runtime.close()
        if target.exists():
            shutil.rmtree(target)
        (target / "traces").mkdir(parents=True)
        shutil.copyfile(state / "config.json", target / "config.json")
        shutil.copyfile(state / "traces" / ".salt", target / "traces" / ".salt")
        trace = target / "traces" / f"{session.id}.ndjson"
        shutil.copyfile(state / "traces" / f"{session.id}.ndjson", trace)
    return trace


async def record_all(root: Path) -> list[Path]:
    return [await record_scenario(s, root / s.name) for s in SCENARIOS]


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else FIXTURES
    for trace in asyncio.run(record_all(root)):
        print(f"recorded {trace} ({trace.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
