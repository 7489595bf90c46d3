"""os.fs.read: lines of a text file with offset, limit and line numbers.

The file is streamed line by line with a per-line byte cap, so neither a 1 GB file nor a
1 GB single line is ever held in memory; a binary file is reported as binary (with its
kind and size) instead of being dumped; bytes that are not UTF-8 are shown as U+FFFD and
the result says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

NAME = "os.fs.read"
DEFAULT_LIMIT = 200
MAX_LIMIT = 5000
LINE_BYTES = 64 * 1024  # bytes of one line kept; the rest of a longer line is skipped
LINE_CHARS = 2000  # characters of one line shown
OUTPUT_CHARS = 100_000
SCAN_CAP_BYTES = 1 << 30  # stop looking for a far offset after 1 GiB
SKIP_BLOCK = 1 << 20

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read, relative to the session cwd or absolute."},
        "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based, default 1)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "description": f"How many lines to show (default {DEFAULT_LIMIT})."},
        "lineNumbers": {"type": "boolean", "description": "Prefix lines with their numbers (default true)."},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def _decode(raw: bytes) -> tuple[str, bool]:
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


def skip_lines(handle: BinaryIO, count: int) -> tuple[int, int]:
    """Move past `count` lines by counting newlines in 1 MiB blocks (no per-line Python work).

    Returns (lines skipped, bytes scanned). At the end of the file it stops right after the
    last newline, so the caller's line loop still sees a final line that has none.
    """
    skipped = scanned = 0
    while skipped < count and scanned <= SCAN_CAP_BYTES:
        start = handle.tell()
        block = handle.read(SKIP_BLOCK)
        if not block:
            break
        scanned += len(block)
        newlines = block.count(b"\n")
        if skipped + newlines >= count:
            cut = -1
            for _ in range(count - skipped):
                cut = block.index(b"\n", cut + 1)
            handle.seek(start + cut + 1)
            return count, scanned
        skipped += newlines
        if len(block) < SKIP_BLOCK:  # end of file: leave a last line without newline to the caller
            handle.seek(start + block.rfind(b"\n") + 1)
            break
    return skipped, scanned


def read_lines(path: Path, offset: int, limit: int, numbered: bool) -> dict[str, Any]:
    lines: list[str] = []
    chars = bad_lines = 0
    more = cut_long = scan_capped = False
    with open(path, "rb") as handle:
        lineno, scanned = skip_lines(handle, offset - 1)
        while True:
            chunk = handle.readline(LINE_BYTES)
            if not chunk:
                break
            scanned += len(chunk)
            complete = chunk.endswith(b"\n")
            while not complete:  # skip the rest of an over-long line without keeping it
                rest = handle.readline(LINE_BYTES)
                if not rest:
                    break
                scanned += len(rest)
                cut_long = True
                complete = rest.endswith(b"\n")
                if scanned > SCAN_CAP_BYTES:
                    break
            lineno += 1
            if lineno >= offset:
                if len(lines) >= limit or chars >= OUTPUT_CHARS:
                    more = True
                    break
                text, bad = _decode(chunk.rstrip(b"\r\n"))
                bad_lines += bad
                if lineno == 1:
                    text = text.removeprefix("\ufeff")
                if len(text) > LINE_CHARS:
                    text = text[:LINE_CHARS] + f"…[line cut at {LINE_CHARS} chars]"
                elif not complete and len(chunk) >= LINE_BYTES:
                    text += "…[line cut]"
                lines.append(f"{lineno:>6}\t{text}" if numbered else text)
                chars += len(lines[-1]) + 1
            elif scanned > SCAN_CAP_BYTES:
                scan_capped = True
                break
    return {"lines": lines, "first": offset, "last": offset + len(lines) - 1, "seen": lineno, "more": more,
            "badLines": bad_lines, "cutLong": cut_long, "scanCapped": scan_capped}


def _summary(shown: str, got: dict[str, Any], offset: int) -> str:
    if not got["lines"]:
        if got["scanCapped"]:
            return f"{shown}: stopped after scanning 1 GiB without reaching line {offset}"
        if got["seen"] == 0:
            return f"{shown}: (empty file)"
        return f"{shown}: has {got['seen']} lines; offset {offset} is past the end"
    head = f"{shown} · lines {got['first']}-{got['last']}"
    head += f" (more follow: offset={got['last'] + 1})" if got["more"] else f" of {got['seen']}"
    notes = []
    if got["badLines"]:
        notes.append(f"note: {got['badLines']} line(s) are not valid UTF-8; undecodable bytes shown as \ufffd")
    if got["cutLong"]:
        notes.append("note: over-long lines were cut")
    return "\n".join([head, *notes, *got["lines"]])


def read_file(path: Path, shown: str, trust: tuple[Path, ...], offset: int, limit: int,
              numbered: bool) -> ToolResult:
    """The whole read in one worker-thread hop: checks, binary sniff, lines."""
    from atomic_agent.plugins.os.fs.read_guard import ReadRefused, check_readable
    from atomic_agent.plugins.os.fs.text_sniff import binary_kind, looks_binary, read_sample

    try:
        st = check_readable(path, shown, trust)
        sample = read_sample(path)
        if looks_binary(sample):
            kind = binary_kind(sample)
            return ToolResult.ok(f"{shown}: binary file ({kind}, {st.st_size} bytes); not shown as text",
                                 path=str(path), binary=True, kind=kind, size=st.st_size)
        got = read_lines(path, offset, limit, numbered)
    except ReadRefused as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return ToolResult.error(f"{shown}: cannot be read ({exc.strerror or exc})")
    return ToolResult.ok(_summary(shown, got, offset), path=str(path), startLine=got["first"],
                         endLine=got["last"], more=got["more"], invalidUtf8Lines=got["badLines"], size=st.st_size)


def make_read(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            path = resolve_path(ctx, args.get("path"))
        except PathArgError as exc:
            return ToolResult.error(str(exc))
        trust = (*trust_config_paths(ctx.state_dir), *env.extra_trust())
        try:
            await admit_read(ctx, path, display_path(path, ctx), trust, NAME)
        except ReadRefused as exc:
            return ToolResult.error(str(exc))
        return await asyncio.to_thread(read_file, path, display_path(path, ctx), trust,
                                       int(args.get("offset") or 1), int(args.get("limit") or DEFAULT_LIMIT),
                                       bool(args.get("lineNumbers", True)))

    return ToolSpec(NAME, "Read a text file's lines (offset/limit, numbered); binary files are reported, not dumped.",
                    SCHEMA, ResourceClass.PURE_READ, run, durable=True, tier=Tier.FREQUENT,
                    example='{"tool": "os.fs.read", "args": {"path": "README.md", "offset": 1, "limit": 80}}')
