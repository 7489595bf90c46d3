"""`atomic-agent memory embeddings` and `memory reembed` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.memory import cli_harness
from tests.plugins.memory_plugins.memory_runtime import write_config


@pytest.fixture(autouse=True)
def with_the_embeddings_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_harness, "COMMAND_PLUGINS", (*cli_harness.COMMAND_PLUGINS, "memory_embeddings"))


def run_cli(state_dir: Path, *args: str) -> cli_harness.CliResult:
    return cli_harness.run_cli(state_dir, *args)


def test_embeddings_status_reads_an_absent_database_without_creating_it(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "memory", "embeddings", "--json")
    assert result.code == 0, result.err
    status = json.loads(result.out)
    assert status["enabled"] is False and status["notes"] == 0 and status["model"] is None
    assert not (tmp_path / "memory.sqlite").exists() and not (tmp_path / "memory-vectors.sqlite").exists()


def test_reembed_refuses_while_hybrid_recall_is_off(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "memory", "reembed")
    assert result.code == 2 and "memoryEmbeddings.enabled" in result.err


def test_reembed_without_an_embedding_source_fails_with_the_fix(tmp_path: Path) -> None:
    write_config(tmp_path, {"memoryEmbeddings": {"enabled": True}})
    result = run_cli(tmp_path, "memory", "reembed")
    assert result.code == 2 and "llama.embeddings" in result.err
