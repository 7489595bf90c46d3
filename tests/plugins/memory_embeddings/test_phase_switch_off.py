"""memoryEmbeddings.enabled = false leaves prompts and stores byte-identical to a runtime
without the plugin, builds no client and creates no index file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.plugins.memory_embeddings.concept_embedder import ConceptEmbedder
from tests.plugins.memory_embeddings.hybrid_runtime import make_hybrid_runtime
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY
from tests.plugins.memory_plugins.routing_provider import RoutingProvider
from tests.plugins.memory_plugins.test_phase_switch_off import SCRIPTS


async def two_turns(state: Path, workdir: Path, plugins: list[str], enabled: bool | None,
                    embedder: ConceptEmbedder | None = None) -> tuple[list[str], bytes, list[str]]:
    script, reflect = SCRIPTS["memory_profile"]  # stores a note through the tool, then recalls it
    provider = RoutingProvider(list(script), reflect)
    plugins = ["memory", "metrics", *plugins]
    runtime = make_hybrid_runtime(state, provider, embedder, enabled=enabled, plugins=plugins)
    first = await runtime.run_turn("remember: deploys use make deploy", working_dir=workdir)
    await runtime.close()
    runtime = make_hybrid_runtime(state, provider, embedder, enabled=enabled, plugins=plugins)
    await runtime.run_turn("how do I deploy?", session_id=first.session_id)
    await runtime.close()
    files = sorted(p.name for p in state.iterdir() if p.name.startswith("memory"))
    return [r.prompt for r in provider.requests], (state / "memory.sqlite").read_bytes(), files


async def test_switched_off_embeddings_are_byte_identical_to_an_absent_plugin(
        tmp_path: Path, frozen_clock: list[int], deterministic_session_ids: Any) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    deterministic_session_ids()
    absent = await two_turns(tmp_path / "absent", workdir, list(ALL_MEMORY), None)
    deterministic_session_ids()
    off = await two_turns(tmp_path / "off", workdir, [*ALL_MEMORY, "memory_embeddings"], False,
                          ConceptEmbedder())
    assert absent[0] == off[0]  # every agent prompt, byte for byte
    assert absent[1] == off[1]  # memory.sqlite, byte for byte
    assert off[2] == ["memory.sqlite"]  # no vector index, no status file
    assert "### recalled" in absent[0][-1]  # the comparison covers a recall
    deterministic_session_ids()
    on = await two_turns(tmp_path / "on", workdir, [*ALL_MEMORY, "memory_embeddings"], True,
                         ConceptEmbedder())
    assert on[1] != absent[1] and "memory-vectors.sqlite" in on[2]  # switched on, it does store vectors
