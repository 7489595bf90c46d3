"""`<state>/.env`: a deliberately tiny KEY=VALUE parser, loader and atomic writer.

Lines are KEY=VALUE with optional surrounding quotes, `#` comments and blank lines; no
interpolation, no `export`, no multi-line values. Shell-exported values always win.
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import MutableMapping
from pathlib import Path

import attrs

from atomic_agent.config.atomic_write import write_atomic

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TRANSIENT_ERRNOS = {errno.EPERM, errno.EACCES, errno.EBUSY, errno.EAGAIN}
RETRY_DELAYS_S = (0.05, 0.15)


@attrs.define
class DotenvLoadResult:
    """What loading `.env` did. Values never appear here; diagnostics name line numbers."""

    path: str
    exists: bool = False
    loaded: list[str] = attrs.field(factory=list)
    skipped: list[str] = attrs.field(factory=list)
    problems: list[str] = attrs.field(factory=list)
    error: str | None = None
    attempts: int = 0


def parse_dotenv(text: str) -> tuple[dict[str, str], list[str]]:
    """Parse `.env` text into (values, problems); a bad line is reported by number only."""
    values: dict[str, str] = {}
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            problems.append(f"line {number}: expected KEY=VALUE")
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return values, problems


def _read_with_retry(path: Path, result: DotenvLoadResult) -> str | None:
    for attempt, delay in enumerate((*RETRY_DELAYS_S, None), start=1):
        result.attempts = attempt
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno not in TRANSIENT_ERRNOS or delay is None:
                result.error = f"{errno.errorcode.get(exc.errno or 0, 'OSError')} after {attempt} attempt(s)"
                return None
            time.sleep(delay)
    return None


def load_dotenv(path: Path, environ: MutableMapping[str, str] | None = None) -> DotenvLoadResult:
    """Set every key of `.env` that is unset or empty in `environ` (default os.environ)."""
    env = os.environ if environ is None else environ
    result = DotenvLoadResult(path=str(path), exists=path.exists())
    text = _read_with_retry(path, result)
    if text is None:
        return result
    values, result.problems = parse_dotenv(text)
    for key, value in values.items():
        if env.get(key):
            result.skipped.append(key)
        else:
            env[key] = value
            result.loaded.append(key)
    return result


def set_dotenv_key(path: Path, key: str, value: str) -> None:
    """Add or replace one key, keeping every other line; the file is written 0600, atomically."""
    if not _KEY.match(key):
        raise ValueError(f"{key!r} is not a valid environment variable name")
    if "\n" in value or "\r" in value:
        raise ValueError("values in .env cannot span lines")
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    rendered = f'{key}="{value}"' if any(c in value for c in " #'\"") else f"{key}={value}"
    out, replaced = [], False
    for line in lines:
        if line.strip().partition("=")[0].strip() == key and not line.strip().startswith("#"):
            if not replaced:
                out.append(rendered)
                replaced = True
            continue
        out.append(line)
    if not replaced:
        out.append(rendered)
    write_atomic(path, "\n".join(out) + "\n", mode=0o600)
