"""The reflection micro-prompt: own stable prefix (byte-identical per call), exchange in the
tail; its templates and grammar ship in the plugin and are found through the runtime's
prompt assets, after the user's overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import atomic_agent.plugins.memory_reflection as reflection_plugin
from atomic_agent.llm.model_profile import profile_named
from atomic_agent.plugins.memory_reflection.reflection_grammar import reflection_grammar
from atomic_agent.plugins.memory_reflection.reflection_prompt import MAX_TEXT_CHARS, ReflectionPromptBuilder
from atomic_agent.prompt.prompt_assets import PromptAssets
from atomic_agent.testing.runtime_kit import fresh_plugin_host


def assets(state_dir: Path) -> PromptAssets:
    """The assets a runtime with the reflection plugin has (found by convention, not by path)."""
    host = fresh_plugin_host()
    host.register(reflection_plugin, "memory_reflection")
    return PromptAssets.for_host(state_dir, host)


def builder_for(state_dir: Path, max_facts: int, max_notes: int) -> Any:
    return ReflectionPromptBuilder(assets(state_dir).env(), max_facts, max_notes)


def test_stable_prefix_is_byte_identical_across_calls_and_a_true_prefix(tmp_path: Path) -> None:
    builder = builder_for(tmp_path, 3, 2)
    profile = profile_named("plain", chatml=True)
    one = builder.build("I moved to Lisbon", "Noted!", profile)
    two = builder.build("Something else entirely", "Sure.", profile)
    framed = profile.frame_stable_prefix(builder.stable_prefix)
    assert one.text[:one.prefix_length] == two.text[:two.prefix_length] == framed
    assert "At most 3 SET lines and 2 NOTE lines" in builder.stable_prefix
    assert "supersedes=" in builder.stable_prefix
    assert "USER: I moved to Lisbon\nASSISTANT: Noted!" in one.text


def test_plain_framing_without_a_profile(tmp_path: Path) -> None:
    builder = builder_for(tmp_path, 3, 2)
    prompt = builder.build("hi", "hello", None)
    assert prompt.text.startswith(builder.stable_prefix) and prompt.prefix_length == len(builder.stable_prefix)


def test_long_exchanges_are_clipped(tmp_path: Path) -> None:
    prompt = builder_for(tmp_path, 3, 2).build("u" * 10_000, "r" * 10_000, None)
    assert "u" * (MAX_TEXT_CHARS - 1) + "…" in prompt.text and "u" * MAX_TEXT_CHARS not in prompt.text


def test_user_template_override_wins(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "reflection.j2").write_text("custom prefix {{ max_facts }}\n")
    assert builder_for(tmp_path, 1, 1).stable_prefix == "custom prefix 1\n"


def test_grammar_is_bounded_and_comment_free(tmp_path: Path) -> None:
    grammar = reflection_grammar(assets(tmp_path))
    assert grammar.startswith('root ::= "NONE" | entry ( "\\n" entry ){0,7}')
    assert "#" not in grammar and "{1,200}" in grammar


def test_a_users_grammar_override_wins(tmp_path: Path) -> None:
    (tmp_path / "grammars").mkdir()
    (tmp_path / "grammars" / "reflection.gbnf").write_text('# mine\nroot ::= "NONE"\n')
    assert reflection_grammar(assets(tmp_path)) == 'root ::= "NONE"\n'


def test_the_core_ships_no_reflection_template_or_grammar() -> None:
    core = Path(__file__).resolve().parents[3]
    assert not (core / "templates" / "reflection.j2").exists()
    assert not (core / "grammars" / "reflection.gbnf").exists()
