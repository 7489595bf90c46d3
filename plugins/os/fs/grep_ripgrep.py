"""grep through ripgrep (`rg --json`) when it is on PATH, with the pure-Python path's rules:
no ignore files, hidden entries and dependency caches skipped, no symlinks followed,
sorted by path, files over 50 MiB skipped. Output is read as a stream and the process is
stopped as soon as the limit is reached."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
from pathlib import Path

from atomic_agent.plugins.os.fs.grep_query import GrepMatch, GrepOutcome, GrepQuery, clip_line
from atomic_agent.plugins.os.fs.walk_files import DEPENDENCY_DIRS

RG_ENV = "ATOMIC_AGENT_RIPGREP"  # "0" forces the pure-Python path; a path picks that binary


def ripgrep_binary(environ: dict[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    choice = env.get(RG_ENV, "")
    if choice == "0":
        return None
    if choice:
        return choice if Path(choice).is_file() else None
    return shutil.which("rg")


def rg_argv(binary: str, query: GrepQuery) -> tuple[list[str], str]:
    """(argv, cwd); a file root is searched from its directory so paths come back as names."""
    argv = [binary, "--json", "--sort", "path", "--no-config", "--no-ignore", "--no-messages",
            "--max-filesize", "50M"]
    for name in DEPENDENCY_DIRS:
        argv += ["--glob", f"!{name}/"]
    if query.hidden:
        argv.append("--hidden")
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.fixed_strings:
        argv.append("--fixed-strings")
    if query.glob and not query.root.is_file():
        argv += ["--glob", query.glob]
    if query.root.is_file():
        return [*argv, "--regexp", query.pattern, "--", query.root.name], str(query.root.parent)
    return [*argv, "--regexp", query.pattern, "--", "."], str(query.root)


def _text(field: dict[str, str]) -> str:
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", errors="replace")


class RipgrepError(RuntimeError):
    pass


async def search_ripgrep(binary: str, query: GrepQuery, cancelled: asyncio.Event | None = None) -> GrepOutcome:
    argv, cwd = rg_argv(binary, query)
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                limit=4 * 1024 * 1024)
    matches: list[GrepMatch] = []
    truncated = False
    searched = 0
    try:
        assert proc.stdout is not None
        while True:
            if cancelled is not None and cancelled.is_set():
                break
            try:
                line = await proc.stdout.readline()
            except ValueError:  # a single JSON line over the buffer limit: skip it
                continue
            if not line:
                break
            event = json.loads(line)
            kind = event.get("type")
            if kind == "begin":
                searched += 1
            if kind != "match":
                continue
            data = event["data"]
            if len(matches) >= query.limit:
                truncated = True
                break
            path = _text(data["path"]).removeprefix("./")
            matches.append(GrepMatch(path, int(data["line_number"]), clip_line(_text(data["lines"]))))
    finally:
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        stderr = await proc.stderr.read() if proc.stderr is not None else b""
        code = await proc.wait()
    if code == 2 and not matches and not truncated:
        message = stderr.decode("utf-8", "replace").strip().splitlines()
        raise RipgrepError(message[-1] if message else "ripgrep failed")
    return GrepOutcome(tuple(matches), truncated, "ripgrep", searched)
