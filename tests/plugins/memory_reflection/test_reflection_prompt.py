"""The reflection micro-prompt: own stable prefix (byte-identical per call), exchange in the tail."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.llm.model_profile import profile_named
from atomic_agent.plugins.memory_reflection.reflection_grammar import reflection_grammar
from atomic_agent.plugins.memory_reflection.reflection_prompt import MAX_TEXT_CHARS, ReflectionPromptBuilder


def test_stable_prefix_is_byte_identical_across_calls_and_a_true_prefix(tmp_path: Path) -> None:
    builder = ReflectionPromptBuilder(tmp_path, 3, 2)
    profile = profile_named("plain", chatml=True)
    one = builder.build("I moved to Lisbon", "Noted!", profile)
    two = builder.build("Something else entirely", "Sure.", profile)
    framed = profile.frame_stable_prefix(builder.stable_prefix)
    assert one.text[:one.prefix_length] == two.text[:two.prefix_length] == framed
    assert "At most 3 SET lines and 2 NOTE lines" in builder.stable_prefix
    assert "supersedes=" in builder.stable_prefix
    assert "USER: I moved to Lisbon\nASSISTANT: Noted!" in one.text


def test_plain_framing_without_a_profile(tmp_path: Path) -> None:
    builder = ReflectionPromptBuilder(tmp_path, 3, 2)
    prompt = builder.build("hi", "hello", None)
    assert prompt.text.startswith(builder.stable_prefix) and prompt.prefix_length == len(builder.stable_prefix)


def test_long_exchanges_are_clipped(tmp_path: Path) -> None:
    prompt = ReflectionPromptBuilder(tmp_path, 3, 2).build("u" * 10_000, "r" * 10_000, None)
    assert "u" * (MAX_TEXT_CHARS - 1) + "…" in prompt.text and "u" * MAX_TEXT_CHARS not in prompt.text


def test_user_template_override_wins(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "reflection.j2").write_text("custom prefix {{ max_facts }}\n")
    assert ReflectionPromptBuilder(tmp_path, 1, 1).stable_prefix == "custom prefix 1\n"


def test_grammar_is_bounded_and_comment_free() -> None:
    grammar = reflection_grammar()
    assert grammar.startswith('root ::= "NONE" | entry ( "\\n" entry ){0,7}')
    assert "#" not in grammar and "{1,200}" in grammar
