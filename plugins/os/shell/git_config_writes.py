"""Git config keys whose value is a program git runs later, and commands that set them.

`git config core.fsmonitor ./x` makes the next `git status` run `./x`; so do the pager,
hooksPath, sshCommand, credential helpers, filter/diff/merge drivers, aliases starting with
`!`, and `include.path`/`includeIf.*.path` (which pull in a file holding any of these).
Setting one — by `git config` in any spelling (`--add`, `--replace-all`, `--file`,
`--global`, the `git config set` subcommand, `--edit`, `--rename-section`), by a
per-invocation override (`git -c`, `--config-env`, `GIT_CONFIG_KEY_n` /
`GIT_CONFIG_PARAMETERS` in the environment) — plants a program, so it asks under
`persistence`. Key matching is case-insensitive on the section and variable, as git's is.
"""

from __future__ import annotations

import re

from .command_unwrap import SimpleCommand

# section.variable (two-part keys) and section.*.variable (three-part), lower-cased
PROGRAM_KEYS = frozenset({
    "core.fsmonitor", "core.pager", "core.hookspath", "core.sshcommand", "core.gitproxy", "core.askpass",
    "core.editor", "core.alternaterefscommand", "credential.helper", "diff.external", "diff.tool", "merge.tool",
    "gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program", "gpg.ssh.defaultkeycommand",
    "sequence.editor", "include.path", "interactive.difffilter", "web.browser", "uploadpack.packobjectshook",
    "receive.procreceiverefs", "sendemail.smtpserver", "sendemail.tocmd", "sendemail.cccmd", "sendemail.validate",
    "status.showuntrackedfiles", "protocol.allow", "blame.ignorerevsfile",
})
THREE_PART = frozenset({
    ("filter", "clean"), ("filter", "smudge"), ("filter", "process"), ("diff", "textconv"), ("diff", "command"),
    ("merge", "driver"), ("trailer", "command"), ("trailer", "cmd"), ("credential", "helper"),
    ("remote", "uploadpack"), ("remote", "receivepack"), ("remote", "proxy"), ("remote", "url"),
    ("remote", "pushurl"), ("difftool", "cmd"), ("mergetool", "cmd"), ("includeif", "path"), ("pager", ""),
    ("submodule", "update"), ("url", "insteadof"), ("url", "pushinsteadof"), ("browser", "cmd"), ("man", "cmd"),
    ("protocol", "allow"),
})
_SECTIONS_ANY = frozenset({"alias", "pager", "hook"})  # alias.x = !cmd, pager.<cmd> = prog, hook.<n>.command
_READ_FLAGS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                         "--get-colorbool", "--show-origin", "--show-scope", "--unset", "--unset-all",
                         "--remove-section"})
_WRITE_FLAGS = frozenset({"--add", "--replace-all", "--edit", "-e", "--rename-section"})
_VALUE_OPTS = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url"})
_GIT_GLOBAL_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix",
                               "--config-env", "-c", "--attr-source"})


def is_program_key(key: str) -> bool:
    """Whether a config key (any case, any subsection) names something git runs."""
    key = key.strip().strip("'\"")
    section, _, rest = key.partition(".")
    section = section.lower()
    if not rest:
        return False
    subsection, dot, variable = rest.rpartition(".")
    variable = variable.lower()
    if section in _SECTIONS_ANY:
        return True
    if not dot:
        return f"{section}.{variable}" in PROGRAM_KEYS
    if f"{section}.{subsection.lower()}.{variable}" in PROGRAM_KEYS:
        return True
    return (section, variable) in THREE_PART or (section, "") in THREE_PART


def _split_git(args: tuple[str, ...]) -> tuple[list[str], str, list[str]]:
    """(global options, subcommand, its arguments) of `git [opts] sub args`."""
    globals_: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if not arg.startswith("-"):
            return globals_, arg, list(args[index + 1:])
        globals_.append(arg)
        if arg in _GIT_GLOBAL_VALUE and index + 1 < len(args):
            globals_.append(args[index + 1])
            index += 2
            continue
        index += 1
    return globals_, "", []


def _overrides(globals_: list[str]) -> list[str]:
    keys = []
    for index, arg in enumerate(globals_):
        if arg in ("-c", "--config-env") and index + 1 < len(globals_):
            keys.append(globals_[index + 1].partition("=")[0])
        elif arg.startswith("--config-env="):
            keys.append(arg.split("=", 2)[1])
        elif arg.startswith("-c") and len(arg) > 2:
            keys.append(arg[2:].partition("=")[0])
    return keys


def _config_write_keys(rest: list[str]) -> list[str]:
    """Keys a `git config …` invocation sets (empty when it only reads)."""
    if rest[:1] in (["get"], ["list"], ["unset"], ["remove-section"]):
        return []
    if rest[:1] in (["set"], ["rename-section"], ["edit"]):
        operands = [a for a in _plain(rest[1:])]
        if rest[0] == "edit":
            return ["include.path"]  # an editor may write any key
        return operands[:1] if rest[0] == "set" else operands[1:2]
    flags = [a for a in rest if a.startswith("-")]
    if any(f in _READ_FLAGS or f.startswith("--get") for f in flags):
        return []
    operands = _plain(rest)
    if any(f in ("--edit", "-e") for f in flags):
        return ["include.path"]
    if any(f == "--rename-section" for f in flags):
        return [f"{operands[1]}.x"] if len(operands) > 1 else []
    if len(operands) >= 2 or any(f in _WRITE_FLAGS for f in flags):
        return operands[:1]
    return []


def _plain(args: list[str]) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            skip = arg in _VALUE_OPTS
            continue
        out.append(arg)
    return out


def _environment_keys(assignments: tuple[str, ...]) -> list[str]:
    planted = []
    for word in assignments:
        name, _, value = word.partition("=")
        upper = name.upper()
        if re.fullmatch(r"GIT_CONFIG_KEY_\d+", upper) and is_program_key(value):
            planted.append(value)
        elif upper == "GIT_CONFIG_PARAMETERS":
            planted += [k for k in re.findall(r"'?([A-Za-z][\w.-]*(?:\.[^'=]*)?)'?=", value) if is_program_key(k)]
        elif upper in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"):
            planted.append(upper)  # another config file, which may set anything
    return planted


def program_config_writes(cmd: SimpleCommand) -> list[str]:
    """The program-valued keys this command sets or overrides (for the rule's message)."""
    if cmd.program != "git":
        return []
    planted = _environment_keys(cmd.assignments)
    globals_, sub, rest = _split_git(cmd.args)
    planted += [k for k in _overrides(globals_) if is_program_key(k)]
    if sub == "config":
        planted += [k for k in _config_write_keys(rest) if is_program_key(k)]
    return list(dict.fromkeys(planted))
