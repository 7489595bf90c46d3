"""`models pull`: download a GGUF over HTTP(S), resuming a partial `.part` file with a
Range request, verifying the sha256 when one is given, and renaming into place only when
the file is complete and checked."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import attrs

from .cache_lock import cache_lock
from .gguf_file import has_gguf_magic, sha256_of
from .llama_errors import DownloadError

if TYPE_CHECKING:
    import httpx

ProgressSink = Callable[[int, "int | None"], None]  # (bytes on disk, expected total or None)

_CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")
_UNSATISFIED_RANGE = re.compile(r"^bytes \*/(\d+)$")


@attrs.frozen
class PullResult:
    path: Path
    sha256: str
    size_bytes: int
    resumed_from: int  # bytes of an earlier partial download that were kept
    already_present: bool


def file_name_from_url(url: str) -> str:
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if not name or name in {".", ".."} or "/" in name or "\\" in name:
        raise DownloadError(f"cannot tell a file name from {url!r}. Pass a URL that ends in the model's file "
                            "name (…/model.Q4_K_M.gguf).")
    return name


def pull_model(url: str, dest_dir: Path, *, sha256: str | None = None, file_name: str | None = None,
               on_progress: ProgressSink | None = None, timeout_s: float = 60.0) -> PullResult:
    """Download `url` into `dest_dir/<file name>`; see the module docstring for the guarantees."""
    scheme = urlsplit(url).scheme
    if scheme not in {"http", "https"}:
        raise DownloadError(f"{url!r} is not an http(s) URL. For a file already on disk use "
                            "`atomic-agent models add PATH`.")
    name = file_name or file_name_from_url(url)
    dest_dir.mkdir(parents=True, exist_ok=True)
    final = dest_dir / name
    part = dest_dir / f"{name}.part"
    with cache_lock(dest_dir / f".{name}.lock"):
        if final.exists():
            return _already_present(final, sha256)
        resumed_from = _download_to_part(url, part, on_progress, timeout_s)
        return _verify_and_install(url, part, final, sha256, resumed_from)


def _already_present(final: Path, sha256: str | None) -> PullResult:
    digest = sha256_of(final)
    if sha256 and digest != sha256:
        raise DownloadError(f"{final} already exists with sha256 {digest}, not the expected {sha256}. Remove that "
                            "file (or pull under another name) and run the pull again.")
    return PullResult(final, digest, final.stat().st_size, 0, True)


def _download_to_part(url: str, part: Path, on_progress: ProgressSink | None, timeout_s: float) -> int:
    """Bring `part` to the full file; returns how many bytes of an earlier attempt were kept."""
    import httpx

    offset = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    try:
        with httpx.stream("GET", url, headers=headers, follow_redirects=True, timeout=timeout_s) as resp:
            if resp.status_code == 416 and offset:
                total = _unsatisfied_total(resp.headers.get("content-range", ""))
                if total == offset:
                    return offset  # the earlier attempt already got every byte
                part.unlink()
                return _download_to_part(url, part, on_progress, timeout_s)
            if resp.status_code >= 400:
                raise DownloadError(f"GET {url} answered HTTP {resp.status_code} {resp.reason_phrase}. Check the URL "
                                    "(and that it needs no login), then run the pull again.")
            keep = offset if resp.status_code == 206 and _range_starts_at(resp, offset) else 0
            if offset and not keep:
                offset = 0  # the server ignored the Range header: start over
            length = resp.headers.get("content-length")
            total = keep + int(length) if length and length.isdigit() else None
            done = keep
            with part.open("ab" if keep else "wb") as out:
                if on_progress:
                    on_progress(done, total)
                for chunk in resp.iter_bytes():  # as received, so an interruption keeps what arrived
                    out.write(chunk)
                    done += len(chunk)
                    if on_progress:
                        on_progress(done, total)
                out.flush()
                os.fsync(out.fileno())
            if total is not None and done != total:
                raise DownloadError(f"the download of {url} stopped at {done} of {total} bytes. Run the same pull "
                                    "again to resume it.")
            return keep
    except httpx.HTTPError as exc:
        have = part.stat().st_size if part.exists() else 0
        raise DownloadError(f"downloading {url} failed after {have} bytes ({type(exc).__name__}: {exc}). Run the "
                            "same pull again to resume from there.") from exc


def _range_starts_at(resp: httpx.Response, offset: int) -> bool:
    match = _CONTENT_RANGE.match(resp.headers.get("content-range", ""))
    return match is not None and int(match.group(1)) == offset


def _unsatisfied_total(header: str) -> int | None:
    match = _UNSATISFIED_RANGE.match(header)
    return int(match.group(1)) if match else None


def _verify_and_install(url: str, part: Path, final: Path, sha256: str | None, resumed_from: int) -> PullResult:
    digest = sha256_of(part)
    if sha256 and digest != sha256:
        part.unlink()
        raise DownloadError(f"the file downloaded from {url} has sha256 {digest}, but {sha256} was expected; it "
                            "was deleted. Check the URL and the --sha256 value, then pull again.")
    if not has_gguf_magic(part):
        part.unlink()
        raise DownloadError(f"{url} did not deliver a GGUF model (the file lacks the GGUF magic bytes); it was "
                            "deleted. Use the URL of the .gguf file itself, not of a web page about it.")
    os.chmod(part, 0o644)
    os.replace(part, final)
    return PullResult(final, digest, final.stat().st_size, resumed_from, False)
