"""Apply parsed hunks to a file's text, exactly (no fuzz): every context and removed line
must match. A hunk may sit a few lines away from where its header says (earlier edits
shift it); the nearest exact match wins. Any failing hunk fails the whole file."""

from __future__ import annotations

from collections.abc import Sequence

from atomic_agent.plugins.os.fs.patch_parse import Hunk


class HunkError(ValueError):
    pass


def _split(text: str) -> tuple[list[str], str, bool]:
    newline = "\r\n" if "\r\n" in text else "\n"
    ends_with_newline = text.endswith("\n") or text == ""
    return text.splitlines(), newline, ends_with_newline


def _find(lines: list[str], want: list[str], expected: int) -> int | None:
    if not want:
        return max(0, min(expected, len(lines)))
    limit = len(lines) - len(want)
    for pos in sorted(range(limit + 1), key=lambda p: (abs(p - expected), p)):
        if lines[pos:pos + len(want)] == want:
            return pos
    return None


def apply_hunks(text: str, hunks: Sequence[Hunk]) -> str:
    lines, newline, ends_with_newline = _split(text)
    shift = 0
    for number, hunk in enumerate(hunks, 1):
        want = hunk.old_lines()
        expected = max(hunk.old_start - 1, 0) + shift
        pos = _find(lines, want, expected)
        if pos is None:
            first = want[0] if want else ""
            raise HunkError(f"hunk {number} (@@ -{hunk.old_start},{hunk.old_len}) does not match the file "
                            f"(looked for {first[:60]!r}); os.fs.read the lines and regenerate the patch")
        replacement = hunk.new_lines()
        lines[pos:pos + len(want)] = replacement
        shift += len(replacement) - len(want)
        if pos + len(replacement) == len(lines):  # this hunk decides the file's last line
            if hunk.new_no_newline:
                ends_with_newline = False
            elif hunk.old_no_newline or replacement:
                ends_with_newline = True
    body = newline.join(lines)
    return body + newline if lines and ends_with_newline else body
