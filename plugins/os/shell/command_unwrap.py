"""Peel wrappers off a simple command so the rules see the program that really runs.

`sudo -u root env FOO=1 nohup timeout 5 rm -rf /` runs `rm`. Every wrapper is recorded:
privilege wrappers make a command dangerous by themselves, and `xargs` feeds arguments
the guard cannot see.
"""

from __future__ import annotations

import posixpath
import re

import attrs

SHELL_INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
CODE_INTERPRETERS = {  # binary -> the flags that take inline code
    "python": ("-c",), "python2": ("-c",), "python3": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval"), "php": ("-r",), "lua": ("-e",),
    "deno": ("eval",), "bun": ("-e", "--eval"), "awk": (), "osascript": ("-e",),
}
PRIVILEGE_WRAPPERS = frozenset({"sudo", "doas", "pkexec", "su", "run0"})
# wrapper -> options that consume the following word
_WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "su": frozenset({"-s", "-g", "-G", "--shell", "--group"}),
    "pkexec": frozenset({"--user"}),
    "run0": frozenset({"-u", "--user"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--delimiter", "--max-args", "--max-procs"}),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "chrt": frozenset(), "taskset": frozenset(), "flock": frozenset({"-w", "-E", "--timeout"}),
    "setsid": frozenset(), "nohup": frozenset(), "command": frozenset(), "builtin": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}), "unbuffer": frozenset(), "caffeinate": frozenset(),
}
WRAPPERS = frozenset(_WRAPPER_VALUE_OPTS)
# wrappers whose first plain word is a value, not the command: timeout DURATION, flock FILE, taskset MASK
_POSITIONAL_FIRST = frozenset({"timeout", "flock", "taskset", "chrt"})
_KEYWORDS = frozenset({"{", "}", "!", "do", "then", "else", "elif", "if", "while", "until", "time", "done", "fi",
                       "esac", "coproc"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def program_name(word: str) -> str:
    """The normalised binary: basename, lowercased, a leading `\\` (alias bypass) dropped."""
    return posixpath.basename(word.lstrip("\\")).lower()


@attrs.frozen
class SimpleCommand:
    """The program that runs, its arguments, and what wrapped it."""

    program: str  # normalised binary, "" for a bare assignment
    args: tuple[str, ...]
    wrappers: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    su_command: str | None = None  # `su -c "…"` carries its own command line

    @property
    def privileged(self) -> bool:
        return any(w in PRIVILEGE_WRAPPERS for w in self.wrappers)


def _skip_wrapper_options(name: str, words: list[str], i: int) -> tuple[int, str | None]:
    value_opts = _WRAPPER_VALUE_OPTS[name]
    su_command = None
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1, su_command
        if name in ("su",) and word in ("-c", "--command") and i + 1 < len(words):
            su_command = words[i + 1]
            i += 2
            continue
        if name == "env" and _ASSIGNMENT.match(word):
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        i += 2 if word in value_opts else 1
    if name in _POSITIONAL_FIRST and i < len(words):
        i += 1
    if name == "su" and i < len(words) and not words[i].startswith("-"):
        i += 1  # `su root -c …`: the user name
        while i < len(words) and words[i].startswith("-"):
            if words[i] in ("-c", "--command") and i + 1 < len(words):
                su_command = words[i + 1]
                i += 2
            else:
                i += 1
    return i, su_command


def unwrap(words: tuple[str, ...]) -> SimpleCommand:
    rest = list(words)
    i = 0
    wrappers: list[str] = []
    assignments: list[str] = []
    su_command: str | None = None
    while i < len(rest):
        word = rest[i]
        name = program_name(word)
        if word in _KEYWORDS:
            i += 1
            continue
        if _ASSIGNMENT.match(word):
            assignments.append(word)
            i += 1
            continue
        if name in WRAPPERS:
            wrappers.append(name)
            i, found = _skip_wrapper_options(name, rest, i + 1)
            su_command = su_command or found
            continue
        if name == "busybox" and i + 1 < len(rest):
            wrappers.append(name)
            i += 1
            continue
        return SimpleCommand(name, tuple(rest[i + 1:]), tuple(wrappers), tuple(assignments), su_command)
    return SimpleCommand("", (), tuple(wrappers), tuple(assignments), su_command)


def inline_code(cmd: SimpleCommand) -> str | None:
    """The code string of `bash -c CODE` (also `-lc`, `-ec`), or None."""
    if cmd.program not in SHELL_INTERPRETERS:
        return None
    args = list(cmd.args)
    for index, arg in enumerate(args):
        if arg == "--":
            return None
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            rest = [a for a in args[index + 1:] if not a.startswith("-")]
            return rest[0] if rest else ""
        if not arg.startswith("-") and not arg.startswith("+"):
            return None
    return None
