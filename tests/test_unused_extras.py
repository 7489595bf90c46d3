"""Optional extras of httpx and sqlite_utils stay out of the process (unused_extras): a
command's way to its first model request imports neither httpx's CLI (rich, pygments) nor
numpy through sqlite_utils — and numpy still imports normally for whoever does need it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys, pathlib
import atomic_agent
import httpx
from atomic_agent.sessions.session_store import SessionStore
SessionStore(pathlib.Path(sys.argv[1])).close()
loaded = sorted(k for k, v in sys.modules.items() if v is not None)
import numpy  # the embeddings plugin's own import still works afterwards
print(json.dumps({"loaded": loaded, "numpy": numpy.__name__, "cli": callable(httpx.main)}))
"""


def test_httpx_and_the_session_store_load_without_rich_or_numpy(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    roots = {name.split(".")[0] for name in report["loaded"]}
    assert not roots & {"rich", "pygments", "numpy", "pandas"}
    assert {"httpx", "sqlite_utils"} <= roots
    assert report["numpy"] == "numpy" and report["cli"]
