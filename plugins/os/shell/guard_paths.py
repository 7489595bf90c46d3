"""Where a path argument lands, for the guard's rules: root-ish, raw disk, inside the cwd.

Targets are resolved the way the shell would see them: `~`, `$HOME` and `${HOME}` are the
home dir; relative paths hang off the effective cwd (a preceding `cd` counts); `//`, `/./`
and `..` are collapsed; existing paths are also realpath'd so a symlink to `/` is `/`.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath
import pwd
import re
import stat

SYSTEM_DIRS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
    "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/snap", "/Applications", "/Library", "/System",
    "/Users", "/private",
})
_RAW_DISK = re.compile(
    r"^/dev/(?:sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|nvme\d+|mmcblk\d+(?:p\d+)?"
    r"|mmcblk\d+boot\d+|md\d+(?:p\d+)?|md/.+|dm-\d+|mapper/.+|disk\d+(?:s\d+)*|rdisk\d+(?:s\d+)*|sr\d+|scd\d+"
    r"|loop\d+|mem|kmem|port|nbd\d+(?:p\d+)?|zram\d+|ubi\d+(?:_\d+)?|ubiblock\d+_\d+|mtd\d+|mtdblock\d+"
    r"|bcache\d+|rbd\d+|pmem\d+(?:s|p\d+)?|fd\d+|drbd\d+|cciss/.+|ida/.+|rd/.+|root|sg\d+|st\d+|nst\d+"
    r"|disk/.+|block/.+|xvd/.+|vg[^/]*/.+|ploop\d+.*|zd\d+|zvol/.+|ataraid/.+|emcpower.+|ram\d+|dasd[a-z]+\d*)$")
SYSRQ_TRIGGER = "/proc/sysrq-trigger"
USER_HOMES_PARENTS = frozenset({"/home", "/Users"})  # every user's home dir is as precious as one's own
_GLOB = re.compile(r"[*?\[]")
UNKNOWN = "<unknown>"


@functools.lru_cache(maxsize=64)
def _user_home(name: str) -> str | None:
    try:
        return pwd.getpwnam(name).pw_dir or None
    except (KeyError, ValueError):
        return None


def expand_home(word: str, home: str) -> str:
    """`~`, `~/x`, `$HOME`, `${HOME}` -> the home dir; `~user` -> that user's home dir (an
    unknown user stays literal, as in the shell)."""
    if word == "~" or word.startswith("~/"):
        return home + word[1:]
    if word.startswith("~") and len(word) > 1:
        name, slash, rest = word[1:].partition("/")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*\$?", name) and (user_home := _user_home(name)) is not None:
            return user_home + slash + rest
    for prefix in ("${HOME}", "$HOME"):
        if word == prefix or word.startswith(prefix + "/"):
            return home + word[len(prefix):]
    return word


def resolve_target(word: str, cwd: str, home: str) -> str:
    """An absolute, collapsed path for `word`, or UNKNOWN when it hides a variable or substitution."""
    path = expand_home(word, home)
    if "$" in path or "`" in path or "__SUBST__" in path or "\x00" in path or re.match(r"~[+\-\d]", path):
        return UNKNOWN  # `~+` / `~-` / `~N` are directory-stack entries
    if not path.startswith("/"):
        if cwd == UNKNOWN:
            return UNKNOWN
        path = posixpath.join(cwd, path)
    path = re.sub(r"/+", "/", path)
    collapsed = posixpath.normpath(path)
    return "/" if collapsed in ("", "//") else collapsed


def _protected(home: str) -> set[str]:
    protected = set(SYSTEM_DIRS)
    if home and home != "/":
        protected.add(posixpath.normpath(home))
    return protected


def is_root_ish(path: str, home: str) -> bool:
    """`/`, a top-level system dir, the home dir, or a glob that covers one of them."""
    if path == UNKNOWN:
        return False
    protected = _protected(home)
    if path in protected or posixpath.dirname(path) in USER_HOMES_PARENTS:  # `/home/bob`, `~bob`
        return True
    if _GLOB.search(path):
        parent, leaf = posixpath.split(path)
        if parent in protected and _GLOB.search(leaf):
            return True
        return any(fnmatch.fnmatchcase(p, path) for p in protected)
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return real in protected and os.path.lexists(path)


def _collapse(word: str) -> str:
    path = posixpath.normpath(re.sub(r"/+", "/", word)) if word.startswith("/") else word
    return "/" if path == "//" else path


def is_raw_disk(word: str) -> bool:
    """A disk, partition or memory device in any spelling: `/dev//sda`, `/dev/./sda`,
    `/dev/disk/by-id/…`, `/dev/block/8:0`, or any path (a symlink included) that is a block
    device on this machine."""
    path = _collapse(word)
    if _RAW_DISK.match(path):
        return True
    if not path.startswith("/") or "\x00" in path:
        return False
    try:
        real = os.path.realpath(path)
        if _RAW_DISK.match(real):
            return True
        return stat.S_ISBLK(os.stat(real).st_mode)
    except (OSError, ValueError):
        return False


def is_sysrq_trigger(word: str) -> bool:
    """`/proc/sysrq-trigger` in any spelling (`/proc//sysrq-trigger`, `/proc/self/root/proc/…`)."""
    path = _collapse(word)
    if path == SYSRQ_TRIGGER:
        return True
    if not path.startswith("/proc/") or "\x00" in path:
        return False
    try:
        return os.path.realpath(path) == SYSRQ_TRIGGER
    except (OSError, ValueError):
        return False


def is_inside(path: str, root: str) -> bool:
    """Realpath containment (lexical checks are fooled by `..` and symlinks)."""
    if path == UNKNOWN:
        return False
    try:
        real_root = os.path.realpath(root)
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")
