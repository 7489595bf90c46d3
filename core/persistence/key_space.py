"""Keys and stream names: validation, prefix ranges, and escaped key paths.

Keys sort by code point, which is also the byte order of their UTF-8 form, so SQLite's BINARY
collation and Python's string order agree. A key path joins segments with "." after escaping
"%" and "." inside each segment, so the segments ("a.b", "c") and ("a", "b.c") can never name
the same key (seed 003: two scopes collided through a dot).
"""

from __future__ import annotations

MAX_NAME_CHARS = 1024
_MAX_CODE_POINT = 0x10FFFF


def validate_name(name: object, what: str = "key") -> str:
    """Return `name` if it is a usable key or stream name, else raise ValueError saying why."""
    if not isinstance(name, str):
        raise ValueError(f"{what} must be a str, got {type(name).__name__}")
    if not name:
        raise ValueError(f"{what} must not be empty")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"{what} is {len(name)} characters long; the limit is {MAX_NAME_CHARS}")
    if "\x00" in name:
        raise ValueError(f"{what} {name!r} contains a NUL character; remove it")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} {name!r} is not valid Unicode text ({exc.reason}); "
                         "remove lone surrogates") from exc
    return name


def validate_prefix(prefix: object) -> str:
    """A prefix may be empty (everything); otherwise the same rules as a key."""
    if prefix == "":
        return ""
    return validate_name(prefix, "prefix")


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string greater than every string starting with `prefix` (None: no bound),
    so a prefix scan is the index range `prefix <= key < bound`."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last < _MAX_CODE_POINT:
            nxt = last + 1
            if 0xD800 <= nxt <= 0xDFFF:  # surrogates never occur in keys; skip the gap
                nxt = 0xE000
            return "".join(chars) + chr(nxt)
    return None


def escape_segment(segment: str) -> str:
    if not isinstance(segment, str) or not segment:
        raise ValueError(f"a key segment must be a non-empty str, got {segment!r}")
    return segment.replace("%", "%25").replace(".", "%2E")


def unescape_segment(segment: str) -> str:
    return segment.replace("%2E", ".").replace("%25", "%")


def key_path(*segments: str) -> str:
    """Join segments into one key, each escaped so it stays exactly one level."""
    if not segments:
        raise ValueError("a key path needs at least one segment")
    return validate_name(".".join(escape_segment(s) for s in segments))


def key_path_prefix(*segments: str) -> str:
    """The scan prefix for everything below these segments (ends with ".")."""
    return key_path(*segments) + "."


def split_key_path(key: str) -> list[str]:
    return [unescape_segment(s) for s in key.split(".")]
