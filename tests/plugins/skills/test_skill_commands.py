"""`atomic-agent skill ...` through the real console script, and `atomic-agent run` with a
skill: skill.view, then skill.run_script approved on stdin (the model scripted by the
loopback FakeLlamaServer)."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli
from tests.plugins.skills.skill_fixtures import write_skill


def _cli(state: Path, *args: str, env: dict[str, str] | None = None, input_text: str | None = None):
    return run_cli(["--state-dir", str(state), *args], env=env, input_text=input_text, timeout=120)


def test_list_disable_enable_install_remove(tmp_path: Path) -> None:
    state = tmp_path / "state"
    listed = _cli(state, "skill", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["name"] for s in json.loads(listed.stdout)["skills"]] == ["disk-usage", "log-triage"]  # seeded

    assert _cli(state, "skill", "disable", "log-triage").returncode == 0
    again = _cli(state, "skill", "disable", "log-triage")
    assert again.returncode == 0 and "already disabled" in again.stdout  # idempotent
    rows = {s["name"]: s for s in json.loads(_cli(state, "skill", "list", "--json").stdout)["skills"]}
    assert rows["log-triage"]["enabled"] is False and rows["disk-usage"]["enabled"] is True
    assert json.loads((state / "config.json").read_text())["skills"]["disabled"] == ["log-triage"]
    assert _cli(state, "skill", "enable", "log-triage").returncode == 0
    assert json.loads((state / "config.json").read_text())["skills"]["disabled"] == []
    unknown = _cli(state, "skill", "disable", "nope")
    assert unknown.returncode != 0 and "no skill named 'nope'" in unknown.stderr

    source = write_skill(tmp_path / "src", "weather", "Look up the forecast.", env=["WEATHER_KEY"],
                         scripts={"scripts/get.py": "print('sunny')\n"})
    installed = _cli(state, "skill", "install", str(source), "--json")
    assert installed.returncode == 0, installed.stderr
    record = json.loads(installed.stdout)["provenance"]
    assert record["kind"] == "directory" and record["source"] == str(source.resolve()) and len(record["sha256"]) == 64
    shown = _cli(state, "skill", "show", "weather", "--json")
    assert json.loads(shown.stdout)["provenance"]["sha256"] == record["sha256"]
    twice = _cli(state, "skill", "install", str(source))
    assert twice.returncode != 0 and "already installed" in twice.stderr

    archive = tmp_path / "pack.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, arcname="weather2-src")
    (tmp_path / "src" / "weather" / "SKILL.md").write_text(
        (source / "SKILL.md").read_text().replace("name: weather", "name: weather2"))
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, arcname="weather2-src")
    from_archive = _cli(state, "skill", "install", str(archive), "--json")
    assert from_archive.returncode == 0, from_archive.stderr
    assert json.loads(from_archive.stdout)["provenance"]["kind"] == "archive"
    assert (state / "skills" / "weather2" / "scripts" / "get.py").is_file()

    removed = _cli(state, "skill", "remove", "weather")
    assert removed.returncode == 0 and not (state / "skills" / "weather").exists()
    assert "weather" not in json.loads((state / "skills" / ".provenance.json").read_text())


def test_archives_with_escaping_entries_are_refused_and_leave_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    slip = tmp_path / "slip.zip"
    with zipfile.ZipFile(slip, "w") as zf:
        zf.writestr("evil/SKILL.md", "---\nname: evil\ndescription: d\n---\nbody\n")
        zf.writestr("../../escaped.txt", "gotcha")
    result = _cli(state, "skill", "install", str(slip))
    assert result.returncode != 0 and "`..` component" in result.stderr
    assert not (tmp_path / "escaped.txt").exists() and not (state / "skills" / "evil").exists()
    assert not list((state / "skills").glob(".install-*"))

    link = tmp_path / "link.tar"
    with tarfile.open(link, "w") as tar:
        info = tarfile.TarInfo("s/SKILL.md")
        data = b"---\nname: s\ndescription: d\n---\nbody\n"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        sym = tarfile.TarInfo("s/scripts/run.sh")
        sym.type, sym.linkname = tarfile.SYMTYPE, "/bin/sh"
        tar.addfile(sym)
    refused = _cli(state, "skill", "install", str(link))
    assert refused.returncode != 0 and "links are not extracted" in refused.stderr

    nofront = tmp_path / "nofront"
    nofront.mkdir()
    (nofront / "SKILL.md").write_text("just text\n")
    bad = _cli(state, "skill", "install", str(nofront))
    assert bad.returncode != 0 and "no front matter" in bad.stderr


def _call(*pairs) -> str:
    return json.dumps([{"tool": t, "args": a} for t, a in pairs])


def test_run_views_a_skill_then_runs_its_script_with_approval(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "app.log").write_text("INFO start\nERROR db timeout after 30s\nERROR db timeout after 31s\nWARN slow\n")
    script = [_call(("skill.view", {"name": "log-triage"})),
              _call(("skill.run_script", {"name": "log-triage", "script": "scripts/triage.py", "args": ["app.log"]})),
              _call(("reply", {"text": "two db timeouts"}))]
    env = {"HOME": str(tmp_path), "SECRET_TOKEN_X": "leak-me-not"}
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        env["ATOMIC_AGENT_LLAMA_URL"] = fake.base_url
        result = _cli(state, "run", "what is wrong in app.log?", "--cwd", str(ws), env=env, input_text="y\n")
        prompts = [b["prompt"] for b in fake.completion_bodies]
    assert result.returncode == 0, result.stderr[-2000:]
    assert "approval needed · skill script" in result.stderr and result.stdout.strip() == "two db timeouts"
    assert "### skills\n" in prompts[0] and "log-triage: Summarise a log file" in prompts[0]
    assert "### loaded-skills" not in prompts[0]
    assert "### loaded-skills\n## log-triage\n" in prompts[1]
    assert prompts[1].index("### loaded-skills") < prompts[1].index("### world")
    assert "2x  ERROR db timeout after <n>s" in prompts[2] and "2 error-like, 1 warning-like" in prompts[2]
    assert prompts[0].split("### world")[0].split("### loaded-skills")[0] in prompts[2]  # the stable prefix held
