"""Read zip, tar (plain, .gz, .bz2, .xz) and single-file .gz archives through one interface:
what kind it is, its members, and a stream of one member's bytes."""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

import attrs

if TYPE_CHECKING:
    import tarfile
    import zipfile

# tarfile, zipfile and gzip load when an archive is opened, not with the tool list (every start)

ZIP, TAR, GZ = "zip", "tar", "gz"
MAX_MEMBERS = 10_000


class ArchiveError(ValueError):
    pass


@attrs.frozen
class ArchiveMember:
    name: str
    size: int | None  # uncompressed bytes as declared (None for a bare .gz)
    kind: str  # "file" | "dir" | "symlink" | "hardlink" | "device" | "other"
    compressed: int | None = None
    link: str | None = None
    mode: int = 0o644


def archive_kind(path: Path) -> str:
    import tarfile

    with open(path, "rb") as handle:
        head = handle.read(512)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return ZIP
    if len(head) >= 262 and head[257:262] == b"ustar":
        return TAR
    if head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")):
        try:
            with tarfile.open(path, "r:*") as archive:
                first = archive.next()  # an all-zero stream parses as an empty tar: not one
            if first is not None:
                return TAR
        except (tarfile.TarError, OSError, EOFError):
            pass
        if head.startswith(b"\x1f\x8b"):
            return GZ
    raise ArchiveError(f"{path.name} is not a zip, tar, tar.gz/.bz2/.xz or .gz archive")


def _gz_member_name(path: Path) -> str:
    name = path.name
    return name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name + ".out"


def _zip_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "symlink"
    if info.is_dir():
        return "dir"
    if stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # type bits are optional in zips
        return "other"
    return "file"


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    if info.isdir():
        return "dir"
    if info.isfile():
        return "file"
    if info.ischr() or info.isblk() or info.isfifo():
        return "device"
    return "other"


def list_members(path: Path, kind: str) -> list[ArchiveMember]:
    import gzip
    import tarfile
    import zipfile

    try:
        if kind == ZIP:
            with zipfile.ZipFile(path) as archive:
                infos = archive.infolist()
                if len(infos) > MAX_MEMBERS:
                    raise ArchiveError(f"{len(infos)} entries; more than {MAX_MEMBERS} are not handled")
                return [ArchiveMember(i.filename, i.file_size, _zip_kind(i), i.compress_size,
                                      mode=(i.external_attr >> 16) & 0o777 or 0o644) for i in infos]
        if kind == TAR:
            out = []
            with tarfile.open(path, "r:*") as archive:
                for info in archive:
                    out.append(ArchiveMember(info.name, info.size, _tar_kind(info), None,
                                             info.linkname or None, info.mode & 0o777))
                    if len(out) > MAX_MEMBERS:
                        raise ArchiveError(f"more than {MAX_MEMBERS} entries are not handled")
            return out
        return [ArchiveMember(_gz_member_name(path), None, "file", path.stat().st_size)]
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, gzip.BadGzipFile) as exc:
        raise ArchiveError(f"{path.name} is damaged or not a valid {kind} archive ({exc})") from None


class MemberOpener:
    """Opens members of one archive that stays open (a tar.gz is decompressed once, in order)."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path, self.kind = path, kind
        self._stack = contextlib.ExitStack()
        self._zip: zipfile.ZipFile | None = None
        self._tar: tarfile.TarFile | None = None

    def __enter__(self) -> MemberOpener:
        import tarfile
        import zipfile

        try:
            if self.kind == ZIP:
                self._zip = self._stack.enter_context(zipfile.ZipFile(self.path))
            elif self.kind == TAR:
                self._tar = self._stack.enter_context(tarfile.open(self.path, "r:*"))
        except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
            raise ArchiveError(f"{self.path.name} is damaged ({exc})") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        import gzip
        import tarfile
        import zipfile
        import zlib

        try:
            if self._zip is not None:
                try:
                    info = self._zip.getinfo(name)
                except KeyError:
                    raise ArchiveError(f"no entry {name!r}; os.fs.archive.list shows the names") from None
                if info.flag_bits & 0x1:
                    raise ArchiveError(f"{name} is encrypted; it cannot be read")
                with self._zip.open(info) as stream:
                    yield stream
            elif self._tar is not None:
                try:
                    member = self._tar.getmember(name)
                except KeyError:
                    raise ArchiveError(f"no entry {name!r}; os.fs.archive.list shows the names") from None
                if not member.isfile():
                    raise ArchiveError(f"{name} is a {_tar_kind(member)} entry, not a file")
                data = self._tar.extractfile(member)
                if data is None:
                    raise ArchiveError(f"{name} has no data")
                yield data
            else:
                if name != _gz_member_name(self.path):
                    raise ArchiveError(f"a .gz file holds one entry, {_gz_member_name(self.path)!r}")
                with gzip.open(self.path, "rb") as unzipped:
                    yield cast(IO[bytes], unzipped)  # a binary stream; typeshed types GzipFile apart from IO
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise ArchiveError(f"{self.path.name} is damaged ({exc})") from None


@contextlib.contextmanager
def open_member(path: Path, kind: str, name: str) -> Iterator[IO[bytes]]:
    """A binary stream of one regular member's bytes (decompressed lazily)."""
    with MemberOpener(path, kind) as opener, opener.open(name) as stream:
        yield stream
