"""The sqlite-vec index: opened through core/storage on sqlean, partitioned, resettable."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.memory_embeddings.vector_index import VectorIndex, partition_of


def test_nearest_searches_only_the_partitions_asked_for(tmp_path: Path) -> None:
    index = VectorIndex.open(tmp_path / "v.sqlite")
    index.reset("m", 2)
    index.upsert([(1, "global", [1.0, 0.0]), (2, partition_of("workdir", "/a"), [0.9, 0.1]),
                  (3, partition_of("workdir", "/b"), [1.0, 0.0])])
    found = index.nearest([1.0, 0.0], 10, ["global", partition_of("workdir", "/a")])
    assert set(found) == {1, 2} and found[1] == pytest.approx(1.0)
    assert set(index.nearest([1.0, 0.0], 10, None)) == {1, 2, 3}
    index.close()


def test_the_index_remembers_its_model_and_a_reset_empties_it(tmp_path: Path) -> None:
    index = VectorIndex.open(tmp_path / "v.sqlite")
    index.reset("model-a", 3)
    index.upsert([(7, "global", [0.0, 1.0, 0.0])])
    index.close()
    index = VectorIndex.open(tmp_path / "v.sqlite")
    assert (index.model, index.dim, index.ids()) == ("model-a", 3, {7})
    index.reset("model-b", 2)
    assert (index.model, index.dim, index.count()) == ("model-b", 2, 0)
    index.upsert([(7, "global", [1.0, 0.0])])
    index.upsert([(7, "global", [0.0, 1.0])])  # replacing a vector keeps one row
    assert index.count() == 1
    index.close()


def test_open_fails_clearly_when_the_extension_cannot_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from atomic_agent.plugins.memory_embeddings import vector_index
    from atomic_agent.plugins.memory_embeddings.sqlite_extensions import ExtensionsUnavailableError

    monkeypatch.setattr(vector_index, "_load_vec", lambda _conn: (_ for _ in ()).throw(OSError("no vec0")))
    with pytest.raises(ExtensionsUnavailableError, match="no vec0"):
        VectorIndex.open(tmp_path / "v.sqlite")
