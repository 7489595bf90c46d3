"""A third party's tests for a memory phase: the kit's runtime, a scripted model, the prompt."""

from pathlib import Path

import atomic_agent.contrib.example_memory_phase as pinned
from atomic_agent.api import ScriptedProvider, runtime_for_test


async def test_pinned_text_reaches_the_prompt_tail(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "pinned.md").write_text("Always answer in French.")
    provider = ScriptedProvider()
    runtime = await runtime_for_test(tmp_path / "state", plugins={"pinned": pinned}, provider=provider)
    try:
        await runtime.run_turn("hello", working_dir=tmp_path)
    finally:
        await runtime.close()
    prompt = provider.requests[0].prompt
    assert "### pinned\nquoted from the user's pinned.md" in prompt and "> Always answer in French.\n" in prompt


async def test_no_file_means_no_section(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    runtime = await runtime_for_test(tmp_path / "state", plugins={"pinned": pinned}, provider=provider)
    try:
        await runtime.run_turn("hello", working_dir=tmp_path)
    finally:
        await runtime.close()
    assert "### pinned" not in provider.requests[0].prompt
