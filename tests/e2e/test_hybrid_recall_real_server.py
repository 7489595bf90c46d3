"""Hybrid recall end to end: `atomic-agent llama start` pairs a real embedding daemon
(all-MiniLM-L6-v2 converted from its PyPI wheel) with the chat server; notes stored in one
session are recalled in a new session by a paraphrase that shares no word with them, through
the vectors; with the embedding daemon stopped the same turn runs on BM25 alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.plugins.llama_server.server_process import ServerPaths, free_loopback_port, stop_recorded_server
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime

pytestmark = pytest.mark.llama_server

CLI = Path(sys.executable).parent / "atomic-agent"
NOTES = ("Caroline adopted a puppy called Biscuit in May",
         "The quarterly report is due on the first Monday of April",
         "Melanie paints landscapes with watercolours")
PARAPHRASE = "Did she get a new dog?"  # shares no content word with the first note
ENV = {"ATOMIC_AGENT_MAX_STEPS": "1", "ATOMIC_AGENT_SEED": "7"}
# a one-step turn on the starter model may end on its step limit (it sometimes calls a tool
# first): the turn is only the vehicle for the recall prefetch this test checks
ENDED = ("done", "failed")


def cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_LLAMA")}
    return subprocess.run([str(CLI), "--state-dir", str(state), *args], capture_output=True, text=True, env=env,
                          timeout=600, stdin=subprocess.DEVNULL)


def runtime_for(state: Path) -> Runtime:
    return Runtime(boot(state, environ=dict(ENV)), environ=dict(ENV))


def recalled(runtime: Runtime, session_id: str, text: str) -> str:
    sections = runtime.memory_sections(session_id, text)
    return "\n".join(s.body for s in sections if s.heading == "recalled")


async def test_paraphrase_recalled_through_the_embedding_daemon_and_bm25_when_it_is_stopped(
        llama_server, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    embed_port = free_loopback_port()
    (state / "config.json").write_text(json.dumps({
        "version": CONFIG_VERSION,
        "llama": {"url": llama_server.base_url, "maxTokens": 256,
                  "embeddings": {"enabled": True, "port": embed_port}},
        "memoryEmbeddings": {"enabled": True},
        "memoryReflection": {"enabled": False}}))  # keeps the turns short: this test is about recall
    started = cli(state, "llama", "start", "--port", str(free_loopback_port()), "--json")
    try:
        assert started.returncode == 0, started.stderr
        embedding = json.loads(started.stdout)["embedding"]
        assert embedding["running"] is True and embedding["url"] == f"http://127.0.0.1:{embed_port}", embedding
        status = json.loads(cli(state, "llama", "status", "--json").stdout)["embedding"]
        assert status["running"] and status["health"] == "ok"

        runtime = runtime_for(state)  # session one: the notes are stored, embedded in the background
        first = await runtime.run_turn("Hello.", working_dir=tmp_path)
        store = runtime.service("memory").note_store()
        for text in NOTES:
            store.store(text, session_id=first.session_id)
        await runtime.service("memory_embeddings").writer.idle()
        await runtime.close()
        shown = json.loads(cli(state, "memory", "embeddings", "--json").stdout)
        assert shown["embedded"] == 3 and shown["model"] == "llama/all-minilm-l6-v2+context" and shown["dim"] == 384  # embedContext is on by default

        runtime = runtime_for(state)  # session two, a new process's view: hybrid recall
        assert runtime.service("memory").note_store().recall(PARAPHRASE, 3) == []  # BM25 alone cannot
        second = await runtime.run_turn(PARAPHRASE, working_dir=tmp_path)
        assert second.status in ENDED and second.session_id != first.session_id
        assert "Biscuit" in recalled(runtime, second.session_id, PARAPHRASE).splitlines()[0]
        await runtime.close()

        assert stop_recorded_server(ServerPaths.for_embeddings(state)) is not None  # the daemon goes away
        runtime = runtime_for(state)
        third = await runtime.run_turn(PARAPHRASE, working_dir=tmp_path)
        assert third.status in ENDED
        assert "Biscuit" not in recalled(runtime, third.session_id, PARAPHRASE)
        lexical = "when is the quarterly report due?"
        fourth = await runtime.run_turn(lexical, session_id=third.session_id)
        assert fourth.status in ENDED and "quarterly report" in recalled(runtime, third.session_id, lexical)
        metrics = runtime.service("metrics")
        fallbacks = {reason: metrics.counter_value("agent.memory.embeddings.fallback_to_fts5", reason=reason,
                                                   path="recall") for reason in ("unavailable", "resting")}
        # one fallback per turn: the first finds the daemon gone, a later one may skip it while it rests
        assert fallbacks["unavailable"] >= 1 and sum(fallbacks.values()) == 2
        await runtime.close()
        doctor = cli(state, "doctor", "--json")
        assert "memory embeddings" in doctor.stdout and "fell back to full-text search" in doctor.stdout
    finally:
        cli(state, "llama", "stop")
