"""Reading, migrating, validating and writing `<state>/config.json`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.app_config import CORE_BLOCKS, AppConfig
from atomic_agent.config.atomic_write import write_atomic
from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_fields import CLAMP_KEY, ENV_KEY, RANGE_KEY
from atomic_agent.config.dotenv_file import DotenvLoadResult
from atomic_agent.config.migrate_config import CONFIG_VERSION, migrate_raw
from atomic_agent.config.raw_config import config_path, read_raw_config
from atomic_agent.hook_records import ConfigBlock


# Dotted keys (`agent.maxParallelToolCalls`) into a raw config mapping.

def get_key(raw: dict[str, Any], key: str) -> Any:
    node: Any = raw
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(None, key, "no such key", "Run `atomic-agent config show` to see the keys")
        node = node[part]
    return node


def parse_value(text: str) -> Any:
    """VALUE as JSON when it parses (8, true, ["a"]), else the plain string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def set_key(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    parts = key.split(".")
    if len(parts) < 2:
        raise ConfigError(None, key, "a key names a block and a field", "Use BLOCK.FIELD, e.g. agent.approvalLevel")
    node = raw
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(None, key, f"{part!r} is not an object", "Choose a key inside a block")
        node = child
    node[parts[-1]] = value
    return raw


# Apply `ATOMIC_AGENT_*` environment overrides declared in config field metadata.

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _parse(raw: str, current: Any, env_name: str, field: attrs.Attribute) -> Any:
    if isinstance(current, bool):
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ConfigError(None, env_name, f"{raw!r} is not a boolean", "Use 1/0, true/false, yes/no or on/off")
    if isinstance(current, int):
        try:
            value = int(raw.strip())
        except ValueError:
            raise ConfigError(None, env_name, f"{raw!r} is not an integer", "Set it to a whole number") from None
        lo, hi = field.metadata.get(RANGE_KEY, (value, value))
        if field.metadata.get(CLAMP_KEY):
            return max(lo, min(hi, value))
        if not lo <= value <= hi:
            raise ConfigError(None, env_name, f"{value} is out of range", f"Use a value in {lo}..{hi}")
        return value
    return raw


def apply_env_overrides(block: Any, environ: Mapping[str, str]) -> Any:
    """A copy of `block` with every field whose env var is set taken from the environment."""
    changes: dict[str, Any] = {}
    for field in attrs.fields(type(block)):
        env_name = field.metadata.get(ENV_KEY)
        if env_name and environ.get(env_name, "") != "":
            changes[field.name] = _parse(environ[env_name], getattr(block, field.name), env_name, field)
    if not changes:
        return block
    try:
        return attrs.evolve(block, **changes)
    except ValueError as exc:  # a field's own validator (allowed choices) refused an env value
        names = ", ".join(attrs.fields_dict(type(block))[name].metadata[ENV_KEY] for name in changes)
        raise ConfigError(None, names, str(exc), "Unset the variable or give it one of the allowed values") from None


def _strict() -> Any:
    from atomic_agent.config.config_converter import strict_converter

    return strict_converter


RESERVED_KEYS = {"version", *CORE_BLOCKS}


def _all_blocks(plugin_blocks: Mapping[str, ConfigBlock]) -> dict[str, tuple[type, Any]]:
    blocks: dict[str, tuple[type, Any]] = {key: (cls, None) for key, cls in CORE_BLOCKS.items()}
    for key, block in plugin_blocks.items():
        if key in RESERVED_KEYS:
            raise ConfigError(None, key, f"plugin {block.plugin!r} registers a reserved config key",
                              "Rename the plugin's block")
        blocks[key] = (block.cls, block.migrate)
    return blocks


def structure_blocks(raw: Mapping[str, Any], plugin_blocks: Mapping[str, ConfigBlock], path: Path | None,
                     newer: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """(structured known blocks, unknown blocks kept verbatim) for a migrated raw config."""
    # the converters (cattrs) load on first structure, so reading the raw file stays cheap (--help)
    from atomic_agent.config.config_converter import describe_structure_error, structure_block

    structured: dict[str, Any] = {}
    for key, (cls, migrate) in _all_blocks(plugin_blocks).items():
        block_raw = raw.get(key, {})
        if not isinstance(block_raw, dict):
            raise ConfigError(path, key, f"must be an object, found {type(block_raw).__name__}",
                              f"Write it as \"{key}\": {{ ... }}, or remove it to use defaults")
        if migrate is not None:
            block_raw = migrate(dict(block_raw))
        try:
            structured[key] = structure_block(block_raw, cls, newer=newer)
        except Exception as exc:  # cattrs and attrs validators both land here
            location, problem = describe_structure_error(exc, key)
            allowed = ", ".join(sorted(_camel_fields(cls)))
            raise ConfigError(path, location, problem,
                              f"Allowed keys in {key!r}: {allowed}; fix the value or remove it to use the default") from None
    unknown = {k: v for k, v in raw.items() if k != "version" and k not in structured}
    return structured, unknown


def _camel_fields(cls: type) -> list[str]:
    import attrs

    from atomic_agent.config.config_fields import to_camel

    return [to_camel(f.name) for f in attrs.fields(cls)]


def render_config(version: int, blocks: Mapping[str, Any], unknown: Mapping[str, Any]) -> str:
    body: dict[str, Any] = {"version": version}
    for key in sorted(blocks):
        body[key] = _strict().unstructure(blocks[key])
    for key in sorted(unknown):
        body[key] = unknown[key]
    return json.dumps(body, indent=2, sort_keys=False) + "\n"


def load_config(state_dir: Path, plugin_blocks: Mapping[str, ConfigBlock] | None = None,
                environ: Mapping[str, str] | None = None, dotenv: DotenvLoadResult | None = None,
                write: bool = True) -> AppConfig:
    """Load config.json: migrate older files forward (atomic rewrite, one stderr line),
    read newer ones with this build's schema without rewriting them, fill defaults,
    keep unknown blocks, then apply `ATOMIC_AGENT_*` overrides (never written back)."""
    env = os.environ if environ is None else environ
    path = config_path(state_dir)
    raw = read_raw_config(path)
    exists = path.exists()
    disk_version = int(raw.get("version", CONFIG_VERSION if not exists else 1))
    newer = disk_version > CONFIG_VERSION
    if not newer:
        raw, from_v, to_v = migrate_raw({**raw, "version": disk_version})
    else:
        from_v = to_v = disk_version
    structured, unknown = structure_blocks(raw, plugin_blocks or {}, path, newer=newer)
    if write and not newer and (not exists or from_v < CONFIG_VERSION):
        write_atomic(path, render_config(CONFIG_VERSION, structured, unknown), mode=0o600)
        if exists:
            print(f"atomic-agent: migrated config v{from_v} -> v{to_v} ({path})", file=sys.stderr)
    with_env = {key: apply_env_overrides(block, env) for key, block in structured.items()}
    return AppConfig(state_dir=state_dir, path=path, version=disk_version if newer else CONFIG_VERSION,
                     blocks=with_env, unknown_blocks=unknown, dotenv=dotenv)


def save_raw_config(path: Path, raw: Mapping[str, Any], plugin_blocks: Mapping[str, ConfigBlock]) -> None:
    """Validate and write a raw config; the version on disk is never lowered."""
    disk = read_raw_config(path)
    version = max(int(disk.get("version", CONFIG_VERSION)), int(raw.get("version", CONFIG_VERSION)), CONFIG_VERSION)
    newer = version > CONFIG_VERSION
    structured, unknown = structure_blocks(raw, plugin_blocks, path, newer=newer)
    if newer:
        # keep every key of a newer build's file verbatim; only validated values change
        body = {**raw, "version": version}
        write_atomic(path, json.dumps(body, indent=2) + "\n", mode=0o600)
        return
    write_atomic(path, render_config(version, structured, unknown), mode=0o600)


structure_config_blocks = structure_blocks  # the public name (atomic_agent.api) for plugins re-reading their block
