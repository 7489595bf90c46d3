"""`<state>/config.json` as JSON: where it is and its parsed object, before migration and
structuring. Kept apart from config_file.py so what only needs the raw object (`--help`
choosing plugins) does not build the config classes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.migrate_config import CONFIG_VERSION

CONFIG_FILE = "config.json"


def config_path(state_dir: Path) -> Path:
    return state_dir / CONFIG_FILE


def read_raw_config(path: Path) -> dict[str, Any]:
    """The parsed JSON object in `path` ({} when missing). Malformed JSON is a ConfigError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(path, "", f"cannot be read ({exc.strerror})", "Check the file's permissions") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, f"line {exc.lineno}, column {exc.colno}", f"is not valid JSON ({exc.msg})",
                          "Fix the syntax, or delete the file to start again from defaults") from None
    if not isinstance(raw, dict):
        raise ConfigError(path, "top level", f"must be a JSON object, found {type(raw).__name__}",
                          "Wrap the settings in { ... }")
    version = raw.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ConfigError(path, "version", f"must be a positive integer, found {version!r}",
                          f"Set it to {CONFIG_VERSION} (the version this build writes)")
    return raw
