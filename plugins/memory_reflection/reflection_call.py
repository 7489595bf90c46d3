"""One grammar-constrained completion on the reflection model's background slot, as the
lesson distiller and the lesson voter make it: a byte-stable prefix rendered once from its
template (the slot's KV cache keeps it between turns), a per-turn tail from its own template,
this plugin's grammar when the provider takes grammars, a low temperature and a timeout."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


class ReflectionCall:
    def __init__(self, runtime: RuntimeView, assets: Any, *, prefix_template: str, turn_template: str,
                 grammar_file: str, n_predict: int, purpose: str) -> None:
        self.runtime = runtime
        self.assets = assets
        self.env = assets.env()
        self.stable_prefix = self.env.get_template(prefix_template).render()
        self.turn_template = turn_template
        self.grammar_file = grammar_file
        self.n_predict = n_predict
        self.purpose = purpose  # names the background slot's use
        self._grammar: str | None = None

    def prompt(self, **tail: Any) -> str:
        return self.stable_prefix + self.env.get_template(self.turn_template).render(**tail)

    async def complete(self, memory: Any, session_id: str, prompt: str, timeout_s: float) -> str:
        """The model's answer text; TimeoutError past `timeout_s`, the provider's errors as raised."""
        from atomic_agent.api import CompletionRequest

        from .reflection_grammar import reflection_grammar

        provider = self.runtime.provider
        grammar = None
        if provider.capabilities.transport == "grammar":
            if self._grammar is None:
                self._grammar = reflection_grammar(self.assets, self.grammar_file)
            grammar = self._grammar
        slot = memory.background_slot(provider, session_id, self.purpose)
        request = CompletionRequest(prompt=prompt, grammar=grammar, n_predict=self.n_predict, slot_id=slot,
                                    cache_prompt=True, temperature=0.1, stream=False,
                                    prefix_length=len(self.stable_prefix))
        completion = await asyncio.wait_for(provider.complete(request), timeout_s)
        return str(completion.content)
