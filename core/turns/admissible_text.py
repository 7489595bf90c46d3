"""Which text may be admitted: every ingress (CLI, serve, sidecar, tasks, channels) checks a
message before it acknowledges anything, and the runtime checks again before it writes.

A Python `str` can hold what no UTF-8 file can: a lone surrogate (U+D800..U+DFFF), which
JSON lets a client send as `"\\udcff"` and which a non-UTF-8 command-line argument turns
into (`surrogateescape`). SQLite cannot store it, so such text would be acknowledged and
then crash the turn with nothing written. The rule is rejection, never silent repair: a
replacement character would change what the user said, so the caller is told which
character at which position is wrong and nothing is admitted. NUL and every other code
point are ordinary text.
"""

from __future__ import annotations


class InvalidTextError(ValueError):
    """The text cannot be stored as UTF-8; the message names what, where and what to do."""

    def __init__(self, what: str, index: int, char: str) -> None:
        super().__init__(f"{what} is not valid Unicode text: it holds an unpaired surrogate U+{ord(char):04X} at "
                         f"character {index}; send UTF-8 text (a JSON string may not contain a lone \\ud800-\\udfff "
                         "escape), nothing was accepted")
        self.what = what
        self.index = index
        self.char = char


def text_problem(text: str, what: str = "the message") -> InvalidTextError | None:
    """The reason `text` cannot be admitted, or None when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return InvalidTextError(what, exc.start, text[exc.start])
    return None


def check_text(text: str, what: str = "the message") -> str:
    """`text` unchanged, or InvalidTextError (nothing may be acknowledged or written)."""
    problem = text_problem(text, what)
    if problem is not None:
        raise problem
    return text
