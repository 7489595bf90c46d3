"""The loaded configuration: every block structured, unknown blocks kept verbatim."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import attrs

from atomic_agent.config.config_fields import int_field, value_field
from atomic_agent.config.dotenv_file import DotenvLoadResult

# The config blocks the core owns: agent, plugins, prompt, tracing. Plugins add their own.

# prompt.style: `auto` chooses by model; what each style means lives in prompt/prompt_style.py
AUTO, COACHED, FULL = "auto", "coached", "full"
PROMPT_STYLES = (AUTO, COACHED, FULL)

@attrs.frozen
class AgentConfig:
    """How the agent loop behaves. Loop-detector thresholds are env-only (see loop_detector)."""

    approval_level: int = int_field(1, 1, 5)
    max_steps: int = int_field(24, 1, 500, env="ATOMIC_AGENT_MAX_STEPS", clamp=True)
    max_parallel_tool_calls: int = int_field(8, 1, 16, env="ATOMIC_AGENT_MAX_PARALLEL_TOOL_CALLS", clamp=True)
    batch_tool_result_char_cap: int = int_field(16000, 500, 1_000_000,
                                                env="ATOMIC_AGENT_BATCH_TOOL_RESULT_CHAR_CAP", clamp=True)
    loaded_tools_cap: int = int_field(6, 1, 64)
    loaded_tools_max_tokens: int = int_field(1200, 100, 32000)
    auto_expand_rare_on_error: bool = value_field(True)
    token_budget: int = int_field(600, 0, 32000)
    conversation_max_tokens: int = int_field(32000, 256, 1_000_000)
    world_snapshot_max_tokens: int = int_field(8000, 64, 1_000_000)
    tool_result_summary_chars: int = int_field(1200, 100, 100_000)
    tool_timeout_s: int = int_field(300, 1, 86_400, env="ATOMIC_AGENT_TOOL_TIMEOUT_S", clamp=True)
    # queued sends of one session: run one turn each, or fold every waiting one into the next turn
    send_mode: str = value_field("one-at-a-time", choices=("one-at-a-time", "all"))
    # steers of the running turn: fold the oldest in and answer it before the next, or fold
    # every waiting one into the next step together
    steer_mode: str = value_field("one-at-a-time", choices=("one-at-a-time", "all"))
    # seconds between the runtime's consolidation ticks (memory phases' cold path); 0: never
    consolidation_interval_s: int = int_field(600, 0, 7 * 86_400)


@attrs.frozen
class PromptConfig:
    """How the prompt is written. `style`: `coached` (the starter model's worked examples and
    prefilled reply), `full` (multi-step work for capable models), or `auto` — coached for a
    model under a billion parameters (or named as a small one), full otherwise."""

    style: str = value_field(AUTO, env="ATOMIC_AGENT_PROMPT_STYLE", choices=PROMPT_STYLES)


@attrs.frozen
class PluginsConfig:
    """Which installed plugins not to load (names as `atomic-agent plugins` lists them)."""

    disabled: tuple[str, ...] = value_field(())


@attrs.frozen
class TracingConfig:
    """Per-session NDJSON traces under `<state>/traces/`."""

    enabled: bool = value_field(True, env="ATOMIC_AGENT_TRACING")
    max_bytes_per_session: int = int_field(10 * 1024 * 1024, 1024, 1 << 34)


CORE_BLOCKS: dict[str, type] = {
    "agent": AgentConfig,
    "plugins": PluginsConfig,
    "prompt": PromptConfig,
    "tracing": TracingConfig,
}


@attrs.frozen
class AppConfig:
    """A frozen snapshot of config.json (plus env overrides) taken at bootstrap."""

    state_dir: Path
    path: Path
    version: int
    blocks: Mapping[str, Any]
    unknown_blocks: Mapping[str, Any] = attrs.field(factory=dict)
    dotenv: DotenvLoadResult | None = None
    # what config.json itself sets (blocks as on disk, after migration): every other value is a default
    user_values: Mapping[str, Any] = attrs.field(factory=dict)
    # dotted keys whose value came from an ATOMIC_AGENT_* variable
    env_keys: frozenset[str] = frozenset()

    def block(self, key: str) -> Any:
        """The structured block `key`; a KeyError names the blocks that exist."""
        try:
            return self.blocks[key]
        except KeyError:
            raise KeyError(f"no config block {key!r}; known blocks: {', '.join(sorted(self.blocks))}") from None

    @property
    def agent(self) -> AgentConfig:
        return cast(AgentConfig, self.blocks["agent"])  # the core blocks are structured at load

    @property
    def plugins(self) -> PluginsConfig:
        return cast(PluginsConfig, self.blocks["plugins"])

    @property
    def prompt(self) -> PromptConfig:
        return cast(PromptConfig, self.blocks["prompt"])

    @property
    def tracing(self) -> TracingConfig:
        return cast(TracingConfig, self.blocks["tracing"])

    def with_block(self, key: str, value: Any) -> AppConfig:
        return attrs.evolve(self, blocks={**self.blocks, key: value})
