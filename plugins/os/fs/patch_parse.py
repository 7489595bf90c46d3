"""Parse a unified diff (one or many files, `git diff` or `diff -u` style) into hunks."""

from __future__ import annotations

import re

import attrs

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
DEV_NULL = "/dev/null"


class PatchParseError(ValueError):
    pass


@attrs.define
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[tuple[str, str]] = attrs.field(factory=list)  # (" " | "-" | "+", text without newline)
    old_no_newline: bool = False  # "\ No newline at end of file" after the last old line
    new_no_newline: bool = False

    def old_lines(self) -> list[str]:
        return [text for op, text in self.lines if op in (" ", "-")]

    def new_lines(self) -> list[str]:
        return [text for op, text in self.lines if op in (" ", "+")]


@attrs.define
class FilePatch:
    old_path: str
    new_path: str
    hunks: list[Hunk] = attrs.field(factory=list)

    @property
    def creates(self) -> bool:
        return self.old_path == DEV_NULL

    @property
    def deletes(self) -> bool:
        return self.new_path == DEV_NULL

    @property
    def path(self) -> str:
        return self.new_path if self.new_path != DEV_NULL else self.old_path


def _header_path(rest: str) -> str:
    path = rest.split("\t", 1)[0].strip()
    if path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    return path


def strip_prefix(path: str, strip: int) -> str:
    if path == DEV_NULL or strip <= 0:
        return path
    parts = path.split("/")
    if len(parts) <= strip:
        raise PatchParseError(f"cannot strip {strip} leading component(s) from {path!r}")
    return "/".join(parts[strip:])


def _auto_strip(files: list[FilePatch]) -> int:
    names = [p for f in files for p in (f.old_path, f.new_path) if p != DEV_NULL]
    return 1 if names and all(n.startswith(("a/", "b/")) for n in names) else 0


def parse_patch(text: str, strip: int | None = None) -> list[FilePatch]:
    files: list[FilePatch] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            files.append(FilePatch(_header_path(line[4:]), _header_path(lines[i + 1][4:])))
            i += 2
            continue
        match = _HUNK.match(line)
        if match:
            if not files:
                raise PatchParseError(f"line {i + 1}: hunk before any ---/+++ file header")
            hunk = Hunk(int(match[1]), _count(match[2]), int(match[3]), _count(match[4]))
            i = _read_hunk(lines, i + 1, hunk)
            files[-1].hunks.append(hunk)
            continue
        i += 1
    if not files:
        raise PatchParseError("no file headers (--- / +++) found; pass a unified diff")
    for f in files:
        if not f.hunks:
            raise PatchParseError(f"{f.new_path}: no hunks")
    use = _auto_strip(files) if strip is None else strip
    for f in files:
        f.old_path, f.new_path = strip_prefix(f.old_path, use), strip_prefix(f.new_path, use)
    return files


def _count(field: str | None) -> int:
    return 1 if field is None else int(field)  # "@@ -5 +5 @@" means one line


def _read_hunk(lines: list[str], i: int, hunk: Hunk) -> int:
    old_left, new_left = hunk.old_len, hunk.new_len
    while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
        line = lines[i]
        if line.startswith("\\"):
            last = hunk.lines[-1][0] if hunk.lines else " "
            if last == "-":
                hunk.old_no_newline = True
            elif last == "+":
                hunk.new_no_newline = True
            else:
                hunk.old_no_newline = hunk.new_no_newline = True
            i += 1
            continue
        op, body = (line[:1], line[1:]) if line else (" ", "")
        if op not in (" ", "-", "+"):
            raise PatchParseError(f"line {i + 1}: unexpected {line[:20]!r} inside a hunk (counts do not match)")
        hunk.lines.append((op, body))
        if op in (" ", "-"):
            old_left -= 1
        if op in (" ", "+"):
            new_left -= 1
        i += 1
    if old_left > 0 or new_left > 0:
        raise PatchParseError("a hunk ends early: its @@ line counts more lines than it has")
    return i
