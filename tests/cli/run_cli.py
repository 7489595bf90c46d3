"""Run the real `atomic-agent` console script in a subprocess (a user's view of the CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

CLI = Path(sys.executable).with_name("atomic-agent")


def run_cli(args: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 60,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, input=input_text)
