"""The client and provider against the real llama-server (SmolLM2-135M, 2 slots)."""

from __future__ import annotations

import json

import pytest

from atomic_agent.api import CompletionRequest, ProviderError
from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient
from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider
from atomic_agent.plugins.llama_server.slot_manager import SlotManager

pytestmark = pytest.mark.llama_server

# ~200 tokens, distinct from other tests' prompts so the first request starts cold
PREFIX = ("<|im_start|>system\nYou are the client-cache probe. "
          + "Reply with a short JSON array of tool calls and nothing else. " * 16 + "<|im_end|>\n")
GRAMMAR = 'root ::= "[" "{" "\\"tool\\":\\"reply\\"" "}" "]"'


def chat(question: str) -> str:
    return PREFIX + f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"


async def test_same_slot_second_completion_reuses_the_shared_prefix(llama_server) -> None:
    slots = SlotManager(llama_server.total_slots)
    slot = slots.main_slot("cache-probe")
    client = LlamaServerClient(llama_server.base_url)
    first = await client.complete(CompletionRequest(prompt=chat("What is 2+2?"), slot_id=slot, n_predict=8,
                                                    temperature=0.0, seed=1))
    second = await client.complete(CompletionRequest(prompt=chat("Name a colour."), slot_id=slot, n_predict=8,
                                                     temperature=0.0, seed=1))
    prefix_tokens = len(await client.tokenize(PREFIX))
    await client.aclose()
    assert first.slot_id == second.slot_id == slot
    assert prefix_tokens > 150
    assert second.cache_n > 0
    assert second.cache_n >= prefix_tokens - 8
    assert second.prompt_n < first.prompt_n


async def test_provider_reads_per_slot_context_and_counts_like_the_server(llama_server) -> None:
    provider = LlamaServerProvider(llama_server.base_url, "external")
    assert await provider.context_window() == llama_server.n_ctx
    assert await provider.total_slots() == llama_server.total_slots
    facts = await provider.describe()
    assert "im_start" in str(facts["chat_template"])
    # /v1/models meta: the count `prompt.style` auto reads (the starter model is SmolLM2-135M)
    assert 100_000_000 < int(facts["n_params"]) < 200_000_000  # type: ignore[call-overload]
    prompt = chat("Count me.")
    tokens = await provider.count_tokens(prompt)
    deltas: list[str] = []
    done = await provider.complete(CompletionRequest(prompt=prompt, grammar=GRAMMAR, n_predict=32, temperature=0.0,
                                                     slot_id=SlotManager(llama_server.total_slots).reflection_slot()),
                                   deltas.append)
    await provider.close()
    assert tokens == done.tokens_evaluated
    assert json.loads(done.content) == [{"tool": "reply"}]
    assert "".join(deltas) == done.content
    assert done.stop_type == "eos"


async def test_real_grammar_error_is_a_400_provider_error(llama_server) -> None:
    client = LlamaServerClient(llama_server.base_url)
    with pytest.raises(ProviderError) as caught:
        await client.complete(CompletionRequest(prompt="hi", grammar="root ::= (", n_predict=4))
    await client.aclose()
    assert (caught.value.status, caught.value.error_type) == (400, "invalid_request_error")
