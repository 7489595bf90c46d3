from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

_LLAMA_ENV = ("ATOMIC_AGENT_LLAMA_URL", "ATOMIC_AGENT_LLAMA_PORT", "ATOMIC_AGENT_LLAMA_BINARY")


@attrs.frozen
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run `atomic-agent ARGS...` in-process; returns exit code, stdout and stderr."""
    from atomic_agent.cli.main import main

    for name in _LLAMA_ENV:
        monkeypatch.delenv(name, raising=False)

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def fake_binary(tmp_path: Path) -> Callable[[str], Path]:
    """An executable that answers `--version` like llama-server and runs `body` otherwise."""

    def make(body: str) -> Path:
        path = tmp_path / "fake-bin" / "llama-server"
        path.parent.mkdir(exist_ok=True)
        path.write_text("#!/bin/sh\n"
                        'if [ "$1" = "--version" ]; then echo "version: 0.0-fake" >&2; exit 0; fi\n'
                        f"{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path

    return make


@pytest.fixture
def make_gguf() -> Callable[..., Path]:
    """Write a small file that starts with the GGUF magic (enough for the registry checks)."""

    def make(path: Path, payload: bytes = b"\x03\x00\x00\x00" + b"\x00" * 60) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"GGUF" + payload)
        return path

    return make
