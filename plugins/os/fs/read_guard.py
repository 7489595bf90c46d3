"""The one read guard every tool that reads file contents goes through.

Refused outright, at every level: anything but a regular file (a FIFO blocks forever,
`/dev/zero` never ends), `/proc/<pid>/environ` and `/proc/<pid>/mem`, and the agent's
runtime secrets (`.env`, `serve/` with the operator token, the audit log, owner leases;
see `runtime_secrets`) — matched by canonical path and, because a hard link has a path of
its own, by device and inode too (a link to `.env` planted in the workspace is still `.env`).

Asked, under `sensitive_read` at every level below 5: files in a well-known credential
store (`~/.ssh`, cloud CLI credentials, keyrings, browser profiles; see
`credential_stores`), again by path or by inode. An approved read marks the session, so
the egress policy asks before that session sends data to a host outside the allowlist.

`check_readable` is the synchronous part (used inside worker threads); `admit_read` adds
the question and is what a tool awaits before it reads.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from atomic_agent.plugins.os.fs_approval.credential_stores import credential_store_of
from atomic_agent.plugins.os.fs_approval.runtime_secrets import is_runtime_secret, secret_roots, state_dirs_of_trust
from atomic_agent.plugins.os.fs_approval.sensitive_taint import TAINT
from atomic_agent.plugins.os.fs_approval.trust_config_paths import DOTENV_FILE, is_secret_file
from atomic_agent.plugins.os.shell.ask_approval import ask_approval

_PROC_SECRET = re.compile(r"\A/proc/(?:\d+|self|thread-self)(?:/task/\d+)?/(?:environ|mem)\Z")
SENSITIVE_READ = "sensitive_read"


class ReadRefused(ValueError):
    pass


def _secret_inodes(trust: Sequence[Path]) -> set[tuple[int, int]]:
    inodes = set()
    for path in trust:
        if path.name != DOTENV_FILE:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        inodes.add((st.st_dev, st.st_ino))
    return inodes


def is_secret(path: Path, st: os.stat_result, trust: Sequence[Path]) -> bool:
    """Whether `path` (already stat'ed as `st`) is the environment or a runtime secret of the
    agent (its `.env`, operator token, audit log, leases; see `runtime_secrets`)."""
    canonical = os.path.realpath(path)
    if _PROC_SECRET.match(canonical):
        return True
    if is_runtime_secret(canonical, secret_roots(state_dirs_of_trust(trust)), st):
        return True
    if is_secret_file(Path(canonical), trust):  # a `.env` that is itself a symlink elsewhere
        return True
    return st.st_nlink > 1 and (st.st_dev, st.st_ino) in _secret_inodes(trust)


def check_readable(path: Path, display: str, trust: Sequence[Path]) -> os.stat_result:
    """The file's stat when it may be read; ReadRefused (with a fix) otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ReadRefused(f"no such file: {display}; os.fs.list or os.fs.glob show what exists") from None
    except NotADirectoryError:
        raise ReadRefused(f"{display}: a part of the path is a file, not a directory") from None
    except PermissionError:
        raise ReadRefused(f"{display}: permission denied") from None
    except OSError as exc:
        raise ReadRefused(f"{display}: cannot be opened ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ReadRefused(f"{display} is a directory; use os.fs.list to see its entries")
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused(f"{display} is not a regular file (device, FIFO or socket); it is not read")
    if is_secret(path, st, trust):
        raise ReadRefused(f"{display} holds the runtime's secrets (API keys, operator token, approvals or leases) "
                          "and is never read by tools")
    return st


def sensitive_store(path: Path, st: os.stat_result | None = None) -> str | None:
    """The credential store `path` is in (by canonical path or hard-link inode), or None."""
    return credential_store_of(Path(os.path.realpath(path)), st)


async def admit_read(ctx: Any, path: Path, display: str, trust: Sequence[Path], tool: str) -> os.stat_result:
    """`check_readable`, then ask under `sensitive_read` for a credential store; ReadRefused when
    refused or denied. An approved sensitive read marks the session for the egress policy."""
    st = await asyncio.to_thread(check_readable, path, display, trust)
    store = await asyncio.to_thread(sensitive_store, path, st)
    if store is not None:
        await ask_sensitive(ctx, tool, f"read {display}", store, [str(os.path.realpath(path))])
    return st


async def ask_sensitive(ctx: Any, tool: str, action: str, store: str, targets: list[str]) -> None:
    """Ask once for reading inside credential store `store`; ReadRefused when not approved."""
    from atomic_agent.api import approval_gate

    summary = f"{action} (credential store {store}: keys, tokens or cookies)"
    binding = approval_gate.ApprovalBinding.capture(tool, ctx.working_dir, targets)
    if not await ask_approval(ctx, SENSITIVE_READ, summary, binding=binding):
        raise ReadRefused(f"not approved: {action} is inside the credential store {store}; reading it needs the "
                          "person's approval (category sensitive_read) below approval level 5")
    TAINT.mark(ctx.session_id, store)
