from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from atomic_agent.plugins.openai_compatible.endpoint_entry import resolve_endpoint
from atomic_agent.plugins.openai_compatible.openai_provider import OpenAiCompatibleProvider

from .tool_template_server import tool_template_server  # noqa: F401
from .vendor_server import VendorServer


@pytest.fixture
def vendor() -> Iterator[VendorServer]:
    server = VendorServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def make_provider(vendor: VendorServer) -> AsyncIterator[Callable[..., OpenAiCompatibleProvider]]:
    """A provider pointed at the vendor server; records every back-off it would sleep."""
    made: list[OpenAiCompatibleProvider] = []

    def make(*, environ: dict[str, str] | None = None, **entry: Any) -> OpenAiCompatibleProvider:
        waits: list[float] = []

        async def sleep(seconds: float) -> None:
            waits.append(seconds)

        base = {"id": "vendor", "kind": "openai-compatible", "baseUrl": vendor.url + "/v1", "model": "m-1",
                "apiKeyEnv": "TEST_VENDOR_KEY"}
        endpoint = resolve_endpoint({**base, **entry}, environ or {"TEST_VENDOR_KEY": "sk-test-123"})
        provider = OpenAiCompatibleProvider(endpoint, sleep=sleep)
        provider.waits = waits  # type: ignore[attr-defined]
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.close()
