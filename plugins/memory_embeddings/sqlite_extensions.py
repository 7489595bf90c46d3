"""Opening a SQLite file on a SQLite build that can load extensions (sqlean.py).

The interpreter's own `sqlite3` module may be built without `enable_load_extension`
(pyenv's CPython here is), so files that need an extension such as sqlite-vec open through
sqlean.py's bundled SQLite instead: the same DB-API, WAL and durability modes as the
core's stores. Such a file (the vector index) is only ever opened this way, and holds
nothing a plain connection must read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from atomic_agent.api import Durability

Loader = Callable[[Any], None]


class ExtensionsUnavailableError(RuntimeError):
    """No SQLite build that loads extensions is importable, or an extension failed to load."""


def extension_sqlite_module() -> Any:
    """sqlean's DB-API module (import `sqlean` lazily: it is only needed by such files)."""
    try:
        import sqlean
    except ImportError as exc:
        raise ExtensionsUnavailableError("sqlean.py is not installed, so no SQLite that loads extensions is "
                                         "available; reinstall atomic-agent (it depends on sqlean.py)") from exc
    return sqlean


def open_sqlite_with_extensions(path: Path | str, durability: Durability, loaders: Sequence[Loader], *,
                                busy_timeout_s: float = 5.0) -> Any:
    """Connect (autocommit, WAL, `durability`) and run each loader on the connection, with
    extension loading enabled only while they run. A failing loader closes the connection
    and raises ExtensionsUnavailableError naming the cause."""
    module = extension_sqlite_module()
    conn = module.connect(str(path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    try:
        try:
            conn.enable_load_extension(True)
            for load in loaders:
                load(conn)
            conn.enable_load_extension(False)
        except Exception as exc:
            raise ExtensionsUnavailableError(f"cannot load a SQLite extension into {path}: "
                                             f"{type(exc).__name__}: {exc}") from exc
        if str(path) != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={durability.value}")
    except BaseException:
        conn.close()
        raise
    return conn
