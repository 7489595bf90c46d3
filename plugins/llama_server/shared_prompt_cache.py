"""Whether a llama-server may hand one conversation's cached prompt to another.

llama-server's RAM prompt cache (`--cache-ram`, on by default with 8 GiB since build b6700,
pull request 16391) keeps the KV state of evicted and idle slots and restores it into a
slot whose new prompt looks similar. Under concurrent load it has restored content from an
unrelated, finished conversation into a fresh slot, and the reply then continued that other
conversation (ggml-org/llama.cpp#27148, open). On a server that a CLI run, serve, Telegram
and scheduled tasks all share, that is one user's data in another session's reply, so the
managed server always starts with `--cache-ram 0`.

`/props` does not report the setting, so for a server the user runs we read the listening
process's command line and environment when it is on this machine and ours to read, and say
"unknown" otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

OFF, ON, UNKNOWN = "off", "on", "unknown"
FIRST_BUILD_WITH_CACHE = 6700  # llama.cpp b6700 (October 2025) added --cache-ram, on by default
FIX = "start llama-server with `--cache-ram 0` (or LLAMA_ARG_CACHE_RAM=0)"
UPSTREAM = "ggml-org/llama.cpp#27148"


@attrs.frozen
class PromptCacheState:
    state: str  # off | on | unknown
    detail: str

    @property
    def shares_across_conversations(self) -> bool:
        return self.state != OFF

    def sentence(self) -> str:
        if self.state == OFF:
            return f"RAM prompt cache off ({self.detail}): no conversation's cached prompt is restored into another"
        risk = ("cached prompts may cross conversations: its RAM prompt cache can restore one conversation's "
                f"tokens into another's slot ({UPSTREAM})")
        return f"{risk}; {self.detail}. Fix: {FIX}"


def cache_ram_from_argv(argv: list[str], environ: dict[str, str]) -> int | None:
    """The `--cache-ram` MiB a command line (or LLAMA_ARG_CACHE_RAM) sets; None when neither does.
    The flag wins over the variable, as llama-server's own parser has it."""
    value: str | None = None
    for i, arg in enumerate(argv):
        if arg in ("--cache-ram", "-cram") and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--cache-ram="):
            value = arg.split("=", 1)[1]
    if value is None:
        value = environ.get("LLAMA_ARG_CACHE_RAM")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def build_number(build_info: str) -> int | None:
    """7432 from "b7432-1a2b3c4" (what /props build_info says), None when it says no number
    (a build from a source tarball without git reports build 0: unknown, not old)."""
    match = re.match(r"b?(\d+)", build_info.strip())
    return int(match.group(1)) or None if match else None


def state_of_process(pid: int, build_info: str = "") -> PromptCacheState | None:
    """What the running process `pid` was started with; None when its /proc entry cannot be read."""
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return None
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        environ = dict(e.decode(errors="replace").split("=", 1) for e in raw if b"=" in e)
    except OSError:
        environ = {}
    mib = cache_ram_from_argv(argv, environ)
    if mib == 0:
        return PromptCacheState(OFF, f"pid {pid} runs with --cache-ram 0")
    if mib is not None:
        size = "no size limit" if mib < 0 else f"{mib} MiB"
        return PromptCacheState(ON, f"pid {pid} runs with --cache-ram {mib} ({size})")
    number = build_number(build_info)
    if number is not None and number < FIRST_BUILD_WITH_CACHE:
        return PromptCacheState(OFF, f"build b{number} predates the RAM prompt cache")
    return PromptCacheState(ON, f"pid {pid} does not set --cache-ram, and llama-server keeps 8192 MiB by default")


def listening_pid(port: int, proc: Path = Path("/proc")) -> int | None:
    """The pid of the process on this machine listening on TCP `port` (any address), if we may see it."""
    inodes: set[str] = set()
    for table in ("net/tcp", "net/tcp6"):
        try:
            lines = (proc / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    if not inodes:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if fd.readlink().as_posix() in wanted:
                    return int(entry.name)
        except OSError:
            continue
    return None


def prompt_cache_state(url: str, build_info: str = "", pid: int | None = None) -> PromptCacheState:
    """The managed server (its pid known) or a server at `url`: read the process when it runs on
    this machine, else say what can be said from its build."""
    from urllib.parse import urlsplit

    if pid is None:
        parts = urlsplit(url)
        local = parts.hostname in ("127.0.0.1", "localhost", "::1") or (parts.hostname or "").startswith("127.")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        pid = listening_pid(port) if local else None
    if pid is not None:
        state = state_of_process(pid, build_info)
        if state is not None:
            return state
    number = build_number(build_info)
    if number is not None and number < FIRST_BUILD_WITH_CACHE:
        return PromptCacheState(OFF, f"build b{number} predates the RAM prompt cache")
    where = "its process is not on this machine or not ours to read"
    return PromptCacheState(UNKNOWN, f"/props does not report --cache-ram and {where}; llama-server builds since "
                                     f"b{FIRST_BUILD_WITH_CACHE} keep it on (8192 MiB) unless started with it off")
