"""Vendor presets: named OpenAI-compatible endpoints, as data.

Adding a vendor is one row here, never a new provider kind. A preset fills what the
entry leaves out (base URL, key variable, auth header, mandatory static headers, a
default model); an entry's own values always win. Keys are never stored in config.json:
an entry names the environment variable (or `.env` key) that holds it.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

BEARER = "Authorization"


@attrs.frozen
class VendorPreset:
    id: str
    label: str
    base_url: str
    api_key_env: str = ""
    api_key_header: str = BEARER  # "Authorization" sends `Bearer <key>`; any other header sends the key as is
    headers: Mapping[str, str] = attrs.field(factory=dict)
    default_model: str = ""
    local: bool = False  # runs on this machine; no key needed
    catalog: str = ""  # name of a bundled offline model catalog


PRESETS: tuple[VendorPreset, ...] = (
    VendorPreset("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
                 headers={"X-Title": "atomic-agent"}, default_model="openai/gpt-4o-mini", catalog="openrouter"),
    VendorPreset("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", default_model="gpt-4o-mini"),
    VendorPreset("anthropic", "Anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY",
                 api_key_header="x-api-key", headers={"anthropic-version": "2023-06-01"},
                 default_model="claude-3-5-haiku-latest"),
    VendorPreset("groq", "Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY",
                 default_model="llama-3.1-8b-instant"),
    VendorPreset("together", "Together AI", "https://api.together.xyz/v1", "TOGETHER_API_KEY",
                 default_model="meta-llama/Llama-3.3-70B-Instruct-Turbo"),
    VendorPreset("fireworks", "Fireworks AI", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY",
                 default_model="accounts/fireworks/models/llama-v3p1-8b-instruct"),
    VendorPreset("deepseek", "DeepSeek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY",
                 default_model="deepseek-chat"),
    VendorPreset("mistral", "Mistral AI", "https://api.mistral.ai/v1", "MISTRAL_API_KEY",
                 default_model="mistral-small-latest"),
    VendorPreset("moonshot", "Moonshot AI (Kimi)", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY",
                 default_model="moonshot-v1-8k"),
    VendorPreset("qwen", "Qwen (Alibaba DashScope)", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
                 "DASHSCOPE_API_KEY", default_model="qwen-plus"),
    VendorPreset("perplexity", "Perplexity", "https://api.perplexity.ai", "PERPLEXITY_API_KEY",
                 default_model="sonar"),
    VendorPreset("sambanova", "SambaNova Cloud", "https://api.sambanova.ai/v1", "SAMBANOVA_API_KEY",
                 default_model="Meta-Llama-3.1-8B-Instruct"),
    VendorPreset("xai", "xAI (Grok)", "https://api.x.ai/v1", "XAI_API_KEY", default_model="grok-3-mini"),
    VendorPreset("gemini", "Google Gemini (OpenAI endpoint)", "https://generativelanguage.googleapis.com/v1beta/openai",
                 "GEMINI_API_KEY", default_model="gemini-2.0-flash"),
    VendorPreset("cerebras", "Cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY",
                 default_model="llama3.1-8b"),
    VendorPreset("ollama", "Ollama (local)", "http://127.0.0.1:11434/v1", local=True, default_model="llama3.2"),
    VendorPreset("lmstudio", "LM Studio (local)", "http://127.0.0.1:1234/v1", local=True),
    VendorPreset("vllm", "vLLM (local)", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", local=True),
    VendorPreset("llamacpp", "llama.cpp llama-server (OpenAI endpoint)", "http://127.0.0.1:8080/v1", local=True),
    VendorPreset("custom", "Custom OpenAI-compatible endpoint", ""),
)
PRESETS_BY_ID: dict[str, VendorPreset] = {p.id: p for p in PRESETS}


def preset_named(name: str) -> VendorPreset:
    try:
        return PRESETS_BY_ID[name]
    except KeyError:
        raise ValueError(f"unknown provider preset {name!r}; presets: {', '.join(PRESETS_BY_ID)}") from None
