"""Re-embedding from the TUI's Memory panel (status channel, `e`) against a real runtime with
hybrid recall and a stand-in embedding daemon: a progress bar counts the notes batch by
batch, the vectors are rebuilt, and a runtime where it cannot run says why and what to do."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import ProgressBar

from tests.plugins.memory_embeddings.concept_embedder import ConceptEmbedder
from tests.plugins.memory_embeddings.hybrid_runtime import make_hybrid_runtime
from tests.plugins.tui_panel_host import PanelHost, panel_of

NOTES = ("plays the guitar", "has a dog", "deploys on friday", "trip to paris", "allergic to peanuts")


def vectors(runtime) -> int:
    return int(runtime.service("memory").database.query("SELECT count(*) AS n FROM memory_embeddings")[0]["n"])


async def until(pilot, predicate, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + 30  # a hung test's bound, not a speed claim
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, what
        await pilot.pause(0.02)


async def test_e_reembeds_every_note_over_a_progress_bar_counting_batches(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    runtime = make_hybrid_runtime(tmp_path, None, embedder, config={"memoryEmbeddings": {"writeBatch": 2}})
    try:
        runtime.memory_phases  # noqa: B018  (wires the write listener)
        for text in NOTES:
            runtime.service("memory").note_store().store(text)
        await runtime.service("memory_embeddings").writer.idle()
        assert vectors(runtime) == len(NOTES)
        calls_before = len(embedder.calls)
        gate = embedder.gate = asyncio.Event()  # each batch waits until the test lets it through
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("4", "e")
            bar = app.query_one("#memory-progress", ProgressBar)
            await until(pilot, lambda: len(embedder.calls) == calls_before + 1, "the source was probed")
            assert vectors(runtime) == len(NOTES)  # nothing is dropped before the source answered
            gate.set()
            gate.clear()  # the probe goes through, the first batch waits
            await until(pilot, lambda: len(embedder.calls) == calls_before + 2, "the first batch was asked for")
            assert bar.has_class("working") and bar.display
            assert (bar.total, bar.progress) == (len(NOTES), 0) and vectors(runtime) == 0  # dropped, rebuilding
            await pilot.press("e")  # a second press while it runs starts nothing
            assert "Re-embedding is already running." in app.messages("warning")
            gate.set()
            gate.clear()  # the first batch goes through, the second waits
            await until(pilot, lambda: len(embedder.calls) == calls_before + 3, "the second batch was asked for")
            assert (bar.total, bar.progress) == (len(NOTES), 2)
            embedder.gate = None  # the rest run freely
            gate.set()
            await app.settle(pilot)
            assert (bar.total, bar.progress) == (len(NOTES), len(NOTES)) and not bar.has_class("working")
        assert vectors(runtime) == len(NOTES)
        assert app.job_titles == ["Re-embedding memory notes"]
        assert f"Re-embedded {len(NOTES)} note(s) with llama/concepts-v1+context." in app.messages(), app.notices
        assert app.messages("error") == []
    finally:
        await runtime.close()


async def test_e_with_hybrid_recall_off_says_how_to_switch_it_on_and_drops_nothing(tmp_path: Path) -> None:
    runtime = make_hybrid_runtime(tmp_path, None, ConceptEmbedder(), enabled=False)
    try:
        runtime.service("memory").note_store().store("plays the guitar")
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("e")  # not on the status channel: says where it works
            assert "e re-embeds the notes from the status channel (4)." in app.messages()
            await pilot.press("4", "e")
            await app.settle(pilot)
        assert app.job_titles == []
        assert any("memoryEmbeddings.enabled true" in m for m in app.messages("warning")), app.notices
    finally:
        await runtime.close()


async def test_a_daemon_that_is_down_drops_nothing_and_says_so(tmp_path: Path) -> None:
    embedder = ConceptEmbedder()
    runtime = make_hybrid_runtime(tmp_path, None, embedder)
    try:
        runtime.memory_phases  # noqa: B018
        runtime.service("memory").note_store().store("plays the guitar")
        await runtime.service("memory_embeddings").writer.idle()
        embedder.down = True
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("4", "e")
            await app.settle(pilot)
            assert not app.query_one("#memory-progress", ProgressBar).has_class("working")
        said = [m for m in app.messages("error") if m.startswith("Re-embedding did not run")]
        assert said and "nothing was dropped" in said[0] and "llama start" in said[0], app.notices
        assert vectors(runtime) == 1  # the note's vector is kept: recall still finds it
    finally:
        await runtime.close()
