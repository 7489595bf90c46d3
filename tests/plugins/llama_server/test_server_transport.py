"""The llama-server client's transport: a plain-http server costs no CA bundle load, and
the TLS context it carries instead can only refuse a peer, never accept one."""

from __future__ import annotations

import ssl

from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient, server_transport
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer


def _context(transport: object) -> ssl.SSLContext:
    context = transport._pool._ssl_context  # type: ignore[attr-defined]  # httpcore's pool keeps it here
    assert isinstance(context, ssl.SSLContext)
    return context


def test_a_plain_http_server_gets_a_context_that_trusts_nothing_and_still_verifies() -> None:
    context = _context(server_transport("http://127.0.0.1:8080"))
    assert context.cert_store_stats()["x509_ca"] == 0  # the CA bundle was never loaded
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname  # so any TLS peer is refused


def test_an_https_server_keeps_the_verifying_default_context() -> None:
    default = _context(server_transport("https://llama.example:8443"))
    assert default.verify_mode == ssl.CERT_REQUIRED and default.check_hostname
    assert default.cert_store_stats()["x509_ca"] > 0  # httpx's default: the CA bundle


async def test_the_client_talks_to_a_plain_http_server_through_it() -> None:
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        assert await client.health() is True
        assert _context(client.transport.inner).cert_store_stats()["x509_ca"] == 0
        await client.aclose()
