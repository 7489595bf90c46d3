"""Peel wrappers off a simple command so the rules see the program that really runs.

`sudo -u root env FOO=1 nohup timeout 5 strace -f chroot / setpriv --reuid=0 rm -rf /`
runs `rm`. Every wrapper is recorded: privilege wrappers make a command dangerous by
themselves, and `xargs`/`parallel` feed arguments the guard cannot see (`stdin_args`).
Wrappers that carry a command line of their own (`su -c`, `runuser -c`, `sg`, `script -c`,
`flock -c`, `watch`) hand it back in `nested`, and `env -S 'a b c'` is split into words
and unwrapped further, as env itself would.
"""

from __future__ import annotations

import posixpath
import re
import shlex

import attrs

from .wrapper_options import (
    CODE_OPTS,
    NAMED_FIRST,
    POSITIONAL_FIRST,
    PRIVILEGE_WRAPPERS,
    STDIN_ARG_WRAPPERS,
    WRAPPER_VALUE_OPTS,
    WRAPPERS,
)

SHELL_INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash",
                                "posh", "rbash", "busybox-sh"})
CODE_INTERPRETERS = {  # binary -> the flags that take inline code
    "python": ("-c",), "python2": ("-c",), "python3": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval"), "php": ("-r",), "lua": ("-e",),
    "deno": ("eval",), "bun": ("-e", "--eval"), "awk": (), "osascript": ("-e",), "pwsh": ("-c", "-Command"),
    "tclsh": (), "expect": ("-c",),
}
_KEYWORDS = frozenset({"{", "}", "!", "do", "then", "else", "elif", "if", "while", "until", "time", "done", "fi",
                       "esac", "coproc", "in", "(", ")", "[[", "]]"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
UNKNOWN_ARG = "\x00unknown\x00"  # stands for an argument only known when the command runs


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
    nested: tuple[str, ...] = ()  # command lines a wrapper runs through a shell (`su -c`, `watch`)
    raw_program: str = ""  # the word as written (a variable or substitution stays visible)

    @property
    def privileged(self) -> bool:
        return any(w in PRIVILEGE_WRAPPERS for w in self.wrappers)

    @property
    def stdin_args(self) -> bool:
        """Some of its arguments come from standard input (xargs, parallel)."""
        return any(w in STDIN_ARG_WRAPPERS for w in self.wrappers)

    @property
    def su_command(self) -> str | None:
        return self.nested[0] if self.nested else None


def _split_string(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()


def _skip_wrapper_options(name: str, words: list[str], i: int) -> tuple[int, list[str], list[str]]:
    """(index of the wrapped command, command lines found, words env -S adds in front)."""
    value_opts = WRAPPER_VALUE_OPTS[name]
    code_opts = CODE_OPTS.get(name, ())
    nested: list[str] = []
    inserted: list[str] = []
    named = name in NAMED_FIRST
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            named = False  # `runuser -u root -- cmd`: what follows is the command
            break
        if word == "-" and name in NAMED_FIRST:  # `su - root`: a login shell
            i += 1
            continue
        if word in ("-u", "--user") and name == "runuser":
            named = False
        short_code = "-c" in code_opts and word.startswith("-") and not word.startswith("--") and "c" in word[1:]
        if (word in code_opts or short_code) and i + 1 < len(words):
            nested.append(words[i + 1])
            i += 2
            continue
        if any(word.startswith(opt + "=") for opt in code_opts if opt.startswith("--")):
            nested.append(word.split("=", 1)[1])
            i += 1
            continue
        if name == "env" and word in ("-S", "--split-string") and i + 1 < len(words):
            inserted = _split_string(words[i + 1])
            i += 2
            break
        if name == "env" and (word.startswith("-S") and len(word) > 2 or word.startswith("--split-string=")):
            inserted = _split_string(word[2:] if word.startswith("-S") else word.split("=", 1)[1])
            i += 1
            break
        if name == "env" and _ASSIGNMENT.match(word):
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        i += 2 if word in value_opts else 1
    if name in POSITIONAL_FIRST and not inserted and i < len(words):
        i += 1
    if named and i < len(words) and not words[i].startswith("-"):
        i += 1  # `su root -c …`: the user name
        while i < len(words) and words[i].startswith("-"):
            if words[i] in code_opts and i + 1 < len(words):
                nested.append(words[i + 1])
                i += 2
            else:
                i += 2 if words[i] in value_opts else 1
    while i + 1 < len(words) and words[i] in code_opts:  # `flock FILE -c …`
        nested.append(words[i + 1])
        i += 2
    if nested and name in CODE_OPTS:
        i = len(words)  # the command line is all that runs (`sg g -c CMD` ignores nothing else we could judge)
    if name == "watch" and i < len(words):  # watch joins its arguments and runs them with sh -c
        nested.append(" ".join(words[i:]))
        i = len(words)
    return i, nested, inserted


def unwrap(words: tuple[str, ...]) -> SimpleCommand:
    rest = list(words)
    i = 0
    wrappers: list[str] = []
    assignments: list[str] = []
    nested: list[str] = []
    while i < len(rest):
        word = rest[i]
        name = program_name(word)
        if word in _KEYWORDS:
            i += 1
            continue
        if word == "function" and i + 1 < len(rest):  # `function f {` — the body follows
            i += 2
            continue
        if _ASSIGNMENT.match(word):
            assignments.append(word)
            i += 1
            continue
        if name in WRAPPERS:
            wrappers.append(name)
            start = i + 1
            i, found, inserted = _skip_wrapper_options(name, rest, start)
            if name == "env":  # `env GIT_CONFIG_KEY_0=… git`: the environment the command runs with
                assignments += [w for w in rest[start:i] if _ASSIGNMENT.match(w)]
            nested += found
            if inserted:
                rest = rest[:i] + inserted + rest[i:]
            continue
        if name in ("busybox", "toybox") and i + 1 < len(rest):
            wrappers.append(name)
            i += 1
            continue
        args = tuple(rest[i + 1:])
        if any(w in STDIN_ARG_WRAPPERS for w in wrappers):
            args = (*args, UNKNOWN_ARG)
        return SimpleCommand(name, args, tuple(wrappers), tuple(assignments), tuple(nested), word)
    return SimpleCommand("", (), tuple(wrappers), tuple(assignments), tuple(nested), "")


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


def inline_code_args(cmd: SimpleCommand) -> tuple[str, ...]:
    """The words after `sh -c CODE`: they become $0, $1, ... inside CODE."""
    args = list(cmd.args)
    for index, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            rest = args[index + 1:]
            while rest and rest[0].startswith("-"):
                rest = rest[1:]
            return tuple(rest[1:])
    return ()


def reads_script_from_stdin(cmd: SimpleCommand) -> bool:
    """An interpreter that takes its program from standard input (`| sh`, `| python3 -`)."""
    if cmd.program in ("source", "."):
        return bool(cmd.args) and cmd.args[0] in ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0", "-")
    base = re.sub(r"[\d.]+$", "", cmd.program)
    if cmd.program not in SHELL_INTERPRETERS and base not in CODE_INTERPRETERS:
        return False
    if inline_code(cmd) is not None:
        return False
    flags = CODE_INTERPRETERS.get(base, ())
    operands = []
    for arg in cmd.args:
        if arg in flags or any(arg.startswith(f) and len(f) == 2 for f in flags):
            return False  # inline code
        if arg == "-s" or arg in ("-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
            return True
        if not arg.startswith("-"):
            operands.append(arg)
    return not operands


def script_operand(cmd: SimpleCommand) -> str | None:
    """The script file an interpreter (or `source`/`.`) runs, when it runs one."""
    if cmd.program in ("source", "."):
        return cmd.args[0] if cmd.args else None
    base = re.sub(r"[\d.]+$", "", cmd.program)
    if cmd.program not in SHELL_INTERPRETERS and base not in CODE_INTERPRETERS:
        return None
    if inline_code(cmd) is not None:
        return None
    flags = CODE_INTERPRETERS.get(base, ())
    for arg in cmd.args:
        if arg in flags:
            return None
        if not arg.startswith("-"):
            return arg
    return None
