"""The real npm MCP server (`@modelcontextprotocol/server-everything`), installed once by
the test setup with the machine's npm into a cache folder and reused by later runs.
Skipped, saying why, only when node or npm is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EVERYTHING = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"  # pinned: the tests name its tools


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "atomic-agent" / "test-npm" / f"server-everything-{EVERYTHING_VERSION}"


@pytest.fixture(scope="session")
def everything_server() -> Path:
    """The installed `mcp-server-everything` executable."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to install the real npm MCP server "
                    f"{EVERYTHING}; install Node.js to run this test")
    root = _cache_root()
    binary = root / "node_modules" / ".bin" / "mcp-server-everything"
    if not binary.exists():
        root.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--no-save",
                               f"{EVERYTHING}@{EVERYTHING_VERSION}"], capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not binary.exists():
            raise RuntimeError(f"npm install {EVERYTHING}@{EVERYTHING_VERSION} failed:\n{done.stderr[-3000:]}")
    return binary
