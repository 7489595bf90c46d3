"""Which files decide what a command runs: the program when it is a path, and the script an
interpreter is given. Their hashes go into the approval binding, so a script edited after
the prompt is asked about again. Data files (`cat big.log`) are never hashed."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from .command_unwrap import CODE_INTERPRETERS, SHELL_INTERPRETERS, program_name, unwrap

MAX_SCRIPT_BYTES = 16 * 1024 * 1024


def _existing(word: str, cwd: Path) -> str | None:
    path = Path(os.path.expanduser(word))
    path = path if path.is_absolute() else cwd / path
    try:
        if path.is_file() and path.stat().st_size <= MAX_SCRIPT_BYTES:
            return str(path)
    except OSError:
        return None
    return None


def _from_words(words: Sequence[str], cwd: Path) -> list[str]:
    files: list[str] = []
    cmd = unwrap(tuple(words))
    if not cmd.program:
        return files
    program_word = next((w for w in words if program_name(w) == cmd.program), "")
    if "/" in program_word and (found := _existing(program_word, cwd)):
        files.append(found)
    base = cmd.program.rstrip("0123456789.")
    if cmd.program in SHELL_INTERPRETERS or cmd.program in CODE_INTERPRETERS or base in CODE_INTERPRETERS:
        script = next((a for a in cmd.args if not a.startswith("-")), None)
        if script and (found := _existing(script, cwd)):
            files.append(found)
    return files


def script_files(argv: Sequence[str], via_shell: bool, cwd: Path) -> list[str]:
    if not via_shell:
        return _from_words(argv, cwd)
    try:
        words = shlex.split(argv[-1])
    except ValueError:
        return []
    files: list[str] = []
    current: list[str] = []
    for word in [*words, ";"]:
        if word in (";", "&&", "||", "|", "&"):
            files += [f for f in _from_words(current, cwd) if f not in files]
            current = []
        else:
            current.append(word)
    return files
