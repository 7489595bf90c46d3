"""The boot sequence every entry point shares: state dir, .env, plugins, config."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

import attrs

from atomic_agent.config.app_config import AppConfig
from atomic_agent.config.config_file import load_config
from atomic_agent.config.dotenv_file import load_dotenv
from atomic_agent.config.raw_config import config_path, read_raw_config
from atomic_agent.config.state_dir import ensure_state_dir, resolve_state_dir
from atomic_agent.hook_records import ConfigBlock
from atomic_agent.plugin_host.collect_registrations import collect_records
from atomic_agent.plugin_host.plugin_host import PluginHost, build_plugin_host

DOTENV_FILE = ".env"


@attrs.define
class BootContext:
    """What is known once the process has booted: where state lives, plugins, config."""

    state_dir: Path
    host: PluginHost
    config: AppConfig
    config_blocks: dict[str, ConfigBlock]


def boot(state_dir: str | Path | None = None, environ: MutableMapping[str, str] | None = None,
         host: PluginHost | None = None) -> BootContext:
    """Resolve and create the state dir, load `.env`, load plugins, then load config.

    `plugins.disabled` is read from the raw file first so disabled plugins are never
    imported; their config blocks survive as unknown blocks.
    """
    env = os.environ if environ is None else environ
    resolved = ensure_state_dir(resolve_state_dir(state_dir, env))
    dotenv = load_dotenv(resolved / DOTENV_FILE, env)
    raw = read_raw_config(config_path(resolved))
    disabled = (raw.get("plugins") or {}).get("disabled", []) if isinstance(raw.get("plugins"), dict) else []
    if host is None:
        host = build_plugin_host(disabled=disabled if isinstance(disabled, list) else [], environ=env)
    blocks = {b.key: b for b in collect_records(host, "register_config_blocks", ConfigBlock, key=lambda b: b.key)}
    config = load_config(resolved, blocks, environ=env, dotenv=dotenv)
    return BootContext(state_dir=resolved, host=host, config=config, config_blocks=blocks)
