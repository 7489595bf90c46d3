"""`atomic-agent tools list|call` as a user runs it (a subprocess of the installed console script)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.run_cli import run_cli
from tests.plugins.tools_cli.plugin_entry_points import plugin_env


@pytest.fixture
def cli(tmp_path: Path):
    home = tmp_path.resolve() / "home"
    ws, state = home / "ws", home / ".state"
    ws.mkdir(parents=True)
    state.mkdir()
    env = plugin_env(tmp_path / "site", {"HOME": str(home), "ATOMIC_AGENT_RIPGREP": "0"})

    def run(*args: str, input_text: str | None = None):
        return run_cli(["--state-dir", str(state), *args], env=env, input_text=input_text)

    run.ws, run.state, run.home = ws, state, home
    return run


def test_tools_list_shows_plugin_tier_class_and_category(cli) -> None:
    result = cli("tools", "list")
    assert result.returncode == 0, result.stderr
    header = result.stdout.splitlines()[0].split()
    assert header == ["name", "plugin", "tier", "class", "approval"]
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("os.fs.write "))
    assert line.split() == ["os.fs.write", "os", "frequent", "approval_gated", "fs_write_workspace"]


def test_tools_list_json(cli) -> None:
    rows = json.loads(cli("tools", "list", "--json").stdout)
    by_name = {r["name"]: r for r in rows}
    hash_row = by_name["os.fs.hash"]
    assert hash_row == {"name": "os.fs.hash", "plugin": "os", "tier": "rare", "resourceClass": "pure_read",
                        "approvalCategory": None, "summary": hash_row["summary"], "argsSchema": hash_row["argsSchema"]}
    assert by_name["reply"]["plugin"] == "core"


def test_tools_list_json_carries_every_tools_args_schema(cli) -> None:
    rows = json.loads(cli("tools", "list", "--json").stdout)
    assert rows and all(r["argsSchema"].get("type") == "object" for r in rows)
    read = next(r for r in rows if r["name"] == "os.fs.read")["argsSchema"]
    assert read["required"] == ["path"] and read["properties"]["limit"]["type"] == "integer"


def test_the_listed_schema_is_the_one_tools_call_enforces(cli) -> None:
    read = next(r for r in json.loads(cli("tools", "list", "--json").stdout) if r["name"] == "os.fs.read")
    assert read["argsSchema"]["properties"]["offset"]["minimum"] == 1
    refused = cli("tools", "call", "os.fs.read", "--args", '{"path": "a.txt", "offset": 0}')
    assert refused.returncode == 2 and "invalid args for os.fs.read" in refused.stderr


def test_tools_show_prints_the_whole_descriptor(cli) -> None:
    result = cli("tools", "show", "os.fs.write")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("os.fs.write — ")
    fields = dict(ln.split(":", 1) for ln in lines[1:8])
    assert {k: v.strip() for k, v in fields.items()} == {
        "plugin": "os", "tier": "frequent", "resource class": "approval_gated",
        "approval": "fs_write_workspace", "durable": "no",
        "signature": fields["signature"].strip(), "example": fields["example"].strip()}
    assert fields["signature"].strip().startswith("os.fs.write(path: string, content: string")
    assert json.loads(fields["example"])["tool"] == "os.fs.write"
    assert lines[8] == "args schema:"
    schema = json.loads("\n".join(lines[9:]))
    assert set(schema["required"]) == {"path", "content"}


def test_tools_show_json_matches_the_listed_row(cli) -> None:
    shown = json.loads(cli("tools", "show", "os.fs.read", "--json").stdout)
    listed = next(r for r in json.loads(cli("tools", "list", "--json").stdout) if r["name"] == "os.fs.read")
    assert {k: shown[k] for k in listed} == listed
    assert shown["durable"] is True and shown["example"]["tool"] == "os.fs.read"
    assert shown["signature"].startswith("os.fs.read(path: string, offset?: integer")


def test_tools_show_of_a_rare_tool_gives_the_schema_the_prompt_leaves_out(cli) -> None:
    shown = json.loads(cli("tools", "show", "os.fs.hash", "--json").stdout)
    assert shown["tier"] == "rare" and "path" in shown["argsSchema"]["properties"]


def test_tools_show_unknown_name_suggests_close_names(cli) -> None:
    result = cli("tools", "show", "os.fs.reed")
    assert result.returncode == 2 and "no tool named 'os.fs.reed'" in result.stderr
    assert "did you mean os.fs.read" in result.stderr and not result.stdout


def test_tools_call_prints_the_compressed_result(cli) -> None:
    (cli.ws / "a.txt").write_text("hello\n")
    result = cli("tools", "call", "os.fs.read", "--args", '{"path": "a.txt"}', "--cwd", str(cli.ws))
    assert result.returncode == 0 and result.stdout.splitlines() == ["a.txt · lines 1-1 of 1", "     1\thello"]


def test_tools_call_json_prints_the_full_result(cli) -> None:
    (cli.ws / "a.txt").write_text("hello\n")
    out = json.loads(cli("tools", "call", "os.fs.read", "--args", '{"path": "a.txt"}', "--cwd", str(cli.ws),
                         "--json").stdout)
    assert out["status"] == "ok" and out["details"]["endLine"] == 1 and out["sessionId"].startswith("tools-call-")


def test_gated_call_prompts_on_stdin_with_the_category_label(cli) -> None:
    result = cli("tools", "call", "os.fs.write", "--args", '{"path": "w.txt", "content": "x"}', "--cwd",
                 str(cli.ws), input_text="y\n")
    assert result.returncode == 0 and (cli.ws / "w.txt").read_text() == "x"
    assert "approval needed · file write · workspace" in result.stderr and "[s]" in result.stderr


def test_denied_on_stdin_writes_nothing_and_exits_1(cli) -> None:
    result = cli("tools", "call", "os.fs.write", "--args", '{"path": "w.txt", "content": "x"}', "--cwd",
                 str(cli.ws), input_text="n\n")
    assert result.returncode == 1 and not (cli.ws / "w.txt").exists() and "was not approved" in result.stdout


def test_approve_never_and_once_answer_without_a_prompt(cli) -> None:
    args = ["tools", "call", "os.fs.write", "--args", '{"path": "w.txt", "content": "x"}', "--cwd", str(cli.ws)]
    never = cli(*args, "--approve", "never")
    assert never.returncode == 1 and "approval needed" not in never.stderr and not (cli.ws / "w.txt").exists()
    once = cli(*args, "--approve", "once")
    assert once.returncode == 0 and (cli.ws / "w.txt").exists()
    assert "--approve must be one of" in cli(*args, "--approve", "always").stderr


def test_closed_stdin_denies(cli) -> None:
    result = cli("tools", "call", "os.fs.write", "--args", '{"path": "w.txt", "content": "x"}', "--cwd",
                 str(cli.ws), input_text="")
    assert result.returncode == 1 and "no answer: denied" in result.stderr


def test_invalid_args_are_rejected_before_the_tool_runs(cli) -> None:
    bad_json = cli("tools", "call", "os.fs.read", "--args", "{path}")
    assert bad_json.returncode == 2 and "not valid JSON" in bad_json.stderr
    not_object = cli("tools", "call", "os.fs.read", "--args", "[1]")
    assert not_object.returncode == 2 and "must be a JSON object" in not_object.stderr
    schema = cli("tools", "call", "os.fs.read", "--args", '{"path": 3, "bogus": true}')
    assert schema.returncode == 2 and "invalid args for os.fs.read" in schema.stderr
    assert "Traceback" not in schema.stderr


def test_unknown_tool_suggests_close_names(cli) -> None:
    result = cli("tools", "call", "os.fs.reed", "--args", "{}")
    assert result.returncode == 2 and "did you mean os.fs.read" in result.stderr


def test_terminal_verbs_cannot_be_called_alone(cli) -> None:
    assert "ends a turn" in cli("tools", "call", "reply", "--args", '{"text": "x"}').stderr


def test_no_approval_forces_level_5_for_one_process_only(cli) -> None:
    (cli.state / "config.json").write_text(json.dumps({"agent": {"approvalLevel": 1}}))
    write = ["tools", "call", "os.fs.write", "--cwd", str(cli.ws), "--approve", "never"]
    forced = cli(*write, "--args", '{"path": "1.txt", "content": "1"}', "--no-approval")
    assert forced.returncode == 0 and (cli.ws / "1.txt").exists()
    assert json.loads((cli.state / "config.json").read_text())["agent"]["approvalLevel"] == 1
    after = cli(*write, "--args", '{"path": "2.txt", "content": "2"}')
    assert after.returncode == 1 and not (cli.ws / "2.txt").exists()


def test_persisted_level_is_honoured_by_tools_call(cli) -> None:
    (cli.state / "config.json").write_text(json.dumps({"agent": {"approvalLevel": 2}}))
    write = ["tools", "call", "os.fs.write", "--approve", "never", "--cwd", str(cli.ws)]
    assert cli(*write, "--args", '{"path": "in.txt", "content": "1"}').returncode == 0
    home_write = cli(*write, "--args", json.dumps({"path": str(cli.home / "out.txt"), "content": "2"}))
    assert home_write.returncode == 1 and not (cli.home / "out.txt").exists()


def test_every_decision_lands_in_the_audit_log(cli) -> None:
    cli("tools", "call", "os.fs.write", "--args", '{"path": "w.txt", "content": "x"}', "--cwd", str(cli.ws),
        "--approve", "never")
    rows = [json.loads(line) for line in (cli.state / "audit" / "approvals.ndjson").read_text().splitlines()]
    assert rows[-1]["tool"] == "os.fs.write" and rows[-1]["approved"] is False and rows[-1]["who"] == "user"


def test_unknown_session_is_a_clear_error(cli) -> None:
    result = cli("tools", "call", "os.fs.list", "--args", "{}", "--session", "nope")
    assert result.returncode == 2 and "no session 'nope'" in result.stderr
