"""Guide invariant 9: a broken stdin pipe is expected, not fatal; a trapped SIGTERM never orphans."""

from __future__ import annotations

import asyncio
import errno

import pytest

from atomic_agent.api import CompletionRequest, ProviderError
from atomic_agent.plugins.subscription_cli.cli_errors import SubscriptionCliAuthError, SubscriptionCliError
from atomic_agent.plugins.subscription_cli.cli_provider import SubscriptionCliProvider
from atomic_agent.plugins.subscription_cli.command_runner import _feed, run_cli_command
from atomic_agent.plugins.subscription_cli.subscription_clis import SUBSCRIPTION_CLIS
from tests.process_liveness import alive

BIG = b"p" * 400_000


async def test_a_cli_that_exits_without_reading_stdin_reports_its_exit_code_and_stderr(fake_clis, monkeypatch):
    monkeypatch.setenv("FAKE_CLI_MODE", "signed_out")
    result = await run_cli_command([str(fake_clis.bin_dir / "claude"), "--print"], BIG)
    assert result.exit_code == 1 and "/login" in result.stderr
    assert result.input_truncated and result.bytes_written < len(BIG)


async def test_the_provider_turns_a_signed_out_cli_into_an_auth_error_with_the_sign_in_hint(fake_clis, monkeypatch):
    monkeypatch.setenv("FAKE_CLI_MODE", "signed_out")
    with pytest.raises(SubscriptionCliAuthError) as info:
        await SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"]).complete(
            CompletionRequest(prompt=BIG.decode(), stream=False))
    message = str(info.value)
    assert "exited with code 1" in message and "/login" in message and "sign in" in message
    assert info.value.exit_code == 1


async def test_truncated_input_flag_for_a_cli_that_exits_zero_anyway(fake_clis, monkeypatch):
    monkeypatch.setenv("FAKE_CLI_MODE", "truncate")
    result = await run_cli_command([str(fake_clis.bin_dir / "codex"), "exec", "--json", "-"], BIG)
    assert result.exit_code == 0 and result.input_truncated
    with pytest.raises(SubscriptionCliError, match="exited 0 but read only"):
        await SubscriptionCliProvider(SUBSCRIPTION_CLIS["codex"]).complete(
            CompletionRequest(prompt=BIG.decode(), stream=False))


async def test_force_kills_a_child_that_traps_sigterm_instead_of_orphaning_it(fake_clis, monkeypatch):
    monkeypatch.setenv("FAKE_CLI_MODE", "trap_term")
    provider = SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"], kill_grace_s=0.2)
    task = asyncio.ensure_future(provider.complete(CompletionRequest(prompt="hi", stream=False)))
    while not fake_clis.runs():
        await asyncio.sleep(0.02)
    pid = fake_clis.runs()[0]["pid"]
    assert alive(pid)
    task.cancel()  # our own Ctrl+C: SIGTERM, ignored by the child, then SIGKILL
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(pid)


async def test_a_child_past_its_time_limit_is_stopped_and_reported_as_our_timeout(fake_clis, monkeypatch):
    monkeypatch.setenv("FAKE_CLI_MODE", "trap_term")
    provider = SubscriptionCliProvider(SUBSCRIPTION_CLIS["codex"], timeout_s=0.3, kill_grace_s=0.2)
    with pytest.raises(SubscriptionCliError) as info:
        await provider.complete(CompletionRequest(prompt="hi", stream=False))
    assert info.value.timed_out
    assert not alive(fake_clis.runs()[0]["pid"])


async def test_other_stdin_errors_still_travel():
    class BrokenDevice:
        def write(self, data: bytes) -> None:
            raise OSError(errno.EIO, "input/output error")

    with pytest.raises(OSError) as info:
        await _feed(BrokenDevice(), b"data")  # type: ignore[arg-type]
    assert info.value.errno == errno.EIO


async def test_broken_pipe_is_absorbed_by_the_feeder():
    class Closed:
        def write(self, data: bytes) -> None:
            raise BrokenPipeError(errno.EPIPE, "broken pipe")

    assert await _feed(Closed(), b"data") == (0, True)  # type: ignore[arg-type]


async def test_rate_limited_cli_is_a_429_for_the_fallback_chain(fake_clis, monkeypatch):
    from atomic_agent.providers.fallback_chain import advance_signal

    monkeypatch.setenv("FAKE_CLI_MODE", "rate_limited")
    with pytest.raises(ProviderError) as info:
        await SubscriptionCliProvider(SUBSCRIPTION_CLIS["claude"]).complete(CompletionRequest(prompt="x", stream=False))
    assert info.value.status == 429 and advance_signal(info.value) == "immediate"
