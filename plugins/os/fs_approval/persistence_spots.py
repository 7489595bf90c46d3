"""Files that make something run later: recognised by name, wherever they are.

A write to one of these is a way to run code without ever asking for a shell command —
the next `git status` runs a hook or a filter, the next terminal sources an rc file, the
next Python start imports a `.pth` line, the next login starts an autostart entry, the
next turn renders a prompt template. So they are matched by their own names anywhere on
disk, not only in the workspace or the home dir, and a write to them asks under the
`persistence` category at every level below 5 (no session grant silences it).

What counts (on the canonical path the write would land on):
- anything inside a directory named `.git` (config, hooks, info/attributes, modules/*/config
  of every repository, nested ones included) and a `.git` file itself (it can point
  `gitdir:` at a directory the writer controls);
- shell start-up and alias files (`.bashrc`, `.bash_aliases`, `.profile`, `.zshenv`, ...,
  fish's `config.fish` and `conf.d`), `.envrc` (direnv runs it on `cd`), `.pam_environment`,
  X session scripts, `.inputrc`;
- git config outside a repository: `.gitconfig`, `.config/git/`;
- Python start-up hooks: `sitecustomize.py` / `usercustomize.py` anywhere, and `*.pth`
  files inside a `site-packages` or `dist-packages` directory (only there does Python
  execute them; a PyTorch checkpoint called `model.pth` elsewhere is data);
- autostart and schedulers: `.config/autostart/`, systemd units (`.config/systemd/`,
  `/etc/systemd/`), `/etc/cron*`, crontab spools, launchd agents (`LaunchAgents`,
  `LaunchDaemons`), `/etc/profile.d/`, `/etc/rc.local`;
- `~/.ssh/` (authorized_keys, config with ProxyCommand) wherever a `.ssh` directory is;
- the agent's own state dir: `templates/` (prompt templates rendered every turn) and
  `skills/` (scripts the agent runs);
- the per-user cache (`~/.cache/atomic-agent` or `ATOMIC_AGENT_CACHE_DIR`): it holds
  compiled templates and llama-server binaries the runtime loads and starts;
- `.gitmodules` (submodule URLs and update commands a later `git submodule` follows).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from atomic_agent.plugins.os.fs_approval.canonical_target import is_within

SHELL_STARTUP = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc", ".zprofile",
    ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".envrc",
    ".pam_environment", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".inputrc", ".gitconfig",
    "sitecustomize.py", "usercustomize.py", "rc.local", ".gitmodules",
})
# directory names whose whole subtree runs or configures something
RUNNING_DIRS = frozenset({".git", ".ssh", "autostart", "LaunchAgents", "LaunchDaemons", "crontabs", "profile.d"})
# (parent dir name, child name) pairs: `.config/git`, `.config/systemd`, `fish/conf.d` ...
_NESTED = (("config", "git"), ("config", "systemd"), ("config", "fish"), ("config", "environment.d"),
           ("config", "upstart"), ("etc", "systemd"), ("spool", "cron"))
_ETC_CRON = re.compile(r"\Acron(?:tab|\.d|\.daily|\.hourly|\.weekly|\.monthly)?\Z")
_SITE_DIRS = frozenset({"site-packages", "dist-packages"})
STATE_DIR_RUNNABLES = ("templates", "skills")


@functools.lru_cache(maxsize=8)
def _cache_roots(configured: str, home: str) -> tuple[str, ...]:
    from atomic_agent.api import resolve_cache_dir

    lexical = str(resolve_cache_dir({"ATOMIC_AGENT_CACHE_DIR": configured} if configured else {}))
    return tuple(dict.fromkeys((lexical, os.path.realpath(lexical))))


def cache_roots() -> tuple[str, ...]:
    """The per-user cache as configured for this process, as written and canonical."""
    return _cache_roots(os.environ.get("ATOMIC_AGENT_CACHE_DIR", ""), os.environ.get("HOME", ""))


def in_runtime_cache(path: str) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in cache_roots())


def persistence_reason(canonical: Path, state_dirs: Sequence[Path] = ()) -> str | None:
    """Why writing `canonical` plants something that runs later, or None."""
    parts = canonical.parts
    name = canonical.name
    for index, part in enumerate(parts[:-1]):
        if part in RUNNING_DIRS or (part.endswith(".git") and len(part) > 4):  # `.git`, a bare `repo.git`
            return f"inside a {part} directory"
        if index and (parts[index - 1].lstrip("."), part) in _NESTED:
            return f"inside {parts[index - 1]}/{part}"
        if index == 1 and parts[0] == "/" and part == "etc" and len(parts) > 2 and _ETC_CRON.match(parts[2]):
            return "a system cron file"
    if name in RUNNING_DIRS:
        return f"the {name} directory itself" if name != ".git" else "a repository's .git (directory or gitdir pointer)"
    if name in SHELL_STARTUP:
        return f"{name} runs at start-up"
    if name.endswith(".pth") and any(p in _SITE_DIRS for p in parts[:-1]):
        return "a .pth file Python executes at start-up"
    if name == "crontab" or (name == "environment" and parts[-2:-1] == ("etc",)):
        return f"{name} is read at login or by cron"
    if in_runtime_cache(str(canonical)):
        return "the per-user cache (compiled templates and binaries the runtime loads)"
    for state_dir in state_dirs:
        for sub in STATE_DIR_RUNNABLES:
            if is_within(canonical, state_dir / sub):
                return f"the agent's {sub} (used on every turn)"
    return None
