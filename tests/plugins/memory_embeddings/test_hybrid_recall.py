"""Hybrid recall (phase 1B) through a real runtime: the paraphrase BM25 cannot find is
recalled through the vectors, and every embedding failure leaves recall on BM25 with a
metric, never a failed turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from atomic_agent.api import EmbeddingUnavailable
from atomic_agent.plugins.memory_embeddings.embedding_writer import PROBE_TEXT
from atomic_agent.testing.scripted_provider import calls
from tests.agent.loop_harness import until
from tests.plugins.memory_embeddings.concept_embedder import ConceptEmbedder
from tests.plugins.memory_embeddings.hybrid_runtime import counter, make_hybrid_runtime
from tests.plugins.memory_plugins.routing_provider import RoutingProvider

FALLBACK = "agent.memory.embeddings.fallback_to_fts5"
GUITAR = "Caroline took up the guitar last spring"
PARAPHRASE = "which instrument does she play?"  # no content word in common with GUITAR


def replies(n: int) -> RoutingProvider:
    return RoutingProvider([calls(("reply", {"text": f"ok {i}"})) for i in range(n)])


async def store_notes(runtime, *contents: str, working_dir: str | None = None) -> list[int]:
    runtime.memory_phases  # noqa: B018  (the phases are registered when the runtime is built)
    store = runtime.service("memory").note_store()
    scope = "global" if working_dir is None else "workdir"
    ids = [store.store(c, scope=scope, working_dir=working_dir).note.id for c in contents]
    await runtime.service("memory_embeddings").writer.idle()
    return ids


def recalled_block(prompt: str) -> str:
    return prompt.split("### recalled", 1)[1].split("###", 1)[0] if "### recalled" in prompt else ""


async def test_paraphrase_with_no_shared_word_is_recalled_through_the_vectors(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    provider = replies(1)
    runtime = make_hybrid_runtime(tmp_path, provider, embedder)
    await store_notes(runtime, GUITAR, "the deploy script lives in ops/deploy.sh", "Melanie is allergic to peanuts")
    assert runtime.service("memory").note_store().recall(PARAPHRASE, 3) == []  # BM25 alone finds nothing
    result = await runtime.run_turn(PARAPHRASE, working_dir=tmp_path)
    await runtime.close()
    assert result.status == "done"
    assert "guitar" in recalled_block(provider.requests[0].prompt)


async def test_bm25_hits_keep_their_place_when_the_vectors_agree(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder())
    ids = await store_notes(runtime, "we ship the release to production on fridays", GUITAR, "my dog is called Rex")
    vectors = runtime.service("memory").vector_recall
    nearest = await vectors.nearest("when do we ship the release?", None)
    hits = runtime.service("memory").note_store().recall("when do we ship the release?", 3, nearest=nearest,
                                                          fusion=vectors.fusion, candidates=vectors.candidates)
    await runtime.close()
    assert hits[0].note.id == ids[0]


@pytest.mark.parametrize("fault,reason", [("down", "unavailable"), ("slow", "timeout"), ("nan", "nan"),
                                          ("dimension", "dimension")])
async def test_embedding_failure_degrades_recall_to_bm25_with_a_metric_never_a_failed_turn(
        tmp_path: Path, fault: str, reason: str) -> None:
    embedder = ConceptEmbedder()
    provider = replies(1)
    runtime = make_hybrid_runtime(tmp_path, provider, embedder, config={"memoryEmbeddings": {"queryTimeoutMs": 100}})
    await store_notes(runtime, GUITAR, "the deploy script lives in ops/deploy.sh")
    if fault == "down":
        embedder.down = True
    elif fault == "slow":
        embedder.delay_s = 2.0
    elif fault == "nan":
        embedder.nan = True
    else:
        embedder.dim_override = 3
    result = await runtime.run_turn("where is the deploy script?", working_dir=tmp_path)
    assert result.status == "done"
    prompt = provider.requests[0].prompt
    assert "ops/deploy.sh" in recalled_block(prompt) and "guitar" not in recalled_block(prompt)
    assert counter(runtime, FALLBACK, reason=reason, path="recall") == 1
    await runtime.close()
    from atomic_agent.plugins.memory_embeddings.doctor_findings import embedding_findings

    findings = embedding_findings(tmp_path)
    assert any(f.level == "warn" and reason in f.detail for f in findings)


async def test_sqlite_vec_unavailable_degrades_to_bm25(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from atomic_agent.plugins.memory_embeddings import vector_index

    def refuse(_conn: object) -> None:
        raise OSError("vec0.so: cannot open shared object file")

    monkeypatch.setattr(vector_index, "_load_vec", refuse)
    provider = replies(1)
    runtime = make_hybrid_runtime(tmp_path, provider, ConceptEmbedder())
    await store_notes(runtime, "the deploy script lives in ops/deploy.sh")
    result = await runtime.run_turn("where is the deploy script?", working_dir=tmp_path)
    assert result.status == "done" and "ops/deploy.sh" in recalled_block(provider.requests[0].prompt)
    assert counter(runtime, FALLBACK, reason="sqlite_vec", path="write") == 1
    await runtime.close()


async def test_embedding_writes_never_block_the_store(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    embedder.gate = asyncio.Event()
    runtime = make_hybrid_runtime(tmp_path, replies(0), embedder)
    runtime.memory_phases  # noqa: B018
    memory = runtime.service("memory")
    stored = memory.note_store().store(GUITAR)  # returns while the daemon has not answered
    await until(lambda: embedder.calls != [])  # the writer asked the daemon, which holds its answer
    assert embedder.calls == [[GUITAR]]
    assert memory.database.query("SELECT count(*) AS n FROM memory_embeddings")[0]["n"] == 0
    assert memory.note_store().recall("guitar", 1)[0].note.id == stored.note.id  # full text works at once
    embedder.gate.set()
    await runtime.service("memory_embeddings").writer.idle()
    assert memory.database.query("SELECT count(*) AS n FROM memory_embeddings")[0]["n"] == 1
    await runtime.close()


async def test_notes_stored_while_the_daemon_is_down_are_embedded_once_it_is_back(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    embedder.down = True
    runtime = make_hybrid_runtime(tmp_path, replies(0), embedder)
    await store_notes(runtime, GUITAR)
    memory = runtime.service("memory")
    assert memory.database.query("SELECT count(*) AS n FROM memory_embeddings")[0]["n"] == 0
    assert counter(runtime, FALLBACK, reason="unavailable", path="write") == 1
    embedder.down = False
    hybrid = runtime.service("memory_embeddings")
    hybrid._down_until = 0.0  # the rest period after the failure is over
    assert await hybrid.writer.drain() == 1
    assert await memory.vector_recall.nearest(PARAPHRASE, None)
    await runtime.close()


async def test_fk_cascade_forgetting_a_note_removes_its_vectors(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder())
    ids = await store_notes(runtime, GUITAR, "my dog is called Rex")
    memory = runtime.service("memory")
    assert memory.note_store().forget(ids[0])
    rows = memory.database.query("SELECT memory_id FROM memory_embeddings")
    assert [r["memory_id"] for r in rows] == [ids[1]]
    # the index still has the stale row until its next sync; recall drops the forgotten note
    vectors = memory.vector_recall
    nearest = await vectors.nearest(PARAPHRASE, None)
    assert ids[0] in nearest
    hits = memory.note_store().recall(PARAPHRASE, 5, nearest=nearest, fusion=vectors.fusion)
    assert ids[0] not in [h.note.id for h in hits]
    await runtime.close()


async def test_a_model_change_reembeds_every_note_and_never_mixes_models(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder("concepts-v1"))
    ids = await store_notes(runtime, GUITAR, "my dog is called Rex")
    await runtime.close()
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder("concepts-v2"))
    runtime.memory_phases  # noqa: B018
    memory = runtime.service("memory")
    assert await memory.vector_recall.nearest(PARAPHRASE, None) is None  # the index holds v1 vectors
    assert counter(runtime, FALLBACK, reason="index_empty", path="recall") == 1
    assert await runtime.service("memory_embeddings").writer.drain() == 2
    models = memory.database.query("SELECT model, count(*) AS n FROM memory_embeddings GROUP BY model")
    assert {r["model"]: r["n"] for r in models} == {"llama/concepts-v1+context": 2, "llama/concepts-v2+context": 2}
    assert set(await memory.vector_recall.nearest(PARAPHRASE, None)) == set(ids)
    await runtime.close()


async def test_reembed_drops_the_models_vectors_and_writes_them_again(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    runtime = make_hybrid_runtime(tmp_path, replies(0), embedder)
    await store_notes(runtime, GUITAR, "my dog is called Rex")
    embedder.calls.clear()
    assert await runtime.service("memory_embeddings").writer.reembed() == 2
    assert embedder.calls[0] == [PROBE_TEXT]  # the source answered before anything was dropped
    assert sorted(t for call in embedder.calls[1:] for t in call) == sorted([GUITAR, "my dog is called Rex"])
    await runtime.close()


async def test_reembed_with_the_source_down_drops_nothing_and_says_so(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    runtime = make_hybrid_runtime(tmp_path, replies(0), embedder)
    await store_notes(runtime, GUITAR, "my dog is called Rex")
    memory = runtime.service("memory")
    before = memory.database.query("SELECT count(*) AS n FROM memory_embeddings")[0]["n"]
    embedder.down = True
    with pytest.raises(EmbeddingUnavailable, match="nothing was dropped"):
        await runtime.service("memory_embeddings").writer.reembed(every_model=True)
    assert memory.database.query("SELECT count(*) AS n FROM memory_embeddings")[0]["n"] == before == 2
    embedder.down = False
    assert set(await memory.vector_recall.nearest(PARAPHRASE, None))  # recall still works from the kept vectors
    await runtime.close()


async def test_scope_partitions_keep_another_projects_notes_out(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder())
    runtime.memory_phases  # noqa: B018
    here, there = str(tmp_path / "here"), str(tmp_path / "there")
    mine = (await store_notes(runtime, "I play the violin", working_dir=here))[0]
    theirs = (await store_notes(runtime, "the piano needs tuning", working_dir=there))[0]
    shared = (await store_notes(runtime, "music lessons on tuesday"))[0]
    nearest = await runtime.service("memory").vector_recall.nearest("which instrument?", here)
    await runtime.close()
    assert set(nearest) == {mine, shared} and theirs not in nearest


async def test_a_corrupt_vector_index_is_moved_aside_and_rebuilt_from_memory(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(1), ConceptEmbedder())
    ids = await store_notes(runtime, GUITAR, "my dog is called Rex")
    await runtime.close()
    for leftover in tmp_path.glob("memory-vectors.sqlite*"):
        leftover.unlink()
    (tmp_path / "memory-vectors.sqlite").write_bytes(b"this is not a database" * 200)
    provider = replies(1)
    runtime = make_hybrid_runtime(tmp_path, provider, ConceptEmbedder())
    result = await runtime.run_turn(PARAPHRASE, working_dir=tmp_path)
    assert result.status == "done"
    assert counter(runtime, FALLBACK, reason="index_corrupt", path="index") == 1
    assert list(tmp_path.glob("memory-vectors.sqlite.corrupt-*"))
    await runtime.service("memory_embeddings").writer.drain()  # refilled from memory.sqlite, nothing re-embedded
    nearest = await runtime.service("memory").vector_recall.nearest(PARAPHRASE, None)
    await runtime.close()
    assert max(nearest, key=nearest.get) == ids[0]


async def test_the_recall_tool_finds_a_paraphrase_through_the_vectors(tmp_path: Path) -> None:
    from atomic_agent.api import make_tool_context

    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder())
    ids = await store_notes(runtime, GUITAR, "the deploy script lives in ops/deploy.sh")
    tool = runtime.registry.get("memory.notes.recall")
    result = await tool.run({"query": PARAPHRASE, "k": 1}, make_tool_context(tmp_path))
    await runtime.close()
    assert [n["id"] for n in result.details["notes"]] == [ids[0]]
