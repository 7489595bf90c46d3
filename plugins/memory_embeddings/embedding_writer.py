"""Embedding notes in the background: writes never wait for a vector.

A stored note is recallable by full text at once; `nudge()` (called after every committed
insert) only schedules a drain on the event loop and returns. The drain embeds the notes
that have no vector for the current model yet, newest first, in batches, and writes each
vector to memory.sqlite (`memory_embeddings`, which cascades with the note) and to the
sqlite-vec index. Any failure (daemon down or slow, wrong count or dimension, NaN,
sqlite-vec missing) stops the drain with a fallback metric; the notes stay pending and the
next nudge, turn end or consolidation tick tries again. Because "pending" is a query, not a
queue, nothing is lost across restarts, and a model change re-embeds everything.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from atomic_agent.api import EmbeddingUnavailable, store_clock

from .hybrid_memory import WRITTEN_METRIC
from .vector_codec import BadVectorError, checked_unit_vector, pack, unpack
from .vector_index import VectorIndex, partition_of

WRITE_PATH = "write"
PROBE_TEXT = "re-embed probe"  # embedded once before any stored vector is dropped


class EmbeddingWriter:
    def __init__(self, hybrid: Any) -> None:
        self.hybrid = hybrid
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._synced_model: str | None = None

    # -- scheduling ---------------------------------------------------------------------------
    def nudge(self, _ids: Sequence[int] = ()) -> None:
        """Schedule a drain; safe from any thread, returns at once, never raises."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            remembered = self._loop
            if remembered is None or remembered.is_closed():
                return  # no loop (a CLI write): the next turn, tick or reembed picks it up
            remembered.call_soon_threadsafe(self._schedule)
            return
        self._loop = loop
        self._schedule()

    def _schedule(self) -> None:
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            self._again = False
            await self.drain()
            if not self._again:
                return

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._task = None

    async def idle(self) -> None:
        """Wait for the scheduled drain (tests; `memory reembed`)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    # -- the work -----------------------------------------------------------------------------
    async def drain(self, limit: int | None = None, on_progress: Callable[[int], None] | None = None) -> int:
        """Embed pending notes until none is left (or `limit` were written); returns how
        many were written, and tells `on_progress` the count after each batch. Never raises
        (a raising `on_progress` included: it only loses its updates)."""
        hybrid = self.hybrid
        self._loop = asyncio.get_running_loop()
        try:
            source = hybrid.source()
        except EmbeddingUnavailable as exc:
            hybrid.fallback(WRITE_PATH, "no_source", str(exc))
            return 0
        if source is None or not hybrid.available():
            return 0
        index = hybrid.index_or_fallback(WRITE_PATH)
        if index is None:
            return 0
        written = 0
        try:
            key = hybrid.vector_key(source.model)
            self._sync_index(index, key)
            while limit is None or written < limit:
                batch = self._pending(key, hybrid.cfg.write_batch)
                if not batch:
                    break
                texts = [hybrid.vector_text(row["content"], row["context"]) for row in batch]
                try:
                    answer = await asyncio.wait_for(source.embed(texts), hybrid.cfg.write_timeout_ms / 1000)
                except asyncio.TimeoutError:
                    hybrid.fallback(WRITE_PATH, "timeout", f"no vectors within {hybrid.cfg.write_timeout_ms} ms")
                    break
                except BadVectorError as exc:
                    hybrid.fallback(WRITE_PATH, exc.reason, str(exc))
                    break
                except EmbeddingUnavailable as exc:
                    hybrid.fallback(WRITE_PATH, "unavailable", str(exc))
                    break
                if not isinstance(answer, list) or len(answer) != len(batch):
                    hybrid.fallback(WRITE_PATH, "count", f"asked for {len(batch)} vectors, got "
                                    f"{len(answer) if isinstance(answer, list) else type(answer).__name__}")
                    break
                try:
                    vectors = self._checked(answer, index, key)
                except BadVectorError as exc:
                    hybrid.fallback(WRITE_PATH, exc.reason, str(exc))
                    break
                self._store(batch, vectors, key, index)
                written += len(batch)
                hybrid.metrics.inc(WRITTEN_METRIC, len(batch))
                hybrid.succeeded(key, len(vectors[0]))
                if on_progress is not None:
                    with contextlib.suppress(Exception):
                        on_progress(written)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken write path degrades, never breaks a turn
            hybrid.fallback(WRITE_PATH, "error", f"{type(exc).__name__}: {exc}")
        return written

    def _checked(self, answer: Sequence[Any], index: VectorIndex, model: str) -> list[list[float]]:
        dim = index.dim if index.model == model and index.has_table() else None
        vectors: list[list[float]] = []
        for raw in answer:
            if not isinstance(raw, (list, tuple)):
                raise BadVectorError("the provider answered something that is not a vector", "shape")
            vectors.append(checked_unit_vector(raw, dim if dim is not None else (len(vectors[0]) if vectors else None)))
        if dim is None:
            index.reset(model, len(vectors[0]))
        return vectors

    def _pending(self, model: str, limit: int) -> list[dict[str, Any]]:
        return self.hybrid.memory.database.query(
            "SELECT m.id, m.content, m.context, m.scope, m.working_dir FROM memories m LEFT JOIN memory_embeddings e "
            "ON e.memory_id = m.id AND e.model = ? WHERE e.memory_id IS NULL ORDER BY m.id DESC LIMIT ?",
            [model, limit])

    def _store(self, batch: list[dict[str, Any]], vectors: list[list[float]], model: str,
               index: VectorIndex) -> None:
        stamp = store_clock.now_ms()
        database = self.hybrid.memory.database
        with database.write() as conn:
            for row, vector in zip(batch, vectors, strict=True):
                # the note may have been forgotten while its vector was computed: then nothing is written
                conn.execute("INSERT OR REPLACE INTO memory_embeddings (memory_id, model, dim, embedding, created_at) "
                             "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
                             [row["id"], model, len(vector), pack(vector), stamp, row["id"]])
        index.upsert([(row["id"], partition_of(row["scope"], row["working_dir"]), vector)
                      for row, vector in zip(batch, vectors, strict=True)])

    def _sync_index(self, index: VectorIndex, model: str) -> None:
        """Once per runtime and model: make the index hold exactly the stored vectors of
        `model` (a stale index, another model's index, or a deleted index file)."""
        if self._synced_model == model:
            return
        database = self.hybrid.memory.database
        stored = database.query("SELECT e.memory_id, e.dim, e.embedding, m.scope, m.working_dir FROM memory_embeddings e "
                                "JOIN memories m ON m.id = e.memory_id WHERE e.model = ?", [model])
        if index.model != model or not index.has_table():
            if not stored:
                self._synced_model = model
                return  # the first vector creates the index with its dimension
            index.reset(model, int(stored[0]["dim"]))
        have = index.ids()
        want = {int(r["memory_id"]) for r in stored}
        index.delete(have - want)
        missing = [r for r in stored if int(r["memory_id"]) not in have and int(r["dim"]) == index.dim]
        for start in range(0, len(missing), 1000):
            index.upsert([(int(r["memory_id"]), partition_of(r["scope"], r["working_dir"]), unpack(r["embedding"]))
                          for r in missing[start:start + 1000]])
        self._synced_model = model

    async def _probe(self, source: Any) -> None:
        """One tiny embedding, or EmbeddingUnavailable saying that nothing was dropped."""
        timeout_s = self.hybrid.cfg.write_timeout_ms / 1000
        try:
            answer = await asyncio.wait_for(source.embed([PROBE_TEXT]), timeout_s)
        except (asyncio.TimeoutError, EmbeddingUnavailable, OSError) as exc:
            why = f"no answer within {timeout_s:g} s" if isinstance(exc, asyncio.TimeoutError) else str(exc)
            raise EmbeddingUnavailable(f"the embedding source does not answer ({why}); nothing was dropped and the "
                                       "stored vectors stay. Start it (`atomic-agent llama start`) and re-embed "
                                       "again") from None
        if not isinstance(answer, list) or len(answer) != 1:
            raise EmbeddingUnavailable("the embedding source answered a probe with no vector; nothing was dropped")

    async def reembed(self, every_model: bool = False,
                      on_progress: Callable[[int, int], None] | None = None) -> int:
        """Drop the stored vectors (of the current model, or of every model) and embed all
        notes again; returns how many were written. A source that does not answer a probe
        first raises EmbeddingUnavailable and drops nothing. `on_progress(done, total)` hears the
        start (0 of the notes there are) and every batch."""
        source = self.hybrid.source()
        if source is None:
            raise EmbeddingUnavailable("no embedding source: enable llama.embeddings (and `atomic-agent llama "
                                       "start`) or set llm.activeEmbeddingProvider")
        await self._probe(source)  # the stored vectors are dropped only once the source answers
        with self.hybrid.memory.database.write() as conn:
            if every_model:
                conn.execute("DELETE FROM memory_embeddings")
            else:
                conn.execute("DELETE FROM memory_embeddings WHERE model = ?", [self.hybrid.vector_key(source.model)])
        self.hybrid.index().clear()
        self._synced_model = None
        if on_progress is None:
            return await self.drain()
        total = int(self.hybrid.memory.database.query("SELECT count(*) AS n FROM memories")[0]["n"])
        report = on_progress
        with contextlib.suppress(Exception):
            report(0, total)
        return await self.drain(on_progress=lambda done: report(done, max(total, done)))

