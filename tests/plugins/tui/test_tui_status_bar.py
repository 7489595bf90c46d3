"""The status bar's slot, cache reuse and last-prompt tokens come from each step's
`step_finished` event: they are the numbers the server reported for the last inference."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.tui.status_bar import StatusBar
from atomic_agent.testing.scripted_provider import common_prefix_length
from tests.plugins.tui.tui_harness import calls, tui_app, type_and_send, wait_for


def _status(app) -> str:
    return str(app.query_one(StatusBar).render())


async def test_the_status_bar_shows_the_last_steps_slot_cache_reuse_and_prompt_tokens(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "a", "ms": 0})), calls(("reply", {"text": "read it"})),
              calls(("reply", {"text": "again"}))]
    provider = ScriptedProvider(script, slot=2)
    async with tui_app(tmp_path, [], provider=provider, size=(160, 32)) as (app, pilot, _runtime):
        await pilot.pause()
        assert "slot" not in _status(app) and "cached" not in _status(app)  # nothing measured yet
        seen: list[tuple[int, int]] = []
        for message, requests in (("read a", 2), ("once more", 3)):
            await type_and_send(pilot, app, message)
            await wait_for(pilot, lambda n=requests: len(provider.requests) == n and not app.orchestrator.busy)
            first, last = provider.requests[-2].prompt, provider.requests[-1].prompt
            common = common_prefix_length(first, last)
            cached, fresh = common // 4, (len(last) - common) // 4  # what the provider reported for the last step
            seen.append((cached, fresh))
            status = _status(app)
            assert "slot 2" in status
            assert f"prompt {fresh} new/{cached} cached" in status, status
        assert seen[0] != seen[1] and all(cached > 0 for cached, _fresh in seen)  # a live number, not a constant
