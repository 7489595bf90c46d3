"""The reflection micro-prompt: its own small stable prefix plus the exchange.

The prefix (this plugin's `templates/reflection.j2`) depends only on the per-call caps, so
it is byte-identical for every call of a runtime and the reflection slot keeps it cached.
The exchange (`templates/reflection_exchange.j2`) is the variable part. Both render with the
runtime's template environment (the `prompt_assets` service), so a user override in
`<state>/templates/` wins, as for every prompt template.
"""

from __future__ import annotations

from typing import Any

import attrs

PREFIX_TEMPLATE = "reflection.j2"
EXCHANGE_TEMPLATE = "reflection_exchange.j2"
WINDOW_TEMPLATE = "reflection_window.j2"  # sliding-window reflection (memorySegmentation)
MAX_TEXT_CHARS = 1500  # per side of the exchange: reflection reads the gist, not a whole file dump


@attrs.frozen
class ReflectionPrompt:
    text: str
    prefix_length: int


def clip(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    flat = text.strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class ReflectionPromptBuilder:
    """`prefix_template` names the stable prefix (typed notes use `reflection_typed.j2`);
    each prefix is rendered once and stays byte-stable, so the reflection slot caches it."""

    def __init__(self, env: Any, max_facts: int, max_notes: int, prefix_template: str = PREFIX_TEMPLATE) -> None:
        self._env = env
        self.stable_prefix = self._env.get_template(prefix_template).render(max_facts=max_facts, max_notes=max_notes)

    def build(self, user_text: str, reply_text: str, profile: Any | None,
              transcript: Any | None = None) -> ReflectionPrompt:
        """The exchange, or with `transcript` (pairs, oldest first) numbered `### turn N` blocks."""
        if transcript:
            pairs = [{"user": clip(p.user_text), "reply": clip(p.reply_text)} for p in transcript]
            tail = self._env.get_template(WINDOW_TEMPLATE).render(pairs=pairs)
        else:
            tail = self._env.get_template(EXCHANGE_TEMPLATE).render(user_text=clip(user_text),
                                                                    reply_text=clip(reply_text))
        if profile is None:
            return ReflectionPrompt(self.stable_prefix + tail, len(self.stable_prefix))
        framed = profile.frame_stable_prefix(self.stable_prefix)
        return ReflectionPrompt(profile.frame_prompt(self.stable_prefix, tail), len(framed))
