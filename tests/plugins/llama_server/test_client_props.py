"""/health, /props, /tokenize and /slots through LlamaServerClient."""

from __future__ import annotations

import socket

from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient, ServerProps
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer, fake_tokenize


async def test_props_report_per_slot_context_slots_and_model_facts() -> None:
    with FakeLlamaServer(n_ctx=4096, total_slots=2, vision=True, chat_template="{{ x }}") as fake:
        client = LlamaServerClient(fake.base_url)
        props = await client.props()
        await client.aclose()
    assert (props.n_ctx, props.total_slots) == (4096, 2)
    assert props.modalities["vision"] is True
    assert (props.chat_template, props.model_alias) == ("{{ x }}", "fake-smollm2")
    assert props.model_path == "/models/fake.gguf"
    assert props.raw["default_generation_settings"]["n_ctx"] == 4096


async def test_props_fall_back_to_a_root_n_ctx() -> None:
    with FakeLlamaServer(props={"n_ctx": 2048, "total_slots": 1}) as fake:
        client = LlamaServerClient(fake.base_url)
        props = await client.props()
        await client.aclose()
    assert (props.n_ctx, props.total_slots, props.modalities, props.chat_template) == (2048, 1, {}, "")


def test_props_without_any_n_ctx_leave_it_unknown() -> None:
    assert ServerProps.from_json({"default_generation_settings": {"params": {}}}).n_ctx is None


async def test_health_is_true_when_ok_and_false_while_loading_or_unreachable() -> None:
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        assert await client.health() is True
        fake.loading = True
        assert await client.health() is False
        await client.aclose()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    client = LlamaServerClient(url)
    assert await client.health() is False
    await client.aclose()


async def test_tokenize_sends_add_special_false() -> None:
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        tokens = await client.tokenize("Hello world")
        await client.aclose()
        assert fake.requests[-1].body == {"content": "Hello world", "add_special": False}
    assert tokens == fake_tokenize("Hello world")


async def test_slots_lists_every_slot() -> None:
    with FakeLlamaServer(total_slots=3) as fake:
        client = LlamaServerClient(fake.base_url)
        slots = await client.slots()
        await client.aclose()
    assert [slot["id"] for slot in slots] == [0, 1, 2]
