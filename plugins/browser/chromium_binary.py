"""Where the system Chromium is: the configured path, else the usual names on PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome")
INSTALL_HINT = ("install the system Chromium (Debian/Ubuntu: `sudo apt-get install chromium`) or set "
                "browser.chromiumPath in config.json to a Chromium or Chrome executable; atomic-agent never "
                "downloads a browser of its own")


class MissingChromium(Exception):
    """No Chromium to drive; the message says how to install one."""


def find_chromium(configured: str) -> Path:
    if configured:
        path = Path(configured).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise MissingChromium(f"browser.chromiumPath is {configured!r}, which is not an executable file; {INSTALL_HINT}")
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return Path(found)
    raise MissingChromium(f"no Chromium found (looked for {', '.join(CANDIDATES)} on PATH); {INSTALL_HINT}")
