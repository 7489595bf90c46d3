"""The memory-phase hook as the runtime drives it: before_turn once per turn, sections per
step (token cap and dedupe key enforced), a broken phase isolated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.hook_records import MemoryPhase, PromptSection, TurnStart, fit_sections
from atomic_agent.hookspecs import hookimpl
from atomic_agent.prompt.build_prompt import estimate_tokens
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.memory_plugins.unframed_prompt import unframed


def test_fit_sections_keeps_the_first_of_a_dedupe_key_and_caps_bodies() -> None:
    long_body = "\n".join(f"line {i} with several words in it" for i in range(50))
    out = fit_sections([PromptSection("a", "first", dedupe_key="k"), PromptSection("b", "second", dedupe_key="k"),
                        PromptSection("c", long_body, max_tokens=30), PromptSection("d", "free")], estimate_tokens)
    assert [s.heading for s in out] == ["a", "c", "d"]
    assert out[1].body.endswith("\n[truncated]") and estimate_tokens(out[1].body) <= 30 + 5
    assert out[2].body == "free"


class ProbePlugin:
    def __init__(self) -> None:
        self.starts: list[TurnStart] = []
        self.section_calls = 0

    @hookimpl
    def register_memory_phases(self, runtime: Any) -> list[MemoryPhase]:
        def sections(session_id: str, user_text: str) -> list[PromptSection]:
            self.section_calls += 1
            return [PromptSection("probe", f"seen: {user_text}", slot="recall")]

        def broken(session_id: str, user_text: str) -> list[PromptSection]:
            raise RuntimeError("read path down")

        return [MemoryPhase("probe", order=1, sections=sections, before_turn=self.starts.append),
                MemoryPhase("broken", order=2, sections=broken)]


async def test_before_turn_runs_once_per_turn_and_sections_once_per_step(tmp_path: Path) -> None:
    probe = ProbePlugin()
    host = fresh_plugin_host()
    host.register(probe, "probe")
    provider = ScriptedProvider([calls(("tool.view", {"name": "nothing"})), calls(("reply", {"text": "ok"}))])
    runtime = Runtime(boot(tmp_path / "s", environ={}, host=host), provider=provider, environ={})
    result = await runtime.run_turn("hello there", working_dir=tmp_path)
    await runtime.close()
    assert result.status == "done" and result.steps == 2
    assert [(s.session_id, s.turn_index, s.user_text, s.working_dir) for s in probe.starts] == \
        [(result.session_id, 0, "hello there", str(tmp_path))]
    assert probe.section_calls == 2
    assert all("### probe\nseen: hello there\n" in unframed(r.prompt) for r in provider.requests)  # the broken one is skipped
