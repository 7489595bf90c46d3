"""docs/tasks.md lists every agent tool of the tasks plugin with its exact argument names,
and marks the required ones (the issue a new user met: `tasks.cron` takes `expression`)."""

from __future__ import annotations

import re
from pathlib import Path

from atomic_agent.plugins.tasks import task_tools

DOC = Path(__file__).resolve().parents[3] / "docs" / "tasks.md"
SCHEMAS = {"tasks.schedule": task_tools.SCHEDULE_SCHEMA, "tasks.cron": task_tools.CRON_SCHEMA,
           "tasks.list": task_tools.LIST_SCHEMA, "tasks.show": task_tools.ID_SCHEMA,
           "tasks.cancel": task_tools.ID_SCHEMA}


def _row(tool: str) -> str:
    rows = [line for line in DOC.read_text().splitlines() if line.startswith(f"| `{tool}` |")]
    assert len(rows) == 1, f"docs/tasks.md has {len(rows)} table rows for {tool}"
    return rows[0].split("|")[2]


def test_every_tool_argument_is_documented_by_its_exact_name():
    for tool, schema in SCHEMAS.items():
        cell = _row(tool)
        documented = set(re.findall(r"`([A-Za-z]+)` \(", cell))
        assert documented == set(schema["properties"]), (tool, documented)
        for name in schema.get("required", []):
            assert re.search(rf"`{name}` \(required", cell), (tool, name)


def test_the_documented_tools_are_the_registered_ones():
    source = Path(task_tools.__file__).read_text()
    assert sorted(re.findall(r'ToolSpec\("(tasks\.[a-z]+)"', source)) == sorted(SCHEMAS)
