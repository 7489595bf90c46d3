"""Pick the model profile from what llama-server reports (/props chat_template, model alias).

Order: an explicit override wins; then the alias hint for Nemotron; then the chat template
(Gemma 4 turn markers, a ChatML template that thinks, plain ChatML); then alias hints for
servers that report no template; anything else is plain text.
"""

from __future__ import annotations

from atomic_agent.llm.model_profile import (
    GEMMA4_THINK_PROFILE,
    PLAIN_CHATML_PROFILE,
    PLAIN_TEXT_PROFILE,
    PROFILE_NAMES,
    QWEN_THINK_PROFILE,
    ModelProfile,
    profile_named,
)

AUTO = "auto"
_CHATML_MARKER = "<|im_start|>"
_GEMMA4_MARKERS = ("<|turn>", "<|channel>")
# A ChatML template that prefills or toggles a <think> block belongs to a thinking model
# (Qwen3 hybrid and Thinking, QwQ, Nemotron).
_THINKING_MARKERS = ("<think>", "enable_thinking")


def detect_profile(chat_template: str | None, model_alias: str | None, override: str | None = None) -> ModelProfile:
    """The profile for a model, given its chat template and alias (both may be unknown).

    `override` is a profile name ("plain", "qwen-think", "gemma4-think") or "auto"/None.
    Nemotron shares qwen-think's reasoning ownership exactly (its template ends the prompt
    at `<|im_start|>assistant\\n<think>\\n`), so it gets the qwen-think profile object itself.
    """
    template = chat_template or ""
    alias = (model_alias or "").lower()
    chatml = _CHATML_MARKER in template
    if override is not None and override.strip().lower() not in ("", AUTO):
        name = override.strip().lower()
        if name not in PROFILE_NAMES:
            raise ValueError(
                f"unknown model profile override {override!r}; use one of {', '.join(PROFILE_NAMES)} or {AUTO!r}"
            )
        return profile_named(name, chatml=chatml or (not template and _alias_is_chatml(alias)))
    if "nemotron" in alias:
        return QWEN_THINK_PROFILE
    if template:
        return _profile_from_template(template)
    return _profile_from_alias(alias)


def _profile_from_template(template: str) -> ModelProfile:
    if any(marker in template for marker in _GEMMA4_MARKERS):
        return GEMMA4_THINK_PROFILE
    if _CHATML_MARKER in template:
        if any(marker in template for marker in _THINKING_MARKERS):
            return QWEN_THINK_PROFILE
        return PLAIN_CHATML_PROFILE
    return PLAIN_TEXT_PROFILE


def _profile_from_alias(alias: str) -> ModelProfile:
    if "gemma-4" in alias or "gemma4" in alias:
        return GEMMA4_THINK_PROFILE
    if "qwq" in alias or ("qwen3" in alias and "thinking" in alias):
        return QWEN_THINK_PROFILE
    if _alias_is_chatml(alias):
        return PLAIN_CHATML_PROFILE
    return PLAIN_TEXT_PROFILE


def _alias_is_chatml(alias: str) -> bool:
    return "smollm" in alias or "qwen" in alias or "qwq" in alias
