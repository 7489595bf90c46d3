"""`<state>/memory-vectors.sqlite`: the sqlite-vec index over note vectors, partitioned by scope.

It is a derived index: the vectors themselves live in memory.sqlite (`memory_embeddings`,
cascading with their notes), and this file can be deleted at any time; it is rebuilt from
them. It opens through core/storage on sqlean's SQLite (the interpreter's own may not load
extensions) and holds one model's vectors: `state` names the model and dimension, and a
different model resets it. A note deleted while this file was not open leaves a stale row
here; recall drops ids whose note is gone, and `sync` removes them.

Partitions: a global note lives in partition "global", a project note in "dir:<working
dir>"; recall for a working dir searches those two partitions only (sqlite-vec's partition
key keeps each search to its own rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from atomic_agent.api import Durability

from .sqlite_extensions import open_sqlite_with_extensions
from .vector_codec import pack

VECTORS_FILE = "memory-vectors.sqlite"
GLOBAL_PARTITION = "global"


def vectors_path(state_dir: Path) -> Path:
    return Path(state_dir) / VECTORS_FILE


def partition_of(scope: str, working_dir: str | None) -> str:
    return GLOBAL_PARTITION if scope == "global" or not working_dir else f"dir:{working_dir}"


def _load_vec(conn: Any) -> None:
    import sqlite_vec

    sqlite_vec.load(conn)


class VectorIndex:
    def __init__(self, conn: Any, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path) -> VectorIndex:
        """Raises ExtensionsUnavailableError when sqlean or sqlite-vec cannot be loaded."""
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = open_sqlite_with_extensions(path, Durability.NORMAL, [_load_vec])
        conn.execute("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        return cls(conn, path)

    def check(self) -> None:
        """Raise when the file is not a usable index (a corrupt page, a table of the wrong shape)."""
        self.conn.execute("SELECT count(*) FROM state").fetchone()
        if self.has_table():
            self.conn.execute("SELECT count(*) FROM note_vectors").fetchone()

    # -- state ------------------------------------------------------------------------------
    def get_state(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM state WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                          "excluded.value", [key, value])

    @property
    def model(self) -> str | None:
        return self.get_state("model")

    @property
    def dim(self) -> int | None:
        value = self.get_state("dim")
        return int(value) if value else None

    def has_table(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'note_vectors'").fetchone() is not None

    def reset(self, model: str, dim: int) -> None:
        """Drop every vector and start an empty index for `model` with `dim` dimensions."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute("DROP TABLE IF EXISTS note_vectors")
            self.conn.execute(f"CREATE VIRTUAL TABLE note_vectors USING vec0(note_id INTEGER PRIMARY KEY, "
                              f"part TEXT PARTITION KEY, embedding float[{int(dim)}] distance_metric=cosine)")
            self.set_state("model", model)
            self.set_state("dim", str(int(dim)))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def clear(self) -> None:
        """Drop every vector and forget the model (the next vector starts a new index)."""
        self.conn.execute("DROP TABLE IF EXISTS note_vectors")
        self.set_state("model", "")

    # -- rows -------------------------------------------------------------------------------
    def upsert(self, rows: Sequence[tuple[int, str, Sequence[float]]]) -> None:
        """(note id, partition, unit vector) rows, in one transaction."""
        if not rows:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            ids = [(int(i),) for i, _p, _v in rows]
            self.conn.executemany("DELETE FROM note_vectors WHERE note_id = ?", ids)
            self.conn.executemany("INSERT INTO note_vectors (note_id, part, embedding) VALUES (?, ?, ?)",
                                  [(int(i), part, pack(v)) for i, part, v in rows])
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def delete(self, ids: Iterable[int]) -> None:
        doomed = [(int(i),) for i in ids]
        if doomed and self.has_table():
            self.conn.executemany("DELETE FROM note_vectors WHERE note_id = ?", doomed)

    def ids(self) -> set[int]:
        if not self.has_table():
            return set()
        return {int(r[0]) for r in self.conn.execute("SELECT note_id FROM note_vectors")}

    def count(self) -> int:
        if not self.has_table():
            return 0
        return int(self.conn.execute("SELECT count(*) FROM note_vectors").fetchone()[0])

    def nearest(self, vector: Sequence[float], k: int, partitions: Sequence[str] | None) -> dict[int, float]:
        """{note id: cosine similarity} of the k nearest vectors, per partition searched."""
        if not self.has_table() or k <= 0:
            return {}
        blob = pack(vector)
        found: dict[int, float] = {}
        if partitions is None:
            rows = self.conn.execute("SELECT note_id, distance FROM note_vectors WHERE embedding MATCH ? AND k = ?",
                                     [blob, int(k)]).fetchall()
            found.update({int(i): 1.0 - float(d) for i, d in rows})
        else:
            for part in partitions:
                rows = self.conn.execute("SELECT note_id, distance FROM note_vectors WHERE embedding MATCH ? "
                                         "AND k = ? AND part = ?", [blob, int(k), part]).fetchall()
                found.update({int(i): 1.0 - float(d) for i, d in rows})
        if partitions is not None and len(partitions) > 1 and len(found) > k:
            found = dict(sorted(found.items(), key=lambda item: -item[1])[:k])
        return found

    def close(self) -> None:
        self.conn.close()
