"""Building the tool registry loads only what the specs show (names, schemas, examples): the
guards, runners and parsers behind each tool load on its first call, so a start-up that
only lists the tools in the prompt never pays for them (issue 18)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# what only running a tool needs; each was imported at start-up before issue 18
RUN_PATH_ONLY = (
    "atomic_agent.plugins.os.shell.shell_guard", "atomic_agent.plugins.os.shell.guard_records",
    "atomic_agent.plugins.os.shell.process_runner", "atomic_agent.plugins.os.shell.ask_approval",
    "atomic_agent.plugins.os.http.guarded_exchange", "atomic_agent.plugins.os.http.ssrf_guard",
    "atomic_agent.plugins.os.http.egress_policy", "atomic_agent.plugins.os.web.html_to_text",
    "atomic_agent.plugins.os.web.search_chain", "atomic_agent.plugins.os.web.search_providers",
    "atomic_agent.plugins.os.fs.read_guard", "atomic_agent.plugins.os.fs.office_text",
    "atomic_agent.plugins.os.fs.document_text", "atomic_agent.plugins.os.fs.patch_parse",
    "atomic_agent.plugins.os.fs.grep_python", "atomic_agent.plugins.os.fs.extract_members",
    "atomic_agent.plugins.os.fs.locate_project_sources", "atomic_agent.plugins.os.fs_approval.require_fs_approval",
    "atomic_agent.plugins.os.git.git_runner", "atomic_agent.plugins.os.desktop.desktop_commands",
    "atomic_agent.plugins.os.proc.ps_parse",
)

PROBE = """
import asyncio, json, sys
from pathlib import Path
import atomic_agent.plugins.os as os_plugin
from atomic_agent.api import ScriptedProvider, boot_for_test, create_runtime

async def main():
    ctx = boot_for_test(Path(sys.argv[1]), plugins={"os": os_plugin}, environ={})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]))
    names = sorted(spec.name for spec in runtime.registry.specs())
    loaded = sorted(k for k, v in sys.modules.items() if v is not None)
    await runtime.close()
    print("RESULT=" + json.dumps({"tools": names, "modules": loaded}))

asyncio.run(main())
"""


def test_building_the_registry_does_not_load_the_tool_implementations(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "state")], capture_output=True, text=True,
                            timeout=120)
    line = next((x for x in result.stdout.splitlines() if x.startswith("RESULT=")), None)
    assert line is not None, result.stderr
    found = json.loads(line[len("RESULT="):])
    assert {"os.shell.run", "os.http.request", "os.web.fetch", "os.web.search", "os.fs.grep", "os.fs.patch",
            "os.fs.read_document", "os.git.status", "os.proc.kill", "os.notify"} <= set(found["tools"])
    assert sorted(set(RUN_PATH_ONLY) & set(found["modules"])) == []
