"""A two-turn conversation that every memory v2 phase acts on when it is on: seeded notes
and one link (expansion, link generator, evolver), a referential follow-up (rewriter),
reflection answers with a typed NOTE (typed notes) and a cadence of one pair per turn
(segmentation)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, settle
from tests.plugins.memory_plugins.subcall_provider import SubcallProvider

SEED_NOTES = ("the deploy pipeline runs make deploy on every merge",
              "docker images for the deploy pipeline are tagged by commit",
              "the staging cluster broke on a docker tag mismatch",
              "Rotating the on-call pager happens every monday")
FIRST = "how does the deploy pipeline work with make and docker?"
SECOND = "and did they fix it?"
REFLECT = "NOTE [type=event] the staging deploy was fixed by retagging [ops]"
LINKS = "LINK #1 RELATES_TO #2\nLINK #2 CAUSED_BY #2\nLINK #1 RELATES_TO #77\nEVOLVE #2 [tags=pipeline]"
REWRITE = "<rewritten_query>was the staging cluster docker tag mismatch fixed</rewritten_query>"


def seed(state: Path) -> None:
    state.mkdir(parents=True, exist_ok=True)
    db = MemoryDatabase.open(memory_db_path(state))
    ids, _ = NoteStore(db).store_many([NoteInput(text) for text in SEED_NOTES])
    LinkStore(db).add(ids[2], ids[3], "RELATES_TO")  # the pager note is reachable only through the graph
    db.close()


async def run_scenario(state: Path, workdir: Path, plugins: Iterable[str], config: Mapping[str, Any],
                       **answers: Any) -> tuple[list[str], bytes, SubcallProvider]:
    seed(state)
    script = [calls(("reply", {"text": "It runs make deploy and tags images by commit."})),
              calls(("reply", {"text": "Yes, staging was retagged."}))]
    provider = SubcallProvider(script, answers.get("reflect", REFLECT), links=answers.get("links", LINKS),
                               rewrite=answers.get("rewrite", REWRITE), **answers.get("slots", {}))
    runtime = make_memory_runtime(state, provider, list(plugins), config=config)
    first = await runtime.run_turn(FIRST, working_dir=workdir)
    await settle(runtime)
    await runtime.run_turn(SECOND, session_id=first.session_id)
    await settle(runtime)
    await runtime.close()
    provider.metrics = runtime.service("metrics")  # type: ignore[attr-defined]  # counters stay readable
    requests = [*provider.requests, *provider.reflection_requests, *provider.link_requests,
                *provider.rewrite_requests]
    seen = [f"{r.slot_id}|{r.grammar}|{r.prompt}" for r in requests]
    return seen, memory_db_path(state).read_bytes(), provider
