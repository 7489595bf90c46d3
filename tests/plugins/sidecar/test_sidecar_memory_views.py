"""The sidecar's `memory_phases`, `memory_embeddings`, `memory_links` answer the host's memory
read-only over NDJSON (every line schema-checked), name an unknown note, refuse a bad id at
the schema, and answer `memory_unavailable` without the memory plugin."""

from __future__ import annotations

from pathlib import Path

import atomic_agent.plugins.memory as memory_plugin
import atomic_agent.plugins.memory_embeddings as embeddings_plugin
import atomic_agent.plugins.memory_links as links_plugin
from atomic_agent.plugins.memory.memory_database import memory_db_path
from tests.plugins.serve.test_serve_memory_views import seed_graph
from tests.plugins.sidecar.sidecar_harness import SidecarHarness
from tests.turns.turn_kit import answering_provider


class MemorySidecar(SidecarHarness):
    def __init__(self, tmp_path: Path, plugins: list) -> None:
        super().__init__(tmp_path, answering_provider(), extra=plugins)

    async def close(self) -> None:
        await super().close()
        await self.runtime.close()


PLUGINS = [(memory_plugin, "memory"), (embeddings_plugin, "memory_embeddings"), (links_plugin, "memory_links")]


async def test_sidecar_memory_views_answer_phases_coverage_and_links(tmp_path: Path) -> None:
    first, middle, last = seed_graph(tmp_path / "state")
    sidecar = MemorySidecar(tmp_path, PLUGINS)
    try:
        phases = {r["block"]: r for r in (await sidecar.ok("memory_phases"))["phases"]}
        assert phases["memoryLinks"]["state"] == "on" and phases["memoryEmbeddings"]["state"] == "off"
        assert "memoryRewriter" not in phases  # its plugin is not loaded: it declares nothing
        embeddings = (await sidecar.ok("memory_embeddings"))["embeddings"]
        assert (embeddings["installed"], embeddings["enabled"], embeddings["notes"], embeddings["pending"]) == (
            True, False, 3, 3)
        links = await sidecar.ok("memory_links", noteId=middle)
        assert links["note"]["id"] == middle
        assert [(k["from"], k["to"], k["direction"], k["other"]["id"]) for k in links["links"]] == [
            (first, middle, "in", first), (last, middle, "in", last)]
        missing = await sidecar.request("memory_links", noteId=999)
        assert missing["error"]["code"] == "note_not_found"
        for bad in ("1", 0, -3, True):
            refused = await sidecar.request("memory_links", noteId=bad)
            assert refused["error"]["code"] == "invalid_request" and "noteId" in refused["error"]["message"]
        assert (await sidecar.request("memory_links"))["error"]["code"] == "invalid_request"
        assert (await sidecar.request("memory_phases", extra=1))["error"]["code"] == "invalid_request"
    finally:
        await sidecar.close()


async def test_sidecar_memory_views_create_nothing_and_need_the_memory_plugin(tmp_path: Path) -> None:
    sidecar = MemorySidecar(tmp_path, PLUGINS)
    try:
        assert (await sidecar.request("memory_links", noteId=1))["error"]["code"] == "note_not_found"
        assert (await sidecar.ok("memory_embeddings"))["embeddings"]["coverage"] is None
        assert not memory_db_path(tmp_path / "state").exists()
    finally:
        await sidecar.close()
    bare = MemorySidecar(tmp_path / "bare", [])
    try:
        for kind, fields in (("memory_phases", {}), ("memory_embeddings", {}), ("memory_links", {"noteId": 1})):
            assert (await bare.request(kind, **fields))["error"]["code"] == "memory_unavailable", kind
    finally:
        await bare.close()
