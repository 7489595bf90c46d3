"""Where atomic-agent keeps its files: the state dir (--state-dir, ATOMIC_AGENT_STATE_DIR, else
the user data dir) and the per-user cache every state dir shares (ATOMIC_AGENT_CACHE_DIR,
else the user cache dir): built binaries, models, compiled prompt templates — anything that
can be rebuilt and is the same whichever state dir asks."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from atomic_agent.config.config_errors import ConfigError

STATE_DIR_ENV = "ATOMIC_AGENT_STATE_DIR"
CACHE_DIR_ENV = "ATOMIC_AGENT_CACHE_DIR"


def resolve_state_dir(cli_value: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if cli_value:
        return Path(cli_value).expanduser().resolve()
    if env.get(STATE_DIR_ENV):
        return Path(env[STATE_DIR_ENV]).expanduser().resolve()
    from platformdirs import user_data_dir

    return Path(user_data_dir("atomic-agent", appauthor=False))


def resolve_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user cache (not created here). `ATOMIC_AGENT_CACHE_DIR` moves it (CI keeps it between runs)."""
    env = os.environ if environ is None else environ
    if env.get(CACHE_DIR_ENV):
        return Path(env[CACHE_DIR_ENV]).expanduser().resolve()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("atomic-agent", appauthor=False))


def ensure_state_dir(path: Path) -> Path:
    """Create the state dir with mode 0700; a path that cannot be used is a ConfigError."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
            raise PermissionError(f"{path} is on a read-only file system" if read_only else
                                  f"no write permission on {path}")
    except OSError as exc:
        raise ConfigError(path, "", f"the state directory cannot be used ({exc.strerror or exc})",
                          f"Pass --state-dir or set {STATE_DIR_ENV} to a writable directory") from exc
    return path
