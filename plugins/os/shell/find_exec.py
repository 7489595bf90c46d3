"""The commands `find` runs itself: `-exec`, `-execdir`, `-ok`, `-okdir`, and where it starts.

`{}` in such a command stands for every path find visits — its start paths first (unless
`-mindepth` says otherwise) — so the guard judges the command with each start path and
`<start>/*` in its place.
"""

from __future__ import annotations

from .command_unwrap import SimpleCommand

FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")


def find_exec_commands(cmd: SimpleCommand) -> list[tuple[str, ...]]:
    """The commands `find … -exec CMD ARGS {} ;` runs (each up to its `;` or `+`)."""
    if cmd.program != "find":
        return []
    found = []
    args = list(cmd.args)
    i = 0
    while i < len(args):
        if args[i] in FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+", "\\;"):
                j += 1
            if j > i + 1:
                found.append(tuple(args[i + 1:j]))
            i = j + 1
            continue
        i += 1
    return found


def find_start_paths(cmd: SimpleCommand) -> list[str]:
    starts = []
    for arg in cmd.args:
        if arg.startswith("-") or arg in ("(", "!", "\\(", ")"):
            break
        starts.append(arg)
    return starts or ["."]
