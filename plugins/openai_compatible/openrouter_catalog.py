"""A small offline snapshot of OpenRouter chat models, for search and key checks offline.

Hand-made from OpenRouter's public model listing as remembered on 2025-06-01, not pulled
from the live endpoint: prices (USD per million tokens) and context windows are
approximate and only good for ranking and rough cost estimates. To refresh it, pull
https://openrouter.ai/api/v1/models, map context_length, input_modalities (vision),
supported_parameters (tools) and pricing x 1e6, and update the date above.
"""

from __future__ import annotations

import attrs

SNAPSHOT_DATE = "2025-06-01"


@attrs.frozen
class CatalogModel:
    id: str
    name: str
    context: int
    prompt_per_m: float  # -1 = variable (routed)
    completion_per_m: float
    vision: bool = False
    tools: bool = True
    cache: bool = False

    @property
    def vendor(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def free(self) -> bool:
        return self.id.endswith(":free") or (self.prompt_per_m == 0 and self.completion_per_m == 0)

    @property
    def routed(self) -> bool:
        return self.vendor == "openrouter"


_M = CatalogModel
OPENROUTER_MODELS: tuple[CatalogModel, ...] = (
    _M("openai/gpt-4o-mini", "OpenAI: GPT-4o-mini", 128_000, 0.15, 0.60, vision=True, cache=True),
    _M("openai/gpt-4o", "OpenAI: GPT-4o", 128_000, 2.50, 10.00, vision=True, cache=True),
    _M("openai/gpt-4.1", "OpenAI: GPT-4.1", 1_047_576, 2.00, 8.00, vision=True, cache=True),
    _M("openai/gpt-4.1-mini", "OpenAI: GPT-4.1 Mini", 1_047_576, 0.40, 1.60, vision=True, cache=True),
    _M("openai/gpt-4.1-nano", "OpenAI: GPT-4.1 Nano", 1_047_576, 0.10, 0.40, vision=True, cache=True),
    _M("openai/o4-mini", "OpenAI: o4 Mini", 200_000, 1.10, 4.40, vision=True, cache=True),
    _M("anthropic/claude-3.5-haiku", "Anthropic: Claude 3.5 Haiku", 200_000, 0.80, 4.00, cache=True),
    _M("anthropic/claude-sonnet-4", "Anthropic: Claude Sonnet 4", 200_000, 3.00, 15.00, vision=True, cache=True),
    _M("anthropic/claude-opus-4", "Anthropic: Claude Opus 4", 200_000, 15.00, 75.00, vision=True, cache=True),
    _M("google/gemini-2.0-flash-001", "Google: Gemini 2.0 Flash", 1_048_576, 0.10, 0.40, vision=True, cache=True),
    _M("google/gemini-2.5-flash", "Google: Gemini 2.5 Flash", 1_048_576, 0.30, 2.50, vision=True, cache=True),
    _M("google/gemini-2.5-pro", "Google: Gemini 2.5 Pro", 1_048_576, 1.25, 10.00, vision=True, cache=True),
    _M("meta-llama/llama-3.1-8b-instruct", "Meta: Llama 3.1 8B Instruct", 131_072, 0.02, 0.03),
    _M("meta-llama/llama-3.3-70b-instruct", "Meta: Llama 3.3 70B Instruct", 131_072, 0.13, 0.40),
    _M("meta-llama/llama-3.3-70b-instruct:free", "Meta: Llama 3.3 70B Instruct (free)", 131_072, 0.0, 0.0),
    _M("mistralai/mistral-nemo", "Mistral: Mistral Nemo", 131_072, 0.02, 0.04),
    _M("mistralai/mistral-small-3.1-24b-instruct", "Mistral: Mistral Small 3.1 24B", 131_072, 0.05, 0.10,
       vision=True),
    _M("deepseek/deepseek-chat-v3-0324", "DeepSeek: DeepSeek V3 0324", 163_840, 0.28, 0.88, cache=True),
    _M("deepseek/deepseek-r1", "DeepSeek: R1", 163_840, 0.50, 2.15),
    _M("deepseek/deepseek-r1:free", "DeepSeek: R1 (free)", 163_840, 0.0, 0.0, tools=False),
    _M("qwen/qwen-2.5-72b-instruct", "Qwen2.5 72B Instruct", 32_768, 0.12, 0.39),
    _M("qwen/qwen3-235b-a22b", "Qwen: Qwen3 235B A22B", 131_072, 0.13, 0.60),
    _M("x-ai/grok-3-mini", "xAI: Grok 3 Mini", 131_072, 0.30, 0.50, cache=True),
    _M("moonshotai/kimi-k2", "MoonshotAI: Kimi K2", 131_072, 0.55, 2.20),
    _M("openrouter/auto", "Auto Router", 2_000_000, -1.0, -1.0, vision=True),
)


def catalog_model(model_id: str) -> CatalogModel | None:
    return next((m for m in OPENROUTER_MODELS if m.id == model_id), None)


def cheapest_paid_model(models: tuple[CatalogModel, ...] = OPENROUTER_MODELS) -> CatalogModel:
    """The cheapest model that costs something: a free model answers 200 on a key with no
    balance, which would make a key check meaningless."""
    paid = [m for m in models if not m.free and not m.routed and m.prompt_per_m > 0]
    return min(paid, key=lambda m: (m.prompt_per_m + m.completion_per_m, m.id))
