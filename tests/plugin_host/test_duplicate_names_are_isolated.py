"""A name two plugins register — a tool, a command, a config block, an approval category, a
channel, a memory phase — never breaks the CLI: the built-in (else the first by name) is
kept, the other plugin keeps everything else it registered, and its `plugins` row says what
was left out. Tried with real installed distributions found through their entry points."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.run_cli import run_cli
from tests.fake_distribution import write_distribution

CLASHING = '''
import attrs
from atomic_agent.api import (ApprovalCategory, ChannelSpec, ConfigBlock, MemoryPhase, ResourceClass, Tier,
                              ToolResult, ToolSpec, hookimpl)

WHO = {who!r}


async def run(args, ctx):
    return ToolResult.ok(f"counted by {{WHO}}")


def tool(name):
    return ToolSpec(name=name, summary=f"Count words ({{WHO}}).", args_schema={{"type": "object"}},
                    resource_class=ResourceClass.PURE_READ, tier=Tier.RARE, run=run)


@attrs.frozen
class Block:
    enabled: bool = False


@hookimpl
def register_tools(runtime):
    return [tool("third.word_count"), tool("os.fs.read"), tool(f"third.only_{{WHO}}")]


@hookimpl
def register_commands(app):
    def hello():
        print(f"hello from {{WHO}}")
    app.command("clash-hello")(hello)
    app.command("plugins")(hello)
    app.command(f"only-{{WHO}}")(hello)


@hookimpl
def register_config_blocks():
    return [ConfigBlock("llama", Block), ConfigBlock("thirdBlock", Block)]


@hookimpl
def register_approval_categories():
    return [ApprovalCategory("shell", 1, "a weaker shell"), ApprovalCategory("third_cat", 3, f"{{WHO}}")]


@hookimpl
def register_channels(runtime):
    return [ChannelSpec("telegram", lambda rt: None), ChannelSpec("third_channel", lambda rt: None)]


@hookimpl
def register_memory_phases(runtime):
    return [MemoryPhase(name="memory-notes"), MemoryPhase(name="third-phase")]
'''


@pytest.fixture
def clash_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    for who in ("aa", "zz"):  # "aa" sorts before every built-in plugin name
        write_distribution(site, f"{who}-clash", "0.1.0", {f"{who}_clash": CLASHING.format(who=who)},
                           {f"{who}_clash": f"{who}_clash"})
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def test_a_clashing_name_of_any_kind_leaves_every_command_working_and_shows_on_the_plugins_row(
        tmp_path: Path, clash_env: dict[str, str]) -> None:
    state = ["--state-dir", str(tmp_path / "state")]
    plugins = run_cli([*state, "plugins", "--json"], env=clash_env)
    assert plugins.returncode == 0, plugins.stderr
    rows = {row["name"]: row for row in json.loads(plugins.stdout)}
    assert rows["aa_clash"]["status"] == rows["zz_clash"]["status"] == "loaded"
    aa, zz = " | ".join(rows["aa_clash"]["conflicts"]), " | ".join(rows["zz_clash"]["conflicts"])
    for needle in ("'os.fs.read'", "'llama'", "'shell'", "'telegram'", "'memory-notes'", "'plugins'"):
        assert needle in aa and needle in zz, (needle, aa, zz)
    assert "'third.word_count'" in zz and "'third.word_count'" not in aa  # first by name wins among third parties
    assert "'clash-hello'" in zz and "'clash-hello'" not in aa

    tools = run_cli([*state, "tools", "list", "--json"], env=clash_env)
    assert tools.returncode == 0, tools.stderr
    by_name = {t["name"]: t for t in json.loads(tools.stdout)}
    assert by_name["os.fs.read"]["plugin"] == "os"  # a plugin someone installed never replaces a built-in
    assert by_name["third.word_count"]["plugin"] == "aa_clash"
    assert {"third.only_aa", "third.only_zz"} <= set(by_name)  # the rest of each plugin still works

    shown = run_cli([*state, "prompt", "show", "--message", "hi"], env=clash_env)
    assert shown.returncode == 0, shown.stderr
    assert "third.word_count" in shown.stdout

    hello = run_cli([*state, "clash-hello"], env=clash_env)
    assert hello.returncode == 0 and hello.stdout.strip() == "hello from aa"
    assert run_cli([*state, "only-zz"], env=clash_env).stdout.strip() == "hello from zz"
    config = run_cli([*state, "config", "show"], env=clash_env)
    assert config.returncode == 0, config.stderr
    text = run_cli([*state, "plugins"], env=clash_env)
    assert text.returncode == 0 and "conflict: ToolSpec 'os.fs.read'" in text.stdout
