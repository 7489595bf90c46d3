"""Browser calls of one batch run one after another in batch order (resource class browser)
and the world the next step sees is the last call's snapshot, through the real runtime."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import ScriptedProvider
from atomic_agent.testing.scripted_provider import calls

from .browser_kit import LOOPBACK_CONFIG, PageServer, browser_runtime


def world_of(prompt: str) -> str:
    return prompt.split("### world\n", 1)[1].split("\n### ", 1)[0]


async def test_a_batch_of_browser_calls_runs_in_order_and_leaves_the_last_snapshot(pages: PageServer,
                                                                                    tmp_path: Path) -> None:
    first, second = pages.html("/first", "<h1>First page</h1>"), pages.html("/second", "<h1>Second page</h1>")
    provider = ScriptedProvider([calls(("browser.open", {"url": first}), ("browser.open", {"url": second}),
                                       ("browser.snapshot", {})),
                                 calls(("reply", {"text": "seen"}))])
    rt = await browser_runtime(tmp_path / "state", config=LOOPBACK_CONFIG, provider=provider)
    try:
        events: list[dict] = []
        result = await rt.run_turn("look at both pages", on_event=events.append, working_dir=tmp_path)
        assert result.reply == "seen"
        done = [e for e in events if e.get("type") == "tool_call_result"]
        assert [(e["tool"], e["status"]) for e in done] == [("browser.open", "ok"), ("browser.open", "ok"),
                                                            ("browser.snapshot", "ok")]
        assert pages.hits == ["/first", "/second"]
        world = world_of(provider.requests[1].prompt)
        assert "Second page" in world and "First page" not in world
    finally:
        await rt.close()


async def test_probing_many_distinct_pages_trips_the_wandering_detector(pages: PageServer, tmp_path: Path) -> None:
    urls = [pages.html(f"/p{i}", f"<p>page {i}</p>") for i in range(8)]
    provider = ScriptedProvider([*(calls(("browser.open", {"url": url})) for url in urls),
                                 calls(("reply", {"text": "gave up"}))])
    rt = await browser_runtime(tmp_path / "state", config=LOOPBACK_CONFIG, provider=provider)
    try:
        events: list[dict] = []
        await rt.run_turn("find the page", on_event=events.append, working_dir=tmp_path)
        loops = [e for e in events if e.get("type") == "loop_detected"]
        assert loops and loops[0]["detector"] == "wandering" and loops[0]["tool"] == "browser.open"
    finally:
        await rt.close()
