"""Model profiles: how a model family wants its prompt framed and where its reasoning goes.

A profile answers three questions for the rest of the runtime:

- which reasoning sentinels bracket the model's thinking block, and who writes the open
  sentinel (the prompt prefill, or the model itself);
- which chat-turn markers wrap the stable prefix and the variable tail, so the prompt is
  the model's native format and the stable prefix stays a byte-stable prompt prefix;
- what a correctly framed prompt must end with (`check_prompt_aligned`).
"""

from __future__ import annotations

import attrs

# Pick the model profile from what llama-server reports (/props chat_template, model alias).
#
# Order: an explicit override wins; then the alias hint for Nemotron; then the chat template
# (Gemma 4 turn markers, a ChatML template that thinks, plain ChatML); then alias hints for
# servers that report no template; anything else is plain text.

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


PLAIN = "plain"
QWEN_THINK = "qwen-think"
GEMMA4_THINK = "gemma4-think"
PROFILE_NAMES: tuple[str, ...] = (PLAIN, QWEN_THINK, GEMMA4_THINK)


class ProfilePromptMisalignedError(ValueError):
    """A prompt does not end the way its model profile requires."""


@attrs.frozen
class TurnFraming:
    """Chat-turn markers around the stable prefix (system turn) and the tail (user turn).

    Every marker is a constant string, so nothing variable can land before the end of the
    stable prefix. `name` is "chatml", "gemma-turn" or "text" (no markers at all).
    """

    name: str
    system_open: str = ""
    turn_close: str = ""
    user_open: str = ""
    assistant_open: str = ""

    @property
    def is_turn_framed(self) -> bool:
        return bool(self.assistant_open)


CHATML_FRAMING = TurnFraming(
    name="chatml",
    system_open="<|im_start|>system\n",
    turn_close="<|im_end|>\n",
    user_open="<|im_start|>user\n",
    assistant_open="<|im_start|>assistant\n",
)
GEMMA_TURN_FRAMING = TurnFraming(
    name="gemma-turn",
    system_open="<|turn>system\n",
    turn_close="<turn|>\n",
    user_open="<|turn>user\n",
    assistant_open="<|turn>model\n",
)
TEXT_FRAMING = TurnFraming(name="text")


@attrs.frozen
class ModelProfile:
    """How one model family is prompted and how its reasoning block is delimited.

    `reasoning_open` / `reasoning_close` are empty for profiles without a reasoning block.
    `reasoning_open_emitted_by_model` says the model writes the open sentinel itself (the
    grammar then includes it); otherwise the prompt's `prefill` already holds it.
    `system_preamble` goes right after the system-turn opener, before the stable prefix
    (Gemma 4 needs `<|think|>` there to switch its thought channel on).
    `reasoning_body_rule` names the GBNF rule of the reasoning body.
    """

    name: str
    framing: TurnFraming = TEXT_FRAMING
    reasoning_open: str = ""
    reasoning_close: str = ""
    reasoning_open_emitted_by_model: bool = False
    prefill: str = ""
    system_preamble: str = ""
    reasoning_body_rule: str = ""

    def __attrs_post_init__(self) -> None:
        if self.name not in PROFILE_NAMES:
            raise ValueError(f"unknown model profile name {self.name!r}; use one of {', '.join(PROFILE_NAMES)}")
        if bool(self.reasoning_open) != bool(self.reasoning_close):
            raise ValueError(f"profile {self.name!r}: reasoning_open and reasoning_close must be set together")
        if self.reasoning_open and not self.reasoning_body_rule:
            raise ValueError(f"profile {self.name!r}: a reasoning profile needs reasoning_body_rule")

    @property
    def has_reasoning(self) -> bool:
        return bool(self.reasoning_close)

    @property
    def prompt_ending(self) -> str:
        """What every framed prompt ends with: the model-turn opener plus the prefill."""
        return self.framing.assistant_open + self.prefill

    def frame_stable_prefix(self, stable_prefix: str) -> str:
        """The framed bytes that stay identical across every step of a session.

        The system turn is closed here too: its close marker is constant, so it still
        belongs to the cacheable part.
        """
        framing = self.framing
        return framing.system_open + self.system_preamble + stable_prefix + framing.turn_close

    def frame_prompt(self, stable_prefix: str, tail: str) -> str:
        """The whole prompt: framed stable prefix, tail in the user turn, model-turn opener, prefill.

        `frame_stable_prefix(stable_prefix)` is always a true prefix of the result.
        """
        framing = self.framing
        return (
            self.frame_stable_prefix(stable_prefix)
            + framing.user_open
            + tail
            + (framing.turn_close if framing.is_turn_framed else "")
            + self.prompt_ending
        )

    def check_prompt_aligned(self, prompt: str) -> None:
        """Raise ProfilePromptMisalignedError unless `prompt` ends the way this profile needs.

        A turn-framed prompt must end with the model-turn opener (plus prefill). When the
        model writes its own reasoning open sentinel, the prompt must not already hold it:
        a prefilled Gemma 4 channel open reads as "thinking disabled".
        """
        if self.reasoning_open_emitted_by_model and prompt.rstrip().endswith(self.reasoning_open.rstrip()):
            raise ProfilePromptMisalignedError(
                f"prompt for model profile {self.name!r} ends with the reasoning open sentinel "
                f"{self.reasoning_open!r}; this model writes it itself, so end the prompt with "
                f"{self.framing.assistant_open!r} instead"
            )
        ending = self.prompt_ending
        if ending and not prompt.endswith(ending):
            raise ProfilePromptMisalignedError(
                f"prompt for model profile {self.name!r} must end with {ending!r} but ends with "
                f"{prompt[-len(ending) - 8:]!r}; build it with ModelProfile.frame_prompt"
            )


PLAIN_TEXT_PROFILE = ModelProfile(name=PLAIN, framing=TEXT_FRAMING)
PLAIN_CHATML_PROFILE = ModelProfile(name=PLAIN, framing=CHATML_FRAMING)
QWEN_THINK_PROFILE = ModelProfile(
    name=QWEN_THINK,
    framing=CHATML_FRAMING,
    reasoning_open="<think>",
    reasoning_close="</think>",
    reasoning_open_emitted_by_model=False,
    prefill="<think>\n",
    reasoning_body_rule="think-body",
)
GEMMA4_THINK_PROFILE = ModelProfile(
    name=GEMMA4_THINK,
    framing=GEMMA_TURN_FRAMING,
    reasoning_open="<|channel>thought\n",
    reasoning_close="<channel|>",
    reasoning_open_emitted_by_model=True,
    prefill="",
    system_preamble="<|think|>\n",
    reasoning_body_rule="channel-body",
)


def profile_named(name: str, *, chatml: bool = False) -> ModelProfile:
    """The built-in profile called `name`. For "plain", `chatml` picks ChatML over text framing."""
    if name == PLAIN:
        return PLAIN_CHATML_PROFILE if chatml else PLAIN_TEXT_PROFILE
    if name == QWEN_THINK:
        return QWEN_THINK_PROFILE
    if name == GEMMA4_THINK:
        return GEMMA4_THINK_PROFILE
    raise ValueError(f"unknown model profile {name!r}; use one of {', '.join(PROFILE_NAMES)}")
