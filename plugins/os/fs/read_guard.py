"""Files the read tools refuse: non-regular files and secrets the model must not see.

A FIFO would block forever and `/dev/zero` never ends, so only regular files are read.
`/proc/<pid>/environ` and the agent's own `.env` hold the runtime's keys; reading them
into the context would hand them to the model (and to a cloud provider).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from atomic_agent.plugins.os.fs_approval.trust_config_paths import is_secret_file

_PROC_SECRET = re.compile(r"\A/proc/(?:\d+|self|thread-self)(?:/task/\d+)?/(?:environ|mem)\Z")


class ReadRefused(ValueError):
    pass


def check_readable(path: Path, display: str, trust: Sequence[Path]) -> os.stat_result:
    """The file's stat when it may be read; ReadRefused (with a fix) otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ReadRefused(f"no such file: {display}; os.fs.list or os.fs.glob show what exists") from None
    except NotADirectoryError:
        raise ReadRefused(f"{display}: a part of the path is a file, not a directory") from None
    except PermissionError:
        raise ReadRefused(f"{display}: permission denied") from None
    except OSError as exc:
        raise ReadRefused(f"{display}: cannot be opened ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ReadRefused(f"{display} is a directory; use os.fs.list to see its entries")
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused(f"{display} is not a regular file (device, FIFO or socket); it is not read")
    canonical = Path(os.path.realpath(path))
    if _PROC_SECRET.match(str(canonical)) or is_secret_file(canonical, trust):
        raise ReadRefused(f"{display} holds the runtime's secrets (environment / API keys) and is never read by tools")
    return st
