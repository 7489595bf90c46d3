"""Shell commands that reach the runtime's secrets or a credential store.

The file tools never read the agent's `.env`, operator token, audit log or leases (see
`runtime_secrets`), and ask before reading a credential store. A shell command is held to
the same line whatever program it runs — `cat`, `tail`, `awk`, `sed`, `cp`, `tar`,
`python -c`, a `<` redirection, a `cd` and then a relative name:

- an argument, option value (`--file=X`, `if=X`, `@X`), redirection target or the
  effective working directory that lands on a runtime secret (after quote removal, glob
  expansion against the real file system and realpath): blocked at every level;
- a word that lands in a credential store, a recursive command (`grep -r`, `tar c`,
  `cp -a`, `rg`) over a directory holding a runtime secret, inline code (`python -c`,
  `perl -e`, `node -e`, `awk`/`sed` programs, a here-string fed to an interpreter) that
  names a secret, its state dir or one of the secrets' distinctive names, and a word only
  known at run time (`$X/.env`, `$(…)/operator-token`) that names one: the guard cannot
  rule it out, so it asks at every level, 5 included.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import attrs

from atomic_agent.plugins.os.fs_approval.credential_stores import credential_store_of
from atomic_agent.plugins.os.fs_approval.runtime_secrets import SECRET_MARKERS, is_runtime_secret, secret_root_of

from .command_segments import WRITE_REDIRECTS, Segment
from .command_unwrap import CODE_INTERPRETERS, UNKNOWN_ARG, SimpleCommand
from .guard_paths import UNKNOWN
from .guard_records import GuardScope, RuleHit
from .word_paths import looks_like_path, word_paths
from .write_destinations import write_destinations

_CODE_PROGRAMS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox", "sed", "gsed", "jq", "yq", "xmllint", "m4",
                            "tclsh", "wish", "Rscript", "julia", "groovy", "scala", "kotlin", "dotnet", "java",
                            "jshell", "sqlite3", "duckdb", "psql", "mysql", "ed", "ex", "vim", "vi", "nvim", "emacs"})
# programs that read every file under a directory operand (name-only listers like ls, tree,
# du and find are left out: file names are not secrets, and `find -exec` is judged per command)
_RECURSIVE_PROGRAMS = frozenset({"rg", "ag", "ack", "tar", "gtar", "bsdtar", "7z", "7za", "cpio", "pax", "rclone",
                                 "restic", "borg", "duplicity", "zip"})
_NAME_LISTERS = frozenset({"ls", "tree", "du", "find", "stat", "file", "chmod", "chown", "chgrp", "touch", "mkdir"})
_ARCHIVE_FLAG = frozenset({"cp", "rsync", "scp", "gcp"})
_NOT_FILES = frozenset({"<<", "<<-"})
_PURE_WRITERS = frozenset({"tee", "touch", "truncate", "mkdir"})


def _code_taker(program: str) -> bool:
    return program in _CODE_PROGRAMS or re.sub(r"[\d.]+$", "", program) in CODE_INTERPRETERS


def _recursive(cmd: SimpleCommand) -> bool:
    if cmd.program in _RECURSIVE_PROGRAMS:
        return True
    if cmd.program in _NAME_LISTERS:
        return False
    letters = "rRa" if cmd.program in _ARCHIVE_FLAG else "rR"
    for arg in cmd.args:
        if arg in ("--recursive", "--archive", "--dereference-recursive", "--mirror", "--recurse"):
            return True
        if arg.startswith("-") and not arg.startswith("--") and any(ch in letters for ch in arg[1:]):
            return True
    return False


def _values(arg: str) -> list[str]:
    """The path-like parts of one argument: itself, an option's or `key=`'s value, `@file`."""
    out = []
    if arg.startswith("--") and "=" in arg:
        out.append(arg.split("=", 1)[1])
    elif arg.startswith("-") and len(arg) > 2 and "/" in arg:
        out.append(arg[2:])  # `-f/path`, `-C/path`
    elif re.match(r"^[A-Za-z_][\w-]*=", arg):
        out += [arg, arg.split("=", 1)[1]]  # `if=/x` (dd) — or a file really named `a=b`
    elif arg.startswith("@"):
        out += [arg, arg[1:]]
    else:
        out.append(arg)
    return [v for v in out if looks_like_path(v) or UNKNOWN_ARG in v]


def _mentions(text: str, scope: GuardScope) -> str | None:
    """A secret's distinctive name, path or state dir named in a piece of text, or None."""
    for marker in SECRET_MARKERS:
        if marker in text:
            return marker
    for root in scope.secrets:
        parent = root.rsplit("/", 1)[0]
        if root in text or (parent and parent != "/" and parent in text):
            return parent if parent in text else root
    return None


def _is_secret(path: str, scope: GuardScope) -> bool:
    """By path, or by inode for a file with more than one link (`ln S/.env notes.txt` earlier)."""
    if secret_root_of(path, scope.secrets) is not None:
        return True
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return is_runtime_secret(path, scope.secrets, st)


def _ancestor_of_secret(path: str, scope: GuardScope) -> bool:
    prefix = path.rstrip("/") + "/"
    return any(root.startswith(prefix) for root in scope.secrets)


def _words(cmd: SimpleCommand, segment: Segment) -> list[str]:
    words = [v for arg in cmd.args for v in _values(arg)]
    words += [t for op, t in segment.redirects if op not in _NOT_FILES and op != "<<<" and t and not t.isdigit()
              and t != "-"]
    if "/" in cmd.raw_program:
        words.append(cmd.raw_program)
    return words


def secret_hits(cmd: SimpleCommand, segment: Segment, scope: GuardScope) -> tuple[list[RuleHit], list[RuleHit]]:
    """(blocking hits, hits that ask at every level) for one simple command."""
    hard: list[RuleHit] = []
    unsure: list[RuleHit] = []
    if scope.secrets and scope.cwd != UNKNOWN and secret_root_of(scope.cwd, scope.secrets):
        hard.append(RuleHit("hardline.runtime_secret", "runs inside a folder of the runtime's secrets"))
    recursive = _recursive(cmd)
    home = Path(scope.home)
    written = set(write_destinations(cmd, segment).paths)
    # a pure writer (`tee`, `> f`) reads nothing from its destinations: a write there asks instead
    read_words = set(_words(attrs.evolve(cmd, args=() if cmd.program in _PURE_WRITERS else cmd.args),
                            attrs.evolve(segment, redirects=tuple((op, t) for op, t in segment.redirects
                                                                  if op not in WRITE_REDIRECTS or op == "<>"))))
    for word in _words(cmd, segment):
        write_only = word in written and word not in read_words
        paths = word_paths(word, scope.cwd, scope.home)
        if paths is None:
            named = _mentions(word.replace(UNKNOWN_ARG, ""), scope)
            if named is not None:
                unsure.append(RuleHit("undecidable.secret_path", f"{cmd.program} gets a path only known when it "
                                                                 f"runs that names {named!r}"))
            continue
        for path in paths:
            if scope.secrets and _is_secret(path, scope):
                if write_only:
                    unsure.append(RuleHit("undecidable.runtime_secret_write",
                                          f"{cmd.program} writes {path}, one of the runtime's secrets"))
                else:
                    hard.append(RuleHit("hardline.runtime_secret",
                                        f"{cmd.program} reaches {path}, one of the runtime's secrets (API keys, "
                                        "operator token, approvals, leases)"))
                break
            if recursive and scope.secrets and _ancestor_of_secret(path, scope):
                unsure.append(RuleHit("undecidable.secret_recursive", f"{cmd.program} recurses into {path}, which "
                                                                      "holds the runtime's secrets"))
                break
            store = None if write_only else credential_store_of(Path(path), home=home)
            if store is not None:
                unsure.append(RuleHit("undecidable.credential_access",
                                      f"{cmd.program} touches the credential store {store}"))
                break
    if _code_taker(cmd.program):
        code = [a for a in cmd.args] + [t for op, t in segment.redirects if op == "<<<"]
        for text in code:
            named = _mentions(text, scope)
            if named is not None:
                unsure.append(RuleHit("undecidable.secret_in_code", f"{cmd.program}'s code names {named!r}"))
                break
    return hard, unsure


def heredoc_hits(line: str, scope: GuardScope) -> list[RuleHit]:
    """A here-document (`python3 <<EOF … EOF`) is code the per-command view splits apart:
    when the line has one and names a secret anywhere, ask."""
    if "<<" not in line:
        return []
    named = _mentions(line, scope)
    if named is None:
        return []
    return [RuleHit("undecidable.secret_in_code", f"a here-document in the line names {named!r}")]
