"""memoryEmbeddings.embedContext: a note is embedded with its context key (a reflection
note's exchange) and its vectors are keyed `<model>+context`, so switching it re-embeds
instead of mixing the two kinds of vector; off, the embedded text is the content alone."""

from __future__ import annotations

from pathlib import Path

from tests.plugins.memory_embeddings.concept_embedder import ConceptEmbedder
from tests.plugins.memory_embeddings.hybrid_runtime import make_hybrid_runtime
from tests.plugins.memory_embeddings.test_hybrid_recall import replies

NOTE = "she took it up last spring"  # the content names no concept; its context does
CONTEXT = "Caroline: I finally bought a guitar"


async def store_with_context(runtime) -> int:
    runtime.memory_phases  # noqa: B018
    note = runtime.service("memory").note_store().store(NOTE, context=CONTEXT).note
    await runtime.service("memory_embeddings").writer.idle()
    return note.id


def models(runtime) -> dict[str, int]:
    rows = runtime.service("memory").database.query("SELECT model, count(*) AS n FROM memory_embeddings GROUP BY model")
    return {r["model"]: r["n"] for r in rows}


async def test_off_the_content_alone_is_embedded(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    runtime = make_hybrid_runtime(tmp_path, replies(0), embedder, config={"memoryEmbeddings": {"embedContext": False}})
    await store_with_context(runtime)
    assert embedder.calls == [[NOTE]] and models(runtime) == {"llama/concepts-v1": 1}
    await runtime.close()


def test_on_by_default() -> None:
    from atomic_agent.plugins.memory_embeddings.embeddings_config import EmbeddingsConfig

    assert EmbeddingsConfig().embed_context is True  # the best measured configuration ships (issue 34)


async def test_on_the_context_joins_the_text_and_the_key(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    runtime = make_hybrid_runtime(tmp_path, replies(0), embedder,
                                  config={"memoryEmbeddings": {"embedContext": True}})
    note_id = await store_with_context(runtime)
    assert embedder.calls == [[f"{NOTE}\n{CONTEXT}"]] and models(runtime) == {"llama/concepts-v1+context": 1}
    found = await runtime.service("memory").vector_recall.nearest("which instrument does she play?", None)
    assert found is not None and set(found) == {note_id}
    await runtime.close()


async def test_switching_it_on_reembeds_and_never_mixes_the_two(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder(),
                                  config={"memoryEmbeddings": {"embedContext": False}})
    await store_with_context(runtime)
    await runtime.close()
    runtime = make_hybrid_runtime(tmp_path, replies(0), ConceptEmbedder(),
                                  config={"memoryEmbeddings": {"embedContext": True}})
    runtime.memory_phases  # noqa: B018
    memory = runtime.service("memory")
    assert await memory.vector_recall.nearest("which instrument?", None) is None  # only content-only vectors
    assert await runtime.service("memory_embeddings").writer.drain() == 1
    assert models(runtime) == {"llama/concepts-v1": 1, "llama/concepts-v1+context": 1}
    await runtime.close()
