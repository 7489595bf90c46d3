"""CLI: for any text at all given to `atomic-agent run` (lone
surrogates are what a non-UTF-8 argument becomes), the acknowledgement (`turn_queued`,
printed with --json) means the message is durably admitted exactly as given; anything
refused writes nothing. Hypothesis, through the real CLI entry point."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings

from atomic_agent.cli.main import main
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.turns.ingress_texts import admitted_texts, session_count, texts

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLlamaServer]:
    with FakeLlamaServer() as server:
        yield server


def run_in_process(state: Path, text: str, url: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env["ATOMIC_AGENT_LLAMA_URL"] = url
    with mock.patch.dict(os.environ, env, clear=True), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            main(["--state-dir", str(state), "run", "--json", "--", text])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue()


@given(text=texts)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_for_any_argument_the_acknowledgement_means_durably_admitted(fake: FakeLlamaServer, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        (state / "config.json").write_text(json.dumps(QUIET))
        code, out = run_in_process(state, text, fake.base_url)
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        queued = [e for e in events if e.get("type") == "turn_queued"]
        if queued:
            assert admitted_texts(state) == [text]
        else:
            assert code != 0
            assert admitted_texts(state) == [] and session_count(state) == 0
