"""Optional extras of dependencies that atomic-agent never uses, kept out of the process.

Two libraries import optional support at import time whenever its packages happen to be
installed, and both are on the way to a command's first model request:

* httpx imports its command-line client (`httpx._main`: rich and pygments, since typer
  brings rich along) — 50-130 ms measured here, for a CLI atomic-agent never runs. An entry
  of None in `sys.modules` makes that import fail, and httpx falls back to a stub `main`.
* sqlite_utils imports numpy and pandas to store their values; no state file stores either,
  and numpy (installed for the embeddings plugin) is about half of sqlite_utils' import
  time. `import_sqlite_utils` hides them only while sqlite_utils itself is imported: a later
  `import numpy` elsewhere works as usual.
"""

from __future__ import annotations

import sys
from types import ModuleType

HTTPX_CLI = "httpx._main"
SQLITE_UTILS_EXTRAS = ("numpy", "pandas")


def skip_httpx_cli() -> None:
    """Keep httpx's command-line client out of every later `import httpx` (no-op once imported)."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault(HTTPX_CLI, None)  # type: ignore[arg-type]


def import_sqlite_utils() -> ModuleType:
    """`sqlite_utils`, imported without its numpy and pandas support when it is imported first here."""
    loaded = sys.modules.get("sqlite_utils")
    if loaded is not None:
        return loaded
    hidden = [name for name in SQLITE_UTILS_EXTRAS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import numpy` raises ImportError meanwhile
    try:
        import sqlite_utils
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return sqlite_utils
