"""Check and coerce the args of `os.shell.run` before anything runs.

`args` must be an array. Cloud models that double-serialise their arguments send the
array as a JSON string (`"[\"-la\"]"`); that is decoded back. Anything else — an object,
a bare string, a number — is a structured error, never silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs


class ShellArgsError(ValueError):
    """Bad args; the message says what was wrong and how to send it."""


@attrs.frozen
class ShellCall:
    cmd: str
    args: tuple[str, ...]
    cwd: str | None
    timeout_s: float | None
    stdin: str | None
    args_coerced: bool = False  # args arrived as a JSON string and were decoded


def _word(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ShellArgsError(f"{where} must be a string, got {type(value).__name__} {value!r:.60}")
    return value if isinstance(value, str) else str(value)


def _coerce_args(raw: Any) -> tuple[tuple[str, ...], bool]:
    if raw is None:
        return (), False
    if isinstance(raw, list):
        return tuple(_word(v, f"args[{i}]") for i, v in enumerate(raw)), False
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            decoded = None
        if isinstance(decoded, list):
            return tuple(_word(v, f"args[{i}]") for i, v in enumerate(decoded)), True
        raise ShellArgsError(
            f"args must be an array of strings, got the string {raw!r:.80}; send each argument as its own "
            'element, e.g. {"cmd": "ls", "args": ["-la", "src"]}, or put the whole command line in cmd with args []')
    raise ShellArgsError(f"args must be an array of strings, got {type(raw).__name__} {raw!r:.80}; "
                         'e.g. {"cmd": "ls", "args": ["-la"]}')


def parse_shell_call(args: Mapping[str, Any]) -> ShellCall:
    cmd = args.get("cmd")
    if not isinstance(cmd, str) or not cmd.strip():
        raise ShellArgsError('cmd must be a non-empty string naming the program (or a whole command line), '
                             'e.g. {"cmd": "git", "args": ["status"]}')
    words, coerced = _coerce_args(args.get("args"))
    cwd = args.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ShellArgsError(f"cwd must be a directory path string, got {type(cwd).__name__}")
    timeout = args.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ShellArgsError(f"timeout_s must be a positive number of seconds, got {timeout!r}")
    stdin = args.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        raise ShellArgsError(f"stdin must be a string, got {type(stdin).__name__}")
    return ShellCall(cmd, words, cwd or None, float(timeout) if timeout is not None else None, stdin, coerced)
