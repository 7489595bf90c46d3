"""Guide invariant 8: subscription CLIs are driven, never impersonated."""

from __future__ import annotations

import pytest

from atomic_agent.api import CompletionRequest
from atomic_agent.plugins.subscription_cli.claude_descriptor import claude_argv
from atomic_agent.plugins.subscription_cli.cli_descriptor import CliOptions
from atomic_agent.plugins.subscription_cli.cli_provider import SubscriptionCliProvider
from atomic_agent.plugins.subscription_cli.codex_descriptor import codex_argv
from atomic_agent.plugins.subscription_cli.command_runner import ForbiddenFlagError, run_cli_command
from atomic_agent.plugins.subscription_cli.subscription_clis import SUBSCRIPTION_CLIS

PROMPT = "SYSTEM PREFIX " + "x" * 300_000 + " TAIL-MARKER"  # far past the pipe buffer and a typical argv limit


@pytest.mark.parametrize("stream", [False, True])
def test_claude_argv_disables_every_tool_and_mcp_and_never_passes_bare(stream):
    argv = claude_argv("/bin/claude", CliOptions(model="sonnet", stream=stream))
    assert "--print" in argv and "--bare" not in argv
    assert argv[argv.index("--tools") + 1] == ""  # no built-in tools
    assert "--strict-mcp-config" in argv and "--mcp-config" not in argv  # no MCP servers at all
    assert argv[argv.index("--model") + 1] == "sonnet"


def test_codex_argv_confines_the_child_and_reads_the_prompt_from_stdin():
    argv = codex_argv("/bin/codex", CliOptions(model="gpt-5"))
    assert argv[1] == "exec" and argv[-1] == "-"
    assert argv[argv.index("--sandbox") + 1] == "read-only" and "--ignore-user-config" in argv
    assert "--bare" not in argv


@pytest.mark.parametrize("cli", sorted(SUBSCRIPTION_CLIS))
async def test_the_prompt_never_travels_on_argv(cli, fake_clis):
    provider = SubscriptionCliProvider(SUBSCRIPTION_CLIS[cli])
    done = await provider.complete(CompletionRequest(prompt=PROMPT, stream=False))
    run = fake_clis.runs()[-1]
    assert done.content == "hello from the fake cli"
    assert run["prompt_len"] == len(PROMPT)  # the whole prompt arrived, on stdin
    assert all("TAIL-MARKER" not in a and "SYSTEM PREFIX" not in a for a in run["argv"])


async def test_the_runner_refuses_bare_whatever_builds_the_argv(fake_clis):
    with pytest.raises(ForbiddenFlagError):
        await run_cli_command([str(fake_clis.bin_dir / "claude"), "--print", "--bare"], b"hi")
    assert fake_clis.runs() == []  # nothing was started


@pytest.mark.parametrize("present", [True, False])
async def test_anthropic_api_key_is_neither_set_nor_cleared(present, fake_clis, monkeypatch):
    if present:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-operator-own")
    await SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"]).complete(CompletionRequest(prompt="hi", stream=False))
    assert fake_clis.runs()[-1]["anthropic_key"] == ("sk-ant-operator-own" if present else None)


def test_the_plugin_never_reads_cli_credential_stores():
    """Driven, not impersonated: no code path opens the CLIs' token files or keychains."""
    from pathlib import Path

    import atomic_agent.plugins.subscription_cli as plugin

    for path in Path(plugin.__file__).parent.glob("*.py"):
        code = "\n".join(line for line in path.read_text().splitlines() if not line.strip().startswith(("#", '"')))
        for needle in (".credentials.json", "auth.json", "find-generic-password", "keyring", "open("):
            assert needle not in code, f"{path.name} mentions {needle}"
