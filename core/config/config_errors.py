"""The one error type a config problem becomes: where it is, what is wrong, what to do."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """A config problem the user can fix. `str()` is a complete one-paragraph message."""

    def __init__(self, path: Path | str | None, location: str, problem: str, fix: str) -> None:
        self.path = str(path) if path is not None else None
        self.location = location
        self.problem = problem
        self.fix = fix
        where = f"{self.path}" if self.path else "configuration"
        if location:
            where += f" at {location}"
        super().__init__(f"{where}: {problem}. {fix}")
