"""The example CONTRIBUTING.md gives plugin authors ("Testing with a scripted model"), run as
written: a ScriptedProvider answers both the agent's steps and a memory plugin's sub-call
(reflection), told apart by the request."""

from __future__ import annotations

import re
from pathlib import Path

CONTRIBUTING = Path(__file__).resolve().parents[2] / "CONTRIBUTING.md"


def _example() -> str:
    text = CONTRIBUTING.read_text()
    section = text.split("## Testing with a scripted model", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


async def test_the_documented_example_runs(tmp_path: Path):
    namespace: dict = {}
    exec(compile(_example(), str(CONTRIBUTING), "exec"), namespace)  # noqa: S102 - our own document
    await namespace["test_reflection_writes_a_profile_fact"](tmp_path)  # its own asserts are the test
