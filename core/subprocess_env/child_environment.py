"""Build the filtered environment for a tool's subprocess.

The baseline is what ordinary command-line programs need to behave (where binaries and
the home dir are, who the user is, locale, terminal type, temp and XDG dirs) plus the
CA-bundle variables that TLS clients need on managed networks. Everything else — API
keys, tokens, proxy URLs with credentials — is dropped unless a caller allows it by name.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping

#: used when the agent itself runs without PATH (a bare `env -i` launch)
SAFE_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

BASELINE_NAMES: tuple[str, ...] = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
    # TLS trust stores: not secret, and without them git/curl fail behind a corporate CA
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
    "NODE_EXTRA_CA_CERTS",
)
BASELINE_PATTERNS: tuple[str, ...] = ("LC_*", "XDG_*")


def _check_names(names: Iterable[str]) -> tuple[str, ...]:
    checked = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"an allowed environment variable must be a non-empty name or NAME_* pattern, got {name!r}")
        checked.append(name.strip())
    return tuple(checked)


def is_allowed(name: str, extra_allowed: Iterable[str] = ()) -> bool:
    """Whether `name` passes the filter: a baseline name or pattern, or one of `extra_allowed`.

    Patterns use shell-style wildcards (`AWS_*`); matching is case-sensitive, like POSIX.
    """
    if name in BASELINE_NAMES:
        return True
    patterns = (*BASELINE_PATTERNS, *extra_allowed)
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)


def child_environment(extra_allowed: Iterable[str] = (), environ: Mapping[str, str] | None = None,
                      enabled: bool = True) -> dict[str, str]:
    """The environment for a child process.

    `extra_allowed` names (or `NAME_*` patterns) the tool or the user declared on top of
    the baseline; `environ` defaults to this process's environment. With `enabled` False
    (the user switched filtering off in config) the whole environment is passed through.
    PATH is always present so a child can find `sh`, `git` and friends.
    """
    source = os.environ if environ is None else environ
    allowed = _check_names(extra_allowed)
    if not enabled:
        env = dict(source)
    else:
        env = {k: v for k, v in source.items() if is_allowed(k, allowed)}
    if not env.get("PATH"):
        env["PATH"] = SAFE_DEFAULT_PATH
    return env
