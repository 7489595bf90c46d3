"""skill.view then skill.run_script through a real runtime and its approval gate: the script's
environment, the approval bound to the script's content, and refused script paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import atomic_agent.plugins.skills as skills_plugin
from atomic_agent.api import approval_gate, make_tool_context, runtime_for_test
from tests.plugins.skills.skill_fixtures import ENV_SCRIPT, write_skill
from tests.process_liveness import gone_soon_async


class Asker:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.answer


async def _runtime(state: Path, asker: Asker, environ: dict[str, str]):
    return await runtime_for_test(state, plugins={"skills": skills_plugin}, ask=asker, environ=environ,
                                  config={"skills": {"seedStarters": False}, "agent": {"approvalLevel": 1}})


def _ctx(runtime, ws: Path, session_id: str = "s1"):
    ctx = make_tool_context(ws, session_id=session_id, state_dir=runtime.state_dir)
    return type(ctx)(session_id=session_id, working_dir=ws, state_dir=runtime.state_dir, cancelled=ctx.cancelled,
                     request_approval=approval_gate.bind_request_approval(runtime.gate, session_id, "skill.run_script"))


async def test_view_then_run_script_env_is_filtered_plus_declared_only(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    write_skill(state / "skills", "notion", env=["NOTION_TOKEN"], scripts={"scripts/env.py": ENV_SCRIPT})
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8", "NOTION_TOKEN": "secret-n",
               "OPENAI_API_KEY": "sk-other", "GITHUB_TOKEN": "ghp-other", "LC_ALL": "C"}
    asker = Asker("y")
    runtime = await _runtime(state, asker, environ)
    try:
        tools = {t.name: t for t in runtime.registry.specs()}
        ctx = _ctx(runtime, ws)
        viewed = await tools["skill.view"].run({"name": "notion"}, ctx)
        assert viewed.status == "ok" and "needs env: NOTION_TOKEN" in viewed.summary
        assert runtime.memory_sections("s1", "")[0].heading == "loaded-skills"
        result = await tools["skill.run_script"].run({"name": "notion", "script": "scripts/env.py",
                                                      "args": ["--page", "x y"]}, ctx)
        assert result.status == "ok", result.summary
        seen = json.loads(result.summary.split("\n", 1)[1])
        assert seen["args"] == ["--page", "x y"] and Path(seen["cwd"]).resolve() == ws.resolve()
        assert seen["env"]["NOTION_TOKEN"] == "secret-n"
        assert "OPENAI_API_KEY" not in seen["env"] and "GITHUB_TOKEN" not in seen["env"]
        assert set(seen["env"]) - {"PATH", "HOME", "LANG", "LC_ALL", "NOTION_TOKEN"} <= {"PWD", "LC_CTYPE"}
        assert [r.category for r in asker.requests] == ["script"]
        assert "notion/scripts/env.py --page x y" in asker.requests[0].summary
    finally:
        await runtime.close()


async def test_an_edited_script_asks_again(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    skill = write_skill(state / "skills", "report", scripts={"scripts/r.sh": "echo one\n"})
    asker = Asker("a")  # "always, for this exact script content"
    runtime = await _runtime(state, asker, {"PATH": os.environ["PATH"]})
    try:
        run = {t.name: t for t in runtime.registry.specs()}["skill.run_script"].run
        ctx = _ctx(runtime, ws)
        args = {"name": "report", "script": "scripts/r.sh"}
        assert (await run(args, ctx)).summary.endswith("one")
        assert (await run(args, ctx)).summary.endswith("one")
        assert len(asker.requests) == 1  # the content-bound grant covered the second run
        (skill / "scripts" / "r.sh").write_text("echo two\n")
        asker.answer = "n"
        denied = await run(args, ctx)
        assert len(asker.requests) == 2 and denied.status == "error" and "not approved" in denied.summary
        assert asker.requests[0].command_shape != asker.requests[1].command_shape
        asker.answer = "y"
        assert (await run(args, ctx)).summary.endswith("two")
        assert len(asker.requests) == 3
    finally:
        await runtime.close()


async def test_script_paths_that_escape_and_missing_env_are_clear_errors(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.sh"
    outside.write_text("echo pwned\n")
    loose = write_skill(state / "skills", "loose", scripts={"scripts/ok.sh": "echo ok\n"}, declare_scripts=False)
    (loose / "scripts" / "link.sh").symlink_to(outside)
    write_skill(state / "skills", "strict", scripts={"scripts/ok.sh": "echo ok\n", "scripts/other.sh": "echo o\n"})
    (state / "skills" / "strict" / "SKILL.md").write_text(
        "---\nname: strict\ndescription: d\nscripts: [scripts/ok.sh]\nenv: [NEEDED_KEY]\n---\nbody\n")
    asker = Asker("y")
    runtime = await _runtime(state, asker, {"PATH": os.environ["PATH"]})
    try:
        run = {t.name: t for t in runtime.registry.specs()}["skill.run_script"].run
        ctx = _ctx(runtime, ws)
        cases = {
            ("loose", "../../../outside.sh"): "'..' component",
            ("loose", "/etc/passwd"): "absolute path",
            ("loose", "scripts/link.sh"): "outside the skill directory",
            ("loose", "scripts/nope.sh"): "is not a file",
            ("strict", "scripts/other.sh"): "declares the scripts",
            ("strict", "scripts/ok.sh"): "needs the environment variable(s) NEEDED_KEY",
            ("ghost", "x.sh"): "no enabled skill named 'ghost'",
        }
        for (name, script), expected in cases.items():
            result = await run({"name": name, "script": script}, ctx)
            assert result.status == "error" and expected in result.summary, (name, script, result.summary)
        assert asker.requests == []  # refused before anyone is asked
        bad_args = await run({"name": "loose", "script": "scripts/ok.sh", "args": "rm -rf /"}, ctx)
        assert "args must be a list of strings" in bad_args.summary
    finally:
        await runtime.close()


async def test_sidecar_capabilities_list_the_enabled_skills(tmp_path: Path) -> None:
    from atomic_agent.plugins.sidecar.lifecycle_requests import skill_catalog

    state = tmp_path / "state"
    write_skill(state / "skills", "notion", env=["NOTION_TOKEN"])
    write_skill(state / "skills", "hidden")
    runtime = await runtime_for_test(state, plugins={"skills": skills_plugin},
                                     config={"skills": {"seedStarters": False, "disabled": ["hidden"]}})
    try:
        assert skill_catalog(runtime) == [{"name": "notion", "description": "the notion skill", "env": ["NOTION_TOKEN"],
                                           "scripts": []}]
    finally:
        await runtime.close()
    bare = await runtime_for_test(tmp_path / "bare")
    try:
        assert skill_catalog(bare) == []  # no skills plugin: an empty list, not an error
    finally:
        await bare.close()


async def test_a_script_does_not_outlive_a_cancelled_turn(tmp_path: Path) -> None:
    import asyncio
    import sys

    from atomic_agent.plugins.skills.script_runner import run_script

    pid_file = tmp_path / "pid"
    script = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    running = asyncio.ensure_future(run_script([sys.executable, "-c", script], tmp_path, dict(os.environ), 60.0,
                                               1000, asyncio.Event()))
    for _ in range(3000):  # a hung-test limit of 30 s
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    running.cancel()  # the turn's own task, not its cancel event
    await asyncio.gather(running, return_exceptions=True)
    assert running.cancelled()
    assert await gone_soon_async(pid)  # SIGKILL lands at once; allow the kernel a moment
