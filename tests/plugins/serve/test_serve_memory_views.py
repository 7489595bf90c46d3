"""/api/memory through `serve` on loopback: the phase switches, embedding coverage and one
note's links are served read-only (nothing is created), unknown notes and bad ids answer
the error envelope, every route is 404 without the memory plugin, and the routes sit
behind serve's guard like every other (foreign Host, foreign Origin, missing bearer)."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import httpx
import pytest

import atomic_agent.plugins.memory as memory_plugin
import atomic_agent.plugins.memory_embeddings as embeddings_plugin
import atomic_agent.plugins.memory_links as links_plugin
import atomic_agent.plugins.memory_reflection as reflection_plugin
from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness
from tests.turns.turn_kit import answering_provider

MEMORY_PLUGINS = [(memory_plugin, "memory"), (embeddings_plugin, "memory_embeddings"), (links_plugin, "memory_links"),
                  (reflection_plugin, "memory_reflection")]
ROUTES = ("/api/memory/phases", "/api/memory/embeddings", "/api/memory/notes/1/links")
API_KEY = "k" * 40


def seed_graph(state: Path) -> list[int]:
    state.mkdir(parents=True, exist_ok=True)
    db = MemoryDatabase.open(memory_db_path(state))
    notes = NoteStore(db)
    ids = [notes.store(text).note.id for text in ("the deploy broke on friday", "rollback fixed the deploy",
                                                  "the postmortem names the cause")]
    links = LinkStore(db)
    links.add(ids[0], ids[1], "RELATES_TO")
    links.add(ids[2], ids[1], "REFERENCES", source="tool")
    db.close()
    return ids


def with_memory(tmp_path: Path, plugins=MEMORY_PLUGINS):
    def factory(ask):
        return make_runtime(tmp_path, answering_provider(), ask=ask, extra=list(plugins))

    return factory


def raw_get(serve: ServeHarness, path: str, headers: dict[str, str]) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=WAIT_S)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for key, value in {"Host": f"127.0.0.1:{serve.port}", **headers}.items():
            conn.putheader(key, value)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def test_memory_views_show_phases_coverage_and_a_notes_links(tmp_path: Path) -> None:
    first, middle, last = seed_graph(tmp_path / "state")
    serve = ServeHarness(tmp_path, runtime_factory=with_memory(tmp_path))
    try:
        base = serve.base_url
        phases = {r["block"]: r for r in httpx.get(f"{base}/api/memory/phases").json()["data"]}
        assert phases["memoryLinks"]["state"] == "on" and phases["memoryLinks"]["settings"]["expansionDepth"] == 1
        assert phases["memoryEmbeddings"]["state"] == "off" and phases["memorySegmentation"]["state"] == "off"
        assert phases["memoryTypedNotes"]["state"] == "off" and phases["memoryReflection"]["state"] == "on"
        assert "memoryNotes" not in phases  # its plugin is not loaded: it declares nothing
        embeddings = httpx.get(f"{base}/api/memory/embeddings").json()
        assert embeddings["object"] == "memory.embeddings" and embeddings["installed"] is True
        assert (embeddings["enabled"], embeddings["notes"], embeddings["embedded"], embeddings["coverage"]) == (
            False, 3, 0, 0.0)
        links = httpx.get(f"{base}/api/memory/notes/{middle}/links").json()
        assert links["note"]["id"] == middle and links["note"]["content"] == "rollback fixed the deploy"
        assert [(k["from"], k["to"], k["kind"], k["direction"], k["other"]["id"]) for k in links["links"]] == [
            (first, middle, "RELATES_TO", "in", first), (last, middle, "REFERENCES", "in", last)]
        assert links["links"][0]["other"]["content"] == "the deploy broke on friday"
        outgoing = httpx.get(f"{base}/api/memory/notes/%23{first}/links").json()["links"]
        assert [(k["direction"], k["other"]["id"]) for k in outgoing] == [("out", middle)]
        missing = httpx.get(f"{base}/api/memory/notes/999/links")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "note_not_found"
        bad = httpx.get(f"{base}/api/memory/notes/abc/links")
        assert bad.status_code == 400 and bad.json()["param"] == "note_id"
        assert httpx.post(f"{base}/api/memory/phases", json={}).status_code == 405  # read-only
    finally:
        serve.stop()


def test_memory_views_create_no_memory_file(tmp_path: Path) -> None:
    serve = ServeHarness(tmp_path, runtime_factory=with_memory(tmp_path))
    try:
        assert httpx.get(f"{serve.base_url}/api/memory/notes/1/links").status_code == 404
        embeddings = httpx.get(f"{serve.base_url}/api/memory/embeddings").json()
        assert embeddings["notes"] == 0 and embeddings["coverage"] is None and embeddings["indexExists"] is False
        blocks = [r["block"] for r in httpx.get(f"{serve.base_url}/api/memory/phases").json()["data"]]
        assert blocks == ["memoryReflection", "memoryEmbeddings", "memoryLinks", "memoryEvolution",
                          "memoryConsolidation", "memorySegmentation", "memoryTypedNotes"]  # what the loaded plugins declare, in order
        assert not memory_db_path(tmp_path / "state").exists()
    finally:
        serve.stop()


def test_memory_views_without_the_embeddings_plugin_say_it_is_not_installed(tmp_path: Path) -> None:
    serve = ServeHarness(tmp_path, runtime_factory=with_memory(tmp_path, [(memory_plugin, "memory")]))
    try:
        assert httpx.get(f"{serve.base_url}/api/memory/embeddings").json() == {
            "object": "memory.embeddings", "installed": False, "enabled": False}
    finally:
        serve.stop()


def test_memory_routes_are_404_without_the_memory_plugin(tmp_path: Path) -> None:
    serve = ServeHarness(tmp_path, answering_provider())
    try:
        for path in ROUTES:
            answer = httpx.get(f"{serve.base_url}{path}")
            assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found", path
    finally:
        serve.stop()


def test_a_corrupt_memory_file_answers_503_and_stays_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    garbage = b"not sqlite at all" * 300
    memory_db_path(state).write_bytes(garbage)
    serve = ServeHarness(tmp_path, runtime_factory=with_memory(tmp_path))
    try:
        answer = httpx.get(f"{serve.base_url}/api/memory/notes/1/links")
        assert answer.status_code == 503 and answer.json()["error"]["code"] == "memory_unavailable"
        assert memory_db_path(state).read_bytes() == garbage
    finally:
        serve.stop()


@pytest.fixture()
def keyed(tmp_path: Path):
    seed_graph(tmp_path / "state")
    harness = ServeHarness(tmp_path, runtime_factory=with_memory(tmp_path), api_key=API_KEY)
    yield harness
    harness.stop()


@pytest.fixture()
def open_serve(tmp_path: Path):
    seed_graph(tmp_path / "state")
    harness = ServeHarness(tmp_path, runtime_factory=with_memory(tmp_path))
    yield harness
    harness.stop()


@pytest.mark.parametrize("path", ROUTES)
def test_memory_routes_need_the_bearer_when_serve_has_a_key(keyed: ServeHarness, path: str) -> None:
    auth = {"Authorization": f"Bearer {API_KEY}"}
    assert raw_get(keyed, path, auth)[0] == 200
    assert raw_get(keyed, path, {})[0] == 401
    assert raw_get(keyed, path, {"Authorization": "Bearer " + "x" * 40})[0] == 401
    status, body = raw_get(keyed, path, {**auth, "Origin": "http://evil.example"})
    assert status == 403 and body["error"]["code"] == "origin_not_allowed"


@pytest.mark.parametrize("path", ROUTES)
def test_memory_routes_refuse_a_foreign_host_or_origin(open_serve: ServeHarness, path: str) -> None:
    assert raw_get(open_serve, path, {})[0] == 200
    status, body = raw_get(open_serve, path, {"Host": "evil.example"})
    assert status == 403 and body["error"]["code"] == "host_not_allowed"
    status, body = raw_get(open_serve, path, {"Origin": "http://evil.example"})
    assert status == 403 and body["error"]["code"] == "origin_not_allowed"
