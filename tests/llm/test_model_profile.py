"""Prompt framing and reasoning ownership of the built-in model profiles."""

from __future__ import annotations

import os

import attrs
import pytest

from atomic_agent.llm.model_profile import (
    GEMMA4_THINK_PROFILE,
    PLAIN_CHATML_PROFILE,
    PLAIN_TEXT_PROFILE,
    QWEN_THINK_PROFILE,
    ModelProfile,
    ProfilePromptMisalignedError,
    profile_named,
)

ALL_PROFILES = (PLAIN_TEXT_PROFILE, PLAIN_CHATML_PROFILE, QWEN_THINK_PROFILE, GEMMA4_THINK_PROFILE)
PREFIX = "### system\nYou are atomic-agent.\n### tools\n- reply\n"
TAILS = ("### world\ncwd=/a\n### respond\nRespond now.\n\n", "### conversation\nuser: other\n### respond\n")


def _ids(profile: ModelProfile) -> str:
    return f"{profile.name}-{profile.framing.name}"


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=_ids)
def test_stable_prefix_is_a_true_prefix_of_the_framed_prompt(profile: ModelProfile) -> None:
    framed_prefix = profile.frame_stable_prefix(PREFIX)
    for tail in TAILS:
        prompt = profile.frame_prompt(PREFIX, tail)
        assert prompt.startswith(framed_prefix)
        # the raw prefix bytes sit unchanged right after constant framing
        assert prompt.index(PREFIX) == len(profile.framing.system_open + profile.system_preamble)


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=_ids)
def test_variable_tail_never_changes_bytes_before_the_end_of_the_stable_prefix(profile: ModelProfile) -> None:
    first, second = (profile.frame_prompt(PREFIX, tail) for tail in TAILS)
    assert len(os.path.commonprefix([first, second])) >= len(profile.frame_stable_prefix(PREFIX))


def test_chatml_framing_matches_the_template_layout() -> None:
    assert PLAIN_CHATML_PROFILE.frame_prompt("P", "T") == (
        "<|im_start|>system\nP<|im_end|>\n<|im_start|>user\nT<|im_end|>\n<|im_start|>assistant\n"
    )


def test_qwen_think_prompt_ends_with_the_prefilled_open_tag() -> None:
    assert QWEN_THINK_PROFILE.frame_prompt("P", "T") == (
        "<|im_start|>system\nP<|im_end|>\n<|im_start|>user\nT<|im_end|>\n<|im_start|>assistant\n<think>\n"
    )


def test_gemma_framing_uses_native_turns_with_think_token_on_top_of_the_system_turn() -> None:
    assert GEMMA4_THINK_PROFILE.frame_prompt("P", "T") == (
        "<|turn>system\n<|think|>\nP<turn|>\n<|turn>user\nT<turn|>\n<|turn>model\n"
    )


def test_plain_text_framing_is_the_bare_concatenation() -> None:
    assert PLAIN_TEXT_PROFILE.frame_prompt("P\n", "T\n") == "P\nT\n"


def test_reasoning_ownership_per_profile() -> None:
    assert not PLAIN_TEXT_PROFILE.has_reasoning and not PLAIN_CHATML_PROFILE.has_reasoning
    assert (QWEN_THINK_PROFILE.reasoning_open, QWEN_THINK_PROFILE.reasoning_close) == ("<think>", "</think>")
    assert QWEN_THINK_PROFILE.reasoning_open_emitted_by_model is False
    assert (GEMMA4_THINK_PROFILE.reasoning_open, GEMMA4_THINK_PROFILE.reasoning_close) == (
        "<|channel>thought\n", "<channel|>")
    assert GEMMA4_THINK_PROFILE.reasoning_open_emitted_by_model is True


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=_ids)
def test_check_prompt_aligned_accepts_framed_prompts(profile: ModelProfile) -> None:
    profile.check_prompt_aligned(profile.frame_prompt(PREFIX, TAILS[0]))


def test_check_prompt_aligned_rejects_a_qwen_prompt_without_the_prefill() -> None:
    prompt = PLAIN_CHATML_PROFILE.frame_prompt(PREFIX, TAILS[0])
    with pytest.raises(ProfilePromptMisalignedError, match=r"must end with '<\|im_start\|>assistant\\n<think>\\n'"):
        QWEN_THINK_PROFILE.check_prompt_aligned(prompt)


def test_check_prompt_aligned_rejects_a_prefilled_gemma_channel_open() -> None:
    prompt = GEMMA4_THINK_PROFILE.frame_prompt(PREFIX, TAILS[0]) + "<|channel>thought\n"
    with pytest.raises(ProfilePromptMisalignedError, match="writes it itself"):
        GEMMA4_THINK_PROFILE.check_prompt_aligned(prompt)


def test_check_prompt_aligned_rejects_a_chatml_prompt_without_the_assistant_opener() -> None:
    with pytest.raises(ProfilePromptMisalignedError, match="<\\|im_start\\|>assistant"):
        PLAIN_CHATML_PROFILE.check_prompt_aligned("<|im_start|>system\nP<|im_end|>\n")


def test_profiles_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        QWEN_THINK_PROFILE.prefill = ""  # type: ignore[misc]


def test_unknown_profile_name_is_rejected_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match="plain, qwen-think, gemma4-think"):
        profile_named("deepseek")
    with pytest.raises(ValueError, match="unknown model profile name"):
        ModelProfile(name="other")


def test_a_reasoning_profile_needs_both_sentinels() -> None:
    with pytest.raises(ValueError, match="set together"):
        ModelProfile(name="qwen-think", reasoning_open="<think>", reasoning_body_rule="think-body")


def test_profile_named_picks_framing_for_plain() -> None:
    assert profile_named("plain", chatml=True) is PLAIN_CHATML_PROFILE
    assert profile_named("plain") is PLAIN_TEXT_PROFILE
    assert profile_named("qwen-think") is QWEN_THINK_PROFILE
    assert profile_named("gemma4-think") is GEMMA4_THINK_PROFILE
