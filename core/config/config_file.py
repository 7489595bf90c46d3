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
from atomic_agent.config.config_fields import CLAMP_KEY, ENV_KEY, RANGE_KEY, to_camel
from atomic_agent.config.dotenv_file import DotenvLoadResult
from atomic_agent.config.migrate_config import CONFIG_VERSION, SPARSE_VERSION, migrate_raw
from atomic_agent.config.raw_config import config_path, read_raw_config
from atomic_agent.config.written_defaults import DroppedDefaults, drop_written_defaults
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


def unset_key(raw: dict[str, Any], key: str) -> bool:
    """Remove `key` (a block or BLOCK.FIELD...) from `raw` so it returns to its default;
    objects it leaves empty go too. False when the file did not set it."""
    parts = key.split(".")
    if parts[0] == "version" or not all(parts):
        raise ConfigError(None, key, "is not a key you can unset", "Name a block or BLOCK.FIELD, e.g. llama.threads")
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = raw
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return False
        trail.append((node, part))
        node = node[part]
    last_parent, last = trail[-1]
    del last_parent[last]
    for parent, part in reversed(trail[:-1]):
        if parent[part] != {}:
            break
        del parent[part]
    return True


# Apply `ATOMIC_AGENT_*` environment overrides declared in config field metadata.

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _parse(raw: str, current: Any, env_name: str, field: attrs.Attribute[Any]) -> Any:
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


def env_override_keys(block_key: str, block: Any, environ: Mapping[str, str]) -> list[str]:
    """Dotted keys of `block` whose value comes from the environment (`config show` says so)."""
    return [f"{block_key}.{to_camel(field.name)}" for field in attrs.fields(type(block))
            if field.metadata.get(ENV_KEY) and environ.get(field.metadata[ENV_KEY], "") != ""]


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


def all_blocks(plugin_blocks: Mapping[str, ConfigBlock]) -> dict[str, ConfigBlock]:
    """The core's blocks and the plugins'; a plugin claiming a core key is an error."""
    blocks = {key: ConfigBlock(key=key, cls=cls, plugin="core") for key, cls in CORE_BLOCKS.items()}
    for key, block in plugin_blocks.items():
        if key in RESERVED_KEYS:
            raise ConfigError(None, key, f"plugin {block.plugin!r} registers a reserved config key",
                              "Rename the plugin's block")
        blocks[key] = block
    return blocks


def structure_blocks(raw: Mapping[str, Any], plugin_blocks: Mapping[str, ConfigBlock], path: Path | None,
                     newer: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """(structured known blocks, unknown blocks kept verbatim) for a migrated raw config."""
    # the converters (cattrs) load on first structure, so reading the raw file stays cheap (--help)
    from atomic_agent.config.config_converter import describe_structure_error, structure_block

    structured: dict[str, Any] = {}
    for key, block in all_blocks(plugin_blocks).items():
        cls, migrate = block.cls, block.migrate
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
    """Every block in full, defaults filled: the effective config (`config get`), never the file."""
    body: dict[str, Any] = {"version": version}
    for key in sorted(blocks):
        body[key] = _strict().unstructure(blocks[key])
    for key in sorted(unknown):
        body[key] = unknown[key]
    return json.dumps(body, indent=2, sort_keys=False) + "\n"


def render_raw(raw: Mapping[str, Any], version: int) -> str:
    """config.json's text: the version first, then what the user set, in the file's order."""
    body = {"version": version, **{k: v for k, v in raw.items() if k != "version"}}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


BACKUP_SUFFIX = ".bak"


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _backup_once(path: Path) -> Path | None:
    """Copy the file about to be migrated to `config.json.bak` unless a backup exists (the
    first one is the oldest original, so a later migration never overwrites it)."""
    backup = backup_path(path)
    if backup.exists():
        return None
    write_atomic(backup, path.read_bytes(), mode=0o600)
    return backup


#: versions this project wrote with every default filled in. v1 was never written by it: a v1
#: file is the predecessor's or hand-made (no "version"), so all it holds counts as chosen
FULL_DUMP_VERSIONS = range(2, SPARSE_VERSION)


@attrs.frozen
class _Upgrade:
    raw: dict[str, Any]
    from_version: int
    dropped: DroppedDefaults


def _upgrade(raw: Mapping[str, Any], disk_version: int, plugin_blocks: Mapping[str, ConfigBlock],
             path: Path | None) -> _Upgrade:
    """Plain migration steps, then (for files that held every default) the written defaults dropped.

    The file is structured before and after the drop and the two must agree on every value
    but the former defaults, so a bug here can never change what a user set; on disagreement
    the values stay as written."""
    migrated, from_v, _to = migrate_raw({**raw, "version": disk_version})
    if from_v not in FULL_DUMP_VERSIONS:
        return _Upgrade(migrated, from_v, DroppedDefaults())
    blocks = all_blocks(plugin_blocks)
    before, _ = structure_blocks(migrated, plugin_blocks, path)
    sparse, dropped = drop_written_defaults(migrated, blocks)
    after, _ = structure_blocks(sparse, plugin_blocks, path)
    changed = {key for key, _value in dropped.former}
    if _flat(before, changed) != _flat(after, changed):
        print(f"atomic-agent: {path}: kept every written value (dropping the defaults would have changed "
              "another value; please report this)", file=sys.stderr)
        return _Upgrade(migrated, from_v, DroppedDefaults())
    return _Upgrade(sparse, from_v, dropped)


def _flat(blocks: Mapping[str, Any], skip: set[str]) -> dict[str, Any]:
    """Every effective value by dotted key (nested objects walked), less the keys in `skip`."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        elif prefix not in skip:
            out[prefix] = value

    for key, block in blocks.items():
        walk(key, _strict().unstructure(block))
    return out


def _leaf_changes(new: Mapping[str, Any], old: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every leaf inside a block of `new` that `old` lacks or holds otherwise."""
    out: list[tuple[str, Any]] = []
    for key, value in new.items():
        dotted = f"{prefix}{key}"
        before = old.get(key) if isinstance(old, Mapping) else None
        if isinstance(value, dict):
            out.extend(_leaf_changes(value, before if isinstance(before, dict) else {}, dotted + "."))
        elif prefix and (key not in old or json.dumps(value) != json.dumps(before)):
            out.append((dotted, value))
    return out


def _migration_notice(path: Path, upgrade: _Upgrade, backup: Path | None) -> str:
    lines = [f"atomic-agent: migrated config v{upgrade.from_version} -> v{CONFIG_VERSION} ({path})"]
    if upgrade.dropped.count:
        lines[0] += (f"; it now keeps only the values you set ({upgrade.dropped.count} written defaults dropped, "
                     "so later changes of a default reach you)")
    if backup is not None:
        lines.append(f"atomic-agent: the old file is kept at {backup}")
    for key, value in upgrade.dropped.former:
        lines.append(f"atomic-agent: {key} was {json.dumps(value)}, the default when the file was written; "
                     f"today's default applies now (`atomic-agent config set {key} {json.dumps(value)}` keeps the old one)")
    return "\n".join(lines)


def load_config(state_dir: Path, plugin_blocks: Mapping[str, ConfigBlock] | None = None,
                environ: Mapping[str, str] | None = None, dotenv: DotenvLoadResult | None = None,
                write: bool = True) -> AppConfig:
    """Load config.json: migrate older files forward (a backup, an atomic rewrite, a few stderr
    lines), read newer ones with this build's schema without rewriting them, fill defaults,
    keep unknown blocks, then apply `ATOMIC_AGENT_*` overrides (never written back).

    The file holds only what the user set; a file of FULL_DUMP_VERSIONS held every default
    and loses, once, the ones it held only as defaults. Nothing is written unless the whole
    file validates, so a bad file is reported and left as it was."""
    env = os.environ if environ is None else environ
    blocks_in = plugin_blocks or {}
    path = config_path(state_dir)
    raw = read_raw_config(path)
    exists = path.exists()
    disk_version = int(raw.get("version", CONFIG_VERSION if not exists else 1))
    newer = disk_version > CONFIG_VERSION
    upgrade = None
    if not newer:
        upgrade = _upgrade(raw, disk_version, blocks_in, path)
        raw = upgrade.raw
    structured, unknown = structure_blocks(raw, blocks_in, path, newer=newer)
    if write and upgrade is not None and (not exists or upgrade.from_version < CONFIG_VERSION):
        backup = _backup_once(path) if exists else None
        write_atomic(path, render_raw(raw, CONFIG_VERSION), mode=0o600)
        if exists:
            print(_migration_notice(path, upgrade, backup), file=sys.stderr)
    with_env = {key: apply_env_overrides(block, env) for key, block in structured.items()}
    from_env = frozenset(k for key, block in structured.items() for k in env_override_keys(key, block, env))
    user = {k: v for k, v in raw.items() if k != "version"}
    return AppConfig(state_dir=state_dir, path=path, version=disk_version if newer else CONFIG_VERSION,
                     blocks=with_env, unknown_blocks=unknown, dotenv=dotenv, user_values=user, env_keys=from_env)


def save_raw_config(path: Path, raw: Mapping[str, Any], plugin_blocks: Mapping[str, ConfigBlock]) -> None:
    """Validate and write a raw config as given: only what the user set, never the defaults.

    The version on disk is never lowered. A file not migrated yet (read without writing)
    is migrated here first, so one `set` does not freeze every default it held."""
    disk = read_raw_config(path)
    disk_version = int(disk.get("version", CONFIG_VERSION if not path.exists() else 1))
    version = max(disk_version, int(raw.get("version", CONFIG_VERSION)), CONFIG_VERSION)
    newer = version > CONFIG_VERSION
    body = dict(raw)
    if not newer and disk_version < CONFIG_VERSION:
        # what this save changes is the user's choice even where it equals a (former) default
        chosen = _leaf_changes(body, disk)
        body = _upgrade(body, min(disk_version, int(body.get("version", disk_version))), plugin_blocks, path).raw
        for key, value in chosen:
            set_key(body, key, value)
        _backup_once(path)
    # newer: a newer build's keys stay verbatim, only validated values change
    structure_blocks(body, plugin_blocks, path, newer=newer)
    write_atomic(path, render_raw(body, version), mode=0o600)


structure_config_blocks = structure_blocks  # the public name (atomic_agent.api) for plugins re-reading their block
