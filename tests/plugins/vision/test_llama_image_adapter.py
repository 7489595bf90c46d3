"""The llama-server image adapter against a loopback server that checks the request shape:
/v1/chat/completions, image_url parts with base64 data URIs, thinking off, no slot id."""

from __future__ import annotations

import base64

import pytest

from atomic_agent.api import ProviderError
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.plugins.openai_compatible.endpoint_entry import resolve_endpoint
from atomic_agent.plugins.openai_compatible.openai_provider import OpenAiCompatibleProvider
from atomic_agent.plugins.vision.vision_contract import VISION_UNSUPPORTED, ImageDescriber
from tests.plugins.vision.vision_kit import JPEG_BYTES, llama, png_bytes


def chat_requests(fake: FakeLlamaServer) -> list[dict]:
    return [r.body for r in fake.requests if r.path == "/v1/chat/completions"]


async def test_two_images_go_out_as_data_uris_with_thinking_off_and_no_slot() -> None:
    png = png_bytes()
    with FakeLlamaServer(vision=True) as fake:
        fake.vision_reply = "a grey square and a photo"
        provider = llama(fake.base_url)
        try:
            assert isinstance(provider, ImageDescriber)
            text = await provider.describe_images("What is shown?", [("image/png", png), ("image/jpeg", JPEG_BYTES)],
                                                  max_images=4)
        finally:
            await provider.close()
    # the fake decoded both images and checked their magic against the declared type
    assert text == f"a grey square and a photo [image/png {len(png)} bytes] [image/jpeg {len(JPEG_BYTES)} bytes]"
    [body] = chat_requests(fake)
    assert "id_slot" not in body and "slot_id" not in body
    assert body["chat_template_kwargs"] == {"enable_thinking": False} and body["reasoning_format"] == "none"
    [message] = body["messages"]
    first, second, prompt = message["content"]
    assert first["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
    assert second["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert prompt == {"type": "text", "text": "What is shown?"}
    assert not fake.completion_bodies  # the text endpoint was never used


async def test_a_text_only_server_is_refused_before_any_image_is_sent() -> None:
    with FakeLlamaServer(vision=False) as fake:
        provider = llama(fake.base_url)
        try:
            with pytest.raises(ProviderError) as caught:
                await provider.describe_images("What?", [("image/png", png_bytes())], max_images=4)
        finally:
            await provider.close()
    assert caught.value.error_type == VISION_UNSUPPORTED and "--mmproj" in str(caught.value)
    assert not chat_requests(fake)


async def test_the_provider_enforces_the_per_call_cap_itself() -> None:
    with FakeLlamaServer(vision=True) as fake:
        provider = llama(fake.base_url)
        try:
            with pytest.raises(ValueError, match="at most 2"):
                await provider.describe_images("What?", [("image/png", png_bytes())] * 3, max_images=2)
        finally:
            await provider.close()
    assert not chat_requests(fake)


async def test_the_fake_refuses_a_request_that_names_a_slot() -> None:
    """The shape check is real: a body with a slot id is answered 400, so the tests above could fail."""
    import httpx

    with FakeLlamaServer(vision=True) as fake:
        from atomic_agent.plugins.llama_server.image_chat import image_chat_body

        body = {**image_chat_body("What?", [("image/png", png_bytes())], 64), "id_slot": 0}
        async with httpx.AsyncClient() as client:
            answer = await client.post(fake.base_url + "/v1/chat/completions", json=body)
    assert answer.status_code == 400 and "slot" in answer.text


async def test_an_openai_compatible_entry_that_advertises_vision_sends_the_same_image_parts() -> None:
    with FakeLlamaServer(vision=True) as fake:
        fake.require_thinking_off = False  # a hosted API gets the standard body only
        entry = {"id": "vl", "kind": "openai-compatible", "baseUrl": fake.base_url + "/v1", "model": "some-vl",
                 "vision": True}
        provider = OpenAiCompatibleProvider(resolve_endpoint(entry, {}))
        try:
            assert provider.capabilities.vision is True
            assert await provider.vision_support() == (True, "config")
            text = await provider.describe_images("Read the label", [("image/png", png_bytes())], max_images=1)
        finally:
            await provider.close()
    assert text.startswith("a fake description [image/png")
    [body] = chat_requests(fake)
    assert body["model"] == "some-vl" and body["stream"] is False


async def test_an_openai_compatible_entry_without_vision_is_refused_without_a_request() -> None:
    with FakeLlamaServer(vision=True) as fake:
        provider = OpenAiCompatibleProvider(resolve_endpoint(
            {"id": "txt", "kind": "openai-compatible", "baseUrl": fake.base_url + "/v1", "model": "m"}, {}))
        try:
            assert await provider.vision_support() == (False, "none")
            with pytest.raises(ProviderError) as caught:
                await provider.describe_images("What?", [("image/png", png_bytes())], max_images=4)
        finally:
            await provider.close()
    assert caught.value.error_type == VISION_UNSUPPORTED and not chat_requests(fake)
