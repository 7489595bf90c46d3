"""Direct exec or `sh -c`: decide how a call runs and build the argv.

Direct exec is the default: no shell parses the words, so nothing in them is an
operator. A call goes through `sh -c` only when it needs a shell: `cmd` contains shell
metacharacters (| & ; > < $ `), or a whole command line was put in `cmd` (a program name with spaces in it)
(without this, `{"cmd": "ls -la"}` fails with "command not found"), or an argument is a
bare operator such as `|` or `>`. Arguments like `a|b` (a grep pattern) stay literal.
"""

from __future__ import annotations

import os
import re
import shlex

import attrs

SHELL_PATH = "/bin/sh"
_METACHARS = re.compile(r"[|&;<>$`\n]")
OPERATOR_WORDS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>>", "&>", "2>&1", ">&2",
                            "1>&2", "|&"})


@attrs.frozen
class ExecPlan:
    argv: tuple[str, ...]
    via_shell: bool
    line: str  # what the user sees: the command line, quoted where direct exec keeps words apart


def needs_shell(cmd: str, args: tuple[str, ...]) -> bool:
    if _METACHARS.search(cmd):
        return True
    if len(cmd.split()) > 1 and not os.path.exists(cmd):
        return True
    return any(a in OPERATOR_WORDS for a in args)


def _render(arg: str) -> str:
    if arg in OPERATOR_WORDS:
        return arg
    return shlex.quote(arg)


def plan_exec(cmd: str, args: tuple[str, ...]) -> ExecPlan:
    if needs_shell(cmd, args):
        line = " ".join([cmd.strip(), *(_render(a) for a in args)])
        return ExecPlan((SHELL_PATH, "-c", line), True, line)
    argv = (cmd, *args)
    return ExecPlan(argv, False, shlex.join(argv))
