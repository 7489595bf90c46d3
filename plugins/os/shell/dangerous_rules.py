"""Commands that may be fine but deserve a second look: the prompt names the rule.

They ask under the `shell` category like every other command (the ladder decides when
that stops asking); the named rule tells the user what they are approving.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from atomic_agent.plugins.os.fs_approval.persistence_spots import persistence_reason

from .command_segments import Segment
from .command_unwrap import CODE_INTERPRETERS, SHELL_INTERPRETERS, SimpleCommand
from .git_config_writes import program_config_writes
from .guard_paths import UNKNOWN, expand_home, is_inside, is_root_ish, resolve_target
from .guard_records import GuardScope, RuleHit
from .hardline_rules import is_recursive
from .write_destinations import write_destinations

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request"})
_PERSISTENCE = (re.compile(r"^/etc/"), re.compile(r"/(?:config\.json|\.env)$"))
_SETUID_MODE = re.compile(r"^(?:[ugoa]*\+[rwxXt]*s|[0-7]?[4-7][0-7]{3})$")


def _persistence_target(word: str, scope: GuardScope) -> bool:
    """A persistence spot by name (the same list the file tools ask about, the per-user cache
    included), /etc, or agent config — on the path as written and where it lands."""
    path = resolve_target(word, scope.cwd, scope.home)
    if path == UNKNOWN or "\x00" in path:
        return False
    for candidate in dict.fromkeys((path, os.path.realpath(path))):
        if persistence_reason(Path(candidate)) is not None or any(p.search(candidate) for p in _PERSISTENCE):
            return True
    return False


def _git(cmd: SimpleCommand) -> list[RuleHit]:
    args = [a for a in cmd.args if not a.startswith("-c") or a == "-c"]
    sub = next((a for a in args if not a.startswith("-")), "")
    rest = args[args.index(sub) + 1:] if sub else []
    if sub == "push" and (any(a in ("-f", "--force", "--force-with-lease", "--mirror", "--delete", "-d") or
                              a.startswith("--force") for a in rest) or any(a.startswith("+") for a in rest)):
        return [RuleHit("dangerous.git_force_push", "git push that rewrites or deletes remote history")]
    if sub == "reset" and "--hard" in rest:
        return [RuleHit("dangerous.git_reset_hard", "git reset --hard discards uncommitted work")]
    if sub == "clean" and any(a.startswith("-") and not a.startswith("--") and "f" in a or a == "--force" for a in rest):
        return [RuleHit("dangerous.git_clean", "git clean deletes untracked files")]
    if sub == "branch" and any(a in ("-D",) for a in rest):
        return [RuleHit("dangerous.git_branch_delete", "git branch -D deletes an unmerged branch")]
    if sub in ("checkout", "restore") and ("." in rest or "--" in rest and rest[-1:] == ["."]):
        return [RuleHit("dangerous.git_discard", f"git {sub} . discards uncommitted changes")]
    if "-c" in cmd.args or any(a.startswith(("--exec-path", "--upload-pack", "--receive-pack")) for a in cmd.args):
        return [RuleHit("dangerous.git_config_override", "git with a config override that can run commands")]
    return []


def _rm_outside(cmd: SimpleCommand, scope: GuardScope) -> list[RuleHit]:
    flags = [a for a in cmd.args if a.startswith("-") and a != "-"]
    operands = [a for a in cmd.args if not a.startswith("-") or a == "-"]
    if not is_recursive(flags):
        return []
    for operand in operands:
        target = resolve_target(operand, scope.cwd, scope.home)
        if target == UNKNOWN:
            return [RuleHit("dangerous.rm_unresolved", f"recursive rm of {operand!r}, which hides a variable")]
        if not is_inside(target, scope.session_cwd):
            return [RuleHit("dangerous.rm_outside_cwd", f"recursive rm of {operand!r}, outside the working dir")]
    return []


def _inline_code(cmd: SimpleCommand) -> list[RuleHit]:
    if cmd.program in SHELL_INTERPRETERS and any(a.startswith("-") and not a.startswith("--") and "c" in a
                                                 for a in cmd.args):
        return [RuleHit("dangerous.shell_dash_c", f"{cmd.program} -c runs a command line the binary name hides")]
    flags = CODE_INTERPRETERS.get(cmd.program) or CODE_INTERPRETERS.get(re.sub(r"[\d.]+$", "", cmd.program), ())
    if any(a == f or a.startswith(f + "=") or (len(f) == 2 and a.startswith(f)) for a in cmd.args for f in flags):
        return [RuleHit("dangerous.inline_code", f"{cmd.program} runs inline code")]
    if cmd.program == "eval":
        return [RuleHit("dangerous.eval", "eval runs a string as a command line")]
    return []


def _writes(cmd: SimpleCommand, segment: Segment, scope: GuardScope) -> list[RuleHit]:
    """Persistence spots among every destination the command writes (option values and
    extraction dirs included), the per-user cache, and program-valued git config keys."""
    hits: list[RuleHit] = []
    keys = program_config_writes(cmd)
    if keys:
        hits.append(RuleHit("dangerous.persistence_git_config",
                            f"sets git config {', '.join(keys)}, which names a program git runs later"))
    dests = write_destinations(cmd, segment)
    for target in (*dests.paths, *dests.extract_dirs):
        if _persistence_target(target, scope):
            hits.append(RuleHit("dangerous.persistence_write",
                                f"writes {target!r} (a persistence spot: shell rc, git config or hook, ssh, autostart, "
                                "/etc, agent config or the per-user cache of compiled templates and binaries)"))
            break
    for target in dests.extract_dirs:
        path = resolve_target(target, scope.cwd, scope.home)
        if path != UNKNOWN and not is_inside(path, scope.session_cwd) and is_root_ish(path, scope.home):
            hits.append(RuleHit("dangerous.extract_wide", f"{cmd.program} unpacks into {target!r}, outside the "
                                                          "working dir"))
            break
    return hits


def dangerous_hits(cmd: SimpleCommand, segment: Segment, scope: GuardScope,
                   upstream: SimpleCommand | None) -> list[RuleHit]:
    hits: list[RuleHit] = []
    name = cmd.program
    if cmd.privileged:
        hits.append(RuleHit("dangerous.privilege", f"runs with elevated privileges ({', '.join(cmd.wrappers)})"))
    if upstream is not None and upstream.program in DOWNLOADERS and (
            name in SHELL_INTERPRETERS or name in CODE_INTERPRETERS or name in ("source", ".")):
        hits.append(RuleHit("dangerous.download_and_run", f"{upstream.program} output piped into {name}"))
    if "xargs" in cmd.wrappers:
        hits.append(RuleHit("dangerous.xargs", f"xargs feeds {name or 'a command'} arguments the guard cannot see"))
    if name == "rm":
        hits += _rm_outside(cmd, scope)
    elif name == "git":
        hits += _git(cmd)
    elif name == "find" and any(a in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf",
                                      "-fls") for a in cmd.args):
        hits.append(RuleHit("dangerous.find_exec", "find that deletes, runs commands or writes files"))
    elif name == "dd":
        hits.append(RuleHit("dangerous.dd", "dd writes raw bytes"))
    elif name == "chmod" and (any(_SETUID_MODE.match(a) for a in cmd.args) or
                              ("-R" in cmd.args and any(a in ("777", "a+rwx", "ugo+rwx") for a in cmd.args))):
        hits.append(RuleHit("dangerous.chmod", "chmod setting setuid bits or world-writable recursively"))
    elif name in ("chown", "chgrp") and any(a in ("-R", "--recursive") for a in cmd.args):
        hits.append(RuleHit("dangerous.chown_recursive", f"recursive {name}"))
    elif name in ("killall", "pkill"):
        hits.append(RuleHit("dangerous.kill_by_name", f"{name} kills every process matching a name"))
    elif name == "crontab" and not (cmd.args and cmd.args[0] == "-l"):
        hits.append(RuleHit("dangerous.crontab", "crontab changes scheduled commands"))
    elif name == "ssh" and len([a for a in cmd.args if not a.startswith("-")]) > 1:
        hits.append(RuleHit("dangerous.ssh_remote_command", "ssh running a command on another host"))
    elif name in ("fdisk", "sfdisk", "gdisk", "sgdisk", "parted", "wipefs", "mkswap", "shred", "blkdiscard"):
        hits.append(RuleHit("dangerous.disk_tool", f"{name} changes disks or destroys data"))
    elif name in ("systemctl", "service") and any(a in ("stop", "disable", "mask", "kill") for a in cmd.args):
        hits.append(RuleHit("dangerous.service_stop", f"{name} stopping or disabling a service"))
    elif name in ("iptables", "ip6tables", "nft", "ufw"):
        hits.append(RuleHit("dangerous.firewall", f"{name} changes the firewall"))
    hits += _inline_code(cmd)
    hits += _writes(cmd, segment, scope)
    return hits


def downloader_in(lines: list[str]) -> bool:
    """Whether any of these substitution bodies starts a download (`sh <(curl …)`)."""
    return any(posixpath.basename(expand_home(w, "")).lower() in DOWNLOADERS for line in lines for w in line.split())
