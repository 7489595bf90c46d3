"""The `openai-compatible` text provider: /chat/completions over httpx.

Native tools by default (the registry's tools as OpenAI functions, `tool_calls` mapped
back to registry names); with `toolTransport: grammar` it sends the GBNF as `grammar`
instead, for llama.cpp-based servers. Retries follow `retry_policy`; a stream that has
started is never retried.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from atomic_agent.api import Completion, CompletionRequest, ProviderCapabilities

from .auth_headers import auth_headers
from .chat_request import build_chat_body
from .chat_response import completion_from_chat
from .chat_stream import ChatStreamAccumulator, StreamErrorEvent
from .endpoint_entry import Endpoint
from .http_errors import OpenAiHttpError, error_from_response, network_error
from .image_request import advertised_vision
from .openrouter_catalog import catalog_model
from .retry_policy import send_with_retry
from .tool_functions import tools_payload

DeltaCallback = Callable[[str], None]
NATIVE = "native_tools"


class OpenAiCompatibleProvider:
    def __init__(self, endpoint: Endpoint, *, track_cost: bool = True, transport: Any = None,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        import httpx

        self.endpoint = endpoint
        self.track_cost = track_cost
        self.mode = "local" if endpoint.local else "cloud"
        self.max_tokens = endpoint.max_tokens
        self.temperature = endpoint.temperature if endpoint.temperature is not None else 0.2
        vision, self._vision_source = advertised_vision(endpoint)
        self.capabilities = ProviderCapabilities(transport=endpoint.transport, slot_affinity=False, vision=vision,
                                                 embeddings=True)
        self._sleep = sleep
        self._headers = auth_headers(endpoint.api_key, endpoint.api_key_header, endpoint.headers)
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(endpoint.timeout_s, connect=min(endpoint.timeout_s, 10.0)),
                                       transport=transport)

    # -- completions --------------------------------------------------------------------------
    async def complete(self, request: CompletionRequest, on_delta: DeltaCallback | None = None) -> Completion:
        ep = self.endpoint
        native = ep.transport == NATIVE
        tools, offered = tools_payload(request.tools) if native else ([], {})
        stream = bool(request.stream and ep.stream and on_delta is not None)
        body = build_chat_body(ep, request, tools if native else None, stream)
        url = ep.url("chat/completions")
        started = time.perf_counter()
        if stream:
            assert on_delta is not None
            data = await self._stream(url, body, on_delta)
        else:
            data = await send_with_retry(lambda: self._post_json(url, body), ep.retries, ep.retry_max_wait_s,
                                         self._sleep)
        return completion_from_chat(data, url=url, native=native, offered=offered, model=ep.model,
                                    pricing=ep.pricing, track_cost=self.track_cost,
                                    duration_ms=(time.perf_counter() - started) * 1000)

    async def _post_json(self, url: str, body: dict[str, Any]) -> Any:
        import httpx

        try:
            response = await self._http.post(url, json=body, headers=self._headers)
        except httpx.HTTPError as exc:
            raise network_error(exc, url, self.endpoint.provider_id) from exc
        if response.status_code >= 400:
            raise error_from_response(response.status_code, url, response.text, response.headers,
                                      self.endpoint.provider_id)
        try:
            return response.json()
        except ValueError:
            raise OpenAiHttpError(f"{url} answered HTTP {response.status_code} with invalid JSON: "
                                  f"{response.text[:200]!r}", status=response.status_code, url=url) from None

    async def _open_stream(self, url: str, body: dict[str, Any]) -> Any:
        import httpx

        try:
            response = await self._http.send(self._http.build_request("POST", url, json=body, headers=self._headers),
                                             stream=True)
        except httpx.HTTPError as exc:
            raise network_error(exc, url, self.endpoint.provider_id) from exc
        if response.status_code >= 400:
            try:
                text = (await response.aread()).decode("utf-8", "replace")
            except httpx.HTTPError:
                text = ""
            finally:
                await response.aclose()
            raise error_from_response(response.status_code, url, text, response.headers, self.endpoint.provider_id)
        return response

    async def _stream(self, url: str, body: dict[str, Any], on_delta: DeltaCallback) -> dict[str, Any]:
        import httpx

        ep = self.endpoint
        response = await send_with_retry(lambda: self._open_stream(url, body), ep.retries, ep.retry_max_wait_s,
                                         self._sleep)
        acc = ChatStreamAccumulator()
        try:
            async for line in response.aiter_lines():
                piece = acc.feed_line(line)
                if piece:
                    on_delta(piece)
                if acc.done:
                    break
        except StreamErrorEvent as exc:
            error = exc.payload.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            raise error_from_response(code if isinstance(code, int) else 500, url, _dumps(exc.payload), {},
                                      ep.provider_id) from None
        except httpx.HTTPError as exc:
            raise OpenAiHttpError(f"the stream from provider {ep.provider_id!r} at {url} broke after {acc.chunks} "
                                  f"chunks ({type(exc).__name__}); not retried once output began", status=None,
                                  url=url, timed_out=isinstance(exc, httpx.TimeoutException)) from exc
        except ValueError as exc:
            raise OpenAiHttpError(f"provider {ep.provider_id!r} at {url} sent a malformed stream event: {exc}",
                                  status=200, url=url) from exc
        finally:
            await response.aclose()
        if not acc.complete:
            raise OpenAiHttpError(f"the stream from provider {ep.provider_id!r} at {url} ended after {acc.chunks} "
                                  "chunks without a finish reason or [DONE]", status=None, url=url)
        return acc.response()

    # -- the optional vision capability (plugins/vision/vision_contract.py ImageDescriber) ----------
    async def vision_support(self, refresh: bool = False) -> tuple[bool, str]:
        return self.capabilities.vision, self._vision_source

    async def describe_images(self, prompt: str, images: Sequence[tuple[str, bytes]], *, max_images: int,
                              max_tokens: int = 512, assume_vision: bool = False) -> str:
        """One non-streaming chat completion with the images as `image_url` data URIs."""
        from atomic_agent.api import ProviderError

        from .image_request import image_chat_body, image_reply

        if not images:
            raise ValueError("no image to describe")
        if len(images) > max_images:
            raise ValueError(f"{len(images)} images in one call; at most {max_images} (vision.maxImagesPerCall)")
        ep = self.endpoint
        if not (assume_vision or self.capabilities.vision):
            raise ProviderError(f"provider {ep.provider_id!r} ({ep.model}) does not advertise vision; set "
                                "\"vision\": true in its llm.providers entry if the model takes images",
                                error_type="vision_unsupported")
        url = ep.url("chat/completions")
        body = image_chat_body(ep, prompt, images, min(max_tokens, ep.max_tokens))
        data = await send_with_retry(lambda: self._post_json(url, body), ep.retries, ep.retry_max_wait_s, self._sleep)
        return image_reply(data, url)

    # -- embeddings and discovery ------------------------------------------------------------------
    async def embed(self, texts: list[str]) -> list[list[float]]:
        from .embeddings_request import embed_texts

        return await embed_texts(self._http, self.endpoint, self._headers, texts)

    async def list_models(self) -> list[str]:
        url = self.endpoint.url("models")
        import httpx

        try:
            response = await self._http.get(url, headers=self._headers)
        except httpx.HTTPError as exc:
            raise network_error(exc, url, self.endpoint.provider_id) from exc
        if response.status_code >= 400:
            raise error_from_response(response.status_code, url, response.text, response.headers,
                                      self.endpoint.provider_id)
        data = response.json()
        rows = data.get("data") if isinstance(data, dict) else None
        return sorted(str(r.get("id")) for r in rows or [] if isinstance(r, dict) and r.get("id"))

    # -- provider protocol facts ---------------------------------------------------------------------
    async def context_window(self) -> int | None:
        if self.endpoint.context_window is not None:
            return self.endpoint.context_window
        if self.endpoint.preset == "openrouter":
            row = catalog_model(self.endpoint.model)
            return row.context if row is not None else None
        return None

    async def describe(self) -> dict[str, object]:
        # no chat template: the chat endpoint applies its own, so the prompt stays unframed text
        return {"chat_template": "", "model_alias": "", "model": self.endpoint.model, "modalities": {},
                "provider": self.endpoint.provider_id, "baseUrl": self.endpoint.base_url}

    def unavailable_hint(self) -> str:
        ep = self.endpoint
        key = f" and the key in ${ep.api_key_env}" if ep.api_key_env else ""
        return (f"Provider {ep.provider_id!r} at {ep.base_url} did not answer; check the network{key} "
                f"(`atomic-agent providers verify {ep.provider_id}`), or switch with `atomic-agent providers use`.")

    async def close(self) -> None:
        await self._http.aclose()


def _dumps(payload: Any) -> str:
    import json

    return json.dumps(payload)
