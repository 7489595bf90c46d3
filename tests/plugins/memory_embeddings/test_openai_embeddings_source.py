"""Hybrid recall with the vectors of an OpenAI-compatible `/v1/embeddings`, over real HTTP on
loopback: `llm.activeEmbeddingProvider` names the entry, its `embeddingModel` names the vectors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.plugins.memory_embeddings.concept_embedder import concept_vector
from tests.plugins.memory_embeddings.hybrid_runtime import PLUGINS, counter, make_hybrid_runtime
from tests.plugins.memory_embeddings.test_hybrid_recall import GUITAR, PARAPHRASE, replies, store_notes


class EmbeddingsHandler(BaseHTTPRequestHandler):
    seen: list[dict] = []
    status = 200

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if type(self).status != 200:
            payload = json.dumps({"error": {"message": "model is loading"}}).encode()
        else:
            data = [{"object": "embedding", "index": i, "embedding": concept_vector(t)}
                    for i, t in reversed(list(enumerate(body["input"])))]  # out of order on purpose
            payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: object) -> None:
        return None


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    EmbeddingsHandler.seen = []
    EmbeddingsHandler.status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def llm_block(base_url: str) -> dict:
    return {"llm": {"providers": [{"id": "vendor", "kind": "openai-compatible", "baseUrl": base_url,
                                   "model": "chat-model", "embeddingModel": "concept-embed", "apiKeyEnv": ""}],
                    "activeEmbeddingProvider": "vendor"}}


async def test_openai_compatible_embeddings_drive_hybrid_recall_over_loopback_http(
        tmp_path: Path, embeddings_server: str) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), None, plugins=(*PLUGINS, "openai_compatible"),
                                  config=llm_block(embeddings_server))
    ids = await store_notes(runtime, GUITAR, "the deploy script lives in ops/deploy.sh")
    memory = runtime.service("memory")
    stored = memory.database.query("SELECT DISTINCT model FROM memory_embeddings")
    nearest = await memory.vector_recall.nearest(PARAPHRASE, None)
    await runtime.close()
    assert [r["model"] for r in stored] == ["vendor/concept-embed+context"]  # embedContext is on by default
    assert max(nearest, key=nearest.get) == ids[0]
    assert {s["path"] for s in EmbeddingsHandler.seen} == {"/v1/embeddings"}
    assert all(s["body"]["model"] == "concept-embed" for s in EmbeddingsHandler.seen)


async def test_openai_compatible_error_answer_degrades_to_bm25(tmp_path: Path, embeddings_server: str) -> None:
    runtime = make_hybrid_runtime(tmp_path, replies(0), None, plugins=(*PLUGINS, "openai_compatible"),
                                  config=llm_block(embeddings_server))
    await store_notes(runtime, GUITAR)
    EmbeddingsHandler.status = 503
    assert await runtime.service("memory").vector_recall.nearest(PARAPHRASE, None) is None
    assert counter(runtime, "agent.memory.embeddings.fallback_to_fts5", reason="unavailable", path="recall") == 1
    await runtime.close()
