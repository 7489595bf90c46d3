"""The subscription-cli provider against fake `claude` / `codex` executables on PATH."""

from __future__ import annotations

import json

import pytest

from atomic_agent.agent.step_executor import batch_from_native_calls
from atomic_agent.api import CompletionRequest, ProviderUnavailableError
from atomic_agent.plugins.subscription_cli.cli_errors import SubscriptionCliMissingError
from atomic_agent.plugins.subscription_cli.cli_provider import SubscriptionCliProvider, build_cli_provider
from atomic_agent.plugins.subscription_cli.subscription_clis import SUBSCRIPTION_CLIS
from atomic_agent.providers.fallback_chain import advance_signal
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import fresh_plugin_host, registered_plugin

REQUEST = CompletionRequest(prompt="You are helpful.\nuser: hi", stream=False)


async def test_claude_json_answer_is_plain_text_with_no_tool_calls(fake_clis):
    done = await SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"], model="sonnet").complete(REQUEST)
    assert done.content == "hello from the fake cli" and done.tool_calls == ()
    assert done.usage["completionTokens"] == 6 and done.usage["notionalCostUsd"] == 0.0123
    assert "costUsd" not in done.usage  # a flat-rate subscription is not billed per call
    assert batch_from_native_calls(done).calls[0].tool == "reply"  # the guarded recovery path
    assert "--model" in fake_clis.runs()[-1]["argv"]


async def test_claude_streams_partial_messages_as_deltas(fake_clis):
    deltas: list[str] = []
    done = await SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"]).complete(
        CompletionRequest(prompt="hi", stream=True), deltas.append)
    assert len(deltas) > 1 and "".join(deltas).strip() == done.content == "hello from the fake cli"
    assert "stream-json" in fake_clis.runs()[-1]["argv"]


async def test_codex_answer_is_its_last_agent_message(fake_clis):
    done = await SubscriptionCliProvider(SUBSCRIPTION_CLIS["codex"]).complete(REQUEST)
    assert done.content == "hello from the fake cli" and done.tool_calls == ()
    assert done.usage["cachedTokens"] == 2


async def test_signed_out_cli_is_unavailable_and_switches_the_chain_at_once(fake_clis, monkeypatch):
    monkeypatch.setenv("FAKE_CLI_MODE", "signed_out")
    with pytest.raises(ProviderUnavailableError) as info:
        await SubscriptionCliProvider(SUBSCRIPTION_CLIS["codex"]).complete(REQUEST)
    assert "codex login" in str(info.value) and advance_signal(info.value) == "immediate"


async def test_a_missing_cli_is_unavailable_with_an_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SubscriptionCliMissingError, match="not on PATH"):
        await SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"]).complete(REQUEST)


@pytest.mark.parametrize("entry,needle", [
    ({"id": "s", "kind": "subscription-cli"}, "needs \"subscriptionCli\""),
    ({"id": "s", "kind": "subscription-cli", "subscriptionCli": {"cli": "gemini"}}, "unknown subscription CLI"),
    ({"id": "s", "kind": "subscription-cli", "subscriptionCli": {"cli": "claude", "bare": True}}, "unknown"),
    ({"id": "s", "kind": "subscription-cli", "subscriptionCli": {"cli": "claude", "timeoutS": 0}}, "timeoutS"),
])
def test_entry_mistakes_are_named(entry, needle):
    with pytest.raises(ValueError, match=needle):
        build_cli_provider(entry, runtime=None)


async def test_a_turn_completes_through_a_fake_subscription_cli(fake_clis, tmp_path):
    import atomic_agent.plugins.subscription_cli as cli_plugin

    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"version": 2, "llm": {"providers": [
        {"id": "claude-sub", "kind": "subscription-cli", "subscriptionCli": {"cli": "claude", "killGraceS": 0.5}}]}}))
    host = fresh_plugin_host()
    with registered_plugin(host, cli_plugin, "subscription_cli"):
        rt = Runtime(boot(state, environ={}, host=host), environ={})
        result = await rt.run_turn("Say hello.", working_dir=tmp_path)
        await rt.close()
    assert result.status == "done" and result.reply == "hello from the fake cli"
    run = fake_clis.runs()[-1]
    assert run["prompt_len"] > 100 and "Say hello." not in " ".join(run["argv"])
    assert (state / "subscription-cli").is_dir()  # the child runs in a neutral directory, not the workspace
