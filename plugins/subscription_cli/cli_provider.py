"""The `subscription-cli` text provider: one completion = one headless run of a vendor CLI.

It declares the native-tools transport but never returns tool calls: the answer is the
CLI's plain text, and an empty `tool_calls` sends the step executor down its guarded
recovery (a reply), where the grammar transport would fail on any drift and pay for a
second CLI run on the repair path. The child inherits this process's environment
unchanged: nothing is set or cleared (ANTHROPIC_API_KEY included), no token is read.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import Completion, CompletionRequest, ProviderCapabilities

from .cli_descriptor import CliAdapterDescriptor, CliOptions
from .cli_errors import SubscriptionCliAuthError, SubscriptionCliError, SubscriptionCliMissingError
from .command_runner import CommandResult, run_cli_command

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_KILL_GRACE_S = 3.0


def _tail(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else "..." + text[-limit:]


class SubscriptionCliProvider:
    capabilities = ProviderCapabilities(transport="native_tools", slot_affinity=False)
    mode = "subscription"

    def __init__(self, descriptor: CliAdapterDescriptor, *, model: str = "", binary: str = "",
                 timeout_s: float = DEFAULT_TIMEOUT_S, kill_grace_s: float = DEFAULT_KILL_GRACE_S,
                 workdir: Path | None = None, context_window: int | None = None, provider_id: str = "") -> None:
        self.descriptor = descriptor
        self.model = model
        self.binary = binary
        self.timeout_s = timeout_s
        self.kill_grace_s = kill_grace_s
        self.workdir = workdir
        self._context_window = context_window if context_window is not None else descriptor.context_window
        self.provider_id = provider_id or descriptor.name
        self.max_tokens = 4096

    def executable(self) -> str:
        found = shutil.which(self.binary or self.descriptor.executable)
        if found is None:
            raise SubscriptionCliMissingError(
                f"the {self.descriptor.name} CLI was not found ({self.binary or self.descriptor.executable!r} is not "
                f"on PATH); install it and sign in: {self.descriptor.sign_in_hint}")
        return found

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        stream = bool(request.stream and on_delta is not None and self.descriptor.stream_delta is not None)
        argv = self.descriptor.build_argv(self.executable(), CliOptions(model=self.model, stream=stream))
        on_line = None
        if stream:
            extract = self.descriptor.stream_delta
            assert extract is not None and on_delta is not None

            def on_line(line: str) -> None:
                piece = extract(line)
                if piece:
                    on_delta(piece)

        cwd = None
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            cwd = str(self.workdir)
        started = time.perf_counter()
        result = await run_cli_command(argv, request.prompt.encode("utf-8"), cwd=cwd, on_stdout_line=on_line,
                                       timeout_s=self.timeout_s, kill_grace_s=self.kill_grace_s)
        return self._completion(result, (time.perf_counter() - started) * 1000)

    def _failure(self, result: CommandResult, detail: str) -> SubscriptionCliError:
        name = self.descriptor.name
        cut = (f"; it stopped reading the prompt after {result.bytes_written} of {result.bytes_total} bytes"
               if result.input_truncated else "")
        message = f"{name} exited with code {result.exit_code}{cut}: {detail or 'no message'}"
        text = f"{detail} {result.stderr}".lower()
        if any(w in text for w in self.descriptor.auth_wording):
            return SubscriptionCliAuthError(f"{message}. {self.descriptor.sign_in_hint}", None,
                                            exit_code=result.exit_code, stderr=result.stderr)
        if any(w in text for w in self.descriptor.rate_limit_wording):
            return SubscriptionCliError(message, 429, exit_code=result.exit_code, stderr=result.stderr)
        return SubscriptionCliError(message, None, exit_code=result.exit_code, stderr=result.stderr)

    def _completion(self, result: CommandResult, duration_ms: float) -> Completion:
        name = self.descriptor.name
        if result.timed_out:
            raise SubscriptionCliError(f"{name} did not finish within {self.timeout_s:g}s and was stopped",
                                       None, exit_code=result.exit_code, stderr=result.stderr, timed_out=True)
        if result.exit_code != 0:
            answer = self.descriptor.parse_output(result.stdout)
            raise self._failure(result, _tail(answer.error if answer.is_error and answer.error else result.stderr))
        if result.input_truncated:
            raise SubscriptionCliError(
                f"{name} exited 0 but read only {result.bytes_written} of {result.bytes_total} prompt bytes; its "
                "answer would be to half a prompt, so it is not used", None, exit_code=0, stderr=result.stderr)
        answer = self.descriptor.parse_output(result.stdout)
        if answer.is_error:
            raise self._failure(result, _tail(answer.error or result.stderr))
        usage = {"model": self.model or name, **answer.usage} if answer.usage else {}
        return Completion(content=answer.text, stop=True, stop_type="eos",
                          tokens_predicted=int(answer.usage.get("completionTokens", 0)),
                          tokens_evaluated=int(answer.usage.get("promptTokens", 0)),
                          cache_n=int(answer.usage.get("cachedTokens", 0)), duration_ms=duration_ms,
                          tool_calls=(), usage=usage)

    async def context_window(self) -> int | None:
        return self._context_window

    async def describe(self) -> dict[str, object]:
        return {"chat_template": "", "model_alias": "", "model": self.model, "cli": self.descriptor.name,
                "modalities": {}}

    def unavailable_hint(self) -> str:
        return f"The {self.descriptor.name} CLI could not answer. {self.descriptor.sign_in_hint}"

    async def close(self) -> None:
        return None


def build_cli_provider(entry: dict[str, Any], runtime: RuntimeView) -> SubscriptionCliProvider:
    """Factory for a `subscription-cli` entry: `subscriptionCli: {cli, model?, binary?,
    timeoutS?, killGraceS?, contextWindow?}`."""
    from .subscription_clis import SUBSCRIPTION_CLIS, cli_named

    pid = entry.get("id", "?")
    spec = entry.get("subscriptionCli")
    if not isinstance(spec, dict) or not isinstance(spec.get("cli"), str):
        raise ValueError(f"provider {pid!r}: a subscription-cli entry needs \"subscriptionCli\": "
                         f"{{\"cli\": one of {', '.join(SUBSCRIPTION_CLIS)}}}")
    allowed = {"cli", "model", "binary", "timeoutS", "killGraceS", "contextWindow"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ValueError(f"provider {pid!r}: unknown subscriptionCli key(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(sorted(allowed))}")
    descriptor = cli_named(spec["cli"])
    numbers = {}
    for key, default in (("timeoutS", DEFAULT_TIMEOUT_S), ("killGraceS", DEFAULT_KILL_GRACE_S)):
        value = spec.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"provider {pid!r}: subscriptionCli.{key} must be a positive number, got {value!r}")
        numbers[key] = float(value)
    for key in ("model", "binary"):
        if not isinstance(spec.get(key, ""), str):
            raise ValueError(f"provider {pid!r}: subscriptionCli.{key} must be a string")
    window = spec.get("contextWindow")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 128):
        raise ValueError(f"provider {pid!r}: subscriptionCli.contextWindow must be a whole number of tokens")
    state_dir = getattr(runtime, "state_dir", None)
    return SubscriptionCliProvider(descriptor, model=spec.get("model", ""), binary=spec.get("binary", ""),
                                   timeout_s=numbers["timeoutS"], kill_grace_s=numbers["killGraceS"],
                                   workdir=Path(state_dir) / "subscription-cli" if state_dir else None,
                                   context_window=window, provider_id=str(pid))
