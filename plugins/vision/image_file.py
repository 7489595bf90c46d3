"""Reading one image for vision.describe: size cap first, then the type from the content.

The type is decided by the file's first bytes (PNG, JPEG, GIF, WebP), never by its name: a
`.png` holding text is refused, a JPEG named `.dat` is accepted. The size is checked on the
open file before reading, and the read stops one byte past the cap, so a file that grows
while it is read is still refused rather than loaded whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import attrs

SNIFF_BYTES = 12
KINDS = "PNG, JPEG, GIF or WebP"


class ImageFileError(ValueError):
    """The file cannot be sent as an image; the message says why and what to do."""


@attrs.frozen
class ImageFile:
    shown: str  # the path as the model gave it
    mime: str
    data: bytes = attrs.field(repr=False)


def sniff_mime(head: bytes) -> str | None:
    """The image MIME type the leading bytes say, None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_image(path: Path, shown: str, max_bytes: int) -> ImageFile:
    """Read `path` (already admitted by the read guard) as an image of at most `max_bytes`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ImageFileError(f"{shown} cannot be opened ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ImageFileError(f"{shown} is not a regular file")
        if st.st_size > max_bytes:
            raise ImageFileError(f"{shown} is {st.st_size:,} bytes; images of at most {max_bytes:,} bytes are sent "
                                 "(vision.maxImageBytes). Pass a smaller or downscaled copy.")
        if st.st_size == 0:
            raise ImageFileError(f"{shown} is empty, not an image")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ImageFileError(f"{shown} grew past {max_bytes:,} bytes while it was read (vision.maxImageBytes)")
    mime = sniff_mime(data[:SNIFF_BYTES])
    if mime is None:
        raise ImageFileError(f"{shown} is not an image: its content is not {KINDS} (the type is read from the bytes, "
                             "not the file name). Pass an image file, or convert it to PNG first.")
    return ImageFile(shown, mime, data)
