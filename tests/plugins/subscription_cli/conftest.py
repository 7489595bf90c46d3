from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import pytest

from .fake_clis import install_fake_clis


@attrs.define
class FakeClis:
    bin_dir: Path
    log: Path

    def runs(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def fake_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClis:
    bin_dir = tmp_path / "fake-bin"
    install_fake_clis(bin_dir)
    log = tmp_path / "fake-cli.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    monkeypatch.setenv("FAKE_CLI_MODE", "ok")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return FakeClis(bin_dir, log)
