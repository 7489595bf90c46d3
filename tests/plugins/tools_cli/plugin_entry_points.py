"""Make the `os` and `tools_cli` plugins visible to a subprocess `atomic-agent`.

Once pyproject.toml registers their entry points this adds nothing; until then it writes
a tiny installed distribution (a .dist-info with the entry points) into a temp site dir
and returns a PYTHONPATH pointing at it, exactly how pip would have exposed them.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from pathlib import Path

WANTED = {"os": "atomic_agent.plugins.os", "tools_cli": "atomic_agent.plugins.tools_cli"}


def plugin_env(site: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for `run_cli` in which the os and tools_cli plugins load."""
    installed = {ep.name for ep in entry_points(group="atomic_agent")}
    missing = {name: target for name, target in WANTED.items() if name not in installed}
    env = {"HOME": os.environ.get("HOME", str(site)), **(extra or {})}
    if missing:
        info = site / "atomic_agent_test_plugins-0.0.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: atomic-agent-test-plugins\nVersion: 0.0.0\n")
        lines = "".join(f"{name} = {target}\n" for name, target in missing.items())
        (info / "entry_points.txt").write_text(f"[atomic_agent]\n{lines}")
        (info / "RECORD").write_text("")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return env
