"""Commands with no recovery path. They are blocked at every approval level, grants included.

The floor stays small on purpose (wiping `/`, the home dir or a top-level system dir,
formatting or overwriting disks, fork bombs, killing every process, powering off): a
rule here must never need an exception.
"""

from __future__ import annotations

import os
import re

from .command_segments import WRITE_REDIRECTS, Segment
from .command_unwrap import SimpleCommand
from .guard_paths import SYSTEM_DIRS, UNKNOWN, is_raw_disk, is_root_ish, is_sysrq_trigger, resolve_target
from .guard_records import GuardScope, RuleHit
from .write_destinations import write_destinations

_FORK_BOMB = re.compile(
    r"(?:function\s+)?(?P<name>[^\s(){}|;&<>]+)\s*(?:\(\s*\))?\s*\{[^}]*?(?P=name)\s*\|\s*&?\s*(?P=name)\s*&")
_FUNCTION = re.compile(r"(?:\bfunction\s+(?P<n1>[^\s(){}|;&<>]+)\s*(?:\(\s*\))?|(?P<n2>[^\s(){}|;&<>]+)\s*\(\s*\))"
                       r"\s*[{(](?P<body>[^}]*)")
_MKFS = re.compile(r"^(?:mkfs(?:\..+)?|mke2fs|mkntfs|mkdosfs|mkexfatfs|mkfs_\w+|newfs(?:_\w+)?)$")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_DISK_TOOLS = frozenset({"wipefs", "blkdiscard", "mkswap", "shred", "tee"})
_CLOBBERERS = frozenset({"truncate", "shred", "fallocate", "dd"})  # whose purpose is to replace a file's bytes
_SYSTEM_FILE_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/libx32", "/System",
                     "/private/etc")


def fork_bomb(normalised_line: str) -> list[RuleHit]:
    """A function that starts itself more than once per call, in a pipe or in the background
    (`:(){ :|:& };:`, `f(){ f & f; }`, `function b { b|b; }`)."""
    if _FORK_BOMB.search(normalised_line):
        return [RuleHit("hardline.fork_bomb", "a fork bomb (a function that pipes itself into itself in the background)")]
    for match in _FUNCTION.finditer(normalised_line):
        name = match.group("n1") or match.group("n2")
        body = match.group("body")
        calls = re.findall(rf"(?<![^\s|&;({{]){re.escape(name)}(?![^\s|&;)}}])", body)
        if len(calls) >= 2 and ("&" in body or "|" in body):
            return [RuleHit("hardline.fork_bomb", f"a fork bomb (function {name} starts itself twice per call)")]
    return []


def _split_flags(args: tuple[str, ...]) -> tuple[list[str], list[str]]:
    flags, operands = [], []
    after_dashdash = False
    for arg in args:
        if after_dashdash:
            operands.append(arg)
        elif arg == "--":
            after_dashdash = True
        elif arg.startswith("-") and arg != "-":
            flags.append(arg)
        else:
            operands.append(arg)
    return flags, operands


def is_recursive(flags: list[str]) -> bool:
    return any(f in ("--recursive",) or (not f.startswith("--") and ("r" in f or "R" in f)) for f in flags)


def _rm(cmd: SimpleCommand, scope: GuardScope) -> list[RuleHit]:
    flags, operands = _split_flags(cmd.args)
    if "--no-preserve-root" in flags:
        return [RuleHit("hardline.rm_no_preserve_root", "rm with --no-preserve-root")]
    if not is_recursive(flags):
        return []
    for operand in operands:
        if is_root_ish(resolve_target(operand, scope.cwd, scope.home), scope.home):
            return [RuleHit("hardline.rm_root", f"recursive rm of {operand!r} (the root, home or a system dir)")]
    return []


def _find(cmd: SimpleCommand, scope: GuardScope) -> list[RuleHit]:
    args = list(cmd.args)
    starts = []
    for arg in args:
        if arg.startswith("-") or arg in ("(", "!", "\\("):
            break
        starts.append(arg)
    destructive = "-delete" in args or any(
        a in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(args) and args[i + 1].split("/")[-1] in
        ("rm", "shred", "unlink") for i, a in enumerate(args))
    if destructive and any(is_root_ish(resolve_target(s, scope.cwd, scope.home), scope.home) for s in starts or ["."]):
        return [RuleHit("hardline.find_delete_root", "find deleting from the root, home or a system dir")]
    return []


def _chmod_chown(cmd: SimpleCommand, scope: GuardScope) -> list[RuleHit]:
    flags, operands = _split_flags(cmd.args)
    if not any(f in ("-R", "--recursive") or (not f.startswith("--") and "R" in f) for f in flags):
        return []
    for operand in operands:  # the mode / owner operand never resolves to a protected dir
        if is_root_ish(resolve_target(operand, scope.cwd, scope.home), scope.home):
            return [RuleHit(f"hardline.{cmd.program}_root", f"recursive {cmd.program} of {operand!r}")]
    return []


def _disk_writes(cmd: SimpleCommand, segment: Segment, scope: GuardScope) -> list[RuleHit]:
    for op, target in segment.redirects:
        if op in WRITE_REDIRECTS and is_raw_disk(target):
            return [RuleHit("hardline.redirect_raw_disk", f"a redirect onto the raw disk {target}")]
    if cmd.program == "dd" and any(a.startswith("of=") and is_raw_disk(a[3:]) for a in cmd.args):
        return [RuleHit("hardline.dd_raw_disk", "dd writing to a raw disk")]
    if cmd.program in _DISK_TOOLS and any(is_raw_disk(a) for a in cmd.args):
        return [RuleHit("hardline.raw_disk_write", f"{cmd.program} on a raw disk")]
    if cmd.program in ("cp", "mv", "install") and cmd.args and is_raw_disk(cmd.args[-1]):
        return [RuleHit("hardline.raw_disk_write", f"{cmd.program} onto a raw disk")]
    for target in write_destinations(cmd, segment).paths:  # `-o /dev/sda`, `cp -t`, `cd /dev && … > sda`
        path = resolve_target(target, scope.cwd, scope.home)
        if path != UNKNOWN and is_raw_disk(path):
            return [RuleHit("hardline.raw_disk_write", f"{cmd.program} writes onto the raw disk {path}")]
    return []


def _sysrq(cmd: SimpleCommand, segment: Segment) -> list[RuleHit]:
    targets = [t for op, t in segment.redirects if op in WRITE_REDIRECTS]
    if cmd.program == "tee":
        targets += [a for a in cmd.args if not a.startswith("-")]
    if cmd.program == "dd":
        targets += [a[3:] for a in cmd.args if a.startswith("of=")]
    if cmd.program in ("cp", "mv", "install", "ln") and cmd.args:
        targets.append(cmd.args[-1])
    if any(is_sysrq_trigger(t) for t in targets):
        return [RuleHit("hardline.sysrq", "a write to /proc/sysrq-trigger (crash, reboot or power off at once)")]
    return []


def _mv(cmd: SimpleCommand, scope: GuardScope) -> list[RuleHit]:
    """Every source of mv (all operands with `-t DIR`/`--target-directory`, else all but the last)."""
    args = cmd.args
    target_dir = any(a in ("-t", "--target-directory") or a.startswith("--target-directory=") or
                     (a.startswith("-t") and len(a) > 2) for a in args)
    operands, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-t", "--target-directory", "-S", "--suffix"):
            skip = True
        elif not arg.startswith("-") or arg == "-":
            operands.append(arg)
    sources = operands if target_dir else operands[:-1]
    if any(is_root_ish(resolve_target(o, scope.cwd, scope.home), scope.home) for o in sources):
        return [RuleHit("hardline.mv_root", "mv of the root, home or a system dir")]
    return []


def _system_dir(path: str) -> bool:
    return path in SYSTEM_DIRS and path not in ("/home", "/Users")


def _system_file(path: str) -> bool:
    return any(path.startswith(d + "/") for d in _SYSTEM_FILE_DIRS)


def _destination_hits(cmd: SimpleCommand, segment: Segment, scope: GuardScope) -> list[RuleHit]:
    """Writes with no way back, judged on every destination (`-C /`, `--directory=/`, `-d /`)."""
    dests = write_destinations(cmd, segment)
    for target in dests.mirrored_with_delete:
        if is_root_ish(resolve_target(target, scope.cwd, scope.home), scope.home):
            return [RuleHit("hardline.rsync_delete_root", f"{cmd.program} --delete into {target!r} (the root, home "
                                                          "or a system dir) deletes everything the source lacks")]
    for target in dests.extract_dirs:
        path = resolve_target(target, scope.cwd, scope.home)
        if _system_dir(path) or (path != UNKNOWN and _system_dir(os.path.realpath(path))):
            return [RuleHit("hardline.extract_root", f"{cmd.program} unpacks over {path} (the root or a system dir)")]
    if cmd.program in _CLOBBERERS:
        for target in dests.paths:
            path = resolve_target(target, scope.cwd, scope.home)
            if path != UNKNOWN and (_system_file(path) or _system_file(os.path.realpath(path))):
                return [RuleHit("hardline.system_file_clobber", f"{cmd.program} destroys the contents of {path}, a "
                                                                "system file")]
    return []


def _kill_all(cmd: SimpleCommand) -> list[RuleHit]:
    if cmd.program == "killall5":
        return [RuleHit("hardline.kill_all", "killall5 signals every process")]
    if cmd.program != "kill":
        return []
    args = list(cmd.args)
    i = 0
    if args and args[0] in ("-s", "-n") and len(args) > 1:
        i = 2
    elif args and args[0].startswith("-") and args[0] not in ("-1", "--"):
        i = 1
    if "-1" in args[i:]:
        return [RuleHit("hardline.kill_all", "kill -1 signals every process you own")]
    return []


def _power(cmd: SimpleCommand) -> list[RuleHit]:
    if cmd.program in _POWER:
        return [RuleHit("hardline.power", f"{cmd.program} powers the machine off or restarts it")]
    if cmd.program in ("init", "telinit") and cmd.args[:1] and cmd.args[0] in ("0", "6"):
        return [RuleHit("hardline.power", f"{cmd.program} {cmd.args[0]} powers off or restarts")]
    if cmd.program == "systemctl" and any(a in ("poweroff", "reboot", "halt", "kexec") for a in cmd.args):
        return [RuleHit("hardline.power", "systemctl powering off or restarting")]
    return []


def hardline_hits(cmd: SimpleCommand, segment: Segment, scope: GuardScope) -> list[RuleHit]:
    hits: list[RuleHit] = []
    if cmd.program == "rm":
        hits += _rm(cmd, scope)
    elif cmd.program == "find":
        hits += _find(cmd, scope)
    elif cmd.program in ("chmod", "chown", "chgrp"):
        hits += _chmod_chown(cmd, scope)
    elif _MKFS.match(cmd.program):
        hits.append(RuleHit("hardline.mkfs", f"{cmd.program} formats a filesystem"))
    elif cmd.program == "mv":
        hits += _mv(cmd, scope)
    hits += _disk_writes(cmd, segment, scope)
    hits += _destination_hits(cmd, segment, scope)
    hits += _sysrq(cmd, segment)
    hits += _kill_all(cmd)
    hits += _power(cmd)
    return hits
